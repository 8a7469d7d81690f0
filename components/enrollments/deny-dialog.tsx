"use client";

import { ReasonDialog } from "../ui/reason-dialog";

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
  const title = names.length === 1 ? `Deny ${names[0]}?` : `Deny ${names.length} enrollment requests?`;
  return (
    <ReasonDialog
      open={open}
      pending={pending}
      error={error}
      title={title}
      onCancel={onCancel}
      onConfirm={onConfirm}
      confirmLabel={pending ? "Denying…" : names.length === 1 ? "Deny request" : `Deny ${names.length} requests`}
      placeholder="e.g. unknown device, not on the inventory"
      testIds={{ dialog: "deny-dialog", confirm: "confirm-deny", reason: "deny-reason" }}
    >
      <p>The agent{names.length === 1 ? "" : "s"} will back off. A device can ask again later with a new secret.</p>
      {names.length > 1 && (
        <p className="max-h-24 overflow-y-auto rounded bg-slate-50 px-2 py-1 font-mono text-xs text-slate-600">{names.join(", ")}</p>
      )}
    </ReasonDialog>
  );
}
