import { Link } from "@/components/ui/link";
import { cx } from "../ui/cx";

/** The way to "Add devices" from the pages that list them (devices, enrollment requests): a link styled as a button. */
export function AddDevicesLink({ variant = "primary" }: { variant?: "primary" | "secondary" }) {
  return (
    <Link
      href="/enrollment-tokens"
      data-testid="add-devices-link"
      className={cx(
        "inline-flex h-9 items-center justify-center gap-1.5 rounded-md px-3.5 text-sm font-medium whitespace-nowrap shadow-sm transition-colors",
        "focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-brand-500",
        variant === "primary" ? "bg-brand-600 text-white hover:bg-brand-700" : "bg-white text-slate-700 ring-1 ring-slate-300 ring-inset hover:bg-slate-50",
      )}
    >
      Add devices
    </Link>
  );
}
