"use client";

import { useParams } from "next/navigation";
import { DevicePage } from "@/components/device-detail/device-page";

export default function Page() {
  const params = useParams<{ name: string }>();
  return <DevicePage name={decodeURIComponent(params.name)} />;
}
