"use client";

import { useId, useState, type ReactNode } from "react";
import { Dialog } from "./dialog";
import { Button } from "./button";
import { InlineError } from "./states";

/**
 * A confirmation with an optional free-text reason: the body (children) explains what
 * happens, the reason is handed to onConfirm trimmed. The reason lives here, so a parent
 * re-keys the dialog to start a fresh one.
 */
export function ReasonDialog({
  open,
  pending,
  error,
  title,
  onCancel,
  onConfirm,
  cancelLabel = "Cancel",
  confirmLabel,
  confirmVariant = "danger",
  confirmDisabled = false,
  placeholder,
  rows = 3,
  keyboard = false,
  required = false,
  maxLength = 1024,
  hint,
  children,
  testIds,
}: {
  open: boolean;
  pending: boolean;
  error: ReactNode;
  title: ReactNode;
  onCancel: () => void;
  onConfirm: (reason: string) => void;
  cancelLabel?: ReactNode;
  confirmLabel: ReactNode;
  confirmVariant?: "primary" | "danger";
  /** Besides while pending. */
  confirmDisabled?: boolean;
  placeholder?: string;
  rows?: number;
  /** Focus the reason box, and let Ctrl/Cmd+Enter (and a form submit) confirm. */
  keyboard?: boolean;
  /** The reason must be given: confirm stays disabled until it is. */
  required?: boolean;
  /** The most the server takes (the box stops there). */
  maxLength?: number;
  /** Shown under the reason box, and read with it (what it is for, its limit). */
  hint?: ReactNode;
  children: ReactNode;
  testIds: { dialog: string; confirm: string; reason: string };
}) {
  const [reason, setReason] = useState("");
  const hintId = useId();
  const canConfirm = !pending && !confirmDisabled && (!required || reason.trim() !== "");
  const confirm = () => onConfirm(reason.trim());
  const body = (
    <>
      {children}
      {error && <InlineError>{error}</InlineError>}
      <label className="block">
        <span className="mb-1 block text-slate-700">
          Reason {!required && <span className="text-slate-500">(optional)</span>}
        </span>
        <textarea
          data-testid={testIds.reason}
          rows={rows}
          maxLength={maxLength}
          aria-describedby={hint ? hintId : undefined}
          required={required || undefined}
          autoFocus={keyboard || undefined}
          value={reason}
          onChange={(e) => setReason(e.target.value)}
          onKeyDown={
            keyboard
              ? (e) => {
                  // Ctrl/Cmd+Enter confirms from the reason box.
                  if (e.key === "Enter" && (e.metaKey || e.ctrlKey) && canConfirm) confirm();
                }
              : undefined
          }
          placeholder={placeholder}
          // The brand ring even in a destructive dialog: a red one around an optional, empty
          // field reads as an error where nothing is wrong (issue 21).
          className="block w-full rounded-md border-0 px-3 py-2 text-sm text-slate-900 ring-1 ring-slate-300 ring-inset focus:ring-2 focus:ring-brand-500 focus:outline-none"
        />
      </label>
      {hint && (
        <p id={hintId} className="-mt-2 text-xs text-slate-500">
          {hint}
        </p>
      )}
    </>
  );
  return (
    <Dialog
      open={open}
      onClose={() => !pending && onCancel()}
      title={title}
      data-testid={testIds.dialog}
      footer={
        <>
          <Button onClick={onCancel} disabled={pending}>
            {cancelLabel}
          </Button>
          <Button variant={confirmVariant} data-testid={testIds.confirm} disabled={!canConfirm} onClick={confirm}>
            {confirmLabel}
          </Button>
        </>
      }
    >
      {keyboard ? (
        <form
          className="space-y-3"
          onSubmit={(e) => {
            e.preventDefault();
            if (canConfirm) confirm();
          }}
        >
          {body}
        </form>
      ) : (
        <div className="space-y-3">{body}</div>
      )}
    </Dialog>
  );
}
