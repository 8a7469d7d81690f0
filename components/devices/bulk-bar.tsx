"use client";

import { useState } from "react";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { isValidLabelKey, isValidLabelValue } from "@/lib/label-selector";
import { errorMessage, useTRPC, type RouterInputs, type RouterOutputs } from "../trpc";
import { Button } from "../ui/button";
import { Dialog } from "../ui/dialog";
import { ReasonDialog } from "../ui/reason-dialog";
import { InlineError } from "../ui/states";
import { cx } from "../ui/cx";

type Filter = NonNullable<RouterInputs["devices"]["bulkResume"]["filter"]>;
type BulkResult = RouterOutputs["devices"]["bulkResume"];
type Op = "decommission" | "resume" | "label";

/**
 * What the bulk operations work on: the selected names, or, once "select all N matching" was
 * chosen, the list's filter itself (the server resolves it, so devices past this page count).
 */
export type BulkTarget = { names: string[] } | { filter: Filter; total: number };

const plural = (n: number, noun = "device") => `${n.toLocaleString()} ${noun}${n === 1 ? "" : "s"}`;

/** "Labelled 3 devices; 1 skipped: labels already so (dev-1)." */
export function describeResult(verb: string, r: BulkResult): string {
  const skipped = r.skipped.map((s) => `${s.count.toLocaleString()} ${s.reason} (${s.names.join(", ")}${s.count > s.names.length ? ", …" : ""})`);
  return `${verb} ${plural(r.changed)}${skipped.length ? `; skipped ${skipped.join("; ")}` : ""}.`;
}

export function BulkBar({ target, onDone }: { target: BulkTarget | null; onDone: (notice: string) => void }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [open, setOpen] = useState<Op | null>(null);
  const count = target === null ? 0 : "names" in target ? target.names.length : target.total;
  const input = target === null ? null : "names" in target ? { names: target.names } : { filter: target.filter };
  const settle = {
    onSettled: () => {
      void queryClient.invalidateQueries(trpc.devices.list.pathFilter());
      void queryClient.invalidateQueries(trpc.devices.counts.pathFilter());
    },
  };
  const finish = (verb: string) => (r: BulkResult) => {
    setOpen(null);
    onDone(describeResult(verb, r));
  };
  const decommission = useMutation(trpc.devices.bulkDecommission.mutationOptions({ ...settle, onSuccess: finish("Decommissioning requested for") }));
  const resume = useMutation(trpc.devices.bulkResume.mutationOptions({ ...settle, onSuccess: finish("Resumed") }));
  const label = useMutation(trpc.devices.bulkLabel.mutationOptions({ ...settle, onSuccess: finish("Labelled") }));
  const busy = decommission.isPending || resume.isPending || label.isPending;
  const what = plural(count);
  const start = (op: Op) => {
    decommission.reset();
    resume.reset();
    label.reset();
    setOpen(op);
  };

  return (
    <>
      <span className="flex gap-2">
        <Button size="sm" data-testid="bulk-label" disabled={count === 0 || busy} onClick={() => start("label")}>
          Label…
        </Button>
        <Button size="sm" data-testid="bulk-resume" disabled={count === 0 || busy} onClick={() => start("resume")} title="Resume the ConflictPaused ones">
          Resume…
        </Button>
        <Button size="sm" variant="danger" data-testid="bulk-decommission" disabled={count === 0 || busy} onClick={() => start("decommission")}>
          Decommission…
        </Button>
      </span>

      <ReasonDialog
        key={open === "decommission" ? "decommission-open" : "decommission-closed"}
        open={open === "decommission"}
        pending={decommission.isPending}
        error={decommission.isError ? errorMessage(decommission.error) : null}
        title={`Decommission ${what}?`}
        confirmLabel={decommission.isPending ? "Requesting…" : `Decommission ${what}`}
        placeholder="e.g. retired with rack 12"
        onCancel={() => setOpen(null)}
        onConfirm={(reason) => input && decommission.mutate({ ...input, ...(reason ? { reason } : {}) })}
        keyboard
        testIds={{ dialog: "bulk-decommission-dialog", confirm: "confirm-bulk-decommission", reason: "bulk-decommission-reason" }}
      >
        <p>
          Each agent is told in its long-poll to decommission its device; the devices leave their fleets now, their pending actions are cancelled, and once
          decommissioned their credentials are revoked. This cannot be undone. Devices that are not Enrolled are skipped.
        </p>
      </ReasonDialog>

      <Dialog
        open={open === "resume"}
        onClose={() => !resume.isPending && setOpen(null)}
        title={`Resume ${what}?`}
        data-testid="bulk-resume-dialog"
        footer={
          <>
            <Button onClick={() => setOpen(null)} disabled={resume.isPending}>
              Cancel
            </Button>
            <Button variant="primary" data-testid="confirm-bulk-resume" disabled={resume.isPending} onClick={() => input && resume.mutate(input)}>
              {resume.isPending ? "Resuming…" : "Resume"}
            </Button>
          </>
        }
      >
        <div className="space-y-3">
          <p>
            The ConflictPaused ones reported a rendered version newer than the server knows and were paused instead of being overwritten. Resuming lets the server
            manage them again from their current spec. The others are skipped.
          </p>
          {resume.isError && <InlineError>{errorMessage(resume.error)}</InlineError>}
        </div>
      </Dialog>

      {open === "label" && (
        <LabelDialog
          what={what}
          pending={label.isPending}
          error={label.isError ? errorMessage(label.error) : null}
          onCancel={() => setOpen(null)}
          onConfirm={(patch) => input && label.mutate({ ...input, ...patch })}
        />
      )}
    </>
  );
}

