"use client";

import { Dialog } from "../ui/dialog";
import { Button } from "../ui/button";
import { InlineError } from "../ui/states";
import { DiffView } from "./diff-view";
import type { SavePreview } from "./save-preview";

/**
 * Save, confirmed (issue 21): the template's diff against the current version and the rollout
 * it starts, before anything is written. Only Confirm saves.
 */
export function SaveConfirmDialog({
  fleet,
  preview,
  open,
  pending,
  error,
  onCancel,
  onConfirm,
}: {
  fleet: string;
  preview: SavePreview | null;
  open: boolean;
  pending: boolean;
  error: string | null;
  onCancel: () => void;
  onConfirm: () => void;
}) {
  const p = preview;
  return (
    <Dialog
      open={open}
      size="lg"
      onClose={() => !pending && onCancel()}
      title={p?.templateChanged ? `Save fleet ${fleet} and roll out template version ${p.nextVersion}?` : `Save fleet ${fleet}?`}
      data-testid="fleet-save-dialog"
      footer={
        <>
          <Button onClick={onCancel} disabled={pending}>
            Keep editing
          </Button>
          <Button variant="primary" onClick={onConfirm} disabled={pending || !p} data-testid="fleet-save-confirm">
            {pending ? "Saving…" : p?.templateChanged ? "Save and roll out" : "Save"}
          </Button>
        </>
      }
    >
      {p && (
        <div className="space-y-3">
          {p.otherChanges.length > 0 && (
            <p data-testid="fleet-save-other-changes">
              Also changes: <span className="font-mono text-xs">{p.otherChanges.join(", ")}</span>.
            </p>
          )}
          {p.templateChanged ? (
            <>
              <div>
                <div className="mb-1 font-medium text-slate-700">The rollout this starts</div>
                <ul className="list-disc space-y-0.5 pl-5" data-testid="fleet-save-rollout">
                  {p.rollout.map((line) => (
                    <li key={line}>{line}</li>
                  ))}
                </ul>
              </div>
              <div>
                <div className="mb-1 font-medium text-slate-700">Template diff</div>
                <div className="max-h-72 overflow-y-auto rounded-md ring-1 ring-slate-200">
                  <DiffView diff={p.diff} testId="fleet-save-diff" />
                </div>
              </div>
            </>
          ) : (
            <p data-testid="fleet-save-rollout">No template change: no new template version and no rollout.</p>
          )}
          {error && <InlineError>{error}</InlineError>}
        </div>
      )}
    </Dialog>
  );
}
