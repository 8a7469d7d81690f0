"use client";

import { useSyncExternalStore, type ReactNode } from "react";
import { applyTheme, readTheme, subscribeTheme, type ThemeChoice } from "../theme";
import { cx } from "../ui/cx";
import { moveFocus } from "../ui/roving";

const icon = (d: ReactNode) => (
  <svg viewBox="0 0 20 20" fill="none" stroke="currentColor" strokeWidth={1.6} strokeLinecap="round" strokeLinejoin="round" className="size-4" aria-hidden>
    {d}
  </svg>
);

const CHOICES: { value: ThemeChoice; label: string; icon: ReactNode }[] = [
  {
    value: "light",
    label: "Light",
    icon: icon(
      <>
        <circle cx="10" cy="10" r="3.2" />
        <path d="M10 2.5v1.8M10 15.7v1.8M2.5 10h1.8M15.7 10h1.8M4.7 4.7l1.3 1.3M14 14l1.3 1.3M4.7 15.3 6 14M14 6l1.3-1.3" />
      </>,
    ),
  },
  { value: "dark", label: "Dark", icon: icon(<path d="M16 12.3A6.5 6.5 0 0 1 7.7 4a6.5 6.5 0 1 0 8.3 8.3Z" />) },
  {
    value: "system",
    label: "System",
    icon: icon(
      <>
        <rect x="2.8" y="3.5" width="14.4" height="10" rx="1.5" />
        <path d="M7 17h6M10 13.5V17" />
      </>,
    ),
  },
];

/** Light / dark / system, a radio group in the header (arrow keys move and choose). */
export function ThemeToggle() {
  // The stored choice is only known in the browser; on the server nothing is shown as chosen.
  const choice = useSyncExternalStore<ThemeChoice | null>(subscribeTheme, readTheme, () => null);

  return (
    <div
      role="radiogroup"
      aria-label="Theme"
      data-testid="theme-toggle"
      className="inline-flex rounded-md bg-slate-100 p-0.5 ring-1 ring-slate-200 ring-inset"
      onKeyDown={(e) => moveFocus(e)?.click()}
    >
      {CHOICES.map((c) => {
        const checked = choice === c.value;
        return (
          <button
            key={c.value}
            type="button"
            role="radio"
            aria-checked={checked}
            aria-label={c.label}
            title={`${c.label} theme`}
            data-roving
            data-testid={`theme-${c.value}`}
            tabIndex={checked || (choice === null && c.value === "system") ? 0 : -1}
            onClick={() => applyTheme(c.value)}
            className={cx(
              "flex size-7 items-center justify-center rounded focus-visible:ring-2 focus-visible:ring-brand-500 focus-visible:outline-none",
              checked ? "bg-white text-slate-900 shadow-sm" : "text-slate-600 hover:text-slate-900",
            )}
          >
            {c.icon}
          </button>
        );
      })}
    </div>
  );
}
