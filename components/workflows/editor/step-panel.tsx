"use client";

import { useState } from "react";
import { useQuery } from "@tanstack/react-query";
import { BUILTIN_ACTION_KINDS } from "@/lib/action-status";
import type { StepDraft } from "@/lib/workflow-editor";
import type { StepPhase } from "@/lib/workflow-status";
import type { WorkflowProblem } from "@/lib/workflow-spec";
import { useTRPC } from "../../trpc";
import { Button } from "../../ui/button";
import { cx } from "../../ui/cx";
import { ARGS_EXAMPLES, parseArgs } from "../../actions/format";
import { badRing, input, Labelled, okRing, Toggle, useDraftText } from "./fields";
import { TargetsField } from "./targets-field";

type Retry = NonNullable<StepDraft["retryStrategy"]>;

const num = (text: string): number | undefined => (text.trim() === "" ? undefined : Number(text));

function RetryFields({ retry, onChange, disabled }: { retry: Retry | undefined; onChange: (r: Retry | undefined) => void; disabled: boolean }) {
  const backoff = retry?.backoff;
  const setBackoff = (patch: Partial<NonNullable<Retry["backoff"]>>) => {
    if (!retry) return;
    const next = { ...(backoff ?? { duration: "" }), ...patch };
    for (const k of Object.keys(next) as (keyof typeof next)[]) if (next[k] === undefined || next[k] === "") delete next[k];
    onChange(Object.keys(next).length ? { ...retry, backoff: next as NonNullable<Retry["backoff"]> } : { limit: retry.limit });
  };
  return (
    <fieldset className="space-y-2 rounded-md p-2.5 ring-1 ring-slate-200 ring-inset" disabled={disabled}>
      <label className="flex items-center gap-2 text-xs font-medium text-slate-600">
        <input type="checkbox" checked={retry !== undefined} onChange={(e) => onChange(e.target.checked ? { limit: 2 } : undefined)} data-testid="step-retry" />
        Retry a failed attempt
      </label>
      {retry && (
        <div className="grid grid-cols-2 gap-2">
          <Labelled label="Retries (limit)">
            <input type="number" min={0} max={100} className={cx(input, okRing)} value={retry.limit} onChange={(e) => onChange({ ...retry, limit: num(e.target.value) ?? 0 })} data-testid="step-retry-limit" />
          </Labelled>
          <Labelled label="Backoff">
            <input className={cx(input, okRing)} placeholder="10s" value={backoff?.duration ?? ""} onChange={(e) => setBackoff({ duration: e.target.value.trim() })} data-testid="step-retry-duration" />
          </Labelled>
          <Labelled label="Factor">
            <input type="number" min={1} step="any" className={cx(input, okRing)} placeholder="2" value={backoff?.factor ?? ""} onChange={(e) => setBackoff({ factor: num(e.target.value) })} data-testid="step-retry-factor" />
          </Labelled>
          <Labelled label="Max duration">
            <input className={cx(input, okRing)} placeholder="10m" value={backoff?.maxDuration ?? ""} onChange={(e) => setBackoff({ maxDuration: e.target.value.trim() || undefined })} data-testid="step-retry-max" />
          </Labelled>
        </div>
      )}
    </fieldset>
  );
}

function ArgsField({ kind, args, onChange, disabled }: { kind: string; args: Record<string, unknown>; onChange: (a: Record<string, unknown>) => void; disabled: boolean }) {
  const external = Object.keys(args).length ? JSON.stringify(args, null, 2) : "";
  const [text, setText] = useDraftText(external);
  const parsed = parseArgs(text);
  return (
    <Labelled label="Args (JSON object)" error={parsed.ok ? null : parsed.error}>
      <textarea
        value={text}
        disabled={disabled}
        rows={Math.min(8, Math.max(2, text.split("\n").length))}
        spellCheck={false}
        placeholder={ARGS_EXAMPLES[kind] ?? "{}"}
        data-testid="step-args"
        onChange={(e) => {
          const t = e.target.value;
          const r = parseArgs(t);
          if (r.ok) {
            setText(t, Object.keys(r.value).length ? JSON.stringify(r.value, null, 2) : "");
            onChange(r.value);
          } else setText(t);
        }}
        className={cx(input, "font-mono text-[12px]", parsed.ok ? okRing : badRing)}
      />
    </Labelled>
  );
}

/**
 * The selected step: its name (a rename carries the dependencies on it), job or reference,
 * and every field of the spec. A started step of a running workflow is shown, not edited.
 */
