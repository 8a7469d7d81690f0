import type { Metadata } from "next";
import { AddDevicesPage } from "@/components/enrollment-tokens/add-devices-page";

export const metadata: Metadata = { title: "Add devices" };

export default function Page() {
  return <AddDevicesPage />;
}
