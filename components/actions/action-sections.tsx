"use client";

import { Link } from "@/components/ui/link";
import { useLayoutEffect, useRef } from "react";
import type { ActionDetail } from "../trpc";
import { Card, CardHeader } from "../ui/card";
import { Badge } from "../ui/badge";
import { Button } from "../ui/button";
import { AbsoluteTime, RelativeTime } from "../ui/time";
import { StatusBadge } from "../status/status-badge";
import { summaryTone } from "../status/tones";
import { actorName, shortId } from "./format";
import { ActionDuration } from "./action-duration";
import { Field } from "../ui/field";

function When({ value }: { value: string | Date | null }) {
  if (!value) return <span className="text-slate-500">—</span>;
  return (
    <span title={String(value)}>
      <RelativeTime value={value} /> <span className="text-xs text-slate-500">(<AbsoluteTime value={value} />)</span>
    </span>
  );
}

/** The actions that run this one again, newest first (actions.reruns). */
export type ActionReruns = { id: string; state: string; createdAt: string | Date }[];

export function ActionInfo({ action, reruns }: { action: ActionDetail; reruns?: ActionReruns | undefined }) {
  const cancelling = action.cancelRequestedAt && (action.state === "NEW" || action.state === "RUNNING");
  const final = ["DONE", "FAILED", "CANCELLED", "LOST"].includes(action.state);
  return (
    <Card>
      <CardHeader title="Action" />
      <dl className="grid grid-cols-1 gap-x-6 gap-y-3 sm:grid-cols-2 px-4 py-3">
        <div className="col-span-2 min-w-0">
          <dt className="text-xs text-slate-500">Id</dt>
          <dd className="mt-0.5 text-sm break-all text-slate-900">
            <code className="text-[12px]" data-testid="action-id">
              {action.id}
            </code>
          </dd>
        </div>
        <Field label="Device">
          <span className="inline-flex items-center gap-2">
            <Link href={`/devices/${encodeURIComponent(action.device)}`} className="font-medium text-brand-700 hover:underline">
              {action.device}
            </Link>
            <StatusBadge table={summaryTone} state={action.deviceSummary} />
          </span>
        </Field>
        <Field label="Kind">
          <code className="text-[13px]">{action.kind}</code>
        </Field>
        <Field label="Origin">{action.origin}</Field>
        <Field label="Created">
          <When value={action.createdAt} />
        </Field>
        <Field label="Created by">{actorName(action.createdBy)}</Field>
        <Field label="Offered to the agent">
          <When value={action.offeredAt} />
        </Field>
        <Field label="Started">
          <When value={action.startedAt} />
        </Field>
        <Field label="Finished">
          <When value={action.finishedAt} />
        </Field>
        <Field label={final ? "Duration" : action.state === "RUNNING" ? "Running for" : "Waiting for"}>
          <ActionDuration action={action} testId="action-duration" />
        </Field>
        {action.rerunOf && (
          <Field label="Rerun of">
            <Link href={`/actions/${encodeURIComponent(action.rerunOf)}`} className="font-mono text-brand-700 hover:underline" data-testid="action-rerun-of" title={action.rerunOf}>
              {shortId(action.rerunOf)}
            </Link>
          </Field>
        )}
        {reruns && reruns.length > 0 && (
          <Field label="Rerun as">
            <span className="flex flex-wrap gap-x-2" data-testid="action-reruns">
              {reruns.map((r) => (
                <Link key={r.id} href={`/actions/${encodeURIComponent(r.id)}`} className="font-mono text-brand-700 hover:underline" title={`${r.id} (${r.state})`}>
                  {shortId(r.id)}
                </Link>
              ))}
            </span>
          </Field>
        )}
        <Field label="Last change">
          <When value={action.updatedAt} />
        </Field>
        {action.expiresAt && (
          <Field label="Expires">
            <span data-testid="action-expires">
              <When value={action.expiresAt} />
            </span>
          </Field>
        )}
        {action.cancelRequestedAt && (
          <Field label="Cancel requested">
            <RelativeTime value={action.cancelRequestedAt} /> by {actorName(action.cancelRequestedBy)}
          </Field>
        )}
      </dl>
      {cancelling && (
        <p className="border-t border-slate-100 bg-amber-50 px-4 py-2 text-xs text-amber-800" data-testid="cancel-requested">
          Cancel requested: the agent is told in its long-poll and reports CANCELLED once it has stopped the action.
        </p>
      )}
    </Card>
  );
}

