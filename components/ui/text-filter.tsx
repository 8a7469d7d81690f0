"use client";

import { useDebouncedEffect } from "../hooks/use-debounced-effect";
import { useSyncedText } from "../hooks/use-synced-text";
import { cx } from "./cx";

/** A text filter that applies itself once typing pauses (or on Enter) and follows the URL. */
export function TextFilter({
  id,
  label,
  value,
  onApply,
  placeholder,
  testId,
  list,
  className,
  mono = false,
  maxLength,
}: {
  id: string;
  label: string;
  value: string;
  onApply: (value: string) => void;
  placeholder?: string;
  testId?: string;
  /** id of a <datalist> with suggestions. */
  list?: string;
  className?: string;
  mono?: boolean;
  maxLength?: number;
}) {
  const [text, setText] = useSyncedText(value);
  useDebouncedEffect(text, 350, (t) => {
    if (t.trim() !== value.trim()) onApply(t.trim());
  });
  return (
    <div className={className ?? "w-48"}>
      <label htmlFor={id} className="sr-only">
        {label}
      </label>
      <input
        id={id}
        data-testid={testId}
        type="search"
        value={text}
        list={list}
        maxLength={maxLength}
        spellCheck={false}
        autoComplete="off"
        onChange={(e) => setText(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === "Enter") onApply(text.trim());
        }}
        placeholder={placeholder ?? label}
        className={cx(
          "h-9 w-full rounded-md border-0 bg-white px-3 text-sm text-slate-900 shadow-xs ring-1 ring-slate-300 ring-inset placeholder:text-slate-500 focus:ring-2 focus:ring-brand-500 focus:outline-none",
          mono && "font-mono text-[13px]",
        )}
      />
    </div>
  );
}
