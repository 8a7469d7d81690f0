"use client";

import { useState } from "react";
import { Dialog } from "../ui/dialog";
import { Button } from "../ui/button";
import { InlineError } from "../ui/states";
import { shortId } from "../actions/format";

export type Decision = "approve" | "reject";

export interface DecisionTarget {
  id: string;
  kind: string;
  device: string;
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
  const [reason, setReason] = useState("");
  const approve = decision === "approve";
  const n = targets.length;
  const first = targets[0];
  const what = n === 1 && first ? `${first.kind} on ${first.device}` : `${n} actions`;
  const verb = approve ? "Approve" : "Reject";
  return (
    <Dialog
      open={open}
      onClose={() => !pending && onCancel()}
      title={`${verb} ${what}?`}
      data-testid="decision-dialog"
      footer={
        <>
          <Button onClick={onCancel} disabled={pending}>
            Cancel
          </Button>
          <Button variant={approve ? "primary" : "danger"} data-testid="confirm-decision" disabled={pending || n === 0} onClick={() => onConfirm(reason.trim())}>
            {pending ? (approve ? "Approving…" : "Rejecting…") : `${verb}${n === 1 ? "" : ` ${n}`}`}
          </Button>
        </>
      }
    >
      <form
        className="space-y-3"
        onSubmit={(e) => {
          e.preventDefault();
          if (!pending && n > 0) onConfirm(reason.trim());
        }}
      >
        <p>
          {approve
            ? `${n === 1 ? "It is" : "They are"} scheduled on ${n === 1 ? "its device" : "their devices"} next (PENDING_SCHEDULE), as soon as ${n === 1 ? "the device is" : "each device is"} Online.`
            : `${n === 1 ? "It" : "They"} will not run (CANCELLED).`}{" "}
          Your name and the reason are kept in the approval record.
        </p>
        {n > 1 && (
          <ul className="max-h-32 overflow-y-auto rounded bg-slate-50 px-2 py-1 font-mono text-xs text-slate-600">
            {targets.map((t) => (
              <li key={t.id}>
                {t.kind} on {t.device} <span className="text-slate-400">{shortId(t.id)}</span>
              </li>
            ))}
          </ul>
        )}
        {error && <InlineError>{error}</InlineError>}
        <label className="block">
          <span className="mb-1 block text-slate-700">
            Reason <span className="text-slate-400">(optional)</span>
          </span>
          <textarea
            data-testid="decision-reason"
            rows={3}
            maxLength={1024}
            autoFocus
            value={reason}
            onChange={(e) => setReason(e.target.value)}
            onKeyDown={(e) => {
              // Ctrl/Cmd+Enter confirms from the reason box.
              if (e.key === "Enter" && (e.metaKey || e.ctrlKey) && !pending && n > 0) onConfirm(reason.trim());
            }}
            placeholder={approve ? "e.g. change ticket OPS-1234" : "e.g. not during business hours"}
            className="block w-full rounded-md border-0 px-3 py-2 text-sm text-slate-900 ring-1 ring-slate-300 ring-inset focus:ring-2 focus:ring-brand-500 focus:outline-none"
          />
        </label>
      </form>
    </Dialog>
  );
}
