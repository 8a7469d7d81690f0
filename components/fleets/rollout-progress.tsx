import type { StageProgress } from "@/lib/rollout";
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
                <td className="px-3 py-2 text-emerald-700" data-testid={`stage-${slug(s.name)}-successful`}>
                  {n(s.successful)}
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
    </div>
  );
}
