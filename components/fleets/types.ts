/**
 * The fleet shapes the console reads, from the router's types, and the open rollout's status
 * (`status.rollout`: the rollout controller's Rollout row, the engine's state of
 * lib/rollout.ts) read defensively: it is JSON the server passes through, and an older or
 * newer server may leave fields out.
 */
import type { Condition } from "@/lib/fleet-spec";
import type { BatchReport, CanaryWatch, PauseState, StageProgress } from "@/lib/rollout";
import { isTerminalRolloutPhase, ROLLOUT_PHASES, STAGE_STATUSES, type RolloutPhase } from "@/lib/rollout-status";
import type { RouterOutputs } from "../trpc";

export type Fleet = RouterOutputs["fleets"]["get"];
export type FleetListItem = RouterOutputs["fleets"]["list"][number];
export type TemplateVersionItem = RouterOutputs["fleets"]["templateVersions"][number];
export type FleetDeviceCounts = Fleet["status"]["devices"];
export type FleetCondition = Condition;

/** What the console shows of an open rollout. */
export interface RolloutView {
  templateVersion: string;
  previousVersion: string | null;
  phase: RolloutPhase | null;
  /** The phase as sent, when it is not one lib/rollout-status knows (a newer server). */
  phaseText: string;
  startedAt: string | null;
  updatedAt: string | null;
  canaryDevices: string[];
  pause: Pick<PauseState, "source" | "reason" | "message" | "devices" | "actor"> | null;
  failure: { reason: string; message: string; devices: string[] } | null;
  ended: { actor: string; reason: string; message: string } | null;
  batchReports: Pick<BatchReport, "batchName" | "total" | "successful" | "failed" | "timedOut" | "successPercentage" | "successThreshold" | "passed">[];
  /** Per stage (canary, batches, final implicit batch); null when the server sends none. */
  progress: StageProgress[] | null;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const str = (v: unknown): string | null => (typeof v === "string" ? v : null);
const num = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) ? v : 0);
const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : []);

function readStage(v: unknown): StageProgress | null {
  if (!isObject(v)) return null;
  const kind = v.kind === "canary" ? "canary" : "batch";
  const status = STAGE_STATUSES.find((s) => s === v.status) ?? "pending";
  return {
    kind,
    name: str(v.name) ?? kind,
    status,
    total: typeof v.total === "number" ? v.total : null,
    waiting: num(v.waiting),
    updating: num(v.updating),
    successful: num(v.successful),
    failed: num(v.failed),
    timedOut: num(v.timedOut),
    ...(isObject(v.watch) ? { watch: readWatch(v.watch) } : {}),
  };
}

function readWatch(w: Record<string, unknown>): CanaryWatch {
  const limit = (x: unknown) => (typeof x === "number" ? x : null);
  return {
    devices: (Array.isArray(w.devices) ? w.devices : []).filter(isObject).map((d) => ({
      name: str(d.name) ?? "",
      restarts: num(d.restarts),
      status: (["waiting", "updating", "successful", "failed", "timedOut"] as const).find((x) => x === d.status) ?? "waiting",
    })),
    total: num(w.total),
    restarting: num(w.restarting),
    pauseAbove: limit(w.pauseAbove),
    failAbove: limit(w.failAbove),
    timeoutAt: str(w.timeoutAt) ?? null,
    endsAt: str(w.endsAt) ?? null,
  };
}

export function readRollout(raw: unknown): RolloutView | null {
  if (!isObject(raw)) return null;
  const phaseText = str(raw.phase) ?? "";
  const phase = (ROLLOUT_PHASES as string[]).includes(phaseText) ? (phaseText as RolloutPhase) : null;
  const canary = isObject(raw.canary) ? raw.canary : null;
  const pause = isObject(raw.pause) ? raw.pause : null;
  const failure = isObject(raw.failure) ? raw.failure : null;
  const ended = isObject(raw.ended) ? raw.ended : null;
  return {
    templateVersion: str(raw.templateVersion) ?? "",
    previousVersion: str(raw.previousVersion) ?? str(raw.previousTemplateVersion),
    phase,
    phaseText,
    startedAt: str(raw.startedAt),
    updatedAt: str(raw.updatedAt),
    canaryDevices: strings(canary?.devices),
    pause: pause
      ? {
          source: pause.source === "operator" ? "operator" : "auto",
          reason: str(pause.reason) ?? "",
          message: str(pause.message) ?? "",
          devices: strings(pause.devices),
          actor: str(pause.actor) ?? "",
        }
      : null,
    failure: failure ? { reason: str(failure.reason) ?? "", message: str(failure.message) ?? "", devices: strings(failure.devices) } : null,
    ended: ended ? { actor: str(ended.actor) ?? "", reason: str(ended.reason) ?? "", message: str(ended.message) ?? "" } : null,
    batchReports: (Array.isArray(raw.batchReports) ? raw.batchReports : []).filter(isObject).map((r) => ({
      batchName: str(r.batchName) ?? "",
      total: num(r.total),
      successful: num(r.successful),
      failed: num(r.failed),
      timedOut: num(r.timedOut),
      successPercentage: num(r.successPercentage),
      successThreshold: typeof r.successThreshold === "number" ? r.successThreshold : null,
      passed: r.passed === true,
    })),
    progress: Array.isArray(raw.progress) ? raw.progress.map(readStage).filter((s): s is StageProgress => s !== null) : null,
  };
}

/** A condition by type, if the fleet has it. */
export function conditionOf(conditions: readonly FleetCondition[], type: string): FleetCondition | undefined {
  return conditions.find((c) => c.type === type);
}

/**
 * The one-line rollout state of a fleet for the list: the phase while a rollout runs or after it
 * completed, else the DevicesUpToDate reason. A rollout that failed, was aborted or superseded no
 * longer says what the fleet does (it went back, or moved on): the members' state leads, and the
 * rollout's end is a note under it (`ended`).
 */
export function rolloutSummary(fleet: Pick<Fleet, "status">): { text: string; phase: RolloutPhase | null; title: string; ended?: string } {
  const rollout = readRollout(fleet.status.rollout);
  if (rollout?.phase && isTerminalRolloutPhase(rollout.phase) && rollout.phase !== "Completed") {
    const upToDate = conditionOf(fleet.status.conditions, "DevicesUpToDate");
    const back = rollout.phase === "Superseded" ? "a newer version replaced it" : rollout.previousVersion ? `the fleet went back to version ${rollout.previousVersion}` : "the fleet went back";
    return {
      text: upToDate?.reason ?? "—",
      phase: null,
      title: upToDate?.message ?? "",
      ended: `v${rollout.templateVersion} ${rollout.phase}: ${back}`,
    };
  }
  if (rollout) {
    const inProgress = conditionOf(fleet.status.conditions, "RolloutInProgress");
    return { text: rollout.phaseText || "Rollout", phase: rollout.phase, title: inProgress?.message ?? `rollout of version ${rollout.templateVersion}` };
  }
  const upToDate = conditionOf(fleet.status.conditions, "DevicesUpToDate");
  return { text: upToDate?.reason ?? "—", phase: null, title: upToDate?.message ?? "" };
}
