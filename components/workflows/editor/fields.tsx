"use client";

import { useState, type ReactNode } from "react";
import { cx } from "../../ui/cx";

export const input = "block w-full rounded-md border-0 px-2.5 py-1.5 text-sm text-slate-900 ring-1 ring-inset focus:ring-2 focus:outline-none disabled:bg-slate-50 disabled:text-slate-500";
export const okRing = "ring-slate-300 focus:ring-brand-500";
export const badRing = "ring-red-400 focus:ring-red-500";

/**
 * Text typed into a field whose value lives in the document in another form (JSON, a
 * selector, a list): what is typed stays as typed while it is what the document holds, and
 * follows the document when it changes from elsewhere (undo, the YAML, another field).
 * `set(text, committedAs)`: `committedAs` is the document's form of what was committed.
 */
export function useDraftText(external: string): [string, (text: string, committedAs?: string) => void] {
  const [text, setText] = useState(external);
  const [seen, setSeen] = useState(external);
  if (seen !== external) {
    setSeen(external);
    setText(external);
  }
  return [
    text,
    (t, committedAs) => {
      setText(t);
      if (committedAs !== undefined) setSeen(committedAs);
    },
  ];
}

export function Labelled({ label, hint, error, children, htmlFor }: { label: string; hint?: ReactNode; error?: string | null; children: ReactNode; htmlFor?: string }) {
  return (
    <div className="space-y-1">
      <label className="block text-xs font-medium text-slate-600" htmlFor={htmlFor}>
        {label}
      </label>
      {children}
      {error ? (
        <p className="text-xs text-red-700" role="alert">
          {error}
        </p>
      ) : (
        hint && <p className="text-[11px] text-slate-600">{hint}</p>
      )}
    </div>
  );
}

export function Toggle({ options, value, onChange, disabled, testId }: { options: { value: string; label: string }[]; value: string; onChange: (v: string) => void; disabled?: boolean; testId: string }) {
  return (
    <div className="inline-flex rounded-md p-0.5 ring-1 ring-slate-200 ring-inset" role="radiogroup" data-testid={testId}>
      {options.map((o) => (
        <button
          key={o.value}
          type="button"
          role="radio"
          aria-checked={value === o.value}
          disabled={disabled}
          onClick={() => onChange(o.value)}
          data-testid={`${testId}-${o.value}`}
          className={cx("rounded px-2.5 py-1 text-xs font-medium", value === o.value ? "bg-brand-600 text-white" : "text-slate-600 hover:bg-slate-100 disabled:hover:bg-transparent")}
        >
          {o.label}
        </button>
      ))}
    </div>
  );
}
