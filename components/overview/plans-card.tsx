"use client";

import { Link } from "@/components/ui/link";
import { useQuery } from "@tanstack/react-query";
import { ERROR_PLAN_STATES } from "@/lib/plan-status";
import { useTRPC } from "../trpc";
import { Card, CardHeader } from "../ui/card";
import { ErrorState } from "../ui/states";
import { plansHref, RUNNING_PLAN_STATES } from "../plans/params";
import { StatCard } from "./stat-card";

/** Plans at a glance: running, completed, ended in an error. Each a one-row list query for its total (live with Plan events). */
export function PlansCard() {
  const trpc = useTRPC();
  const running = useQuery(trpc.plans.list.queryOptions({ state: [...RUNNING_PLAN_STATES], limit: 1 }));
  const completed = useQuery(trpc.plans.list.queryOptions({ state: ["Completed"], limit: 1 }));
  const failed = useQuery(trpc.plans.list.queryOptions({ state: ERROR_PLAN_STATES, limit: 1 }));
  const error = running.error ?? completed.error ?? failed.error;

  return (
    <Card data-testid="overview-plans">
      <CardHeader
        title="Plans"
        description="Ordered updates and actions on controllers, then workers. Each count opens the plans behind it."
        actions={
          <Link href="/plans" className="text-xs font-medium text-brand-700 hover:underline">
            All plans →
          </Link>
        }
      />
      {error && !running.data ? (
        <ErrorState error={error} onRetry={() => void running.refetch()} title="Could not load plan counts" />
      ) : (
        <div className="grid grid-cols-2 gap-3 p-4 lg:grid-cols-3">
          <StatCard label="Running" value={running.data?.total} href={plansHref(RUNNING_PLAN_STATES)} accent={running.data?.total ? "text-sky-700" : undefined} testId="count-plans-running" />
          <StatCard label="Completed" value={completed.data?.total} href={plansHref(["Completed"])} testId="count-plans-completed" />
          <StatCard
            label="Ended in an error"
            value={failed.data?.total}
            href={plansHref(ERROR_PLAN_STATES)}
            hint="cancelled included"
            accent={failed.data?.total ? "text-red-700" : undefined}
            testId="count-plans-failed"
          />
        </div>
      )}
    </Card>
  );
}
