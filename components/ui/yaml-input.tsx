"use client";

import type { KeyboardEvent } from "react";
import type { YamlProblem } from "@/lib/yaml-problems";
import { cx } from "./cx";

/** What lib/yaml-problems found, each at its line; or that the object is valid. */
export function YamlProblems({ problems, validText, testIdPrefix }: { problems: YamlProblem[]; validText: string; testIdPrefix: string }) {
  if (problems.length === 0)
    return (
      <p className="text-xs text-emerald-700" data-testid={`${testIdPrefix}-valid`}>
        {validText}
      </p>
    );
  return (
    <ul className="space-y-0.5 rounded-md bg-red-50 px-3 py-2 text-xs text-red-700 ring-1 ring-red-600/15 ring-inset" data-testid={`${testIdPrefix}-problems`} role="alert">
      {problems.map((p, i) => (
        <li key={i} data-line={p.line ?? undefined}>
          {p.line !== null && <span className="font-medium">line {p.line}: </span>}
          {p.path && <code className="font-mono">{p.path}</code>}
          {p.path && ": "}
          {p.message}
        </li>
      ))}
    </ul>
  );
}

/** Tab in a YAML box indents (two spaces) instead of leaving it. */
function indentOnTab(e: KeyboardEvent<HTMLTextAreaElement>, setText: (t: string) => void) {
  if (e.key !== "Tab" || e.shiftKey || e.metaKey || e.ctrlKey || e.altKey) return;
  e.preventDefault();
  const el = e.currentTarget;
  const { selectionStart: start, selectionEnd: end, value } = el;
  const next = `${value.slice(0, start)}  ${value.slice(end)}`;
  setText(next);
  requestAnimationFrame(() => el.setSelectionRange(start + 2, start + 2));
}

/** A dark monospace YAML box; red-ringed while it has problems. */
export function YamlTextarea({
  value,
  onChange,
  readOnly = false,
  invalid,
  minRows = 16,
  maxRows = 34,
  testId,
  label = "YAML",
}: {
  value: string;
  onChange: (text: string) => void;
  readOnly?: boolean;
  invalid: boolean;
  minRows?: number;
  maxRows?: number;
  testId: string;
  label?: string;
}) {
  return (
    <label className="block min-w-0">
      <span className="mb-1 block text-xs font-medium text-slate-600">{label}</span>
      <textarea
        value={value}
        readOnly={readOnly}
        onChange={(e) => onChange(e.target.value)}
        onKeyDown={readOnly ? undefined : (e) => indentOnTab(e, onChange)}
        spellCheck={false}
        rows={Math.min(maxRows, Math.max(minRows, value.split("\n").length + 1))}
        data-testid={testId}
        aria-invalid={invalid}
        className={cx(
          "palette-light block w-full resize-y rounded-md border-0 bg-slate-950 px-3 py-2 font-mono text-[12.5px] leading-5 text-slate-100 ring-1 ring-inset focus:ring-2 focus:outline-none",
          invalid ? "ring-red-400 focus:ring-red-500" : "ring-slate-700 focus:ring-brand-500",
        )}
      />
    </label>
  );
}
