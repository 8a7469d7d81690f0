import type { Metadata } from "next";
import { NewWorkflowPage } from "@/components/workflows/editor/editor-pages";

export const metadata: Metadata = { title: "New workflow" };

export default function Page() {
  return <NewWorkflowPage />;
}
