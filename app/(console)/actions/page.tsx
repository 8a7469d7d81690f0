import type { Metadata } from "next";
import { Suspense } from "react";
import { ActionsPage } from "@/components/actions/actions-page";

export const metadata: Metadata = { title: "Actions" };

export default function Page() {
  return (
    <Suspense>
      <ActionsPage />
    </Suspense>
  );
}
