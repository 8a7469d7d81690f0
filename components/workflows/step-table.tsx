"use client";

import { Link } from "@/components/ui/link";
import { useDeferredValue } from "react";
import type { WorkflowObject } from "@/server/workflows/workflows";
import { TableHeader } from "../ui/table-header";
import { StatusBadge } from "../status/status-badge";
import { RelativeTime } from "../ui/time";
import { cx } from "../ui/cx";
import { stepPhaseTone, stepProgress } from "./run-graph";

const COLUMNS = ["Step", "Phase", "Does", "Depends on", "Progress", "Message", "Started", "Finished"];
/** More rows than this would make the page slow: the canvas still shows every step. */
const MAX_ROWS = 1000;
/** Rows of the first render; the rest follow in a background render, so a big workflow's canvas is not kept waiting (issue 9: 1,000 rows cost ≈ 250 ms of the main thread). */
const FIRST_ROWS = 100;

/** The same steps as the canvas, in topological order (dependencies first). */
export function StepTable({ workflow, selected, onSelect }: { workflow: WorkflowObject; selected: string | null; onSelect: (step: string) => void }) {
  const order = workflow.status.order;
  const rows = order.slice(0, useDeferredValue(MAX_ROWS, FIRST_ROWS));
  return (
    <div className="overflow-x-auto">
      <table className="w-full text-left text-sm" data-testid="step-table">
        <TableHeader columns={COLUMNS} />
        <tbody>
          {rows.map((step) => {
            const spec = workflow.spec.steps[step];
            const view = workflow.status.statuses[step];
            return (
              <tr
                key={step}
                data-testid={`step-row-${step}`}
                onClick={() => onSelect(step)}
                className={cx("cursor-pointer border-b border-slate-100 align-top hover:bg-slate-50", selected === step && "bg-brand-50/60")}
              >
                <td className="py-2 pr-3 pl-4 font-medium text-slate-900">{step}</td>
                <td className="px-3 py-2">
                  <StatusBadge table={stepPhaseTone} state={view?.phase ?? "Pending"} data-testid={`step-row-phase-${step}`} />
                </td>
                <td className="px-3 py-2 font-mono text-xs text-slate-700">
                  {spec?.jobTemplate ? (
                    spec.jobTemplate.kind
                  ) : spec?.externalRef ? (
                    <Link href={`/workflows/${encodeURIComponent(spec.externalRef.name)}`} className="text-brand-700 hover:underline">
                      → {spec.externalRef.name}
                    </Link>
                  ) : null}
                </td>
                <td className="px-3 py-2 text-xs text-slate-600">{spec?.dependencies?.join(", ") || <span className="text-slate-500">—</span>}</td>
                <td className="px-3 py-2 text-xs whitespace-nowrap text-slate-600 tabular-nums">{stepProgress(view)}</td>
                <td className="max-w-72 truncate px-3 py-2 text-xs text-slate-600" title={view?.message}>
                  {view?.message}
                </td>
                <td className="px-3 py-2 text-xs text-slate-600">{view?.startedAt ? <RelativeTime value={view.startedAt} /> : "—"}</td>
                <td className="px-3 py-2 text-xs text-slate-600">{view?.finishedAt ? <RelativeTime value={view.finishedAt} /> : "—"}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
      {order.length > rows.length && (
        <p className="px-4 py-2 text-xs text-slate-500">
          The first {rows.length.toLocaleString()} of {order.length.toLocaleString()} steps; the graph above shows them all.
        </p>
      )}
    </div>
  );
}
