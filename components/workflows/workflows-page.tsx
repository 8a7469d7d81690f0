"use client";

import { Link } from "@/components/ui/link";
import { useState } from "react";
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { WORKFLOW_PHASES, type WorkflowPhase } from "@/lib/workflow-status";
import { useTRPC } from "../trpc";
import { useMe } from "../hooks/use-me";
import { Button } from "../ui/button";
import { Card } from "../ui/card";
import { PageHeader } from "../ui/page-header";
import { MultiSelect } from "../ui/multi-select";
import { EmptyState, ErrorState, ListEmptyState } from "../ui/states";
import { CursorPagination, type Paging } from "../devices/pagination";
import { DEFAULT_PAGE_SIZE } from "../devices/params";
import { WorkflowsTable } from "./workflows-table";
import { workflowPhaseTone } from "./tones";

/** Every saved workflow by name, its current run's phase and step progress; live. */
export function WorkflowsPage() {
  const trpc = useTRPC();
  const { canOperate } = useMe();
  const [phases, setPhases] = useState<WorkflowPhase[]>([]);
  const [paging, setPaging] = useState<Paging>({ cursors: [], limit: DEFAULT_PAGE_SIZE });
  const input = { ...(phases.length ? { phase: phases } : {}), limit: paging.limit, ...(paging.cursors.length ? { cursor: paging.cursors.at(-1) } : {}) };
  const list = useQuery({ ...trpc.workflows.list.queryOptions(input), placeholderData: keepPreviousData });
  const filtered = phases.length > 0;
  const total = list.data?.total;
  const filter = (next: WorkflowPhase[]) => {
    setPhases(next);
    setPaging((p) => ({ ...p, cursors: [] }));
  };

  return (
    <>
      <PageHeader
        title="Workflows"
        description={
          total !== undefined
            ? `${total.toLocaleString()} workflow${total === 1 ? "" : "s"}${filtered ? " in these phases" : ""}: DAGs of jobs on devices and references to other workflows, by name.`
            : "DAGs of jobs on devices and references to other workflows, by name."
        }
        actions={
          canOperate && (
            <Link
              href="/workflows/new"
              data-testid="new-workflow"
              className="inline-flex h-9 items-center rounded-md bg-brand-600 px-3.5 text-sm font-medium text-white shadow-sm hover:bg-brand-700 focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-brand-500"
            >
              New workflow
            </Link>
          )
        }
      />
      <div className="mb-4 flex flex-wrap items-center gap-2">
        <MultiSelect
          label="Phase"
          testId="filter-workflow-phase"
          selected={phases}
          options={WORKFLOW_PHASES.map((value) => ({ value, tone: workflowPhaseTone[value] }))}
          onChange={(values) => filter(values as WorkflowPhase[])}
        />
        {filtered && (
          <Button variant="ghost" size="sm" onClick={() => filter([])}>
            Clear filter
          </Button>
        )}
      </div>
      <Card>
        {list.isError && !list.data ? (
          <ErrorState error={list.error} onRetry={() => void list.refetch()} title="Could not load workflows" />
        ) : (
          <>
            <WorkflowsTable
              items={list.data?.items}
              loading={list.isPlaceholderData}
              empty={
                <ListEmptyState noun="workflows" selectorInvalid={false} page={paging.cursors.length + 1} onFirstPage={() => setPaging((p) => ({ ...p, cursors: [] }))}>
                  {filtered ? (
                    <EmptyState title="No workflows in these phases">Choose other phases, or clear the filter.</EmptyState>
                  ) : (
                    <EmptyState title="No workflows yet">{canOperate ? "Draw one with New workflow, or apply one with drover apply -f." : "Operators create workflows with drover apply -f."}</EmptyState>
                  )}
                </ListEmptyState>
              }
            />
            <CursorPagination
              params={paging}
              update={(patch) => setPaging((p) => ({ ...p, ...patch }))}
              nextCursor={list.data?.nextCursor}
              noun="workflows"
              shown={list.data?.items.length ?? 0}
              total={total}
            />
          </>
        )}
      </Card>
    </>
  );
}
