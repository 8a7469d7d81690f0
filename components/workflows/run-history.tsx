"use client";

import type { WorkflowObject } from "@/server/workflows/workflows";
import type { WorkflowPhase } from "@/lib/workflow-status";
import { useClock } from "../hooks/use-now";
import { TableHeader } from "../ui/table-header";
import { RelativeTime } from "../ui/time";
import { StatusBadge } from "../status/status-badge";
import { Actor } from "../events/object-link";
import { workflowPhaseTone } from "./tones";

type Run = WorkflowObject["status"]["runs"][number];
type Schedule = NonNullable<WorkflowObject["status"]["schedule"]>;

/** `850ms`, `42s`, `3m 20s`, `2h 5m`, `3d 4h`: how long a run took. */
export function formatRunDuration(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))}ms`;
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return s % 60 ? `${m}m ${s % 60}s` : `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 24) return m % 60 ? `${h}h ${m % 60}m` : `${h}h`;
  const d = Math.floor(h / 24);
  return h % 24 ? `${d}d ${h % 24}h` : `${d}d`;
}

function RunDuration({ run }: { run: Run }) {
  const start = Date.parse(run.startTime);
  const end = run.completionTime ? Date.parse(run.completionTime) : null;
  // A run in progress: its time so far, ticking.
  const text = useClock((now) => formatRunDuration((end ?? now) - start));
  return <span className={end === null ? "text-slate-500" : undefined}>{text}</span>;
}

/** `"0 3 * * *" (Europe/Paris) · next run in 5h · last tick 19h ago`, or suspended. */
export function ScheduleLine({ schedule }: { schedule: Schedule }) {
  return (
    <span className="mt-0.5 block text-xs text-slate-500" data-testid="workflow-schedule">
      Schedule <code className="rounded bg-slate-100 px-1 font-mono text-slate-700">{schedule.cron}</code> ({schedule.timezone})
      {schedule.suspend ? (
        <> · suspended: no tick starts a run</>
      ) : schedule.nextRunTime ? (
        <>
          {" "}
          · next run <RelativeTime value={schedule.nextRunTime} />
        </>
      ) : null}
      {schedule.lastScheduleTime && (
        <>
          {" "}
          · last tick <RelativeTime value={schedule.lastScheduleTime} />
        </>
      )}
    </span>
  );
}

const COLUMNS = ["Run", "Phase", "Started by", "Start", "Duration"];

/** The last runs (the server keeps 20 in status.runs), newest first: who or what started each, and how it ended. */
export function RunHistory({ workflow }: { workflow: WorkflowObject }) {
  const runs = workflow.status.runs;
  if (runs.length === 0) {
    return (
      <p className="px-4 py-3 text-sm text-slate-500" data-testid="run-history-empty">
        Not run yet{workflow.status.schedule?.nextRunTime ? ": its schedule starts the first run." : "."}
      </p>
    );
  }
  return (
    <div className="overflow-x-auto">
      <table className="w-full text-left text-sm" data-testid="run-history">
        <TableHeader columns={COLUMNS} />
        <tbody>
          {runs.map((r) => (
            <tr key={r.run} data-testid={`run-row-${r.run}`} className="border-b border-slate-100">
              <td className="py-2 pr-3 pl-4 font-medium text-slate-900 tabular-nums">
                {r.run}
                {r.run === workflow.status.run && <span className="ml-1 text-xs font-normal text-slate-500">(current)</span>}
              </td>
              <td className="px-3 py-2">
                <StatusBadge table={workflowPhaseTone} state={r.phase as WorkflowPhase} data-testid={`run-row-phase-${r.run}`} />
                {r.reason && r.phase === "Failed" && <span className="ml-2 text-xs text-slate-500">{r.reason}</span>}
              </td>
              <td className="px-3 py-2 text-xs text-slate-700" data-testid={`run-row-by-${r.run}`}>
                <Actor actor={r.startedBy} />
              </td>
              <td className="px-3 py-2 text-xs text-slate-600">
                <RelativeTime value={r.startTime} />
              </td>
              <td className="px-3 py-2 text-xs text-slate-600 tabular-nums">
                <RunDuration run={r} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
