"use client";

import { RevokeDialog } from "../ui/revoke-dialog";
import type { ApiToken } from "./types";

/** Revoking cannot be undone: say what stops working before it happens. */
export function RevokeTokenDialog({
  token,
  pending,
  error,
  onCancel,
  onConfirm,
}: {
  token: ApiToken | null;
  pending: boolean;
  error: string | null;
  onCancel: () => void;
  onConfirm: () => void;
}) {
  const label = token?.name ? `“${token.name}”` : "this token";
  return (
    <RevokeDialog open={token !== null} title={`Revoke ${label}?`} testId="revoke-token-dialog" confirmTestId="confirm-revoke-token" {...{ pending, error, onCancel, onConfirm }}>
      <p>
        The next request made with {label}
        {token?.username ? <> of {token.username}</> : null} is refused (401): scripts and CLI logins using it stop working and
        need a new token. This cannot be undone.
      </p>
      <p className="rounded bg-slate-50 px-2 py-1 font-mono text-xs text-slate-600">{token?.id}</p>
    </RevokeDialog>
  );
}
