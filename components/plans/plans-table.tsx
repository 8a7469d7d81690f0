"use client";

import { Link } from "@/components/ui/link";
import type { ReactNode } from "react";
import type { PlanSummaryView } from "@/lib/plan-status";
import { Badge } from "../ui/badge";
import { TableRows } from "../ui/table-rows";
import { TableHeader, WIDE_ONLY, type Column } from "../ui/table-header";
import { RelativeTime } from "../ui/time";
import { StatusBadge } from "../status/status-badge";
import { Actor } from "../events/object-link";
import { CountsBar } from "../fleets/counts-bar";
import { cx } from "../ui/cx";
import { awaitsApproval, commandNotRun, countSegments, planTitle } from "./plan-view";
import { PlanStateChip } from "./plan-state-chip";
import { planStateTone } from "./tones";
import { LinkRow } from "../ui/link-row";

const COLUMNS: Column[] = ["State", "Plan", { label: "Commands", wide: true }, "Progress", "Approval", { label: "Created by", wide: true }, "Age"];

/** Plans, newest first: state, name, each command's kind and state, node progress, approval, who and when. */
export function PlansTable({ items, empty, loading = false }: { items: PlanSummaryView[] | undefined; empty: ReactNode; loading?: boolean }) {
  return (
    <div className={cx("overflow-x-auto transition-opacity", loading && items && "opacity-70")}>
      <table className="w-full text-left text-sm" data-testid="plans-table">
        <TableHeader columns={COLUMNS} />
        <tbody>
          <TableRows items={items} columns={COLUMNS.length} loadingRows={4} empty={empty}>
            {(p) => {
              const href = `/plans/${encodeURIComponent(p.id)}`;
              const c = p.counts;
              return (
                <LinkRow
                  key={p.id}
                  href={href}
                  data-testid={`plan-row-${p.id}`}
                  className="align-top"
                >
                  <td className="py-2.5 pr-3 pl-4">
                    <PlanStateChip status={{ state: p.state, approval: p.approval, counts: p.counts }} testId={`plan-row-state-${p.id}`} title={p.message} />
                  </td>
                  <td className="max-w-72 px-3 py-2.5">
                    <Link prefetch={false} href={href} title={planTitle(p)} className="block truncate font-medium text-slate-900 hover:text-brand-700 hover:underline">
                      {planTitle(p)}
                    </Link>
                    <div className="truncate font-mono text-[11px] text-slate-500" title={p.id}>
                      {p.id}
                      {p.name && p.specId && <span className="ml-1.5 text-slate-500">spec.id {p.specId}</span>}
                    </div>
                    {p.retryOf && <div className="text-[11px] text-slate-500">retry of {p.retryOf}</div>}
                  </td>
                  <td className={cx("px-3 py-2.5", WIDE_ONLY)}>
                    <ul className="space-y-1">
                      {p.commands.map((cmd, i) => (
                        <li key={i} className="flex items-center gap-1.5 text-xs whitespace-nowrap text-slate-700">
                          <span className="font-mono">{cmd.kind}</span>
                          {commandNotRun(p.state, cmd.state) ? (
                            <span className="text-slate-500" title={`still ${cmd.state}: the plan ended before it ran`}>
                              not run
                            </span>
                          ) : (
                            <StatusBadge table={planStateTone} state={cmd.state} />
                          )}
                        </li>
                      ))}
                    </ul>
                  </td>
                  <td className="w-48 px-3 py-2.5">
                    <CountsBar segments={countSegments(c)} total={c.total} testId={`plan-row-bar-${p.id}`} />
                    <div className="mt-1 text-[11px] text-slate-500 tabular-nums" data-testid={`plan-row-progress-${p.id}`}>
                      {c.SignalCompleted}/{c.total} completed
                    </div>
                  </td>
                  <td className="px-3 py-2.5">
                    {awaitsApproval(p.state, p.approval) ? (
                      <Badge tone="amber" data-testid={`plan-row-approval-${p.id}`}>
                        Needed
                      </Badge>
                    ) : p.approval.required && p.approval.approvedBy ? (
                      <span className="text-xs text-slate-500">
                        by <Actor actor={p.approval.approvedBy} />
                      </span>
                    ) : (
                      <span className="text-xs text-slate-500">—</span>
                    )}
                  </td>
                  <td className={cx("px-3 py-2.5 text-xs", WIDE_ONLY)}>
                    <Actor actor={p.createdBy} />
                  </td>
                  <td className="px-3 py-2.5 whitespace-nowrap text-slate-600">
                    <RelativeTime value={p.createdAt} />
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
