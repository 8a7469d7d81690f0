"use client";

import { useState, type ReactNode } from "react";
import { Button } from "../ui/button";
import { cx } from "../ui/cx";
import type { FormEdit, FormModel } from "./fleet-yaml";

const input = "block w-full rounded-md border-0 px-2.5 py-1.5 text-sm text-slate-900 ring-1 ring-slate-300 ring-inset focus:ring-2 focus:ring-brand-500 focus:outline-none disabled:bg-slate-50 disabled:text-slate-500";

function Labelled({ label, hint, children }: { label: string; hint?: ReactNode; children: ReactNode }) {
  return (
    <label className="block">
      <span className="mb-1 block text-xs font-medium text-slate-600">{label}</span>
      {children}
      {hint && <span className="mt-0.5 block text-[11px] text-slate-500">{hint}</span>}
    </label>
  );
}

/**
 * A command line: typing keeps what is typed (spaces included) while the box has focus; the
 * YAML gets the argv it splits into at each keystroke.
 */
function CommandInput({ value, disabled, onChange, testId }: { value: string; disabled: boolean; onChange: (line: string) => void; testId: string }) {
  const [draft, setDraft] = useState<string | null>(null);
  return (
    <input
      className={cx(input, "font-mono text-[13px]")}
      value={draft ?? value}
      disabled={disabled}
      spellCheck={false}
      placeholder="/usr/bin/app --flag"
      aria-label="Command"
      data-testid={testId}
      onFocus={() => setDraft(value)}
      onBlur={() => setDraft(null)}
      onChange={(e) => {
        setDraft(e.target.value);
        onChange(e.target.value);
      }}
    />
  );
}

/** The common fields of a fleet, read from the YAML and written back into it. */
export function FleetForm({ model, edit, disabled, creating }: { model: FormModel | null; edit: (e: FormEdit) => void; disabled: boolean; creating: boolean }) {
  if (!model) {
    return <p className="rounded-md bg-slate-50 px-3 py-2 text-sm text-slate-500 ring-1 ring-slate-200 ring-inset">Fix the YAML to edit it with the form.</p>;
  }
  const off = disabled;
  const blankLabel = model.matchLabels.some((l) => l.key === "");
  return (
    <div className="space-y-4" data-testid="fleet-form">
      {creating && (
        <Labelled label="Name">
          <input className={input} value={model.name} disabled={off} onChange={(e) => edit({ field: "name", value: e.target.value })} data-testid="fleet-form-name" spellCheck={false} />
        </Labelled>
      )}
      <fieldset className="space-y-2">
        <legend className="mb-1 text-xs font-medium text-slate-600">Selector (matchLabels)</legend>
        {model.unsupported.includes("matchLabels") ? (
          <p className="text-xs text-slate-500">Edit matchLabels in the YAML.</p>
        ) : (
          <>
            {model.matchLabels.length === 0 && <p className="text-xs text-slate-500">No labels: the selector matches every device (unless matchExpressions narrow it).</p>}
            {model.matchLabels.map((l, i) => {
              const set = (patch: Partial<{ key: string; value: string }>) =>
                edit({ field: "matchLabels", entries: model.matchLabels.map((x, j) => (j === i ? { ...x, ...patch } : x)) });
              return (
                <div key={i} className="flex items-center gap-1.5" data-testid={`fleet-form-label-${i}`}>
                  <input className={cx(input, "font-mono text-[13px]")} value={l.key} placeholder="key" aria-label="Label key" disabled={off} onChange={(e) => set({ key: e.target.value })} />
                  <span className="text-slate-500">=</span>
                  <input className={cx(input, "font-mono text-[13px]")} value={l.value} placeholder="value" aria-label="Label value" disabled={off} onChange={(e) => set({ value: e.target.value })} />
                  <Button size="sm" variant="ghost" disabled={off} aria-label={`Remove label ${l.key}`} onClick={() => edit({ field: "matchLabels", entries: model.matchLabels.filter((_, j) => j !== i) })}>
                    ✕
                  </Button>
                </div>
              );
            })}
            <Button size="sm" disabled={off || blankLabel} onClick={() => edit({ field: "matchLabels", entries: [...model.matchLabels, { key: "", value: "" }] })}>
              Add label
            </Button>
          </>
        )}
      </fieldset>
      <fieldset className="space-y-2 border-t border-slate-100 pt-3">
        <legend className="sr-only">Device template</legend>
        <div className="text-xs font-semibold tracking-wide text-slate-500 uppercase">Device template</div>
        <Labelled label="Version" hint="What the devices run; every change of the template makes a new template version.">
          <input className={input} value={model.version} disabled={off} onChange={(e) => edit({ field: "version", value: e.target.value })} data-testid="fleet-form-version" spellCheck={false} />
        </Labelled>
        <Labelled label="Artifact URL">
          <input
            className={input}
            value={model.artifactUrl}
            disabled={off}
            placeholder="https://example.com/app-1.0.0.tar.gz"
            onChange={(e) => edit({ field: "artifact", url: e.target.value, sha256: model.artifactSha256 })}
            data-testid="fleet-form-artifact-url"
            spellCheck={false}
          />
        </Labelled>
        <Labelled label="Artifact sha256">
          <input
            className={cx(input, "font-mono text-[12px]")}
            value={model.artifactSha256}
            disabled={off}
            placeholder="64 hex digits"
            onChange={(e) => edit({ field: "artifact", url: model.artifactUrl, sha256: e.target.value })}
            data-testid="fleet-form-artifact-sha256"
            spellCheck={false}
          />
        </Labelled>
      </fieldset>
      <fieldset className="space-y-2">
        <legend className="mb-1 text-xs font-medium text-slate-600">Applications</legend>
        {model.unsupported.includes("applications") ? (
          <p className="text-xs text-slate-500">Edit applications in the YAML.</p>
        ) : (
          <>
            {model.applications.length === 0 && <p className="text-xs text-slate-500">None: the agent supervises no application for this fleet.</p>}
            {model.applications.map((a, i) => (
              <div key={i} className="flex items-start gap-1.5" data-testid={`fleet-form-app-${i}`}>
                <div className="w-32 shrink-0">
                  <input
                    className={input}
                    value={a.name}
                    placeholder="name"
                    aria-label="Application name"
                    disabled={off}
                    onChange={(e) => edit({ field: "application", index: i, name: e.target.value })}
                    data-testid={`fleet-form-app-${i}-name`}
                    spellCheck={false}
                  />
                </div>
                <div className="min-w-0 flex-1">
                  <CommandInput value={a.command} disabled={off || !a.editable} onChange={(line) => edit({ field: "application", index: i, command: line })} testId={`fleet-form-app-${i}-command`} />
                  {!a.editable && <span className="mt-0.5 block text-[11px] text-slate-500">An argument holds spaces: edit this command in the YAML.</span>}
                </div>
                <Button size="sm" variant="ghost" disabled={off} aria-label={`Remove application ${a.name}`} onClick={() => edit({ field: "removeApplication", index: i })}>
                  ✕
                </Button>
              </div>
            ))}
            <Button size="sm" disabled={off} onClick={() => edit({ field: "addApplication" })} data-testid="fleet-form-add-app">
              Add application
            </Button>
          </>
        )}
      </fieldset>
    </div>
  );
}
