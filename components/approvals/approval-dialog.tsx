"use client";

import type { ReactNode } from "react";
import { ReasonDialog } from "../ui/reason-dialog";

export type Decision = "approve" | "reject";

/** What an approval lets run: the same three facts for an action, a request or a plan. */
export interface ApprovalSubject {
  /** "action", "actions", "request", "plan". */
  kind: string;
  /** The work itself: `exec: uptime`, `k0supdate v1.30.0`, a request's summary. */
  work: string;
  /** Devices it reaches once approved. */
  devices: number;
}

/**
 * The one dialog for every operator decision on work (issue 21): single actions and several,
 * requests, plans. It says what will happen (kind, the work, how many devices) and asks for a
 * reason: required to approve, since the approval record is where the next person reads why
 * something ran on N devices; optional to reject, which lets nothing run. The API keeps the
 * reason optional for scripts. `blocked` (four eyes: you requested it) says why it cannot be
 * approved here, and keeps Approve disabled.
 */
export function ApprovalDialog({
  decision,
  subject,
  title,
  consequence,
  blocked = null,
  open,
  pending,
  error,
  confirmLabel,
  onCancel,
  onConfirm,
  children,
  testIds,
}: {
  decision: Decision;
  subject: ApprovalSubject;
  title: ReactNode;
  /** What happens on confirm, in the states the operator will see. */
  consequence: ReactNode;
  blocked?: string | null;
  open: boolean;
  pending: boolean;
  error: ReactNode;
  /** Defaults to "Approve" / "Reject". */
  confirmLabel?: string;
  onCancel: () => void;
  onConfirm: (reason: string) => void;
  /** Details below the summary (the actions listed, a device's refusal). */
  children?: ReactNode;
  testIds: { dialog: string; confirm: string; reason: string };
}) {
  const approve = decision === "approve";
  const verb = approve ? "Approve" : "Reject";
  return (
    <ReasonDialog
      open={open}
      pending={pending}
      error={error}
      title={title}
      onCancel={onCancel}
      onConfirm={onConfirm}
      confirmLabel={pending ? (approve ? "Approving…" : "Rejecting…") : (confirmLabel ?? verb)}
      confirmVariant={approve ? "primary" : "danger"}
      confirmDisabled={subject.devices === 0 || (approve && blocked !== null)}
      required={approve}
      placeholder={approve ? "Why it may run, e.g. change ticket OPS-1234" : "e.g. not during business hours"}
      keyboard
      testIds={testIds}
    >
      <dl className="grid grid-cols-[auto_1fr] gap-x-4 gap-y-1 rounded-md bg-slate-50 px-3 py-2 text-sm" data-testid="approval-summary">
        <dt className="text-slate-500">Kind</dt>
        <dd data-testid="approval-kind">{subject.kind}</dd>
        <dt className="text-slate-500">Work</dt>
        <dd className="font-mono text-xs break-all" data-testid="approval-work">
          {subject.work}
        </dd>
        <dt className="text-slate-500">Devices</dt>
        <dd className="tabular-nums" data-testid="approval-devices">
          {subject.devices.toLocaleString("en-US")}
        </dd>
      </dl>
      <p>
        {consequence} Your name and the reason are kept in the approval record.
      </p>
      {approve && blocked && (
        <p className="rounded-md bg-amber-50 px-3 py-2 text-xs text-amber-900 ring-1 ring-amber-600/25 ring-inset" role="alert" data-testid="approval-blocked">
          {blocked}
        </p>
      )}
      {children}
    </ReasonDialog>
  );
}
