"use client";

import { Link } from "@/components/ui/link";
import type { ReactNode } from "react";
import type { DeviceListItem } from "../trpc";
import { StatusBadge } from "../status/status-badge";
import { RevokedBadge } from "./revoked-badge";
import { applicationSummaryTone, lifecycleTone, summaryTone, updatedTone } from "../status/tones";
import { LabelChips } from "../ui/label-chips";
import { RelativeTime } from "../ui/time";
import { TableRows } from "../ui/table-rows";
import { WIDE_ONLY } from "../ui/table-header";
import { cx } from "../ui/cx";
import { useLive } from "../live/live-updates";
import { LinkRow } from "../ui/link-row";
import { SelectAllHeader, SelectCheckbox } from "../ui/selection";
import type { DeviceSort, SortOrder } from "./params";
import { AgentVersionText } from "./agent-version";

/** The columns; those with `sort` sort the list on the server by that key. */
const COLUMNS: { label: string; sort?: DeviceSort; wide?: boolean }[] = [
  { label: "Name", sort: "name" },
  { label: "Status", sort: "status" },
  { label: "Fleet", sort: "fleet" },
  { label: "Update", sort: "updated" },
  { label: "Applications", sort: "applications", wide: true },
  { label: "Lifecycle", sort: "lifecycle", wide: true },
  { label: "Labels", wide: true },
  { label: "Last seen", sort: "lastSeen" },
];

/** What the header's sort buttons change: clicking the sorted column reverses it; another column starts ascending (last seen: newest first). */
export interface SortState {
  sort: DeviceSort;
  order: SortOrder;
  onSort: (sort: DeviceSort, order: SortOrder) => void;
}

/** Row selection for the bulk bar (operators only). */
export interface RowSelection {
  selected: ReadonlySet<string>;
  onToggle: (name: string) => void;
  onToggleAll: (names: string[], select: boolean) => void;
}

function SortableHeader({ sorting, leading }: { sorting: SortState; leading?: ReactNode }) {
  return (
    <thead className="border-b border-slate-200 bg-slate-50/80 text-xs font-medium text-slate-600">
      <tr>
        {leading}
        {COLUMNS.map((c) => {
          const active = c.sort !== undefined && c.sort === sorting.sort;
          const next: SortOrder = active ? (sorting.order === "asc" ? "desc" : "asc") : c.sort === "lastSeen" ? "desc" : "asc";
          return (
            <th
              key={c.label}
              scope="col"
              aria-sort={active ? (sorting.order === "asc" ? "ascending" : "descending") : undefined}
              className={cx("px-3 py-2.5 font-medium whitespace-nowrap", !leading && "first:pl-4", c.wide && WIDE_ONLY)}
            >
              {c.sort ? (
                <button
                  type="button"
                  data-testid={`sort-${c.sort}`}
                  onClick={() => sorting.onSort(c.sort as DeviceSort, next)}
                  title={`Sort by ${c.label.toLowerCase()}, ${next === "asc" ? "ascending" : "descending"}`}
                  className={cx("-mx-1 inline-flex items-center gap-1 rounded px-1 hover:text-slate-900 focus-visible:outline-2 focus-visible:outline-brand-500", active && "text-slate-900")}
                >
                  {c.label}
                  <span aria-hidden="true" className={cx("text-[10px]", !active && "text-slate-400")}>
                    {active ? (sorting.order === "asc" ? "▲" : "▼") : "↕"}
                  </span>
                </button>
              ) : (
                c.label
              )}
            </th>
          );
        })}
      </tr>
    </thead>
  );
}

