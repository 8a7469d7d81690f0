import { Link } from "@/components/ui/link";
import { axisOptions, type StatusAxis } from "../status/axes";
import { toneDot } from "../ui/badge";
import { toneOf } from "../status/tones";
import { Card, CardHeader } from "../ui/card";
import { Skeleton } from "../ui/skeleton";
import { cx } from "../ui/cx";
import { devicesHref } from "../devices/params";

/** Counts of one status axis, each a link to the devices filtered by it. */
export function AxisCard({ axis, counts, total }: { axis: StatusAxis; counts: Record<string, number> | undefined; total: number | undefined }) {
  const states = axisOptions(axis);
  // A state outside the table (a newer server) still shows up.
  const extra = counts ? Object.keys(counts).filter((s) => !states.includes(s)) : [];
  return (
    <Card data-testid={`axis-${axis.key}`}>
      <CardHeader title={axis.title} description={<code className="text-[11px]">{axisField(axis.key)}</code>} />
      <ul className="divide-y divide-slate-100">
        {[...states, ...extra].map((state) => {
          const n = counts?.[state] ?? 0;
          const pct = total ? (n / total) * 100 : 0;
          return (
            <li key={state}>
              <Link
                prefetch={false}
                href={devicesHref({ [axis.key]: state })}
                data-testid={`count-${axis.key}-${state}`}
                className={cx("flex items-center gap-3 px-4 py-2 text-sm hover:bg-slate-50", n === 0 && "text-slate-500")}
              >
                <span className={cx("size-2 shrink-0 rounded-full", n === 0 ? "bg-slate-200" : toneDot(toneOf(axis.tones, state)))} />
                <span className="w-36 shrink-0 truncate">{state}</span>
                <span className="h-1.5 flex-1 overflow-hidden rounded-full bg-slate-100">
                  <span className={cx("block h-full rounded-full", toneDot(toneOf(axis.tones, state)))} style={{ width: `${pct}%` }} />
                </span>
                <span className="w-14 text-right font-medium tabular-nums">{counts ? n.toLocaleString() : <Skeleton className="ml-auto h-3.5 w-8" />}</span>
              </Link>
            </li>
          );
        })}
      </ul>
    </Card>
  );
}

function axisField(key: StatusAxis["key"]): string {
  switch (key) {
    case "summary":
      return "status.summary";
    case "updated":
      return "status.updated.status";
    case "applicationSummary":
      return "status.applicationSummary";
    case "lifecycle":
      return "status.lifecycle";
  }
}
