import type { Metadata } from "next";
import { WorkflowsPage } from "@/components/workflows/workflows-page";

export const metadata: Metadata = { title: "Workflows" };

export default function Page() {
  return <WorkflowsPage />;
}
