"use client";

import { ReasonDialog } from "../ui/reason-dialog";

/**
 * Clearing the inbox (e.g. after a flood): every request Pending when the operator confirms,
 * optionally only those from one client address, with one optional reason.
 */
export function DenyAllDialog({
  open,
  count,
  address,
  pending,
  error,
  onCancel,
  onConfirm,
}: {
  open: boolean;
  /** Pending now, as the page last saw it. */
  count: number;
  address: string | null;
  pending: boolean;
  error: string | null;
  onCancel: () => void;
  onConfirm: (reason: string) => void;
}) {
  const what = `${count === 1 ? "the pending request" : `all ${count.toLocaleString()} pending requests`}${address ? ` from ${address}` : ""}`;
  return (
    <ReasonDialog
      open={open}
      pending={pending}
      error={error}
      title={`Deny ${what}?`}
      onCancel={onCancel}
      onConfirm={onConfirm}
      confirmLabel={pending ? "Denying…" : "Deny all pending"}
      placeholder="e.g. enrollment flood from one address"
      testIds={{ dialog: "deny-all-dialog", confirm: "confirm-deny-all", reason: "deny-all-reason" }}
    >
      <p>
        Every request {address ? <>from <code className="rounded bg-slate-100 px-1">{address}</code> </> : null}that is Pending when you confirm is
        denied, including any that arrived since this page counted them. Their agents back off; a device can ask again later
        with a new secret.
      </p>
    </ReasonDialog>
  );
}
