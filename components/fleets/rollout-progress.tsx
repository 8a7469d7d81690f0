import type { ReactNode } from "react";
import type { CanaryWatch, StageProgress } from "@/lib/rollout";
import { Link } from "@/components/ui/link";
import { RelativeTime } from "../ui/time";
import { deviceOutlook } from "./canary-watch";
import { endedStageStatus, isTerminalRolloutPhase } from "@/lib/rollout-status";
import { Badge, type Tone } from "../ui/badge";
import { TableHeader } from "../ui/table-header";
import { CountsBar, type Segment } from "./counts-bar";
import type { RolloutView } from "./types";

const STAGE_TONE: Record<StageProgress["status"], Tone> = { pending: "gray", active: "blue", done: "green", failed: "red", stopped: "orange" };
const COLUMNS = ["Stage", "", "Target", "Updated", "Updating", "Failed", "Timed out", "Waiting", "Progress"];

function segments(s: StageProgress): Segment[] {
  return [
    { key: "successful", label: "updated", count: s.successful, tone: "green" },
    { key: "updating", label: "updating", count: s.updating, tone: "blue" },
    { key: "failed", label: "failed", count: s.failed, tone: "red" },
    { key: "timedOut", label: "timed out", count: s.timedOut, tone: "orange" },
    { key: "waiting", label: "waiting", count: s.waiting, tone: "gray" },
  ];
}

/** Without the engine's per-stage progress (an older server): what the state itself says. */
function fallbackStages(r: RolloutView): StageProgress[] {
  const out: StageProgress[] = [];
  if (r.canaryDevices.length > 0) {
    const active = r.phase === "Canary" || r.phase === "CanaryPaused";
    // No batch reported: the canary was the stage the rollout ended in, if it ended.
    const ended = r.phase !== null && isTerminalRolloutPhase(r.phase) && r.batchReports.length === 0;
    out.push({ kind: "canary", name: "canary", status: active ? "active" : ended && r.phase ? endedStageStatus(r.phase) : "done", total: r.canaryDevices.length, waiting: 0, updating: 0, successful: 0, failed: 0, timedOut: 0 });
  }
  for (const b of r.batchReports) out.push({ kind: "batch", name: b.batchName, status: "done", total: b.total, waiting: 0, updating: 0, successful: b.successful, failed: b.failed, timedOut: b.timedOut });
  return out;
}

const slug = (name: string) => name.replace(/[^a-z0-9]+/gi, "-").toLowerCase();

