"use client";

import { RevokeDialog } from "../ui/revoke-dialog";
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
  const uses = token?.uses ?? 0;
  return (
    <RevokeDialog
      open={token !== null}
      title={token ? `Revoke “${token.name}”?` : "Revoke"}
      testId="revoke-enrollment-token-dialog"
      confirmTestId="confirm-revoke-enrollment-token"
      {...{ pending, error, onCancel, onConfirm }}
    >
      <p>
        Machines that enroll with this token from now on are refused, and their agent stops saying why.{" "}
        {uses === 0 ? "No device has enrolled with it yet." : uses === 1 ? "The device it enrolled stays as it is." : `The ${uses} devices it enrolled stay as they are.`} This cannot be
        undone.
      </p>
      <p className="rounded bg-slate-50 px-2 py-1 font-mono text-xs text-slate-600">{token?.prefix}…</p>
    </RevokeDialog>
  );
}
