"use client";

import { useParams } from "next/navigation";
import { RequestPage } from "@/components/requests/request-page";

export default function Page() {
  const params = useParams<{ id: string }>();
  return <RequestPage id={decodeURIComponent(params.id)} />;
}
