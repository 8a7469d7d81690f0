"use client";

import { useParams } from "next/navigation";
import { EnrollmentPage } from "@/components/enrollments/enrollment-page";

export default function Page() {
  const params = useParams<{ id: string }>();
  return <EnrollmentPage id={decodeURIComponent(params.id)} />;
}
