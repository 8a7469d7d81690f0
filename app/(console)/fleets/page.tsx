import type { Metadata } from "next";
import { FleetsPage } from "@/components/fleets/fleets-page";

export const metadata: Metadata = { title: "Fleets" };

export default function Page() {
  return <FleetsPage />;
}
