"use client";

import { shortId } from "../actions/format";
import { ApprovalDialog, type Decision } from "./approval-dialog";

export type { Decision } from "./approval-dialog";

export interface DecisionTarget {
  id: string;
  kind: string;
  device: string;
  /** Its arguments in one line (actions/format argsSummary), when known. */
  args?: string;
  /** Why its device's agent will refuse it, when known (lib/action-capability.ts). */
  refusal?: string | null;
  /** Why the signed-in operator may not approve it (four eyes), when so. */
  blocked?: string | null;
}

/** Approving or rejecting one or many actions, through the one approval dialog. */
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
  const kinds = [...new Set(targets.map((t) => t.kind))];
  const work = n === 1 && first ? `${first.kind}${first.args ? `: ${first.args}` : ""}` : kinds.join(", ");
  const blocked = targets.find((t) => t.blocked);
  return (
    <ApprovalDialog
      decision={decision}
      subject={{ kind: n === 1 ? "action" : `${n} actions`, work, devices: new Set(targets.map((t) => t.device)).size }}
      title={`${approve ? "Approve" : "Reject"} ${what}?`}
      consequence={
        approve
          ? `${n === 1 ? "It is" : "They are"} scheduled on ${n === 1 ? "its device" : "their devices"} next (PENDING_SCHEDULE), as soon as ${n === 1 ? "the device is" : "each device is"} Online.`
          : `${n === 1 ? "It" : "They"} will not run (CANCELLED).`
      }
      blocked={blocked ? (n === 1 ? (blocked.blocked ?? null) : `Four eyes: you requested ${blocked.kind} on ${blocked.device}; leave your own actions out, another operator must approve them.`) : null}
      open={open}
      pending={pending}
      error={error}
      confirmLabel={`${approve ? "Approve" : "Reject"}${n === 1 ? "" : ` ${n}`}`}
      onCancel={onCancel}
      onConfirm={onConfirm}
      testIds={{ dialog: "decision-dialog", confirm: "confirm-decision", reason: "decision-reason" }}
    >
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
    </ApprovalDialog>
  );
}
