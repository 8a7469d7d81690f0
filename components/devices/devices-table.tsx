"use client";

import Link from "next/link";
import type { ReactNode } from "react";
import type { DeviceListItem } from "../trpc";
import { StatusBadge } from "../status/status-badge";
import { applicationSummaryTone, lifecycleTone, summaryTone, updatedTone } from "../status/tones";
import { LabelChips } from "../ui/label-chips";
import { RelativeTime } from "../ui/time";
import { TableRows } from "../ui/table-rows";
import { TableHeader, WIDE_ONLY, type Column } from "../ui/table-header";
import { cx } from "../ui/cx";
import { useLive } from "../live/live-updates";
import { LinkRow } from "../ui/link-row";

const COLUMNS: Column[] = ["Name", "Status", "Fleet", "Update", { label: "Applications", wide: true }, { label: "Lifecycle", wide: true }, { label: "Labels", wide: true }, "Last seen"];

export function DevicesTable({
  items,
  loading,
  onLabelClick,
  empty,
}: {
  items: DeviceListItem[] | undefined;
  loading: boolean;
  onLabelClick: (key: string, value: string) => void;
  empty: ReactNode;
}) {
  const { recentlyChanged } = useLive();
  return (
    <div className="overflow-x-auto">
      <table className="w-full text-left text-sm" data-testid="devices-table">
        <TableHeader columns={COLUMNS} />
        <tbody className={cx("transition-opacity", loading && items && "opacity-60")}>
          <TableRows items={items} columns={COLUMNS.length} loadingRows={10} empty={empty}>
            {(d) => (
              <LinkRow
                key={d.id}
                href={`/devices/${encodeURIComponent(d.name)}`}
                data-testid={`device-row-${d.name}`}
                className={recentlyChanged.has(d.name) && "flash"}
              >
                <td className="py-2.5 pr-3 pl-4">
                  <Link
                    prefetch={false}
                    href={`/devices/${encodeURIComponent(d.name)}`}
                    title={d.name}
                    className="block max-w-64 truncate font-medium text-slate-900 hover:text-brand-700 hover:underline"
                  >
                    {d.name}
                  </Link>
                  <div className="text-xs whitespace-nowrap text-slate-500">
                    {d.role} · {d.platform}
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
