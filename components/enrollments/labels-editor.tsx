"use client";

import { useId, useState } from "react";
import type { Labels } from "@/lib/label-selector";
import { Button } from "../ui/button";
import { cx } from "../ui/cx";
import { labelsProblem, parseLabelText } from "./label-text";

/** The editor's state, held by its parent (the dialog or page that sends the labels). */
export interface LabelsDraft {
  added: Labels;
  /** Typed but not added yet: sent too when it reads as labels, so nothing typed is lost. */
  text: string;
}

export const emptyDraft: LabelsDraft = { added: {}, text: "" };

/** The labels to send, or why not (a half-typed label, too many). */
export function draftLabels(draft: LabelsDraft, requested: Labels[]): { ok: true; labels: Labels } | { ok: false; error: string } {
  const typed = parseLabelText(draft.text);
  if (!typed.ok) return typed;
  const labels = { ...draft.added, ...typed.labels };
  const problem = labelsProblem(labels, requested);
  return problem ? { ok: false, error: problem } : { ok: true, labels };
}

/**
 * Labels an operator adds (approving an enrollment): key=value chips, each removable, typed in
 * one field (Enter or Add; several at once separated by commas or spaces), checked with the
 * server's rules as they are typed. A key the device asked for is shown as replaced.
 */
export function LabelsEditor({
  draft,
  onChange,
  requested,
  disabled = false,
}: {
  draft: LabelsDraft;
  onChange: (next: LabelsDraft) => void;
  /** The labels the request(s) asked for: one request's, to show what an added key replaces. */
  requested?: Labels;
  disabled?: boolean;
}) {
  const inputId = useId();
  const errorId = useId();
  // "write key=value" only once an add was tried: while typing the key it is not an error yet.
  const [tried, setTried] = useState(false);
  const parsed = parseLabelText(draft.text);
  const halfTyped = !parsed.ok && !draft.text.includes("=");
  const error = parsed.ok ? null : halfTyped && !tried ? null : parsed.error;

  function add() {
    setTried(true);
    if (!parsed.ok || Object.keys(parsed.labels).length === 0) return;
    onChange({ added: { ...draft.added, ...parsed.labels }, text: "" });
    setTried(false);
  }
  function remove(key: string) {
    const { [key]: _removed, ...rest } = draft.added;
    onChange({ ...draft, added: rest });
  }

  const entries = Object.entries(draft.added).sort(([a], [b]) => a.localeCompare(b));
  return (
    <div className="space-y-2" data-testid="labels-editor">
      <label htmlFor={inputId} className="block text-slate-700">
        Add labels <span className="text-slate-500">(optional; they win over the ones the device asked for)</span>
      </label>
      {entries.length > 0 && (
        <ul className="flex flex-wrap gap-1.5" aria-label="Labels to add">
          {entries.map(([k, v]) => {
            const replaces = requested && k in requested && requested[k] !== v ? requested[k] : undefined;
            return (
              <li
                key={k}
                data-testid={`label-chip-${k}`}
                className="inline-flex items-center gap-1 rounded bg-brand-50 py-0.5 pr-0.5 pl-1.5 font-mono text-xs text-slate-800 ring-1 ring-brand-500/30 ring-inset"
                title={replaces !== undefined ? `replaces ${k}=${replaces}, as the device asked` : `${k}=${v}`}
              >
                <span>
                  {k}=<span className="font-medium">{v}</span>
                </span>
                {replaces !== undefined && <span className="font-sans text-[11px] text-slate-600">(was {replaces || "empty"})</span>}
                <button
                  type="button"
                  disabled={disabled}
                  aria-label={`Remove label ${k}`}
                  data-testid={`remove-label-${k}`}
                  onClick={() => remove(k)}
                  className="rounded px-1 text-slate-500 hover:bg-brand-100 hover:text-slate-900 focus-visible:outline-2 focus-visible:outline-brand-500"
                >
                  ×
                </button>
              </li>
            );
          })}
        </ul>
      )}
      <div className="flex gap-2">
        <input
          id={inputId}
          data-testid="labels-editor-input"
          value={draft.text}
          disabled={disabled}
          autoComplete="off"
          spellCheck={false}
          placeholder="key=value, e.g. site=lab"
          aria-invalid={error ? true : undefined}
          aria-describedby={error ? errorId : undefined}
          onChange={(e) => {
            setTried(false);
            onChange({ ...draft, text: e.target.value });
          }}
          onKeyDown={(e) => {
            if (e.key === "Enter") {
              // Enter adds the label; it must not submit or confirm whatever holds the editor.
              e.preventDefault();
              add();
            }
          }}
          className={cx(
            "block h-9 w-full rounded-md border-0 px-3 font-mono text-sm text-slate-900 ring-1 ring-inset focus:ring-2 focus:outline-none",
            error ? "ring-red-400 focus:ring-red-500" : "ring-slate-300 focus:ring-brand-500",
          )}
        />
        <Button data-testid="labels-editor-add" disabled={disabled || !draft.text.trim()} onClick={add}>
          Add
        </Button>
      </div>
      {error && (
        <p id={errorId} role="alert" className="text-xs text-red-700" data-testid="labels-editor-error">
          {error}
        </p>
      )}
    </div>
  );
}
