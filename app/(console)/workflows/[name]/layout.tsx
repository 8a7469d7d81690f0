import type { Metadata } from "next";
import type { ReactNode } from "react";

export const metadata: Metadata = { title: "Workflow" };

export default function WorkflowLayout({ children }: { children: ReactNode }) {
  return children;
}
