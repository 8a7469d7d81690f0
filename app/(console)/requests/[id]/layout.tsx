import type { Metadata } from "next";
import type { ReactNode } from "react";

export const metadata: Metadata = { title: "Request" };

export default function RequestLayout({ children }: { children: ReactNode }) {
  return children;
}
