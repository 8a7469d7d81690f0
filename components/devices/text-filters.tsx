"use client";

import { useQuery } from "@tanstack/react-query";
import { parseSelector, SelectorError } from "@/lib/label-selector";
import { useTRPC } from "../trpc";
import { useDebouncedEffect } from "../hooks/use-debounced-effect";
import { useSyncedText } from "../hooks/use-synced-text";
import { cx } from "../ui/cx";

const inputBase =
  "h-9 w-full rounded-md border-0 bg-white px-3 text-sm text-slate-900 shadow-xs ring-1 ring-inset placeholder:text-slate-500 focus:ring-2 focus:outline-none";

export function selectorError(input: string): string | null {
  try {
    parseSelector(input);
    return null;
  } catch (e) {
    return e instanceof SelectorError ? e.message : String(e);
  }
}

export function LabelSelectorInput({ value, onApply }: { value: string; onApply: (selector: string) => void }) {
  const [text, setText] = useSyncedText(value);
  const error = selectorError(text);

  useDebouncedEffect(text, 350, (t) => {
    if (t.trim() !== value.trim() && selectorError(t) === null) onApply(t);
  });

  return (
    <div className="min-w-72 flex-1">
      <label htmlFor="label-selector" className="sr-only">
        Label selector
      </label>
      <input
        id="label-selector"
        data-testid="label-selector"
        value={text}
        onChange={(e) => setText(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === "Enter" && !error) onApply(text);
        }}
        placeholder="Label selector, e.g. site=lab,env in (dev,test),!legacy"
        spellCheck={false}
        aria-invalid={error !== null}
        aria-describedby={error ? "label-selector-error" : undefined}
        className={cx(inputBase, "font-mono text-[13px]", error ? "ring-red-400 focus:ring-red-500" : "ring-slate-300 focus:ring-brand-500")}
      />
      {error && (
        <p id="label-selector-error" data-testid="selector-error" className="mt-1 text-xs text-red-600">
          Invalid selector: {error}
        </p>
      )}
    </div>
  );
}

export function NameSearchInput({ value, onApply }: { value: string; onApply: (search: string) => void }) {
  const [text, setText] = useSyncedText(value);
  useDebouncedEffect(text, 300, (t) => {
    if (t.trim() !== value.trim()) onApply(t);
  });
  return (
    <div className="w-56">
      <label htmlFor="name-search" className="sr-only">
        Search by name
      </label>
      <input
        id="name-search"
        data-testid="name-search"
        type="search"
        value={text}
        maxLength={63}
        onChange={(e) => setText(e.target.value)}
        placeholder="Search names…"
        className={cx(inputBase, "ring-slate-300 focus:ring-brand-500")}
      />
    </div>
  );
}

/** Members of one fleet: the fleets by name, plus the one in the URL if it is not (or no longer) there. */
export function FleetFilter({ value, onChange }: { value: string; onChange: (fleet: string) => void }) {
  const trpc = useTRPC();
  const fleets = useQuery(trpc.fleets.list.queryOptions(undefined, { staleTime: 30_000 }));
  const names = (fleets.data ?? []).map((f) => f.metadata.name);
  if (value && !names.includes(value)) names.unshift(value);
  return (
    <div className="w-48">
      <label htmlFor="fleet-filter" className="sr-only">
        Fleet
      </label>
      <select
        id="fleet-filter"
        data-testid="filter-fleet"
        value={value}
        onChange={(e) => onChange(e.target.value)}
        className={cx(inputBase, "ring-slate-300 focus:ring-brand-500", value === "" && "text-slate-500")}
      >
        <option value="">Any fleet</option>
        {names.map((n) => (
          <option key={n} value={n}>
            Fleet {n}
          </option>
        ))}
      </select>
    </div>
  );
}
