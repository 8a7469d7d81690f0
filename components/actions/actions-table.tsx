"use client";

import { Link } from "@/components/ui/link";
import type { ReactNode } from "react";
import type { ActionListItem } from "../trpc";
import { StatusBadge } from "../status/status-badge";
import { actionStateTone, summaryTone } from "../status/tones";
import { RelativeTime } from "../ui/time";
import { TableRows } from "../ui/table-rows";
import { TableHeader, WIDE_ONLY, type Column } from "../ui/table-header";
import { cx } from "../ui/cx";
import { actorName, argsSummary, shortId } from "./format";
import { LinkRow } from "../ui/link-row";
import { ActionDuration } from "./action-duration";

/** Actions as a table; a row opens the action. `showDevice` off on a device's own page. */
export function ActionsTable({
  items,
  loading = false,
  empty,
  showDevice = true,
  loadingRows = 10,
}: {
  items: ActionListItem[] | undefined;
  /** The rows are the previous query's (another filter, sort or page) while this one loads: dimmed. Not for a live refetch of the same list, which would dim it at every update. */
  loading?: boolean;
  empty: ReactNode;
  showDevice?: boolean;
  loadingRows?: number;
}) {
  const columns: Column[] = ["Action", ...(showDevice ? ["Device"] : []), "State", { label: "Origin", wide: true }, "Created", { label: "Finished", wide: true }, { label: "Duration", wide: true }];
  return (
    <div className="overflow-x-auto">
      <table className="w-full text-left text-sm" data-testid="actions-table">
        <TableHeader columns={columns} />
        <tbody className={cx("transition-opacity", loading && items && "opacity-60")}>
          <TableRows items={items} columns={columns.length} loadingRows={loadingRows} empty={empty}>
            {(a) => {
              const href = `/actions/${encodeURIComponent(a.id)}`;
              const args = argsSummary(a.args);
              return (
                <LinkRow
                  key={a.id}
                  href={href}
                  data-testid={`action-row-${a.id}`}
                  className="align-top"
                >
                  <td className="py-2.5 pr-3 pl-4">
                    <Link prefetch={false} href={href} className="font-medium text-slate-900 hover:text-brand-700 hover:underline">
                      {a.kind}
                    </Link>
                    <span className="ml-2 font-mono text-[11px] text-slate-500" title={a.id}>
                      {shortId(a.id)}
                    </span>
                    {args && <div className="max-w-72 truncate font-mono text-[11px] text-slate-500">{args}</div>}
                    {a.rerunOf && (
                      <div className="text-xs text-slate-500">
                        rerun of{" "}
                        <Link prefetch={false} href={`/actions/${encodeURIComponent(a.rerunOf)}`} className="font-mono text-brand-700 hover:underline" data-testid={`action-rerun-of-${a.id}`}>
                          {shortId(a.rerunOf)}
                        </Link>
                      </div>
                    )}
                  </td>
                  {showDevice && (
                    <td className="px-3 py-2.5">
                      <Link prefetch={false} href={`/devices/${encodeURIComponent(a.device)}`} title={a.device} className="block max-w-56 truncate font-medium text-brand-700 hover:underline">
                        {a.device}
                      </Link>
                      {a.deviceSummary !== "Online" && (
                        <div className="mt-0.5">
                          <StatusBadge table={summaryTone} state={a.deviceSummary} />
                        </div>
                      )}
                    </td>
                  )}
                  <td className="px-3 py-2.5">
                    <StatusBadge table={actionStateTone} state={a.state} data-testid={`action-state-${a.id}`} />
                    {a.waiting && a.waiting.reason !== "Cancelling" && (
                      <div className="mt-0.5 max-w-64 truncate text-xs text-slate-600" title={a.waiting.message} data-testid={`action-waiting-${a.id}`}>
                        {a.waiting.message}
                      </div>
                    )}
                    {a.cancelRequestedAt && (a.state === "NEW" || a.state === "RUNNING") && <div className="mt-0.5 text-xs text-amber-700">cancel requested</div>}
                  </td>
                  <td className={cx("px-3 py-2.5 text-slate-600", WIDE_ONLY)}>{a.origin}</td>
                  <td className="px-3 py-2.5 text-slate-600">
                    <RelativeTime value={a.createdAt} />
                    <div className="text-xs text-slate-500">by {actorName(a.createdBy)}</div>
                  </td>
                  <td className={cx("px-3 py-2.5 text-slate-600", WIDE_ONLY)}>
                    <RelativeTime value={a.finishedAt} never="—" />
                  </td>
                  <td className={cx("px-3 py-2.5 whitespace-nowrap text-slate-600", WIDE_ONLY)}>
                    <ActionDuration action={a} testId={`action-duration-${a.id}`} />
                  </td>
                </LinkRow>
              );
            }}
          </TableRows>
        </tbody>
      </table>
    </div>
  );
}