/** The rollout as progress per stage: the canary, each batch, the final implicit batch. */
export function RolloutProgress({ rollout }: { rollout: RolloutView }) {
  const stages = rollout.progress ?? fallbackStages(rollout);
  if (stages.length === 0) return <p className="px-4 py-3 text-sm text-slate-500">No stage has started yet.</p>;
  const reports = new Map(rollout.batchReports.map((b) => [b.batchName, b]));
  return (
    <div className="overflow-x-auto">
      <table className="w-full text-left text-sm" data-testid="rollout-stages">
        <TableHeader columns={COLUMNS} />
        <tbody>
          {stages.map((s) => {
            const report = reports.get(s.name);
            const n = (v: number) => (s.total === null ? <span className="text-slate-300">—</span> : v);
            return (
              <tr key={`${s.kind}-${s.name}`} className="border-b border-slate-100 tabular-nums" data-testid={`stage-${slug(s.name)}`} data-status={s.status}>
                <td className="py-2 pr-3 pl-4 font-medium text-slate-800">{s.name}</td>
                <td className="px-3 py-2">
                  <Badge tone={STAGE_TONE[s.status]}>{s.status}</Badge>
                  {report && (
                    <div className="mt-0.5 text-[11px] whitespace-nowrap text-slate-500" title="success percentage against the batch's threshold">
                      {report.successPercentage}%{report.successThreshold !== null && ` of ${report.successThreshold}% needed`}
                    </div>
                  )}
                </td>
                <td className="px-3 py-2 text-slate-700" data-testid={`stage-${slug(s.name)}-total`}>
                  {s.total ?? <span className="text-slate-300">—</span>}
                </td>
                <td className="px-3 py-2 text-emerald-700">
                  <span data-testid={`stage-${slug(s.name)}-successful`}>{n(s.successful)}</span>
                  {/* Updated is not healthy: a crash-looping canary device has updated too. */}
                  {s.watch && s.watch.restarting > 0 && (
                    <span className="ml-1 text-xs font-medium whitespace-nowrap text-amber-700" data-testid={`stage-${slug(s.name)}-restarting`}>
                      ({s.watch.restarting} restarting)
                    </span>
                  )}
                </td>
                <td className="px-3 py-2 text-sky-700">{n(s.updating)}</td>
                <td className={s.failed > 0 ? "px-3 py-2 font-medium text-red-700" : "px-3 py-2 text-slate-500"}>{n(s.failed)}</td>
                <td className={s.timedOut > 0 ? "px-3 py-2 font-medium text-orange-700" : "px-3 py-2 text-slate-500"}>{n(s.timedOut)}</td>
                <td className="px-3 py-2 text-slate-500">{n(s.waiting)}</td>
                <td className="w-40 py-2 pr-4 pl-3">{s.total !== null && <CountsBar segments={segments(s)} total={s.total} />}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
      {stages.map((s) => s.watch && <CanaryWatchTable key="watch" watch={s.watch} paused={rollout.phase === "CanaryPaused"} ended={s.status !== "active"} />)}
    </div>
  );
}

/**
 * The canary's automatic checks, for the operator to see them coming: the thresholds and times
 * that pause, fail or end it, and each canary device's restarts against them (most first).
 */
function CanaryWatchTable({ watch, paused, ended }: { watch: CanaryWatch; paused: boolean; ended: boolean }) {
  const rules: ReactNode[] = [];
  if (watch.pauseAbove !== null) rules.push(<>pauses when a device restarts more than {watch.pauseAbove} times</>);
  else rules.push(<>does not pause by itself</>);
  rules.push(watch.failAbove !== null ? <>fails and reverts the fleet above {watch.failAbove}{paused ? ", paused or not" : ""}</> : <>does not fail by itself</>);
  if (watch.timeoutAt) rules.push(<>fails at its timeout, <RelativeTime value={watch.timeoutAt} /></>);
  if (watch.endsAt && !ended) rules.push(<>ends by itself <RelativeTime value={watch.endsAt} /> if every device has updated and nothing restarts again</>);
  const over = (restarts: number, above: number | null) => above !== null && restarts > above;
  return (
    <div className="border-t border-slate-100 px-4 py-3" data-testid="canary-watch">
      <h3 className="text-xs font-semibold text-slate-700">{ended ? "Canary health when it ended" : "Canary health"}</h3>
      <p className="mt-0.5 text-xs text-slate-600" data-testid="canary-watch-rules">
        The canary{" "}
        {rules.map((r, i) => (
          <span key={i}>
            {i > 0 && (i === rules.length - 1 ? " and " : ", ")}
            {r}
          </span>
        ))}
        .
      </p>
      <table className="mt-2 w-full max-w-3xl text-left text-xs">
        <thead>
          <tr className="text-slate-500">
            <th className="py-1 pr-3 font-medium">Device</th>
            <th className="px-3 py-1 font-medium">Restarts on the new version</th>
            {!ended && <th className="px-3 py-1 font-medium">What comes next</th>}
          </tr>
        </thead>
        <tbody>
          {watch.devices.map((d) => (
            <tr key={d.name} className="border-t border-slate-100" data-testid={`canary-device-${d.name}`}>
              <td className="py-1 pr-3">
                <Link href={`/devices/${encodeURIComponent(d.name)}`} className="font-mono text-brand-700 hover:underline">
                  {d.name}
                </Link>
              </td>
              <td
                className={over(d.restarts, watch.failAbove) ? "px-3 py-1 font-semibold text-red-700 tabular-nums" : over(d.restarts, watch.pauseAbove) || d.restarts > 0 ? "px-3 py-1 font-medium text-amber-800 tabular-nums" : "px-3 py-1 text-slate-600 tabular-nums"}
                data-testid={`canary-restarts-${d.name}`}
              >
                {d.restarts}
                {watch.failAbove !== null && <span className="font-normal text-slate-500"> of {watch.failAbove + 1} that fail it</span>}
              </td>
              {!ended && (
                <td className="px-3 py-1 text-slate-600" data-testid={`canary-outlook-${d.name}`}>
                  {deviceOutlook(d, watch, paused)}
                </td>
              )}
            </tr>
          ))}
        </tbody>
      </table>
      {watch.total > watch.devices.length && (
        <p className="mt-1 text-xs text-slate-500">
          The {watch.devices.length} with the most restarts of {watch.total} canary devices; {watch.restarting} have restarted.
        </p>
      )}
    </div>
  );
}
