"use client";

import { Dialog } from "../ui/dialog";
import { Button } from "../ui/button";
import { InlineError } from "../ui/states";
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
    <Dialog
      open={token !== null}
      onClose={() => !pending && onCancel()}
      title={`Revoke ${label}?`}
      data-testid="revoke-token-dialog"
      footer={
        <>
          <Button onClick={onCancel} disabled={pending}>
            Cancel
          </Button>
          <Button variant="danger" data-testid="confirm-revoke-token" disabled={pending} onClick={onConfirm}>
            {pending ? "Revoking…" : "Revoke token"}
          </Button>
        </>
      }
    >
      {token && (
        <div className="space-y-3">
          <p>
            The next request made with {label}
            {token.username ? <> of {token.username}</> : null} is refused (401): scripts and CLI logins using it stop working
            and need a new token. This cannot be undone.
          </p>
          <p className="rounded bg-slate-50 px-2 py-1 font-mono text-xs text-slate-600">{token.id}</p>
          {error && <InlineError>{error}</InlineError>}
        </div>
      )}
    </Dialog>
  );
}
