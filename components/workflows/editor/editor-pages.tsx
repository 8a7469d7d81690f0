"use client";

import { Link } from "@/components/ui/link";
import { useQuery } from "@tanstack/react-query";
import { useTRPC } from "../../trpc";
import { useMe } from "../../hooks/use-me";
import { PageHeader } from "../../ui/page-header";
import { Card } from "../../ui/card";
import { Skeleton } from "../../ui/skeleton";
import { DetailError, DetailLoading } from "../../ui/detail-page";
import { EmptyState } from "../../ui/states";
import { StatusBadge } from "../../status/status-badge";
import { workflowPhaseTone } from "../tones";
import { WorkflowEditor } from "./workflow-editor";

const toList = (
  <Link href="/workflows" className="hover:text-slate-800 hover:underline">
    ← Workflows
  </Link>
);

function OperatorsOnly() {
  return (
    <Card>
      <EmptyState title="Operators draw workflows">Your role can read workflows; ask an operator or an admin to change them.</EmptyState>
    </Card>
  );
}

/** `/workflows/new`: an empty canvas; Save draft creates the workflow without starting it. */
export function NewWorkflowPage() {
  const { me, canOperate } = useMe();
  return (
    <>
      <PageHeader breadcrumb={toList} title="New workflow" description="Steps as nodes, dependencies as edges: drag from a step's right handle to the left handle of a step that depends on it." />
      {me === undefined ? <Skeleton className="h-[560px] w-full" /> : canOperate ? <WorkflowEditor /> : <OperatorsOnly />}
    </>
  );
}

/** `/workflows/[name]/edit`: the saved spec on the canvas; while it runs, its started steps are locked. */
export function EditWorkflowPage({ name }: { name: string }) {
  const trpc = useTRPC();
  const { me, canOperate } = useMe();
  const workflow = useQuery(trpc.workflows.get.queryOptions({ name }));
  const breadcrumb = (
    <Link href={`/workflows/${encodeURIComponent(name)}`} className="hover:text-slate-800 hover:underline">
      ← {name}
    </Link>
  );
  if (workflow.isPending) return <DetailLoading title={<Skeleton className="h-6 w-48" />} breadcrumb={breadcrumb} />;
  if (workflow.isError) {
    return (
      <DetailError
        title={`Edit workflow ${name}`}
        breadcrumb={toList}
        error={workflow.error}
        onRetry={() => void workflow.refetch()}
        notFound={{ title: `No workflow named “${name}”`, hint: <Link href="/workflows/new" className="text-brand-700 hover:underline">Draw a new one.</Link> }}
        errorTitle="Could not load this workflow"
      />
    );
  }
  const w = workflow.data;
  return (
    <>
      <PageHeader
        breadcrumb={breadcrumb}
        title={
          <span className="flex items-center gap-3">
            <span data-testid="editor-title">Edit {name}</span>
            <StatusBadge table={workflowPhaseTone} state={w.status.phase} data-testid="editor-workflow-phase" />
          </span>
        }
        description={
          w.status.phase === "Running"
            ? "Running: steps that have started are locked; the others, and new steps, can change and the run picks them up when saved."
            : "Saved changes are the definition of the next run."
        }
      />
      {me === undefined ? <Skeleton className="h-[560px] w-full" /> : canOperate ? <WorkflowEditor workflow={w} /> : <OperatorsOnly />}
    </>
  );
}
