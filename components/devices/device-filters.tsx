"use client";

import { useQuery } from "@tanstack/react-query";
import { useTRPC } from "../trpc";
import { MultiSelect } from "../ui/multi-select";
import { Button } from "../ui/button";
import { STATUS_AXES, axisOptions } from "../status/axes";
import { toneOf } from "../status/tones";
import type { DeviceParams } from "./params";
import { FleetFilter, LabelSelectorInput, NameSearchInput } from "./text-filters";

export function hasFilters(p: DeviceParams): boolean {
  return p.selector.trim() !== "" || p.search.trim() !== "" || p.fleet !== "" || STATUS_AXES.some((a) => p.status[a.key].length > 0);
}

export function DeviceFilters({
  params,
  update,
  hiddenDecommissioned,
}: {
  params: DeviceParams;
  update: (patch: Partial<DeviceParams>, opts?: { replace?: boolean }) => void;
  /** How many Decommissioned devices the filter leaves out (the list answer says). */
  hiddenDecommissioned?: number | undefined;
}) {
  const trpc = useTRPC();
  const counts = useQuery(trpc.devices.counts.queryOptions());

  return (
    <div className="mb-4 space-y-3">
      <div className="flex flex-wrap items-start gap-2">
        <NameSearchInput value={params.search} onApply={(search) => update({ search }, { replace: true })} />
        <LabelSelectorInput value={params.selector} onApply={(selector) => update({ selector }, { replace: true })} />
        <FleetFilter value={params.fleet} onChange={(fleet) => update({ fleet })} />
      </div>
      <div className="flex flex-wrap items-center gap-2">
        {STATUS_AXES.map((axis) => (
          <MultiSelect
            key={axis.key}
            label={axis.title}
            testId={`filter-${axis.key}`}
            selected={params.status[axis.key]}
            options={axisOptions(axis).map((value) => ({
              value,
              tone: toneOf(axis.tones, value),
              count: counts.data ? (counts.data[axis.key][value] ?? 0) : undefined,
            }))}
            onChange={(values) => update({ status: { ...params.status, [axis.key]: values } })}
          />
        ))}
        {params.showDecommissioned ? (
          <span className="text-xs text-slate-600" data-testid="decommissioned-toggle">
            Decommissioned shown ·{" "}
            <button className="text-brand-700 hover:underline" data-testid="hide-decommissioned" onClick={() => update({ showDecommissioned: false })}>
              hide
            </button>
          </span>
        ) : (
          hiddenDecommissioned !== undefined &&
          hiddenDecommissioned > 0 && (
            <span className="text-xs text-slate-600" data-testid="decommissioned-toggle">
              {hiddenDecommissioned.toLocaleString()} decommissioned hidden ·{" "}
              <button className="text-brand-700 hover:underline" data-testid="show-decommissioned" onClick={() => update({ showDecommissioned: true })}>
                show
              </button>
            </span>
          )
        )}
        {hasFilters(params) && (
          <Button
            variant="ghost"
            size="sm"
            data-testid="clear-filters"
            onClick={() => update({ selector: "", search: "", fleet: "", status: { summary: [], updated: [], applicationSummary: [], lifecycle: [] } })}
          >
            Clear filters
          </Button>
        )}
      </div>
    </div>
  );
}
