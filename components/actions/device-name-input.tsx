"use client";

import { useQuery } from "@tanstack/react-query";
import { useTRPC } from "../trpc";
import { useDebouncedValue } from "../hooks/use-debounced-value";

/** A device name, with the names that start with what is typed as suggestions. */
export function DeviceNameInput({ value, onChange }: { value: string; onChange: (v: string) => void }) {
  const trpc = useTRPC();
  const search = useDebouncedValue(value.trim(), 250);
  const suggestions = useQuery({ ...trpc.devices.list.queryOptions({ search, limit: 8, lifecycle: ["Enrolled"] }), enabled: search !== "", staleTime: 30_000 });
  return (
    <>
      <label htmlFor="action-device" className="sr-only">
        Device name
      </label>
      <input
        id="action-device"
        data-testid="action-device"
        autoFocus
        value={value}
        list="action-device-names"
        maxLength={63}
        onChange={(e) => onChange(e.target.value)}
        placeholder="Device name"
        spellCheck={false}
        autoComplete="off"
        className="block w-full rounded-md border-0 px-3 py-2 font-mono text-[13px] text-slate-900 ring-1 ring-slate-300 ring-inset focus:ring-2 focus:ring-brand-500 focus:outline-none"
      />
      <datalist id="action-device-names">
        {(suggestions.data?.items ?? []).map((d) => (
          <option key={d.id} value={d.name} />
        ))}
      </datalist>
    </>
  );
}