/** Who approved or rejected the action, when and why; or that it needs no approval. */
export function ApprovalRecord({
  action,
  canOperate,
  approveBlocked = null,
  onDecide,
}: {
  action: ActionDetail;
  canOperate: boolean;
  /** Why the signed-in operator may not approve it (four eyes), or null. */
  approveBlocked?: string | null;
  onDecide: (decision: "approve" | "reject") => void;
}) {
  const waiting = action.state === "PENDING_APPROVE";
  return (
    <Card data-testid="approval-record">
      <CardHeader title="Approval" description={action.requireApproval ? "This action needs an operator's approval before it may run." : undefined} />
      <div className="px-4 py-3 text-sm">
        {waiting ? (
          <div className="flex flex-wrap items-center justify-between gap-3">
            <span className="flex items-center gap-2">
              <Badge tone="purple">Waiting for approval</Badge>
              <span className="text-slate-500">
                since <RelativeTime value={action.createdAt} />
              </span>
            </span>
            {canOperate && (
              <span className="flex gap-2">
                <Button size="sm" variant="primary" data-testid="approve-action" disabled={approveBlocked !== null} title={approveBlocked ?? undefined} onClick={() => onDecide("approve")}>
                  Approve…
                </Button>
                <Button size="sm" data-testid="reject-action" onClick={() => onDecide("reject")}>
                  Reject…
                </Button>
              </span>
            )}
          </div>
        ) : action.decision ? (
          <dl className="grid grid-cols-1 gap-x-6 gap-y-3 sm:grid-cols-2">
            <Field label="Decision">
              <Badge tone={action.decision === "Approved" ? "green" : "red"} data-testid="approval-decision">
                {action.decision}
              </Badge>
            </Field>
            <Field label="By">
              <span data-testid="approval-decided-by">{actorName(action.decidedBy)}</span>
            </Field>
            <Field label="When">
              <When value={action.decidedAt} />
            </Field>
            <div className="col-span-2 min-w-0">
              <dt className="text-xs text-slate-500">Reason</dt>
              <dd className="mt-0.5 text-sm break-words text-slate-900" data-testid="approval-reason">
                {action.decisionReason ? `“${action.decisionReason}”` : <span className="text-slate-500">none given</span>}
              </dd>
            </div>
          </dl>
        ) : action.requireApproval ? (
          <p className="text-slate-500">Cancelled before anyone decided.</p>
        ) : (
          <p className="text-slate-500">No approval needed: its kind is not in the server&apos;s approval policy and none was requested.</p>
        )}
      </div>
    </Card>
  );
}

export function ArgsCard({ args }: { args: Record<string, unknown> }) {
  const empty = Object.keys(args).length === 0;
  return (
    <Card>
      <CardHeader title="Args" />
      {empty ? (
        <p className="px-4 py-3 text-sm text-slate-500">No args.</p>
      ) : (
        <pre className="max-h-80 overflow-auto px-4 py-3 font-mono text-[12px] leading-5 text-slate-800" data-testid="action-args-json">
          {JSON.stringify(args, null, 2)}
        </pre>
      )}
    </Card>
  );
}

export function OutputCard({ action }: { action: ActionDetail }) {
  const output = action.output ?? "";
  const finished = action.finishedAt !== null;
  const running = action.state === "RUNNING";
  const pre = useRef<HTMLPreElement>(null);
  // Follows the end while the operator is at the bottom; scrolled up to read, it stays put.
  const atBottom = useRef(true);
  useLayoutEffect(() => {
    const el = pre.current;
    if (el && atBottom.current) el.scrollTop = el.scrollHeight;
  }, [output]);
  return (
    <Card>
      <CardHeader
        title="Output"
        description={
          finished
            ? "As reported by the agent when the action ended."
            : running
              ? "The output so far, sent by the agent while the action runs (at most once a second)."
              : "The agent sends output once the action runs; it appears here as it comes."
        }
        actions={
          running ? (
            <span className="inline-flex items-center gap-1.5 text-xs font-medium text-slate-600" data-testid="output-live">
              <span className="size-2 animate-pulse rounded-full bg-emerald-500" aria-hidden="true" />
              live
            </span>
          ) : undefined
        }
      />
      {action.error && (
        <div className="border-b border-red-100 bg-red-50 px-4 py-2.5 text-sm text-red-800" role="alert" data-testid="action-error">
          <span className="font-medium">Error: </span>
          <span className="break-words">{action.error}</span>
        </div>
      )}
      <pre
        ref={pre}
        onScroll={(e) => {
          const el = e.currentTarget;
          atBottom.current = el.scrollTop + el.clientHeight >= el.scrollHeight - 8;
        }}
        data-testid="action-output"
        data-running={running ? "true" : undefined}
        tabIndex={0}
        className="palette-light max-h-[28rem] min-h-24 overflow-auto rounded-b-lg bg-slate-950 px-4 py-3 font-mono text-[12px] leading-5 whitespace-pre-wrap text-slate-100 [overflow-wrap:anywhere]"
      >
        {output || <span className="text-slate-400">{finished ? "(no output)" : "(nothing yet)"}</span>}
      </pre>
    </Card>
  );
}

/** Why the action has not moved on yet (lib/action-wait.ts, computed by the server when read); nothing once it runs or ends. */
export function WaitingBanner({ waiting }: { waiting: ActionDetail["waiting"] }) {
  if (!waiting) return null;
  return (
    <div className="mb-4 rounded-lg bg-amber-50 px-4 py-3 text-sm text-amber-900 ring-1 ring-amber-600/20 ring-inset" role="status" data-testid="action-waiting" data-reason={waiting.reason}>
      <span className="font-semibold">Waiting: </span>
      {waiting.message}
    </div>
  );
}

/** Its device's agent will refuse it (lib/action-capability.ts): said before it is approved or sent. */
export function RefusalBanner({ refusal }: { refusal: ActionDetail["refusal"] }) {
  if (!refusal) return null;
  return (
    <div className="mb-4 rounded-lg bg-red-50 px-4 py-3 text-sm text-red-900 ring-1 ring-red-600/20 ring-inset" role="alert" data-testid="action-refusal">
      <span className="font-semibold">The device will refuse this action: </span>
      {refusal}
    </div>
  );
}
