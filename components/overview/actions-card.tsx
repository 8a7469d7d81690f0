"use client";

import { Link } from "@/components/ui/link";
import { useQuery } from "@tanstack/react-query";
import { useTRPC } from "../trpc";
import { Card, CardHeader } from "../ui/card";
import { ErrorState } from "../ui/states";
import { actionsHref } from "../actions/params";
import { StatCard } from "./stat-card";

/** Actions at a glance: what waits for an operator, what runs, what failed. */
export function ActionsCard() {
  const trpc = useTRPC();
  const counts = useQuery(trpc.actions.counts.queryOptions());
  const c = counts.data?.byState;
  const n = (...states: (keyof NonNullable<typeof c>)[]) => (c ? states.reduce((sum, s) => sum + (c[s] ?? 0), 0) : undefined);
  const pending = counts.data?.pendingApprovals;
  const failed = n("FAILED");
  const lost = n("LOST");

  return (
    <Card data-testid="overview-actions">
      <CardHeader
        title="Actions"
        description="Node actions across the fleet. Each count opens the actions behind it."
        actions={
          <Link href="/actions" className="text-xs font-medium text-brand-700 hover:underline">
            All actions →
          </Link>
        }
      />
      {counts.isError ? (
        <ErrorState error={counts.error} onRetry={() => void counts.refetch()} title="Could not load action counts" />
      ) : (
        <div className="grid grid-cols-2 gap-3 p-4 lg:grid-cols-4">
          <StatCard label="Waiting for approval" value={pending} href="/approvals" accent={pending ? "text-violet-700" : undefined} testId="count-pending-approvals" />
          <StatCard label="Waiting to be scheduled" value={n("PENDING_SCHEDULE")} href={actionsHref({ states: ["PENDING_SCHEDULE"] })} testId="count-actions-scheduled" />
          <StatCard
            label="Running"
            value={n("NEW", "RUNNING")}
            href={actionsHref({ states: ["NEW", "RUNNING"] })}
            hint="on agents"
            accent="text-sky-700"
            testId="count-actions-running"
          />
          <StatCard
            label="Failed"
            value={failed}
            href={actionsHref({ states: lost ? ["FAILED", "LOST"] : ["FAILED"] })}
            hint={lost ? `+ ${lost.toLocaleString()} lost` : undefined}
            accent={failed || lost ? "text-red-700" : undefined}
            testId="count-actions-failed"
          />
        </div>
      )}
    </Card>
  );
}
