"use client";

import { useQuery } from "@tanstack/react-query";
import { ACTION_ORIGINS, ACTION_STATES, BUILTIN_ACTION_KINDS } from "@/lib/action-status";
import { PLAN_UPDATE_ACTION_KINDS } from "@/lib/plan-spec";
import { useTRPC } from "../trpc";
import { MultiSelect } from "../ui/multi-select";
import { Button } from "../ui/button";
import { TextFilter } from "../ui/text-filter";
import { actionStateTone } from "../status/tones";
import { LabelSelectorInput } from "../devices/text-filters";
import { EMPTY_ACTION_FILTERS, hasActionFilters, type ActionParams } from "./params";

/** Suggestions for the kind filter: the built-in kinds and the plans' update kinds, any other name still allowed. */
export function KindSuggestions({ id }: { id: string }) {
  return (
    <datalist id={id}>
      {[...BUILTIN_ACTION_KINDS, ...PLAN_UPDATE_ACTION_KINDS].map((k) => (
        <option key={k} value={k} />
      ))}
    </datalist>
  );
}

/**
 * Filters of the actions list; the inbox shows the same minus state and origin (it is
 * always PENDING_APPROVE).
 */
export function ActionFilters({
  params,
  update,
  inbox = false,
}: {
  params: ActionParams;
  update: (patch: Partial<ActionParams>, opts?: { replace?: boolean }) => void;
  inbox?: boolean;
}) {
  const trpc = useTRPC();
  const counts = useQuery({ ...trpc.actions.counts.queryOptions(), enabled: !inbox });
  const filtered = inbox ? params.kind !== "" || params.device !== "" || params.selector !== "" : hasActionFilters(params);

  return (
    <div className="mb-4 space-y-3">
      <div className="flex flex-wrap items-start gap-2">
        <TextFilter
          id="filter-device"
          testId="filter-device"
          label="Device name"
          placeholder="Device (exact name)"
          value={params.device}
          maxLength={63}
          onApply={(device) => update({ device }, { replace: true })}
        />
        <LabelSelectorInput value={params.selector} onApply={(selector) => update({ selector }, { replace: true })} />
        <TextFilter
          id="filter-kind"
          testId="filter-kind"
          label="Action kind"
          placeholder="Kind, e.g. exec"
          list="action-kinds"
          className="w-48"
          mono
          maxLength={64}
          value={params.kind}
          onApply={(kind) => update({ kind }, { replace: true })}
        />
        <KindSuggestions id="action-kinds" />
      </div>
      {(!inbox || filtered) && (
        <div className="flex flex-wrap items-center gap-2">
          {!inbox && (
            <>
              <MultiSelect
                label="State"
                testId="filter-state"
                selected={params.states}
                options={ACTION_STATES.map((value) => ({
                  value,
                  tone: actionStateTone[value],
                  count: counts.data ? (counts.data.byState[value] ?? 0) : undefined,
                }))}
                onChange={(values) => update({ states: values as ActionParams["states"] })}
              />
              <label className="sr-only" htmlFor="filter-origin">
                Origin
              </label>
              <select
                id="filter-origin"
                data-testid="filter-origin"
                value={params.origin}
                onChange={(e) => update({ origin: e.target.value as ActionParams["origin"] })}
                className="h-9 rounded-md border-0 bg-white px-3 text-sm shadow-xs ring-1 ring-slate-300 ring-inset focus:ring-2 focus:ring-brand-500 focus:outline-none"
              >
                <option value="">Any origin</option>
                {ACTION_ORIGINS.map((o) => (
                  <option key={o} value={o}>
                    origin: {o}
                  </option>
                ))}
              </select>
            </>
          )}
          {filtered && (
            <Button variant="ghost" size="sm" data-testid="clear-filters" onClick={() => update({ ...EMPTY_ACTION_FILTERS, states: [] })}>
              Clear filters
            </Button>
          )}
        </div>
      )}
    </div>
  );
}
