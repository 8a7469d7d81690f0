"use client";

import type { ReactNode } from "react";
import { Dialog } from "./dialog";
import { Button } from "./button";
import { InlineError } from "./states";

/**
 * Revoking a token cannot be undone: the dialog says what stops working (`children`) before it
 * happens, and shows what went wrong without closing. Shared by API tokens and enrollment tokens.
 */
export function RevokeDialog({
  open,
  title,
  testId,
  confirmTestId,
  pending,
  error,
  onCancel,
  onConfirm,
  children,
}: {
  open: boolean;
  title: string;
  testId: string;
  confirmTestId: string;
  pending: boolean;
  error: string | null;
  onCancel: () => void;
  onConfirm: () => void;
  children: ReactNode;
}) {
  return (
    <Dialog
      open={open}
      onClose={() => !pending && onCancel()}
      title={title}
      data-testid={testId}
      footer={
        <>
          <Button onClick={onCancel} disabled={pending}>
            Cancel
          </Button>
          <Button variant="danger" data-testid={confirmTestId} disabled={pending} onClick={onConfirm}>
            {pending ? "Revoking…" : "Revoke token"}
          </Button>
        </>
      }
    >
      {open && (
        <div className="space-y-3">
          {children}
          {error && <InlineError>{error}</InlineError>}
        </div>
      )}
    </Dialog>
  );
}
