import type { Metadata } from "next";
import type { ReactNode } from "react";

export const metadata: Metadata = { title: "Action" };

export default function ActionLayout({ children }: { children: ReactNode }) {
  return children;
}