export function StepPanel({
  name,
  step,
  problems,
  locked,
  phase,
  self,
  onRename,
  onChange,
  onDelete,
  onClose,
}: {
  name: string;
  step: StepDraft;
  problems: WorkflowProblem[];
  locked: boolean;
  phase: StepPhase | null;
  self: string;
  onRename: (to: string) => boolean;
  onChange: (step: StepDraft) => void;
  onDelete: () => void;
  onClose: () => void;
}) {
  const trpc = useTRPC();
  const workflows = useQuery(trpc.workflows.list.queryOptions({ limit: 100 }));
  const [nameText, setNameText] = useState(name);
  const job = step.jobTemplate;
  const set = (patch: Partial<StepDraft>) => {
    const next: StepDraft = { ...step, ...patch };
    for (const k of Object.keys(patch) as (keyof StepDraft)[]) if (patch[k] === undefined) delete next[k];
    onChange(next);
  };
  const rename = () => {
    const to = nameText.trim();
    if (to !== name && !onRename(to)) setNameText(name);
  };

  return (
    <aside className="flex shrink-0 flex-col gap-3 overflow-y-auto border-t border-slate-100 p-3 md:w-80 md:border-t-0 md:border-l" data-testid="step-panel" data-step={name} aria-label={`Step ${name}`}>
      <div className="flex items-center justify-between">
        <h3 className="text-sm font-semibold text-slate-900">Step</h3>
        <Button size="sm" variant="ghost" onClick={onClose} aria-label="Close the step panel">
          ✕
        </Button>
      </div>
      {locked && (
        <p className="rounded-md bg-sky-50 px-2.5 py-2 text-xs text-sky-800 ring-1 ring-sky-600/20 ring-inset" data-testid="step-locked">
          Started ({phase ?? "Running"}) in the current run: locked. The server refuses changing or removing a step that has started; steps that have not started can still change.
        </p>
      )}
      {problems.length > 0 && (
        <ul className="space-y-0.5 rounded-md bg-red-50 px-2.5 py-2 text-xs text-red-700 ring-1 ring-red-600/15 ring-inset" role="alert" data-testid="step-problems">
          {problems.map((p, i) => (
            <li key={i}>{p.message}</li>
          ))}
        </ul>
      )}
      <fieldset className="space-y-3" disabled={locked}>
        <Labelled label="Name" hint="Letters, digits and '-'. Renaming keeps the dependencies on it.">
          <input
            value={nameText}
            onChange={(e) => setNameText(e.target.value)}
            onBlur={rename}
            onKeyDown={(e) => {
              if (e.key === "Enter") rename();
              if (e.key === "Escape") setNameText(name);
            }}
            spellCheck={false}
            data-testid="step-name"
            className={cx(input, okRing, "font-mono")}
          />
        </Labelled>
        <Toggle
          testId="step-type"
          disabled={locked}
          value={job ? "job" : "reference"}
          options={[
            { value: "job", label: "Job" },
            { value: "reference", label: "Workflow reference" },
          ]}
          onChange={(v) => {
            if (v === "job" && !job) set({ externalRef: undefined, jobTemplate: { kind: "noop", args: {}, targets: {} } });
            if (v === "reference" && job) set({ jobTemplate: undefined, externalRef: { kind: "Workflow", name: "" } });
          }}
        />
        {job ? (
          <>
            <Labelled label="Action kind">
              <input
                list="editor-action-kinds"
                value={job.kind}
                onChange={(e) => set({ jobTemplate: { ...job, kind: e.target.value.trim() } })}
                spellCheck={false}
                data-testid="step-kind"
                className={cx(input, okRing, "font-mono")}
              />
              <datalist id="editor-action-kinds">
                {BUILTIN_ACTION_KINDS.map((k) => (
                  <option key={k} value={k} />
                ))}
              </datalist>
            </Labelled>
            <ArgsField kind={job.kind} args={job.args ?? {}} disabled={locked} onChange={(args) => set({ jobTemplate: { ...job, args } })} />
            <TargetsField targets={job.targets} disabled={locked} onChange={(targets) => set({ jobTemplate: { ...job, targets } })} />
            <label className="flex items-center gap-2 text-xs font-medium text-slate-600">
              <input
                type="checkbox"
                checked={job.requireApproval === true}
                onChange={(e) => {
                  const next = { ...job };
                  if (e.target.checked) next.requireApproval = true;
                  else delete next.requireApproval;
                  set({ jobTemplate: next });
                }}
                data-testid="step-approval"
              />
              Each action waits for an operator&apos;s approval
            </label>
          </>
        ) : (
          <Labelled
            label="Workflow to run"
            hint="Not owned: deleting this workflow leaves it."
            error={
              step.externalRef?.name && workflows.data && workflows.data.items.length >= (workflows.data.total ?? 0) && !workflows.data.items.some((w) => w.name === step.externalRef?.name)
                ? `No saved workflow named "${step.externalRef.name}": the server refuses it.`
                : null
            }
          >
            <input
              list="editor-workflows"
              value={step.externalRef?.name ?? ""}
              onChange={(e) => set({ externalRef: { kind: "Workflow", name: e.target.value.trim() } })}
              spellCheck={false}
              data-testid="step-ref"
              className={cx(input, okRing, "font-mono")}
            />
            <datalist id="editor-workflows">
              {(workflows.data?.items ?? [])
                .filter((w) => w.name !== self)
                .map((w) => (
                  <option key={w.name} value={w.name} />
                ))}
            </datalist>
          </Labelled>
        )}
        <Labelled label="When" hint="Over its dependencies: b.Succeeded && !c.Failed. Empty: always.">
          <input value={step.when ?? ""} onChange={(e) => set({ when: e.target.value || undefined })} spellCheck={false} placeholder="(always)" data-testid="step-when" className={cx(input, okRing, "font-mono text-[12.5px]")} />
        </Labelled>
        <RetryFields retry={step.retryStrategy} disabled={locked} onChange={(retryStrategy) => set({ retryStrategy })} />
        <p className="text-xs text-slate-500">Depends on: {step.dependencies?.length ? step.dependencies.join(", ") : "nothing (starts first)"}</p>
      </fieldset>
      <div className="mt-auto flex justify-end">
        <Button size="sm" variant="ghost" className="text-red-700 hover:bg-red-50" disabled={locked} onClick={onDelete} data-testid="step-delete">
          Delete step
        </Button>
      </div>
    </aside>
  );
}
