"use client";

import { useParams } from "next/navigation";
import { ActionPage } from "@/components/actions/action-page";

export default function Page() {
  const params = useParams<{ id: string }>();
  return <ActionPage id={decodeURIComponent(params.id)} />;
}
