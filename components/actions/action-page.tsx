"use client";

import { Link } from "@/components/ui/link";
import { skipToken, useQuery, useQueryClient } from "@tanstack/react-query";
import { useSubscription } from "@trpc/tanstack-react-query";
import { actionMachine, FINAL_ACTION_STATES, type ActionState } from "@/lib/action-status";
import { useTRPC } from "../trpc";
import { useMe } from "../hooks/use-me";
import { PageHeader } from "../ui/page-header";
import { YamlButton } from "../ui/yaml-view";
import { Card, CardHeader } from "../ui/card";
import { ErrorState } from "../ui/states";
import { Skeleton } from "../ui/skeleton";
import { DetailError, DetailLoading } from "../ui/detail-page";
import { StatusBadge } from "../status/status-badge";
import { actionStateTone } from "../status/tones";
import { DecisionBanner, useDecisions } from "../approvals/use-decisions";
import { useFourEyes } from "../approvals/use-four-eyes";
import { EventLogLink } from "../events/object-events-card";
import { DiagramButton } from "../state-diagram/diagram-button";
import { actionDiagramSpec } from "./action-diagram";
import { ActionInfo, ApprovalRecord, ArgsCard, OutputCard, RefusalBanner, WaitingBanner } from "./action-sections";
import { ActionTimeline } from "./action-timeline";
import { CancelActionButton } from "./cancel-action-button";
import { NudgeButton } from "./nudge-button";
import { RerunActionButton } from "./rerun-action-button";
import { argsSummary, shortId } from "./format";

const breadcrumb = (
  <Link href="/actions" className="hover:text-slate-800 hover:underline">
    ← Actions
  </Link>
);

const isFinal = (s: ActionState) => (FINAL_ACTION_STATES as readonly string[]).includes(s);

/**
 * While the action runs, its output as the agent sends it (actions.output, issue 10), written
 * into the action's cached view so the page shows it at once; the end of the run comes as an
 * event, like every state change, and the subscription ends with it.
 */
function useLiveOutput(id: string, running: boolean) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  useSubscription(
    trpc.actions.output.subscriptionOptions(running ? { id } : skipToken, {
      onData: ({ output }) => {
        queryClient.setQueryData(trpc.actions.get.queryKey({ id }), (old) => (old && old.state === "RUNNING" ? { ...old, output } : old));
      },
    }),
  );
}

export function ActionPage({ id }: { id: string }) {
  const trpc = useTRPC();
  const { canOperate } = useMe();
  const action = useQuery(trpc.actions.get.queryOptions({ id }));
  const events = useQuery(trpc.actions.events.queryOptions({ id }));
  const reruns = useQuery(trpc.actions.reruns.queryOptions({ id }));
  useLiveOutput(id, action.data?.state === "RUNNING");
  const fourEyes = useFourEyes();
  const decisions = useDecisions({ afterConflict: "This page now shows the decision that was made." });

  if (action.isPending) return <DetailLoading title={<Skeleton className="h-6 w-40" />} breadcrumb={breadcrumb} />;
  if (action.isError) {
    return (
      <DetailError
        title={`Action ${shortId(id)}`}
        breadcrumb={breadcrumb}
        error={action.error}
        onRetry={() => void action.refetch()}
        notFound={{
          title: "No such action",
          hint: (
            <>
              There is no action with id <code className="rounded bg-slate-100 px-1">{id}</code>.
            </>
          ),
        }}
        errorTitle="Could not load this action"
      />
    );
  }

  const a = action.data;
  const final = isFinal(a.state);
  const cancelRequested = a.cancelRequestedAt !== null && (a.state === "NEW" || a.state === "RUNNING");

  return (
    <>
      <PageHeader
        breadcrumb={breadcrumb}
        title={
          <span className="flex flex-wrap items-center gap-3">
            <span>
              <code className="font-semibold">{a.kind}</code>
              <span className="font-normal text-slate-500"> on </span>
              <Link href={`/devices/${encodeURIComponent(a.device)}`} className="text-brand-700 hover:underline" data-testid="action-device">
                {a.device}
              </Link>
            </span>
            <StatusBadge table={actionStateTone} state={a.state} data-testid="action-state" />
            <DiagramButton
              spec={actionDiagramSpec}
              current={a.state}
              highlight={actionStateTone[a.state]}
              title="Action state"
              description={actionMachine.states[a.state]?.description}
              legend={{ transient: false, notYetSupported: false }}
              testId="state-diagram-action"
            />
          </span>
        }
        description={
          <>
            <code className="text-xs">{a.id}</code> · {a.origin} action
          </>
        }
        actions={
          <>
            <YamlButton object={a} what={`action ${a.id}`} />
            {canOperate && (
            <>
              {final && <RerunActionButton action={a} />}
              {!final && <NudgeButton kind="Action" name={a.id} testId="nudge-action" />}
              {!final &&
                (cancelRequested ? (
                  <span className="rounded-md bg-amber-50 px-3 py-2 text-sm font-medium text-amber-800 ring-1 ring-amber-600/25 ring-inset" data-testid="cancel-pending">
                    Cancel requested…
                  </span>
                ) : (
                  <CancelActionButton id={a.id} state={a.state} kind={a.kind} device={a.device} />
                ))}
            </>
          )}
          </>
        }
      />
      {decisions.outcome && <DecisionBanner outcome={decisions.outcome} />}
      <RefusalBanner refusal={a.refusal} />
      <WaitingBanner waiting={a.waiting} />
      {/* What the operator came for first: the output; the state's diagram is a click away (header). */}
      <OutputCard action={a} />
      <div className="mt-4 grid gap-4 lg:grid-cols-2">
        <ActionInfo action={a} reruns={reruns.data} />
        <div className="space-y-4">
          <ApprovalRecord
            action={a}
            canOperate={canOperate}
            approveBlocked={fourEyes(a.createdBy, "this action")}
            onDecide={(d) => decisions.start(d, [{ id: a.id, kind: a.kind, device: a.device, args: argsSummary(a.args, 200), refusal: a.refusal, blocked: fourEyes(a.createdBy, "this action") }])}
          />
          <ArgsCard args={a.args} />
        </div>
      </div>
      <div className="mt-4">
        <Card>
          <CardHeader
            title="Timeline"
            description="Every event of this action, oldest first."
            actions={<EventLogLink kind="Action" name={a.id} />}
          />
          {events.isError ? <ErrorState error={events.error} onRetry={() => void events.refetch()} /> : <ActionTimeline events={events.data} />}
        </Card>
      </div>
      {decisions.dialog}
    </>
  );
}
