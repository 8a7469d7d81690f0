"use client";

import Link from "next/link";
import type { ActionDetail } from "../trpc";
import { Card, CardHeader } from "../ui/card";
import { Badge } from "../ui/badge";
import { Button } from "../ui/button";
import { AbsoluteTime, RelativeTime } from "../ui/time";
import { StatusBadge } from "../status/status-badge";
import { summaryTone } from "../status/tones";
import { actorName } from "./format";
import { Field } from "../ui/field";

function When({ value }: { value: string | Date | null }) {
  if (!value) return <span className="text-slate-500">—</span>;
  return (
    <span title={String(value)}>
      <RelativeTime value={value} /> <span className="text-xs text-slate-500">(<AbsoluteTime value={value} />)</span>
    </span>
  );
}

export function ActionInfo({ action }: { action: ActionDetail }) {
  const cancelling = action.cancelRequestedAt && (action.state === "NEW" || action.state === "RUNNING");
  return (
    <Card>
      <CardHeader title="Action" />
      <dl className="grid grid-cols-2 gap-x-6 gap-y-3 px-4 py-3">
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
  onDecide,
}: {
  action: ActionDetail;
  canOperate: boolean;
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
                <Button size="sm" variant="primary" data-testid="approve-action" onClick={() => onDecide("approve")}>
                  Approve…
                </Button>
                <Button size="sm" data-testid="reject-action" onClick={() => onDecide("reject")}>
                  Reject…
                </Button>
              </span>
            )}
          </div>
        ) : action.decision ? (
          <dl className="grid grid-cols-2 gap-x-6 gap-y-3">
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
  return (
    <Card>
      <CardHeader
        title="Output"
        description={
finished ? "As reported by the agent when the action ended." : "The agent reports output when the action ends; it appears here then."
        }
      />
      {action.error && (
        <div className="border-b border-red-100 bg-red-50 px-4 py-2.5 text-sm text-red-800" role="alert" data-testid="action-error">
          <span className="font-medium">Error: </span>
          <span className="break-words">{action.error}</span>
        </div>
      )}
      <pre
        data-testid="action-output"
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
