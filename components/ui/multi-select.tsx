"use client";

import { useEffect, useId, useRef, useState } from "react";
import { cx } from "./cx";
import { toneDot, type Tone } from "./badge";
import { moveFocus } from "./roving";

export interface MultiSelectOption {
  value: string;
  count?: number | undefined;
  tone?: Tone;
}

/**
 * A filter dropdown with checkboxes; the button says what is chosen. Keyboard (issue 10):
 * Down/Up on the button opens it at the first/last option, the arrow keys, Home and End move
 * between the options (one tab stop: roving tabindex), Space ticks, Escape closes and returns
 * to the button.
 */
export function MultiSelect({
  label,
  options,
  selected,
  onChange,
  testId,
}: {
  label: string;
  options: MultiSelectOption[];
  selected: string[];
  onChange: (values: string[]) => void;
  testId?: string;
}) {
  const [open, setOpen] = useState(false);
  const [active, setActive] = useState(0);
  const ref = useRef<HTMLDivElement>(null);
  const button = useRef<HTMLButtonElement>(null);
  const id = useId();

  useEffect(() => {
    if (!open) return;
    const onDown = (e: MouseEvent) => {
      if (ref.current && !ref.current.contains(e.target as Node)) setOpen(false);
    };
    const onKey = (e: KeyboardEvent) => {
      if (e.key !== "Escape") return;
      const inside = ref.current?.contains(document.activeElement);
      setOpen(false);
      if (inside) button.current?.focus();
    };
    document.addEventListener("mousedown", onDown);
    document.addEventListener("keydown", onKey);
    return () => {
      document.removeEventListener("mousedown", onDown);
      document.removeEventListener("keydown", onKey);
    };
  }, [open]);

  function toggle(value: string) {
    onChange(selected.includes(value) ? selected.filter((v) => v !== value) : [...selected, value]);
  }

  /** Opens the list with the option at `index` focused (after it renders). */
  function openAt(index: number) {
    setActive(index);
    setOpen(true);
    requestAnimationFrame(() => ref.current?.querySelectorAll<HTMLElement>("[data-roving]")[index]?.focus());
  }

  const summary = selected.length === 0 ? "Any" : selected.length === 1 ? selected[0] : `${selected[0]} +${selected.length - 1}`;

  return (
    <div
      ref={ref}
      className="relative"
      onBlur={(e) => {
        // Tabbing out of the list closes it. A click on an option's text moves focus to the
        // nearest focusable ancestor (<main tabIndex=-1>) first: that must not (a click outside
        // is the document's mousedown above).
        const to = e.relatedTarget;
        if (open && to && !ref.current?.contains(to) && !to.contains(ref.current)) setOpen(false);
      }}
    >
      <button
        ref={button}
        type="button"
        aria-expanded={open}
        aria-controls={id}
        data-testid={testId}
        onClick={() => setOpen((o) => !o)}
        onKeyDown={(e) => {
          if (e.key !== "ArrowDown" && e.key !== "ArrowUp") return;
          e.preventDefault();
          openAt(e.key === "ArrowDown" ? 0 : options.length - 1);
        }}
        className={cx(
          "inline-flex h-9 items-center gap-1.5 rounded-md px-3 text-sm shadow-xs ring-1 ring-inset",
          selected.length ? "bg-brand-50 text-brand-700 ring-brand-500/40" : "bg-white text-slate-700 ring-slate-300 hover:bg-slate-50",
        )}
      >
        <span className={selected.length ? undefined : "text-slate-600"}>{label}:</span>
        <span className="max-w-40 truncate font-medium">{summary}</span>
        <svg viewBox="0 0 20 20" fill="currentColor" className="size-4 text-slate-400" aria-hidden>
          <path fillRule="evenodd" d="M5.2 7.2a.75.75 0 0 1 1.06 0L10 10.94l3.74-3.74a.75.75 0 1 1 1.06 1.06l-4.27 4.27a.75.75 0 0 1-1.06 0L5.2 8.26a.75.75 0 0 1 0-1.06Z" clipRule="evenodd" />
        </svg>
      </button>
      {open && (
        <div
          id={id}
          role="group"
          aria-label={label}
          data-testid={testId ? `${testId}-options` : undefined}
          className="absolute left-0 z-30 mt-1 w-60 rounded-md bg-white py-1 shadow-lg ring-1 ring-slate-900/10"
          onKeyDown={(e) => moveFocus(e, "vertical")}
        >
          {options.map((o, i) => {
            const checked = selected.includes(o.value);
            return (
              <label
                key={o.value}
                className="flex cursor-pointer items-center gap-2 px-3 py-1.5 text-sm text-slate-900 hover:bg-slate-50 has-focus-visible:bg-slate-100"
                data-testid={testId ? `${testId}-${o.value}` : undefined}
              >
                <input
                  type="checkbox"
                  data-roving
                  tabIndex={i === active ? 0 : -1}
                  onFocus={() => setActive(i)}
                  checked={checked}
                  onChange={() => toggle(o.value)}
                  className="size-3.5 rounded border-slate-300 accent-brand-600"
                />
                {o.tone && <span aria-hidden className={cx("size-2 rounded-full", toneDot(o.tone))} />}
                <span className="flex-1">{o.value}</span>
                {o.count !== undefined && <span className="text-xs text-slate-600 tabular-nums">{o.count.toLocaleString()}</span>}
              </label>
            );
          })}
          {selected.length > 0 && (
            <div className="mt-1 border-t border-slate-100 px-3 pt-1.5 pb-1">
              <button type="button" className="text-xs font-medium text-brand-700 hover:underline" onClick={() => onChange([])}>
                Clear
              </button>
            </div>
          )}
        </div>
      )}
    </div>
  );
}
