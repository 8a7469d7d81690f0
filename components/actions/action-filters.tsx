"use client";

import { useState } from "react";
import { useQuery } from "@tanstack/react-query";
import { ACTION_ORIGINS, ACTION_STATES, BUILTIN_ACTION_KINDS } from "@/lib/action-status";
import { PLAN_UPDATE_ACTION_KINDS } from "@/lib/plan-spec";
import { useTRPC } from "../trpc";
import { MultiSelect } from "../ui/multi-select";
import { Button } from "../ui/button";
import { TextFilter } from "../ui/text-filter";
import { actionStateTone } from "../status/tones";
import { LabelSelectorInput } from "../devices/text-filters";
import { CREATED_PRESETS, dateParamError, EMPTY_ACTION_FILTERS, hasActionFilters, isRfc3339, type ActionParams } from "./params";

const SELECT_CLASS =
  "h-9 rounded-md border-0 bg-white px-3 text-sm shadow-xs ring-1 ring-slate-300 ring-inset focus:ring-2 focus:ring-brand-500 focus:outline-none";

/** An RFC 3339 moment as a datetime-local input shows it (local time, to the minute); "" when not one. */
function toLocalInput(value: string): string {
  if (!isRfc3339(value)) return "";
  const d = new Date(value);
  return new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
}

/** A datetime-local input's value (local time) as RFC 3339 in UTC; "" for an empty or unreadable one. */
function fromLocalInput(value: string): string {
  const t = value ? new Date(value).getTime() : NaN;
  return Number.isNaN(t) ? "" : new Date(t).toISOString();
}

type RangeChoice = "" | (typeof CREATED_PRESETS)[number]["id"] | "custom";

/**
 * When the actions were created (issue 10): a quick range (from that long ago, the moment
 * it is chosen) or a custom from / to, kept in the URL as `createdAfter` / `createdBefore`.
 */
function CreatedRangeFilter({ params, update }: { params: ActionParams; update: (patch: Partial<ActionParams>, opts?: { replace?: boolean }) => void }) {
  const set = params.createdAfter !== "" || params.createdBefore !== "";
  // Which quick range made the URL's values: only this page knows; a shared link shows them as a custom range.
  const [choice, setChoice] = useState<RangeChoice>(set ? "custom" : "");
  const shown: RangeChoice = set ? (choice === "" ? "custom" : choice) : choice === "custom" ? "custom" : "";
  const error = dateParamError(params);
  return (
    <>
      <label className="sr-only" htmlFor="filter-created">
        Created
      </label>
      <select
        id="filter-created"
        data-testid="filter-created"
        value={shown}
        onChange={(e) => {
          const value = e.target.value as RangeChoice;
          setChoice(value);
          const preset = CREATED_PRESETS.find((p) => p.id === value);
          if (preset) update({ createdAfter: new Date(Date.now() - preset.ms).toISOString(), createdBefore: "" });
          else if (value === "") update({ createdAfter: "", createdBefore: "" });
        }}
        className={SELECT_CLASS}
      >
        <option value="">Created: any time</option>
        {CREATED_PRESETS.map((p) => (
          <option key={p.id} value={p.id}>
            Created: {p.label.toLowerCase()}
          </option>
        ))}
        <option value="custom">Created: custom range…</option>
      </select>
      {shown === "custom" && (
        <span className="flex flex-wrap items-center gap-2 text-sm text-slate-600">
          <label htmlFor="filter-created-after">from</label>
          <input
            id="filter-created-after"
            data-testid="filter-created-after"
            type="datetime-local"
            value={toLocalInput(params.createdAfter)}
            onChange={(e) => update({ createdAfter: fromLocalInput(e.target.value) }, { replace: true })}
            className={SELECT_CLASS}
          />
          <label htmlFor="filter-created-before">to</label>
          <input
            id="filter-created-before"
            data-testid="filter-created-before"
            type="datetime-local"
            value={toLocalInput(params.createdBefore)}
            onChange={(e) => update({ createdBefore: fromLocalInput(e.target.value) }, { replace: true })}
            className={SELECT_CLASS}
          />
        </span>
      )}
      {error && (
        <p className="w-full text-sm text-red-700" role="alert" data-testid="filter-created-error">
          {error}
        </p>
      )}
    </>
  );
}

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
                className={SELECT_CLASS}
              >
                <option value="">Any origin</option>
                {ACTION_ORIGINS.map((o) => (
                  <option key={o} value={o}>
                    origin: {o}
                  </option>
                ))}
              </select>
              <CreatedRangeFilter params={params} update={update} />
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
