"use client";

import { Link } from "@/components/ui/link";
import { useState } from "react";
import { useQuery } from "@tanstack/react-query";
import type { WorkflowObject } from "@/server/workflows/workflows";
import { useTRPC } from "../trpc";
import { useMe } from "../hooks/use-me";
import { PageHeader } from "../ui/page-header";
import { YamlButton } from "../ui/yaml-view";
import { Badge } from "../ui/badge";
import { Card, CardHeader } from "../ui/card";
import { Skeleton } from "../ui/skeleton";
import { DetailError, DetailLoading } from "../ui/detail-page";
import { RelativeTime } from "../ui/time";
import { StatusBadge } from "../status/status-badge";
import { ObjectEventsCard } from "../events/object-events-card";
import { Actor } from "../events/object-link";
import { CountsLegend } from "../fleets/counts-bar";
import { RunView } from "./run-view";
import { StepDetails } from "./step-details";
import { StepTable } from "./step-table";
import { stepSegments } from "./run-graph";
import { WorkflowControls } from "./workflow-controls";
import { RunHistory, ScheduleLine } from "./run-history";
import { workflowPhaseTone } from "./tones";

const breadcrumb = (
  <Link href="/workflows" className="hover:text-slate-800 hover:underline">
    ← Workflows
  </Link>
);

/** The reason and message of the condition that is True (Complete or Failed), else the run's message. */
function outcome(w: WorkflowObject): { reason: string | null; message: string } {
  const c = w.status.conditions.find((x) => x.status === "True");
  return c ? { reason: c.reason, message: c.message } : { reason: null, message: w.status.message };
}

function WorkflowBody({ workflow, canOperate }: { workflow: WorkflowObject; canOperate: boolean }) {
  const trpc = useTRPC();
  const name = workflow.metadata.name;
  const events = useQuery(trpc.workflows.events.queryOptions({ name, limit: 30 }));
  const [selected, setSelected] = useState<string | null>(null);
  const s = workflow.status;
  const { reason, message } = outcome(workflow);
  const counts: Record<string, number> = {};
  for (const v of Object.values(s.statuses)) counts[v.phase] = (counts[v.phase] ?? 0) + 1;
  const step = selected && selected in workflow.spec.steps ? selected : null;

  return (
    <>
      <PageHeader
        breadcrumb={breadcrumb}
        title={
          <span className="flex flex-wrap items-center gap-3">
            <span data-testid="workflow-title">{name}</span>
            <StatusBadge table={workflowPhaseTone} state={s.phase} data-testid="workflow-phase" />
            {reason && s.phase === "Failed" && (
              <Badge tone="red" dot={false} data-testid="workflow-reason">
                {reason}
              </Badge>
            )}
            {s.cancelRequestedBy && s.phase === "Running" && <Badge tone="amber">Cancelling</Badge>}
          </span>
        }
        description={
          <>
            {message && <span data-testid="workflow-message">{message}</span>}
            <span className="mt-0.5 block text-xs text-slate-500" data-testid="workflow-run">
              Run {s.run}
              {s.startTime && (
                <>
                  {" "}
                  · started <RelativeTime value={s.startTime} />
                </>
              )}
              {s.completionTime && (
                <>
                  {" "}
                  · completed <RelativeTime value={s.completionTime} />
                </>
              )}{" "}
              · created by <Actor actor={workflow.metadata.createdBy} />, generation {workflow.metadata.generation}
            </span>
            {s.schedule && <ScheduleLine schedule={s.schedule} />}
          </>
        }
        actions={
          <>
            <YamlButton object={workflow} what={`workflow ${name}`} />
            {canOperate && <WorkflowControls workflow={workflow} />}
          </>
        }
      />
      <Card>
        <CardHeader
          title="Run view"
          description="Each step in its phase's colour, dependencies left of their dependents. Click a step for its details and actions."
          actions={<CountsLegend segments={stepSegments(counts).filter((x) => x.count > 0)} />}
        />
        <div className="flex flex-col lg:flex-row">
          <div className="min-w-0 flex-1">
            <RunView workflow={workflow} selected={step} onSelect={setSelected} />
          </div>
          {step && <StepDetails workflow={workflow} step={step} canOperate={canOperate} onClose={() => setSelected(null)} />}
        </div>
      </Card>
      <Card className="mt-4">
        <CardHeader title="Steps" description="In topological order: dependencies first." />
        <StepTable workflow={workflow} selected={step} onSelect={setSelected} />
      </Card>
      <Card className="mt-4">
        <CardHeader title="Runs" description="The last 20 runs, newest first: who started each (an operator, its schedule, or a workflow referencing it) and how long it took." />
        <RunHistory workflow={workflow} />
      </Card>
      <div className="mt-4">
        <ObjectEventsCard kind="Workflow" name={name} description="The latest changes of this workflow and its steps, newest first." events={events} emptyTitle="No events for this workflow yet" />
      </div>
    </>
  );
}

/** One workflow: its current run's phase and controls, the run view, its steps, its events; live. */
export function WorkflowPage({ name }: { name: string }) {
  const trpc = useTRPC();
  const { canOperate } = useMe();
  const workflow = useQuery(trpc.workflows.get.queryOptions({ name }));

  if (workflow.isPending) return <DetailLoading title={<Skeleton className="h-6 w-48" />} breadcrumb={breadcrumb} />;
  if (workflow.isError) {
    return (
      <DetailError
        title={`Workflow ${name}`}
        breadcrumb={breadcrumb}
        error={workflow.error}
        onRetry={() => void workflow.refetch()}
        notFound={{
          title: `No workflow named “${name}”`,
          hint: (
            <>
              See <Link href="/workflows" className="text-brand-700 hover:underline">all workflows</Link>.
            </>
          ),
        }}
        errorTitle="Could not load this workflow"
      />
    );
  }
  return <WorkflowBody workflow={workflow.data} canOperate={canOperate} />;
}
