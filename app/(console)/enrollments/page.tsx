import type { Metadata } from "next";
import { Suspense } from "react";
import { EnrollmentsPage } from "@/components/enrollments/enrollments-page";

export const metadata: Metadata = { title: "Enrollments" };

export default function Page() {
  return (
    <Suspense>
      <EnrollmentsPage />
    </Suspense>
  );
}