export function DevicesTable({
  items,
  loading,
  onLabelClick,
  empty,
  sorting,
  selection,
}: {
  items: DeviceListItem[] | undefined;
  /** The rows are the previous query's (another filter, sort or page) while this one loads: dimmed. Not for a live refetch of the same list, which would dim it at every update. */
  loading: boolean;
  onLabelClick: (key: string, value: string) => void;
  empty: ReactNode;
  sorting: SortState;
  /** Present for operators: a checkbox per row and one for the page. */
  selection?: RowSelection | undefined;
}) {
  const { recentlyChanged } = useLive();
  const names = (items ?? []).map((d) => d.name);
  return (
    <div className="overflow-x-auto">
      <table className="w-full text-left text-sm" data-testid="devices-table">
        <SortableHeader
          sorting={sorting}
          leading={
            selection && <SelectAllHeader ids={names} selected={selection.selected} onToggleAll={selection.onToggleAll} label="Select every device on this page" testId="select-page" />
          }
        />
        <tbody className={cx("transition-opacity", loading && items && "opacity-60")}>
          <TableRows items={items} columns={COLUMNS.length + (selection ? 1 : 0)} loadingRows={10} empty={empty}>
            {(d) => (
              <LinkRow
                key={d.id}
                href={`/devices/${encodeURIComponent(d.name)}`}
                data-testid={`device-row-${d.name}`}
                className={cx(recentlyChanged.has(d.name) && "flash", selection?.selected.has(d.name) && "bg-brand-50/60")}
              >
                {selection && (
                  // The row opens the device on a click; a click on its checkbox only selects.
                  <td className="w-10 py-2.5 pl-4" onClick={(e) => e.stopPropagation()}>
                    <SelectCheckbox label={`Select ${d.name}`} testId={`select-${d.name}`} checked={selection.selected.has(d.name)} onChange={() => selection.onToggle(d.name)} />
                  </td>
                )}
                <td className={cx("py-2.5 pr-3", !selection && "pl-4")}>
                  <div className="flex max-w-80 items-baseline gap-2">
                    <Link
                      prefetch={false}
                      href={`/devices/${encodeURIComponent(d.name)}`}
                      title={d.name}
                      className="block max-w-64 min-w-0 truncate font-medium text-slate-900 hover:text-brand-700 hover:underline"
                    >
                      {d.name}
                    </Link>
                    {d.alias && (
                      <span className="min-w-0 truncate text-xs text-slate-500" title={d.alias} data-testid={`device-alias-${d.name}`}>
                        {d.alias}
                      </span>
                    )}
                    {d.credentialRevokedAt && d.lifecycle !== "Decommissioned" && <RevokedBadge at={d.credentialRevokedAt} testId={`device-revoked-${d.name}`} />}
                  </div>
                  <div className="text-xs whitespace-nowrap text-slate-500">
                    {d.role} · {d.platform} · agent <AgentVersionText compact version={d.agentVersion} testId={`device-agent-${d.name}`} />
                  </div>
                </td>
                <td className="px-3 py-2.5">
                  <StatusBadge table={summaryTone} state={d.summary} data-testid={`device-summary-${d.name}`} />
                </td>
                <td className="px-3 py-2.5" data-testid={`device-fleet-${d.name}`}>
                  {d.fleet ? (
                    <Link prefetch={false} tabIndex={-1} href={`/fleets/${encodeURIComponent(d.fleet)}`} className="text-brand-700 hover:underline">
                      {d.fleet}
                    </Link>
                  ) : (
                    <span className="text-xs text-slate-500">—</span>
                  )}
                  {d.templateVersion && d.fleet && <div className="text-xs text-slate-500 tabular-nums">v{d.templateVersion}</div>}
                </td>
                <td className="px-3 py-2.5">
                  <StatusBadge table={updatedTone} state={d.updatedStatus} data-testid={`device-updated-${d.name}`} title={d.updatedInfo ?? undefined} />
                  {d.updatingReason && d.updatedStatus === "Updating" && <div className="mt-0.5 text-xs text-slate-500">{d.updatingReason}</div>}
                </td>
                <td className={cx("px-3 py-2.5", WIDE_ONLY)}>
                  <StatusBadge table={applicationSummaryTone} state={d.applicationSummary} />
                </td>
                <td className={cx("px-3 py-2.5", WIDE_ONLY)}>
                  <StatusBadge table={lifecycleTone} state={d.lifecycle} />
                </td>
                <td className={cx("max-w-80 px-3 py-2.5", WIDE_ONLY)}>
                  <LabelChips labels={d.labels} max={4} onSelect={onLabelClick} tabbable={false} />
                </td>
                <td className="px-3 py-2.5 whitespace-nowrap text-slate-600">
                  <RelativeTime value={d.lastSeen} />
                </td>
              </LinkRow>
            )}
          </TableRows>
        </tbody>
      </table>
    </div>
  );
}
