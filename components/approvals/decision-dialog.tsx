"use client";

import { ReasonDialog } from "../ui/reason-dialog";
import { shortId } from "../actions/format";

export type Decision = "approve" | "reject";

export interface DecisionTarget {
  id: string;
  kind: string;
  device: string;
  /** Why its device's agent will refuse it, when known (lib/action-capability.ts). */
  refusal?: string | null;
}

/** Approving or rejecting one or many actions, with an optional reason kept in the approval record. */
export function DecisionDialog({
  decision,
  targets,
  open,
  pending,
  error,
  onCancel,
  onConfirm,
}: {
  decision: Decision;
  targets: DecisionTarget[];
  open: boolean;
  pending: boolean;
  error: string | null;
  onCancel: () => void;
  onConfirm: (reason: string) => void;
}) {
  const approve = decision === "approve";
  const n = targets.length;
  const first = targets[0];
  const what = n === 1 && first ? `${first.kind} on ${first.device}` : `${n} actions`;
  const verb = approve ? "Approve" : "Reject";
  return (
    <ReasonDialog
      open={open}
      pending={pending}
      error={error}
      title={`${verb} ${what}?`}
      onCancel={onCancel}
      onConfirm={onConfirm}
      confirmLabel={pending ? (approve ? "Approving…" : "Rejecting…") : `${verb}${n === 1 ? "" : ` ${n}`}`}
      confirmVariant={approve ? "primary" : "danger"}
      confirmDisabled={n === 0}
      placeholder={approve ? "e.g. change ticket OPS-1234" : "e.g. not during business hours"}
      keyboard
      testIds={{ dialog: "decision-dialog", confirm: "confirm-decision", reason: "decision-reason" }}
    >
      <p>
        {approve
          ? `${n === 1 ? "It is" : "They are"} scheduled on ${n === 1 ? "its device" : "their devices"} next (PENDING_SCHEDULE), as soon as ${n === 1 ? "the device is" : "each device is"} Online.`
          : `${n === 1 ? "It" : "They"} will not run (CANCELLED).`}{" "}
        Your name and the reason are kept in the approval record.
      </p>
      {approve && targets.some((t) => t.refusal) && (
        <p className="rounded-md bg-red-50 px-3 py-2 text-xs text-red-900 ring-1 ring-red-600/20 ring-inset" role="alert" data-testid="decision-refusal">
          {n === 1
            ? `The device will refuse it: ${first?.refusal ?? ""}`
            : `${targets.filter((t) => t.refusal).length} of them will be refused by their devices, e.g. ${targets.find((t) => t.refusal)?.device}: ${targets.find((t) => t.refusal)?.refusal}`}
        </p>
      )}
      {n > 1 && (
        <ul className="max-h-32 overflow-y-auto rounded bg-slate-50 px-2 py-1 font-mono text-xs text-slate-600">
          {targets.map((t) => (
            <li key={t.id}>
              {t.kind} on {t.device} <span className="text-slate-500">{shortId(t.id)}</span>
            </li>
          ))}
        </ul>
      )}
    </ReasonDialog>
  );
}
