"use client";

import { Link } from "@/components/ui/link";
import { useQuery } from "@tanstack/react-query";
import { useTRPC } from "../trpc";
import { Card, CardHeader } from "../ui/card";
import { EmptyState, ErrorState } from "../ui/states";
import { TableRows } from "../ui/table-rows";
import { TableHeader } from "../ui/table-header";
import { StatusBadge } from "../status/status-badge";
import { summaryTone, updatedTone } from "../status/tones";
import { RelativeTime } from "../ui/time";
import { useLive } from "../live/live-updates";
import { cx } from "../ui/cx";

const PAGE = 25;
const COLUMNS = ["Device", "Status", "Update", "Template version", "Last seen"];

/** The first page of the fleet's members with their update status and, when OutOfDate, why. */
export function FleetMembers({ name, total }: { name: string; total: number }) {
  const trpc = useTRPC();
  const { recentlyChanged } = useLive();
  const list = useQuery(trpc.devices.list.queryOptions({ fleet: name, limit: PAGE }));
  const href = `/devices?fleet=${encodeURIComponent(name)}`;
  const items = list.data?.items;

  return (
    <Card data-testid="fleet-members">
      <CardHeader
        title="Members"
        description={list.data ? `${list.data.total.toLocaleString()} device${list.data.total === 1 ? "" : "s"}${list.data.total > PAGE ? `, the first ${PAGE} by name` : ""}` : `${total} devices`}
        actions={
          <Link href={href} className="text-xs font-medium text-brand-700 hover:underline" data-testid="fleet-members-link">
            All members in the device list →
          </Link>
        }
      />
      {list.isError ? (
        <ErrorState error={list.error} onRetry={() => void list.refetch()} title="Could not load the members" />
      ) : (
        <div className="overflow-x-auto">
          <table className="w-full text-left text-sm">
            <TableHeader columns={COLUMNS} />
            <tbody>
              <TableRows
                items={items}
                columns={COLUMNS.length}
                loadingRows={3}
                empty={<EmptyState title="No members">No enrolled device matches this fleet&apos;s selector, or the devices that do are in another fleet.</EmptyState>}
              >
                {(d) => (
                  <tr key={d.id} className={cx("border-b border-slate-100 align-top", recentlyChanged.has(d.name) && "flash")} data-testid={`member-row-${d.name}`}>
                    <td className="py-2 pr-3 pl-4">
                      <Link prefetch={false} href={`/devices/${encodeURIComponent(d.name)}`} className="font-medium text-slate-900 hover:text-brand-700 hover:underline">
                        {d.name}
                      </Link>
                    </td>
                    <td className="px-3 py-2">
                      <StatusBadge table={summaryTone} state={d.summary} />
                    </td>
                    <td className="max-w-md px-3 py-2">
                      <StatusBadge table={updatedTone} state={d.updatedStatus} data-testid={`member-updated-${d.name}`} title={d.updatedInfo ?? undefined} />
                      {d.updatedStatus === "Updating" && d.updatingReason && <div className="mt-0.5 text-xs text-slate-500">{d.updatingReason}</div>}
                      {d.updatedInfo && (
                        <div className="mt-0.5 text-xs text-amber-800" data-testid={`member-reason-${d.name}`}>
                          {d.updatedInfo}
                        </div>
                      )}
                    </td>
                    <td className="px-3 py-2 text-slate-600 tabular-nums">
                      {d.templateVersion ? `v${d.templateVersion}` : "—"}
                      <span className="ml-1 text-xs text-slate-500">rendered #{d.renderedVersion}</span>
                    </td>
                    <td className="px-3 py-2 text-slate-600">
                      <RelativeTime value={d.lastSeen} />
                    </td>
                  </tr>
                )}
              </TableRows>
            </tbody>
          </table>
        </div>
      )}
    </Card>
  );
}
