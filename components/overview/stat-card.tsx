import { Link } from "@/components/ui/link";
import type { ReactNode } from "react";
import { Skeleton } from "../ui/skeleton";

export function StatCard({ label, value, href, hint, accent, testId, trend }: { label: string; value: number | undefined; href: string; hint?: ReactNode; accent?: string; testId?: string; trend?: ReactNode }) {
  return (
    <Link
      prefetch={false}
      href={href}
      data-testid={testId}
      className="group rounded-lg border border-slate-200 bg-white px-4 py-3.5 shadow-xs transition hover:border-brand-500/50 hover:shadow-sm"
    >
      <div className="text-xs font-medium text-slate-500">{label}</div>
      <div className="mt-1 flex items-baseline gap-2">
        {value === undefined ? (
          <Skeleton className="my-1 h-6 w-14" />
        ) : (
          <span className={`text-2xl font-semibold tabular-nums ${accent ?? "text-slate-900"}`}>{value.toLocaleString()}</span>
        )}
        {hint && <span className="text-xs text-slate-500">{hint}</span>}
      </div>
      {trend && <div className="mt-1.5">{trend}</div>}
    </Link>
  );
}
