"use client";

import { useState } from "react";
import { Dialog } from "../ui/dialog";
import { Button } from "../ui/button";
import { InlineError } from "../ui/states";

/** Denying asks for an optional reason, shown to operators in the log. */
export function DenyDialog({
  names,
  open,
  pending,
  error,
  onCancel,
  onConfirm,
}: {
  names: string[];
  open: boolean;
  pending: boolean;
  error: string | null;
  onCancel: () => void;
  onConfirm: (reason: string) => void;
}) {
  const [reason, setReason] = useState("");
  const title = names.length === 1 ? `Deny ${names[0]}?` : `Deny ${names.length} enrollment requests?`;
  return (
    <Dialog
      open={open}
      onClose={() => !pending && onCancel()}
      title={title}
      data-testid="deny-dialog"
      footer={
        <>
          <Button onClick={onCancel} disabled={pending}>
            Cancel
          </Button>
          <Button variant="danger" data-testid="confirm-deny" disabled={pending} onClick={() => onConfirm(reason.trim())}>
            {pending ? "Denying…" : names.length === 1 ? "Deny request" : `Deny ${names.length} requests`}
          </Button>
        </>
      }
    >
      <div className="space-y-3">
        <p>The agent{names.length === 1 ? "" : "s"} will back off. A device can ask again later with a new secret.</p>
        {names.length > 1 && (
          <p className="max-h-24 overflow-y-auto rounded bg-slate-50 px-2 py-1 font-mono text-xs text-slate-600">{names.join(", ")}</p>
        )}
        {error && <InlineError>{error}</InlineError>}
        <label className="block">
          <span className="mb-1 block text-slate-700">
            Reason <span className="text-slate-400">(optional)</span>
          </span>
          <textarea
            data-testid="deny-reason"
            rows={3}
            maxLength={1024}
            value={reason}
            onChange={(e) => setReason(e.target.value)}
            placeholder="e.g. unknown device, not on the inventory"
            className="block w-full rounded-md border-0 px-3 py-2 text-sm text-slate-900 ring-1 ring-slate-300 ring-inset focus:ring-2 focus:ring-brand-500 focus:outline-none"
          />
        </label>
      </div>
    </Dialog>
  );
}
