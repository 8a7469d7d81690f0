"use client";

import { useParams } from "next/navigation";
import { WorkflowPage } from "@/components/workflows/workflow-page";

export default function Page() {
  const params = useParams<{ name: string }>();
  return <WorkflowPage name={decodeURIComponent(params.name)} />;
}
