import type { Metadata } from "next";
import { Suspense } from "react";
import { PlansPage } from "@/components/plans/plans-page";

export const metadata: Metadata = { title: "Plans" };

export default function Page() {
  return (
    <Suspense>
      <PlansPage />
    </Suspense>
  );
}
