"use client";

import { useParams } from "next/navigation";
import { EditWorkflowPage } from "@/components/workflows/editor/editor-pages";

export default function Page() {
  const params = useParams<{ name: string }>();
  return <EditWorkflowPage name={decodeURIComponent(params.name)} />;
}
