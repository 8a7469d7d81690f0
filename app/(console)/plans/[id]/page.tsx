"use client";

import { useParams } from "next/navigation";
import { PlanPage } from "@/components/plans/plan-page";

export default function Page() {
  const params = useParams<{ id: string }>();
  return <PlanPage id={decodeURIComponent(params.id)} />;
}
