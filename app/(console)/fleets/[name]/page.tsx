"use client";

import { useParams } from "next/navigation";
import { FleetPage } from "@/components/fleets/fleet-page";

export default function Page() {
  const params = useParams<{ name: string }>();
  return <FleetPage name={decodeURIComponent(params.name)} />;
}
