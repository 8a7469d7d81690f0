"use client";

import { useQuery } from "@tanstack/react-query";
import { useTRPC } from "../trpc";
import { PageHeader } from "../ui/page-header";
import { ErrorState } from "../ui/states";
import { Card } from "../ui/card";
import { STATUS_AXES } from "../status/axes";
import { devicesHref } from "../devices/params";
import { AxisCard } from "./axis-card";
import { StatCard } from "./stat-card";
import { RecentEvents } from "./recent-events";
import { ActionsCard } from "./actions-card";
import { PlansCard } from "./plans-card";
import { HistoryCharts, useHistory, useHistoryRange } from "./history-charts";
import { Sparkline } from "../charts/time-chart";
import { firstSampled } from "./history";

export function OverviewPage() {
  const trpc = useTRPC();
  const counts = useQuery(trpc.devices.counts.queryOptions());
  const c = counts.data;
  const attention = c ? (c.summary.Error ?? 0) + (c.summary.Degraded ?? 0) + (c.summary.ConflictPaused ?? 0) : undefined;
  // The same query as the charts below (one request): a trend line in the first two cards.
  const history = useHistory(useHistoryRange()).data;
  const from = history ? firstSampled(history.heartbeatsPerMinute) : 0;
  const trend = (pick: (byStatus: Record<string, (number | null)[]>, i: number) => number | null, label: string, color: string) =>
    history && history.samples > 0 ? (
      <Sparkline times={history.times.slice(from)} values={history.times.slice(from).map((_, i) => pick(history.devices.summary, i + from))} ariaLabel={label} color={color} unit="devices" />
    ) : undefined;

  return (
    <>
      <PageHeader title="Overview" description="The fleet at a glance. Every count links to the devices behind it." />
      {counts.isError ? (
        <Card>
          <ErrorState error={counts.error} onRetry={() => void counts.refetch()} title="Could not load device counts" />
        </Card>
      ) : (
        <>
          <div className="mb-5 grid grid-cols-2 gap-3 lg:grid-cols-4">
            <StatCard
              label="Devices"
              value={c?.total}
              href="/devices"
              testId="count-total"
              trend={trend((by, i) => sumAt(by, i), "Devices over time", "var(--color-slate-400)")}
            />
            <StatCard
              label="Online"
              value={c ? (c.summary.Online ?? 0) : undefined}
              href={devicesHref({ summary: "Online" })}
              accent="text-emerald-700"
              testId="count-online"
              trend={trend((by, i) => by.Online?.[i] ?? (sumAt(by, i) === null ? null : 0), "Online devices over time", "var(--color-emerald-500)")}
            />
            <StatCard
              label="Need attention"
              value={attention}
              href="/devices?summary=Error,Degraded,ConflictPaused"
              hint="error, degraded or paused"
              accent={attention ? "text-red-700" : undefined}
              testId="count-attention"
            />
            <StatCard
              label="Pending enrollments"
              value={c?.pendingEnrollments}
              href="/enrollments"
              accent={c?.pendingEnrollments ? "text-amber-700" : undefined}
              testId="count-pending-enrollments"
            />
          </div>
          <div className="mb-4">
            <HistoryCharts />
          </div>
          <div className="grid gap-4 md:grid-cols-2">
            {STATUS_AXES.map((axis) => (
              <AxisCard key={axis.key} axis={axis} counts={c?.[axis.key]} total={c?.total} />
            ))}
          </div>
        </>
      )}
      <div className="mt-4">
        <ActionsCard />
      </div>
      <div className="mt-4">
        <PlansCard />
      </div>
      <div className="mt-4">
        <RecentEvents />
      </div>
    </>
  );
}

/** Devices at bucket i across every status; null when the bucket has no sample. */
function sumAt(byStatus: Record<string, (number | null)[]>, i: number): number | null {
  let sum: number | null = null;
  for (const values of Object.values(byStatus)) {
    const v = values[i];
    if (v != null) sum = (sum ?? 0) + v;
  }
  return sum;
}
