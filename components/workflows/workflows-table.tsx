"use client";

import { Link } from "@/components/ui/link";
import type { ReactNode } from "react";
import type { WorkflowSummary } from "@/server/workflows/workflows";
import { workflowMachine } from "@/lib/workflow-status";
import { TableRows } from "../ui/table-rows";
import { TableHeader, WIDE_ONLY, type Column } from "../ui/table-header";
import { RelativeTime } from "../ui/time";
import { StatusBadge } from "../status/status-badge";
import { CountsBar } from "../fleets/counts-bar";
import { cx } from "../ui/cx";
import { stepSegments, stepsDone } from "./run-graph";
import { workflowPhaseTone } from "./tones";
import { LinkRow } from "../ui/link-row";

const COLUMNS: Column[] = ["Phase", "Workflow", "Steps", "Failed", { label: "Run", wide: true }, "Started", { label: "Completed", wide: true }, "Age"];

/** Workflows by name: phase, steps done of all with a bar, failed steps, the current run, when it started and ended, how old the workflow is. */
export function WorkflowsTable({ items, empty, loading = false }: { items: WorkflowSummary[] | undefined; empty: ReactNode; loading?: boolean }) {
  return (
    <div className={cx("overflow-x-auto transition-opacity", loading && items && "opacity-70")}>
      <table className="w-full text-left text-sm" data-testid="workflows-table">
        <TableHeader columns={COLUMNS} />
        <tbody>
          <TableRows items={items} columns={COLUMNS.length} loadingRows={4} empty={empty}>
            {(w) => {
              const href = `/workflows/${encodeURIComponent(w.name)}`;
              const done = stepsDone(w.counts);
              const failed = w.counts.Failed ?? 0;
              return (
                <LinkRow
                  key={w.name}
                  href={href}
                  data-testid={`workflow-row-${w.name}`}
                  className="align-top"
                >
                  <td className="py-2.5 pr-3 pl-4">
                    <StatusBadge
                      table={workflowPhaseTone}
                      state={w.phase}
                      data-testid={`workflow-row-phase-${w.name}`}
                      title={[w.reason, w.message].filter(Boolean).join(": ") || workflowMachine.states[w.phase].description}
                    />
                  </td>
                  <td className="px-3 py-2.5">
                    {/* A cell's max-width does not bind in an auto-layout table: the cut is on the block inside. */}
                    <Link prefetch={false} href={href} title={w.name} className="block max-w-40 truncate font-medium xl:max-w-72 text-slate-900 hover:text-brand-700 hover:underline">
                      {w.name}
                    </Link>
                    {w.message && <div className="max-w-40 truncate text-[11px] xl:max-w-72 text-slate-500" title={w.message}>{w.message}</div>}
                    {(w.waitingApproval ?? 0) > 0 && (
                      <div className="text-[11px] font-medium text-amber-800" data-testid={`workflow-row-waiting-${w.name}`}>
                        {w.waitingApproval} action{w.waitingApproval === 1 ? "" : "s"} waiting for approval
                      </div>
                    )}
                  </td>
                  <td className="w-32 px-3 py-2.5 xl:w-48">
                    <CountsBar segments={stepSegments(w.counts)} total={w.steps} testId={`workflow-row-bar-${w.name}`} />
                    <div className="mt-1 text-[11px] text-slate-500 tabular-nums" data-testid={`workflow-row-steps-${w.name}`}>
                      {done}/{w.steps} done
                    </div>
                  </td>
                  <td className={cx("px-3 py-2.5 tabular-nums", failed ? "font-medium text-red-700" : "text-slate-500")} data-testid={`workflow-row-failed-${w.name}`}>
                    {failed}
                  </td>
                  <td className={cx("px-3 py-2.5 text-slate-600 tabular-nums", WIDE_ONLY)}>{w.run}</td>
                  <td className="px-3 py-2.5 text-slate-600">{w.startTime ? <RelativeTime value={w.startTime} /> : <span className="text-slate-500">—</span>}</td>
                  <td className={cx("px-3 py-2.5 text-slate-600", WIDE_ONLY)}>{w.completionTime ? <RelativeTime value={w.completionTime} /> : <span className="text-slate-500">{w.startTime ? "running" : "—"}</span>}</td>
                  <td className="px-3 py-2.5 text-slate-600">
                    <RelativeTime value={w.createdAt} />
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
