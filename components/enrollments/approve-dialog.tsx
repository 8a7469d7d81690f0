"use client";

import { useState } from "react";
import type { Labels } from "@/lib/label-selector";
import { Dialog } from "../ui/dialog";
import { Button } from "../ui/button";
import { InlineError } from "../ui/states";
import { LabelChips } from "../ui/label-chips";
import { draftLabels, emptyDraft, LabelsEditor, type LabelsDraft } from "./labels-editor";
import { mergedLabels, parseLabelText } from "./label-text";

/**
 * Approving one or many requests, with labels to put on the devices over the ones they asked
 * for (fleet membership follows them at once). The draft lives here: a parent re-keys the
 * dialog to start a fresh one. Shared by the enrollments list and an enrollment's page.
 */
export function ApproveDialog({
  open,
  targets,
  pending,
  error,
  onCancel,
  onConfirm,
}: {
  open: boolean;
  targets: { deviceName: string; labels: Labels }[];
  pending: boolean;
  error: string | null;
  onCancel: () => void;
  onConfirm: (labels: Labels) => void;
}) {
  const [draft, setDraft] = useState<LabelsDraft>(emptyDraft);
  const requested = targets.map((t) => t.labels);
  const result = draftLabels(draft, requested);
  // A mistyped label is the editor's own inline error; the dialog says only what else is wrong.
  const blocking = !result.ok && parseLabelText(draft.text).ok ? result.error : null;
  const one = targets.length === 1 ? targets[0] : undefined;
  const confirm = () => {
    if (result.ok && !pending) onConfirm(result.labels);
  };
  return (
    <Dialog
      open={open}
      onClose={() => !pending && onCancel()}
      title={one ? `Approve ${one.deviceName}?` : `Approve ${targets.length} enrollment requests?`}
      size="lg"
      data-testid="approve-dialog"
      footer={
        <>
          <Button onClick={onCancel} disabled={pending}>
            Cancel
          </Button>
          <Button variant="primary" data-testid="confirm-approve" disabled={pending || !result.ok} onClick={confirm}>
            {pending ? "Approving…" : one ? "Approve" : `Approve ${targets.length}`}
          </Button>
        </>
      }
    >
      <div className="space-y-3">
        <p>
          {one ? "The device is enrolled and its agent gets its credential once, at its next ask." : "The devices are enrolled and each agent gets its credential once, at its next ask."} Labels decide
          which fleet a device joins.
        </p>
        {!one && <p className="max-h-24 overflow-y-auto rounded bg-slate-50 px-2 py-1 font-mono text-xs text-slate-600">{targets.map((t) => t.deviceName).join(", ")}</p>}
        {error && <InlineError>{error}</InlineError>}
        <LabelsEditor draft={draft} onChange={setDraft} requested={one?.labels} disabled={pending} />
        {blocking && <InlineError>{blocking}</InlineError>}
        {one && (
          <div>
            <div className="mb-1 text-xs text-slate-500">The device will carry</div>
            <div data-testid="approve-labels-preview">
              <LabelChips labels={mergedLabels(one.labels, result.ok ? result.labels : draft.added)} />
            </div>
          </div>
        )}
      </div>
    </Dialog>
  );
}
