"use client";

import { Link } from "@/components/ui/link";
import { useQuery } from "@tanstack/react-query";
import { useTRPC } from "../trpc";
import { useMe } from "../hooks/use-me";
import { PageHeader } from "../ui/page-header";
import { YamlButton } from "../ui/yaml-view";
import { Card, CardHeader } from "../ui/card";
import { Button } from "../ui/button";
import { Skeleton } from "../ui/skeleton";
import { EmptyState } from "../ui/states";
import { AbsoluteTime, RelativeTime } from "../ui/time";
import { DetailError, DetailLoading } from "../ui/detail-page";
import { StatusBadge } from "../status/status-badge";
import { DecisionBanner } from "../approvals/use-decisions";
import { EventLogLink } from "../events/object-events-card";
import { ActionsTable } from "../actions/actions-table";
import { actionsHref } from "../actions/params";
import { actorName, argsSummary, shortId } from "../actions/format";
import { OutputGroups } from "../actions/output-groups";
import { RequestProgress } from "./request-progress";
import { useRequestDecision } from "./use-request-decision";
import { useFourEyes } from "../approvals/use-four-eyes";
import { isSettled } from "./format";

const breadcrumb = (
  <Link href="/approvals" className="hover:text-slate-800 hover:underline">
    ← Approvals
  </Link>
);

const DECISION_TONES = { Approved: "green", Rejected: "red", Pending: "purple" } as const;

/** One operator's request over many devices (issue 10): its progress, live, its decision, and its actions. */
export function RequestPage({ id }: { id: string }) {
  const trpc = useTRPC();
  const { canOperate } = useMe();
  const request = useQuery(trpc.requests.get.queryOptions({ id, limit: 50 }));
  const decision = useRequestDecision();
  const fourEyes = useFourEyes();

  if (request.isPending) return <DetailLoading title={<Skeleton className="h-6 w-64" />} breadcrumb={breadcrumb} />;
  if (request.isError) {
    return (
      <DetailError
        title={`Request ${shortId(id)}`}
        breadcrumb={breadcrumb}
        error={request.error}
        onRetry={() => void request.refetch()}
        notFound={{
          title: "No such request",
          hint: (
            <>
              There is no request with id <code className="rounded bg-slate-100 px-1">{id}</code>.
            </>
          ),
        }}
        errorTitle="Could not load this request"
      />
    );
  }

  const r = request.data;
  const p = r.progress;
  const n = p.pendingApproval;
  const state = r.decision ?? (n > 0 ? "Pending" : null);
  const args = argsSummary(r.args, 120);
  const target = { id: r.id, summary: r.summary, pendingApproval: n, kind: r.kind, args: argsSummary(r.args, 200), createdBy: r.createdBy };
  const blocked = fourEyes(r.createdBy, "this request");

  return (
    <>
      <PageHeader
        breadcrumb={breadcrumb}
        title={
          <span className="flex flex-wrap items-center gap-3">
            <span data-testid="request-title">{r.summary}</span>
            {state && <StatusBadge table={DECISION_TONES} state={state} data-testid="request-decision" />}
            {isSettled(p) && <StatusBadge table={{ Ended: "gray" }} state="Ended" data-testid="request-ended" />}
          </span>
        }
        description={
          <>
            <code className="text-xs">{r.id}</code> · {r.origin} request by {actorName(r.createdBy)} · <RelativeTime value={r.createdAt} />
          </>
        }
        actions={
          <>
            <YamlButton object={r} what={`request ${r.id}`} />
            {canOperate &&
          n > 0 && (
            <>
              <Button variant="primary" disabled={decision.busy || blocked !== null} title={blocked ?? undefined} onClick={() => decision.start("approve", target)} data-testid="approve-request">
                Approve all {n.toLocaleString("en-US")}
              </Button>
              <Button disabled={decision.busy} onClick={() => decision.start("reject", target)} data-testid="reject-request">
                Reject
              </Button>
            </>
          )}
          </>
        }
      />
      {decision.outcome && <DecisionBanner outcome={decision.outcome} onDismiss={decision.clearOutcome} />}

      <div className="grid gap-4 lg:grid-cols-3">
        <Card className="lg:col-span-2">
          <CardHeader title="Progress" description="Counted from the request's actions as they move; the waiting ones by why they wait." />
          <div className="px-4 py-3">
            <RequestProgress progress={p} legend />
          </div>
        </Card>
        <Card>
          <CardHeader title="Request" actions={<EventLogLink kind="ActionRequest" name={r.id} />} />
          <dl className="grid grid-cols-[auto_1fr] gap-x-4 gap-y-1.5 px-4 py-3 text-sm">
            <dt className="text-slate-600">Kind</dt>
            <dd>
              <code>{r.kind}</code>
            </dd>
            <dt className="text-slate-600">Target</dt>
            <dd data-testid="request-target">
              {r.targetKind === "selector" ? <code className="text-xs">{r.target || "(every device)"}</code> : r.target}
            </dd>
            {args && (
              <>
                <dt className="text-slate-600">Args</dt>
                <dd className="truncate font-mono text-xs" title={JSON.stringify(r.args, null, 2)}>
                  {args}
                </dd>
              </>
            )}
            {r.ref && (
              <>
                <dt className="text-slate-600">From</dt>
                <dd className="font-mono text-xs break-all">{r.ref}</dd>
              </>
            )}
            <dt className="text-slate-600">Decision</dt>
            <dd data-testid="request-decided">
              {r.decision ? (
                <>
                  {r.decision} by {actorName(r.decidedBy)} <AbsoluteTime value={r.decidedAt} />
                  {r.decisionReason && <div className="text-xs text-slate-600">“{r.decisionReason}”</div>}
                </>
              ) : r.requireApproval ? (
                n > 0 ? (
                  "waiting"
                ) : (
                  "decided action by action"
                )
              ) : (
                "needs no approval"
              )}
            </dd>
          </dl>
        </Card>
      </div>

      <Card className="mt-4" data-testid="request-outputs">
        <CardHeader title="Outputs" description="The actions grouped by identical result (state, error, output; trailing whitespace ignored), largest group first, live." />
        <OutputGroups source={{ request: r.id }} />
      </Card>

      <Card className="mt-4">
        <CardHeader
          title={`Actions (${r.actions.total.toLocaleString("en-US")})`}
          description="One per device, newest first."
          actions={
            r.actions.total > r.actions.items.length && (
              <Link prefetch={false} href={actionsHref({ request: r.id })} className="text-xs font-medium text-brand-700 hover:underline" data-testid="request-all-actions">
                All {r.actions.total.toLocaleString("en-US")} →
              </Link>
            )
          }
        />
        <ActionsTable items={r.actions.items} loadingRows={5} empty={<EmptyState title="No actions">This request made no action.</EmptyState>} />
      </Card>
      {decision.dialog}
    </>
  );
}
