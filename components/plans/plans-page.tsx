"use client";

import { useState } from "react";
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { PLAN_STATES, type PlanState } from "@/lib/plan-status";
import { useTRPC } from "../trpc";
import { useMe } from "../hooks/use-me";
import { Button } from "../ui/button";
import { Card } from "../ui/card";
import { PageHeader } from "../ui/page-header";
import { MultiSelect } from "../ui/multi-select";
import { EmptyState, ErrorState, ListEmptyState } from "../ui/states";
import { CursorPagination } from "../devices/pagination";
import { ImportPlanDialog } from "./import-plan-dialog";
import { PlansTable } from "./plans-table";
import { planListInput } from "./params";
import { planStateTone } from "./tones";
import { usePlanParams } from "./use-plan-params";

export function PlansPage() {
  const trpc = useTRPC();
  const { canOperate } = useMe();
  const { params, update } = usePlanParams();
  const list = useQuery({ ...trpc.plans.list.queryOptions(planListInput(params)), placeholderData: keepPreviousData });
  const [importing, setImporting] = useState(false);
  // A fresh dialog each time it opens.
  const [session, setSession] = useState(0);
  const filtered = params.states.length > 0;
  const total = list.data?.total;

  return (
    <>
      <PageHeader
        title="Plans"
        description={
          total !== undefined
            ? `${total.toLocaleString()} plan${total === 1 ? "" : "s"}${filtered ? " in these states" : ""}, newest first: ordered commands (k0s updates, airgap bundles, actions) run on controllers, then workers.`
            : "Ordered commands run on controllers, then workers, newest first."
        }
        actions={
          canOperate && (
            <Button
              variant="primary"
              data-testid="import-plan"
              onClick={() => {
                setSession((n) => n + 1);
                setImporting(true);
              }}
            >
              Import plan…
            </Button>
          )
        }
      />
      <div className="mb-4 flex flex-wrap items-center gap-2">
        <MultiSelect
          label="State"
          testId="filter-plan-state"
          selected={params.states}
          options={PLAN_STATES.map((value) => ({ value, tone: planStateTone[value] }))}
          onChange={(values) => update({ states: values as PlanState[] })}
        />
        {filtered && (
          <Button variant="ghost" size="sm" onClick={() => update({ states: [] })}>
            Clear filter
          </Button>
        )}
      </div>
      <Card>
        {list.isError && !list.data ? (
          <ErrorState error={list.error} onRetry={() => void list.refetch()} title="Could not load plans" />
        ) : (
          <>
            <PlansTable
              items={list.data?.items}
              loading={list.isPlaceholderData}
              empty={
                <ListEmptyState noun="plans" selectorInvalid={false} page={params.cursors.length + 1} onFirstPage={() => update({ cursors: [] })}>
                  {filtered ? (
                    <EmptyState title="No plans in these states">Choose other states, or clear the filter.</EmptyState>
                  ) : (
                    <EmptyState title="No plans yet">
                      {canOperate ? "Import a k0s Autopilot Plan or a drover/v1 one with “Import plan”, or drover apply -f." : "Operators import plans here or with drover apply -f."}
                    </EmptyState>
                  )}
                </ListEmptyState>
              }
            />
            <CursorPagination params={params} update={update} nextCursor={list.data?.nextCursor} noun="plans" shown={list.data?.items.length ?? 0} total={total} />
          </>
        )}
      </Card>
      {canOperate && <ImportPlanDialog key={session} open={importing} onClose={() => setImporting(false)} />}
    </>
  );
}
