"use client";

import { Link } from "@/components/ui/link";
import type { PlanView } from "@/lib/plan-status";
import { Card, CardHeader } from "../ui/card";
import { Field } from "../ui/field";
import { AbsoluteTime, RelativeTime } from "../ui/time";
import { Actor } from "../events/object-link";
import { CountsBar, CountsLegend } from "../fleets/counts-bar";
import { countSegments, progressText, specIdOf } from "./plan-view";

function PlanLink({ id, testId }: { id: string; testId?: string }) {
  return (
    <Link href={`/plans/${encodeURIComponent(id)}`} className="font-mono text-xs text-brand-700 hover:underline" data-testid={testId}>
      {id}
    </Link>
  );
}

/** Who made the plan and when, its approval and deadline, the plans it retries or that retry it, and its progress over every command. */
export function PlanSummary({ plan }: { plan: PlanView }) {
  const { metadata: m, status: s } = plan;
  const segments = countSegments(s.counts);
  const specId = specIdOf(plan);
  return (
    <Card data-testid="plan-summary">
      <CardHeader title="Plan" description={`${s.commands.length} command${s.commands.length === 1 ? "" : "s"}, run in order; the next starts when the one before is Completed.`} />
      <div className="space-y-1.5 border-b border-slate-100 px-4 py-3">
        <div className="flex flex-wrap items-center justify-between gap-2 text-xs text-slate-600">
          <span className="font-medium tabular-nums" data-testid="plan-progress" data-completed={s.counts.SignalCompleted} data-total={s.counts.total}>
            {progressText(s.counts)}
          </span>
          <CountsLegend segments={segments.filter((x) => x.count > 0)} />
        </div>
        <CountsBar segments={segments} total={s.counts.total} />
      </div>
      <dl className="grid grid-cols-2 gap-x-6 gap-y-3 px-4 py-3 md:grid-cols-3">
        <Field label="Id">
          <span className="font-mono text-xs" data-testid="plan-id">
            {m.id}
          </span>
        </Field>
        <Field label="spec.id">{specId ? <span className="font-mono text-xs">{specId}</span> : <span className="text-slate-500">—</span>}</Field>
        <Field label="apiVersion">
          <span className="font-mono text-xs">{plan.apiVersion}</span>
        </Field>
        <Field label="Created by">
          <Actor actor={m.createdBy} />
        </Field>
        <Field label="Created">
          <RelativeTime value={m.creationTimestamp} /> <span className="text-xs text-slate-500">(<AbsoluteTime value={m.creationTimestamp} />)</span>
        </Field>
        <Field label="Approval">
          <span data-testid="plan-approval">
            {!s.approval.required ? (
              <span className="text-slate-500">not required</span>
            ) : s.approval.approvedBy ? (
              <>
                approved by <Actor actor={s.approval.approvedBy} /> <RelativeTime value={s.approval.approvedAt} />
                {s.approval.reason && <span className="block text-xs text-slate-600" data-testid="plan-approval-reason">“{s.approval.reason}”</span>}
              </>
            ) : (
              <span className="font-medium text-amber-700">required, not given yet</span>
            )}
          </span>
        </Field>
        <Field label="Started">
          <RelativeTime value={s.startedAt} never="not yet" />
        </Field>
        <Field label="Ended">
          <RelativeTime value={s.endedAt} never="—" />
        </Field>
        <Field label="Deadline">
          {s.deadline ? (
            <>
              {s.deadline}
              {s.deadlineAt && (
                <span className="text-xs text-slate-500">
                  {" "}
                  (<RelativeTime value={s.deadlineAt} />)
                </span>
              )}
            </>
          ) : (
            <span className="text-slate-500">none</span>
          )}
        </Field>
        {m.retryOf && (
          <Field label="Retry of">
            <PlanLink id={m.retryOf} testId="plan-retry-of" />
          </Field>
        )}
        {m.retriedBy.length > 0 && (
          <Field label="Retried by">
            <span className="flex flex-wrap gap-x-2">
              {m.retriedBy.map((id) => (
                <PlanLink key={id} id={id} testId={`plan-retried-by-${id}`} />
              ))}
            </span>
          </Field>
        )}
        {s.cancelRequestedBy && (
          <Field label="Cancelled by">
            <Actor actor={s.cancelRequestedBy} />
          </Field>
        )}
      </dl>
    </Card>
  );
}