function LabelDialog({
  what,
  pending,
  error,
  onCancel,
  onConfirm,
}: {
  what: string;
  pending: boolean;
  error: string | null;
  onCancel: () => void;
  onConfirm: (patch: { add: Record<string, string> } | { remove: string[] }) => void;
}) {
  const [mode, setMode] = useState<"add" | "remove">("add");
  const [key, setKey] = useState("");
  const [value, setValue] = useState("");
  const k = key.trim();
  const v = value.trim();
  const problem = !k ? null : !isValidLabelKey(k) ? "Not a valid label key." : mode === "add" && v && !isValidLabelValue(v) ? "Not a valid label value." : null;
  const ready = k !== "" && problem === null && (mode === "remove" || v !== "");
  const submit = () => {
    if (!ready || pending) return;
    onConfirm(mode === "add" ? { add: { [k]: v } } : { remove: [k] });
  };
  const input = "block w-full rounded-md border-0 px-3 py-2 font-mono text-sm text-slate-900 ring-1 ring-slate-300 ring-inset focus:ring-2 focus:ring-brand-500 focus:outline-none";
  return (
    <Dialog
      open
      onClose={() => !pending && onCancel()}
      title={`Label ${what}`}
      data-testid="bulk-label-dialog"
      footer={
        <>
          <Button onClick={onCancel} disabled={pending}>
            Cancel
          </Button>
          <Button variant="primary" data-testid="confirm-bulk-label" disabled={!ready || pending} onClick={submit}>
            {pending ? "Saving…" : mode === "add" ? "Add label" : "Remove label"}
          </Button>
        </>
      }
    >
      <form
        className="space-y-3"
        onSubmit={(e) => {
          e.preventDefault();
          submit();
        }}
      >
        <fieldset className="flex gap-4">
          <legend className="sr-only">Add or remove</legend>
          {(["add", "remove"] as const).map((m) => (
            <label key={m} className="flex items-center gap-1.5">
              <input type="radio" name="label-mode" value={m} checked={mode === m} onChange={() => setMode(m)} data-testid={`label-mode-${m}`} className="accent-brand-600" />
              {m === "add" ? "Add or change a label" : "Remove a label"}
            </label>
          ))}
        </fieldset>
        <div className={cx("grid gap-2", mode === "add" && "grid-cols-2")}>
          <label className="block">
            <span className="mb-1 block text-slate-700">Key</span>
            <input autoFocus data-testid="label-key" value={key} onChange={(e) => setKey(e.target.value)} spellCheck={false} className={input} placeholder="site" />
          </label>
          {mode === "add" && (
            <label className="block">
              <span className="mb-1 block text-slate-700">Value</span>
              <input data-testid="label-value" value={value} onChange={(e) => setValue(e.target.value)} spellCheck={false} className={input} placeholder="lab" />
            </label>
          )}
        </div>
        <p className="text-xs text-slate-500">Fleet membership follows at once: a device may join, leave or change fleet.</p>
        {problem && <InlineError>{problem}</InlineError>}
        {error && <InlineError>{error}</InlineError>}
      </form>
    </Dialog>
  );
}
