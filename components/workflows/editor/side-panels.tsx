"use client";

import { useState } from "react";
import type { EditorDoc } from "@/lib/workflow-editor";
import type { DraftProblems } from "@/lib/workflow-editor";
import { cx } from "../../ui/cx";
import { YamlProblems, YamlTextarea } from "../../ui/yaml-input";
import type { YamlProblem } from "@/lib/yaml-problems";
import { input, Labelled, okRing, useDraftText } from "./fields";
import type { WorkflowPatch } from "./use-editor";

/** The workflow's own fields (shown while no step is selected). The name is fixed once saved: it is the workflow's id. */
function ScheduleFields({ schedule, onChange }: { schedule: EditorDoc["schedule"]; onChange: (s: EditorDoc["schedule"]) => void }) {
  const set = (patch: Partial<NonNullable<EditorDoc["schedule"]>>) => {
    const next = { ...(schedule ?? { cron: "" }), ...patch };
    if (next.timezone === undefined || next.timezone === "") delete next.timezone;
    if (!next.suspend) delete next.suspend;
    onChange(next);
  };
  return (
    <fieldset className="space-y-2 rounded-md p-2.5 ring-1 ring-slate-200 ring-inset">
      <label className="flex items-center gap-2 text-xs font-medium text-slate-600">
        <input type="checkbox" checked={schedule !== undefined} onChange={(e) => onChange(e.target.checked ? { cron: "0 3 * * *" } : undefined)} data-testid="workflow-scheduled" />
        Run on a schedule (cron)
      </label>
      {schedule && (
        <>
          <Labelled label="Cron" hint="minute hour day month weekday, e.g. 0 3 * * 1-5">
            <input value={schedule.cron} onChange={(e) => set({ cron: e.target.value })} spellCheck={false} data-testid="workflow-cron" className={cx(input, okRing, "font-mono")} />
          </Labelled>
          <Labelled label="Time zone" hint="An IANA name; empty: UTC.">
            <input value={schedule.timezone ?? ""} onChange={(e) => set({ timezone: e.target.value.trim() })} placeholder="UTC" spellCheck={false} data-testid="workflow-timezone" className={cx(input, okRing, "font-mono")} />
          </Labelled>
          <label className="flex items-center gap-2 text-xs text-slate-600">
            <input type="checkbox" checked={schedule.suspend === true} onChange={(e) => set({ suspend: e.target.checked })} data-testid="workflow-suspend" />
            Suspended: no tick starts a run
          </label>
        </>
      )}
    </fieldset>
  );
}

export function WorkflowPanel({ doc, creating, onChange }: { doc: EditorDoc; creating: boolean; onChange: (patch: WorkflowPatch) => void }) {
  const [deadline, setDeadline] = useDraftText(doc.activeDeadlineSeconds === undefined ? "" : String(doc.activeDeadlineSeconds));
  const [deadlineError, setDeadlineError] = useState<string | null>(null);
  return (
    <aside className="flex shrink-0 flex-col gap-3 overflow-y-auto border-t border-slate-100 p-3 md:w-80 md:border-t-0 md:border-l" data-testid="workflow-panel" aria-label="Workflow">
      <h3 className="text-sm font-semibold text-slate-900">Workflow</h3>
      <Labelled label="Name" hint={creating ? "Lowercase letters, digits and '-'. Its id: fixed once saved." : "Its id: fixed once saved."}>
        <input
          value={doc.name}
          readOnly={!creating}
          onChange={(e) => onChange({ name: e.target.value.trim() })}
          spellCheck={false}
          placeholder="nightly-maintenance"
          data-testid="workflow-name"
          className={cx(input, okRing, "font-mono", !creating && "bg-slate-50 text-slate-500")}
        />
      </Labelled>
      <label className="flex items-start gap-2 text-xs text-slate-600">
        <input type="checkbox" className="mt-0.5" checked={doc.failFast} onChange={(e) => onChange({ failFast: e.target.checked })} data-testid="workflow-failfast" />
        <span>
          <span className="font-medium">Fail fast</span>: once a step fails, no new step starts; running ones finish, then the workflow is Failed.
        </span>
      </label>
      <Labelled label="Deadline (activeDeadlineSeconds)" error={deadlineError} hint="From the run's start; past it the run is Failed and its actions cancelled. Empty: none.">
        <input
          value={deadline}
          inputMode="numeric"
          placeholder="(none)"
          data-testid="workflow-deadline"
          onChange={(e) => {
            const t = e.target.value.trim();
            if (t === "") {
              setDeadline(t, "");
              setDeadlineError(null);
              onChange({ activeDeadlineSeconds: undefined });
            } else if (/^\d+$/.test(t)) {
              setDeadline(t, String(Number(t)));
              setDeadlineError(null);
              onChange({ activeDeadlineSeconds: Number(t) });
            } else {
              setDeadline(t);
              setDeadlineError("a whole number of seconds");
            }
          }}
          className={cx(input, okRing, "font-mono")}
        />
      </Labelled>
      <ScheduleFields schedule={doc.schedule} onChange={(schedule) => onChange({ schedule })} />
      <p className="mt-auto text-[11px] leading-4 text-slate-600">Select a step to edit it. Shift-click or Shift-drag selects several.</p>
    </aside>
  );
}

/** Every problem of the draft; a step's is a button that selects it. */
export function ProblemList({ problems, yamlInvalid, onSelect }: { problems: DraftProblems; yamlInvalid: boolean; onSelect: (step: string) => void }) {
  if (problems.all.length === 0 && !yamlInvalid) {
    return (
      <p className="px-4 py-2 text-xs text-emerald-700" data-testid="editor-valid">
        No problems: the server would accept this workflow.
      </p>
    );
  }
  return (
    <div className="px-4 py-2" data-testid="editor-problems" role="status">
      {yamlInvalid && (
        <p className="text-xs font-medium text-red-700" data-testid="editor-yaml-invalid">
          The YAML as typed has problems (see the YAML tab): the canvas shows the last valid version.
        </p>
      )}
      <ul className="space-y-0.5 text-xs text-red-700">
        {problems.all.map((p, i) => (
          <li key={i} data-step={p.step ?? undefined}>
            {p.step ? (
              <button type="button" className="text-left hover:underline" onClick={() => onSelect(p.step!)}>
                <span className="font-mono font-medium">{p.step}</span>: {p.message}
              </button>
            ) : (
              p.message
            )}
          </li>
        ))}
      </ul>
    </div>
  );
}

/** The YAML view: the canvas as a Workflow object; typing a valid one redraws the canvas, an invalid one shows its problems at their lines. */
export function YamlPane({ text, problems, onChange, readOnly }: { text: string; problems: YamlProblem[]; onChange: (t: string) => void; readOnly: boolean }) {
  return (
    <div className="space-y-2 p-3" data-testid="editor-yaml-pane">
      <YamlTextarea value={text} onChange={onChange} readOnly={readOnly} invalid={problems.length > 0} testId="editor-yaml" minRows={20} maxRows={40} label="Workflow YAML (round-trips with the canvas)" />
      <YamlProblems problems={problems} validText="A valid Workflow: the canvas shows it." testIdPrefix="editor-yaml" />
    </div>
  );
}
