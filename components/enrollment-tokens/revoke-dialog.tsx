"use client";

import { Dialog } from "../ui/dialog";
import { Button } from "../ui/button";
import { InlineError } from "../ui/states";
import type { EnrollmentToken } from "./types";

/** Revoking cannot be undone: say what stops working, and what does not, before it happens. */
export function RevokeEnrollmentTokenDialog({
  token,
  pending,
  error,
  onCancel,
  onConfirm,
}: {
  token: EnrollmentToken | null;
  pending: boolean;
  error: string | null;
  onCancel: () => void;
  onConfirm: () => void;
}) {
  return (
    <Dialog
      open={token !== null}
      onClose={() => !pending && onCancel()}
      title={token ? `Revoke “${token.name}”?` : "Revoke"}
      data-testid="revoke-enrollment-token-dialog"
      footer={
        <>
          <Button onClick={onCancel} disabled={pending}>
            Cancel
          </Button>
          <Button variant="danger" data-testid="confirm-revoke-enrollment-token" disabled={pending} onClick={onConfirm}>
            {pending ? "Revoking…" : "Revoke token"}
          </Button>
        </>
      }
    >
      {token && (
        <div className="space-y-3">
          <p>
            Machines that enroll with this token from now on are refused, and their agent stops saying why.{" "}
            {token.uses === 0 ? "No device has enrolled with it yet." : token.uses === 1 ? "The device it enrolled stays as it is." : `The ${token.uses} devices it enrolled stay as they are.`} This
            cannot be undone.
          </p>
          <p className="rounded bg-slate-50 px-2 py-1 font-mono text-xs text-slate-600">{token.prefix}…</p>
          {error && <InlineError>{error}</InlineError>}
        </div>
      )}
    </Dialog>
  );
}
