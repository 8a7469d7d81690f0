/**
 * The rollout decision engine (issue 7, DESIGN.md §3, seed 002, research/engines.md C).
 * Pure: no I/O, no clock (`now` is an input), no database. The server's rollout controller
 * calls `decideRollout` for one fleet on every tick and whenever something relevant changes,
 * persists `decision.state` as the rollout's status (it alone writes it), writes the
 * renders, records the events and request outcomes, and hands `revertFleetTo` to the fleet
 * controller, which reverts the fleet's template itself (decision C-1).
 *
 * How a rollout goes (phases: lib/rollout-status.ts):
 * - No policy, or the fleet's first version (nothing to revert to, nothing running to
 *   protect): every member gets the new version at once ("all members"; no threshold, no
 *   budget). The rollout completes when every member is done.
 * - Canary (ExtendedDaemonSet, C.1/C.2): members matching `canary.selector` (all if none);
 *   count = `resolveCount(replicas, population)` (percent rounded up, at least 1); connected
 *   devices first, then by name. Per device, in EDS's order, strictly greater than:
 *   autoFail restarts → CanaryFailed RestartsExceeded; canary older than canaryTimeout →
 *   CanaryFailed TimeoutExceeded; update state Error → CanaryFailed UpdateFailed (with
 *   autoFail off: a pause instead); an operator's resume turns auto-pause off for the rest
 *   of the canary; autoPause restarts → CanaryPaused RestartsExceeded. Only restarts the
 *   agent reports while running the new version count (it restarts its counters at each
 *   new spec). Auto mode ends the canary when `now ≥ max(start + duration, lastRestart +
 *   noRestartsDuration)`, it is not paused and every canary device updated successfully
 *   (still updating: keep waiting; canaryTimeout is the safeguard). Manual mode: only
 *   promote ends it; promote also ends an auto canary early, paused or not.
 * - Batches (Flight Control, C.3): `deviceSelection.sequence`, then the final implicit batch
 *   with everyone left (without deviceSelection: only that one). An explicit batch takes
 *   connected members matching its selector that are not on the new version yet, by name,
 *   up to `limit` of its population (members ∩ selector) less those already on the new
 *   version (for a count as for a percentage; Flight Control subtracts only for percentages).
 *   The final batch also takes members that join while it runs. A batch is complete when
 *   each device is successful, failed or timed out; under its success threshold (batch's,
 *   else the policy's) the rollout is Suspended with Flight Control's message, and promote
 *   continues anyway. The final batch is held to its threshold too, so an operator can
 *   still abort a rollout that ended badly.
 * - Disruption budget per group (C.3): `min(maxUnavailable − busy, (connected − busy) −
 *   min(minAvailable, total − 1))` devices may be given the new version now (canary and
 *   batches alike; never reverts); when it holds devices back the condition says so.
 * - Pause (any rolling phase) stops new renders; resume continues; abort reverts.
 * - While a rollout runs, a member with no spec at all (it just joined) gets the previous
 *   version unless its stage has come; members on other versions stay until their batch.
 * - Superseding: `supersedeRollout` ends a running rollout as Superseded; the new rollout
 *   (state null) reverts to `revertTargetForNextRollout(old)`: the last version that
 *   finished rolling out, never a superseded, failed or aborted one.
 * - Operator requests made before the rollout started are ignored (they were meant for an
 *   earlier rollout).
 * - After the end, the controller may keep calling with the final state: Completed gives
 *   joiners the new version; CanaryFailed and Aborted give everyone not on it the previous
 *   version and keep asking for the fleet's revert. The fleet controller's revert (C-1:
 *   the previous version itself) must not start a new rollout.
 */
import { z } from "zod";
import { matchesSelector, type Labels } from "./label-selector";
import type { UpdatedStatus, UpdateState } from "./device-status";
import {
  canaryDurations,
  parseDuration,
  parsePercentage,
  resolveCount,
  ROLLOUT_DEFAULTS,
  selectorRequirements,
  type Condition,
  type DisruptionBudget,
  type RolloutPolicy,
} from "./fleet-spec";
import { assertRolloutMove, endedStageStatus, isTerminalRolloutPhase, ROLLOUT_PHASES, type RolloutActor, type RolloutPhase, type StageStatus } from "./rollout-status";

// ---------------------------------------------------------------------------------------
// Input

/** One fleet member as the controller reads it (device row + its derived status). */
export interface RolloutMember {
  name: string;
  labels: Labels;
  /** Template version of the spec rendered to it now (device annotation templateVersion); null if none. */
  renderedTemplateVersion: string | null;
  /** When that spec was rendered (the update timeout runs from here); null if never. */
  renderedAt: Date | null;
  /** The agent reports running its rendered spec (reported renderedVersion == rendered renderedVersion). */
  applied: boolean;
  /** Seed 003 `updated.status`, derived with the fleet's template version = the rollout's target. */
  updated: UpdatedStatus;
  /** Seed 003 `conditions.Updating.reason`, null when none reported. */
  updateState: UpdateState | null;
  /** Not disconnected (seed 003 `deviceIsDisconnected` is false). */
  connected: boolean;
  /** Max over its applications of the reported restart count (the agent counts from 0 at each new spec). */
  restarts: number;
}

export const ROLLOUT_REQUEST_KINDS = ["pause", "resume", "promote", "abort"] as const;
export type RolloutRequestKind = (typeof ROLLOUT_REQUEST_KINDS)[number];

/** An operator's request not yet handled, as stored (oldest first in the input). */
export const RolloutRequestSchema = z.strictObject({
  id: z.string().min(1),
  kind: z.enum(ROLLOUT_REQUEST_KINDS),
  actor: z.string().min(1),
  at: z.coerce.date(),
  /** Why (pause and abort; shown in the condition and the event). */
  reason: z.string().max(500).optional(),
});
export type RolloutRequest = z.infer<typeof RolloutRequestSchema>;

export interface RolloutInput {
  now: Date;
  /** The fleet's rollout policy as parsed by lib/fleet-spec (defaults applied); null if none. Read on every tick. */
  policy: RolloutPolicy | null;
  /** The template version this rollout moves members to. */
  targetTemplateVersion: string;
  /** The version it replaces, which a failed or aborted rollout reverts to; null for the fleet's first version. Only read when `state` is null. */
  previousTemplateVersion: string | null;
  members: readonly RolloutMember[];
  /** The engine's state from the previous tick (the persisted rollout status); null to start a new rollout. */
  state: RolloutState | null;
  requests: readonly RolloutRequest[];
}

// ---------------------------------------------------------------------------------------
// State: the rollout's status, JSON as persisted (times as ISO strings)

const IsoTime = z.string();
const ActorStamp = z.strictObject({ actor: z.string(), at: IsoTime });

export const ConditionSchema = z.strictObject({
  type: z.string(),
  status: z.enum(["True", "False", "Unknown"]),
  reason: z.string(),
  message: z.string(),
  lastTransitionTime: IsoTime,
});

export const CanaryStateSchema = z.strictObject({
  /** The canary devices, chosen when the canary started. */
  devices: z.array(z.string()),
  startedAt: IsoTime,
  endedAt: IsoTime.nullable(),
  /** Who ended it: an operator's promote, or the rollout controller when it ended by itself. */
  endedBy: z.string().nullable(),
  /** Per canary device: the restart count last seen on the new version, and when it last rose. */
  restarts: z.record(z.string(), z.strictObject({ count: z.number().int().min(0), roseAt: IsoTime.nullable() })),
  /** The latest restart of any canary device (noRestartsDuration runs from here). */
  lastRestartAt: IsoTime.nullable(),
  /** Set by an operator's resume of an auto-pause: no more auto-pause for this canary (EDS). */
  autoPauseOverride: ActorStamp.nullable(),
});
export type CanaryState = z.infer<typeof CanaryStateSchema>;

export const PauseStateSchema = z.strictObject({
  source: z.enum(["auto", "operator"]),
  /** CamelCase reason (RestartsExceeded, UpdateFailed, PausedByOperator). */
  reason: z.string(),
  message: z.string(),
  /** The devices that tripped an auto-pause. */
  devices: z.array(z.string()),
  actor: z.string(),
  at: IsoTime,
});
export type PauseState = z.infer<typeof PauseStateSchema>;

export const BatchStateSchema = z.strictObject({
  /** 0-based position in deviceSelection.sequence; the final implicit batch is at sequence.length. */
  index: z.number().int().min(0),
  /** "batch 1", …, "final implicit batch" (Flight Control's names), or "all members". */
  name: z.string(),
  final: z.boolean(),
  devices: z.array(z.string()),
  startedAt: IsoTime,
  /** Integer percent; null: no threshold (no policy). */
  successThreshold: z.number().int().min(0).max(100).nullable(),
  /** The operator whose promote started this batch after a suspended one. */
  approvedBy: ActorStamp.nullable(),
});
export type BatchState = z.infer<typeof BatchStateSchema>;

export const BatchReportSchema = z.strictObject({
  batchName: z.string(),
  total: z.number().int().min(0),
  successful: z.number().int().min(0),
  failed: z.number().int().min(0),
  timedOut: z.number().int().min(0),
  /** floor(successful × 100 / total); 100 for an empty batch (Flight Control). */
  successPercentage: z.number().int().min(0).max(100),
  successThreshold: z.number().int().min(0).max(100).nullable(),
  passed: z.boolean(),
  completedAt: IsoTime,
});
export type BatchReport = z.infer<typeof BatchReportSchema>;

export const RolloutStateSchema = z.strictObject({
  templateVersion: z.string(),
  previousTemplateVersion: z.string().nullable(),
  phase: z.enum(ROLLOUT_PHASES as [RolloutPhase, ...RolloutPhase[]]),
  /** No policy or first version: every member at once, no threshold, no budget. */
  allAtOnce: z.boolean(),
  startedAt: IsoTime,
  finishedAt: IsoTime.nullable(),
  canary: CanaryStateSchema.nullable(),
  /** The current pause (CanaryPaused or Paused). */
  pause: PauseStateSchema.nullable(),
  /** The current (or last) batch. */
  batch: BatchStateSchema.nullable(),
  /** Completed batches, in order; the last one is Flight Control's lastBatchCompletionReport. */
  batchReports: z.array(BatchReportSchema),
  /** Why the canary failed (CanaryFailed). */
  failure: z.strictObject({ reason: z.string(), message: z.string(), devices: z.array(z.string()) }).nullable(),
  /** Who ended the rollout and why (Completed, Aborted, Superseded, CanaryFailed). */
  ended: z.strictObject({ actor: z.string(), reason: z.string(), message: z.string() }).nullable(),
  /** RolloutInProgress, CanaryPaused, CanaryFailed (kept here for their lastTransitionTime). */
  conditions: z.array(ConditionSchema),
});
export type RolloutState = z.infer<typeof RolloutStateSchema>;

// ---------------------------------------------------------------------------------------
// Output

/** The actor of every move and event the controller makes by itself. */
export const ROLLOUT_CONTROLLER = "rollout-controller";

export interface RenderOrder {
  device: string;
  templateVersion: string;
}

export interface RequestOutcome {
  id: string;
  kind: RolloutRequestKind;
  outcome: "applied" | "ignored";
  message: string;
}

/** An event row to record (the controller adds objectKind "Fleet" and the fleet's name). */
export interface RolloutEvent {
  type: string;
  reason: string;
  message: string;
  actor: string;
}

export interface RolloutMove {
  from: RolloutPhase;
  to: RolloutPhase;
  by: RolloutActor;
  actor: string;
}

/** What each device of a stage is doing, from the rollout's point of view. */
export type DeviceRolloutStatus = "waiting" | "updating" | "successful" | "failed" | "timedOut";

/** One canary device as ExtendedDaemonSet's checks see it. */
export interface CanaryDeviceWatch {
  name: string;
  /** Restarts that count: reported while running the new version (restartsOnTarget). */
  restarts: number;
  status: DeviceRolloutStatus;
}

/**
 * What the canary's automatic checks watch, for the operator to see them coming: each canary
 * device's restarts against the thresholds, and the times that end or fail the canary. A paused
 * canary is still watched for auto-fail (as ExtendedDaemonSet does): a pause holds the rollout
 * back, it does not make a crash-looping version safe to keep.
 */
export interface CanaryWatch {
  /** The devices with the most restarts first (then by name), at most CANARY_WATCH_DEVICES of them. */
  devices: CanaryDeviceWatch[];
  /** Canary devices in all, and how many have restarted on the new version. */
  total: number;
  restarting: number;
  /** More restarts than this on one device pause the canary; null when auto-pause is off or an operator's resume overrode it. */
  pauseAbove: number | null;
  /** More than this fail it and revert the fleet; null when auto-fail is off. */
  failAbove: number | null;
  /** When autoFail.canaryTimeout fails the canary, if set. */
  timeoutAt: string | null;
  /** When an auto-mode canary may end by itself, if nothing restarts again (null: manual mode). */
  endsAt: string | null;
}

export const CANARY_WATCH_DEVICES = 20;

export interface StageProgress {
  kind: "canary" | "batch";
  name: string;
  /** A stage that ended the rollout other than Completed is never "done" (lib/rollout-status STAGE_STATUSES). */
  status: StageStatus;
  /** null for a batch not started yet (its size depends on what earlier stages did). */
  total: number | null;
  waiting: number;
  updating: number;
  successful: number;
  failed: number;
  timedOut: number;
  /** The canary stage while it runs: what its automatic checks watch. */
  watch?: CanaryWatch;
}

export interface RolloutDecision {
  /** Persist as the rollout's status (only the rollout controller writes it). */
  state: RolloutState;
  /** Devices to render now, and at which version (the target, or the previous one when reverting). Sorted by device. */
  render: RenderOrder[];
  /** Set while the rollout is CanaryFailed or Aborted: the fleet controller reverts the fleet's template to this version (idempotent). */
  revertFleetTo: string | null;
  requests: RequestOutcome[];
  events: RolloutEvent[];
  /** RolloutInProgress, CanaryPaused, CanaryFailed (also in state.conditions). */
  conditions: Condition[];
  /** The phase moves made this tick, each one listed in rolloutMachine. */
  moves: RolloutMove[];
  /** Per stage, for the console: canary, batches done, the current one, those to come. */
  progress: StageProgress[];
}

export class RolloutInputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "RolloutInputError";
  }
}

// ---------------------------------------------------------------------------------------
// Helpers (exported where the server or console can use them)

const byName = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const connectedFirst = (a: RolloutMember, b: RolloutMember) => Number(b.connected) - Number(a.connected) || byName(a.name, b.name);
const pct = (text: string) => Math.round(parsePercentage(text) * 100);
const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;

function listNames(names: readonly string[], max = 5): string {
  if (names.length <= max) return names.join(", ");
  return `${names.slice(0, max).join(", ")} and ${names.length - max} more`;
}

/** Restarts that count for the canary: only those reported while running the new version. */
export function restartsOnTarget(m: RolloutMember, target: string): number {
  return m.renderedTemplateVersion === target && m.applied ? Math.max(0, m.restarts) : 0;
}

/**
 * Flight Control's classification: successful (on the target, applied, UpToDate), else
 * failed (update state Error), else timed out (rendered more than `timeoutMs` ago), else
 * updating; `waiting` when the target is not rendered to it yet.
 */
export function deviceRolloutStatus(m: RolloutMember, target: string, nowMs: number, timeoutMs: number): DeviceRolloutStatus {
  if (m.renderedTemplateVersion !== target) return "waiting";
  if (m.applied && m.updated === "UpToDate") return "successful";
  if (m.updateState === "Error") return "failed";
  if (m.renderedAt !== null && nowMs - m.renderedAt.getTime() > timeoutMs) return "timedOut";
  return "updating";
}

/** Which version a new rollout reverts to: the last one that finished rolling out (never a superseded, failed or aborted one). */
export function revertTargetForNextRollout(current: RolloutState | null): string | null {
  if (current === null) return null;
  return current.phase === "Completed" ? current.templateVersion : current.previousTemplateVersion;
}

/** Flight Control's Suspended message, verbatim. */
export function suspendedMessage(r: Pick<BatchReport, "batchName" | "successPercentage" | "total" | "successful" | "failed" | "timedOut">, threshold: number): string {
  return (
    `${r.batchName} failed: ${r.successPercentage}% of batch devices were updated successfully, while success threshold was set to ${threshold}%; ` +
    `Breakdown: total=${r.total} successful=${r.successful} failed=${r.failed} timed out=${r.timedOut}`
  );
}

export const FINAL_BATCH_NAME = "final implicit batch";
export const ALL_MEMBERS_BATCH_NAME = "all members";
export const batchName = (index: number, sequenceLength: number) => (index < sequenceLength ? `batch ${index + 1}` : FINAL_BATCH_NAME);

// ---------------------------------------------------------------------------------------
// The tick

interface Tick {
  readonly now: Date;
  readonly nowMs: number;
  readonly iso: string;
  readonly input: RolloutInput;
  readonly policy: RolloutPolicy | null;
  /** Before the renders: as reported; after them (for conditions and progress): with this tick's renders applied. */
  members: ReadonlyMap<string, RolloutMember>;
  readonly timeoutMs: number;
  state: RolloutState;
  moves: RolloutMove[];
  events: RolloutEvent[];
  outcomes: RequestOutcome[];
  /** Set by the renders: what the disruption budget held back, for the condition. */
  budgetNote: string | null;
}

const target = (t: Tick) => t.state.templateVersion;
const previous = (t: Tick) => t.state.previousTemplateVersion;
const sequence = (t: Tick) => (t.state.allAtOnce ? [] : (t.policy?.deviceSelection?.sequence ?? []));
const statusOf = (t: Tick, m: RolloutMember) => deviceRolloutStatus(m, target(t), t.nowMs, t.timeoutMs);
const presentMembers = (t: Tick, names: readonly string[]) => names.flatMap((n) => t.members.get(n) ?? []);

function event(t: Tick, type: string, reason: string, message: string, actor = ROLLOUT_CONTROLLER): void {
  t.events.push({ type, reason, message, actor });
}

/** The only way the phase changes: checked against the table. */
function move(t: Tick, to: RolloutPhase, by: RolloutActor, actor: string, why: string): void {
  const from = t.state.phase;
  assertRolloutMove(from, to, by);
  t.moves.push({ from, to, by, actor });
  t.state.phase = to;
  if (isTerminalRolloutPhase(to)) t.state.finishedAt = t.iso;
  event(t, "RolloutPhaseChanged", to, `${from} → ${to}: ${why}`, actor);
}

export function decideRollout(input: RolloutInput): RolloutDecision {
  const nowMs = input.now.getTime();
  if (!Number.isFinite(nowMs)) throw new RolloutInputError("now is not a valid time");
  if (input.state !== null && input.state.templateVersion !== input.targetTemplateVersion) {
    throw new RolloutInputError(
      `the state is the rollout of version ${input.state.templateVersion}, not ${input.targetTemplateVersion}: supersede it (supersedeRollout) and start the new one with state null`,
    );
  }
  const members = new Map<string, RolloutMember>();
  for (const m of input.members) members.set(m.name, m);
  const t: Tick = {
    now: input.now,
    nowMs,
    iso: input.now.toISOString(),
    input,
    policy: input.policy,
    members,
    timeoutMs: parseDuration(input.policy?.defaultUpdateTimeout ?? ROLLOUT_DEFAULTS.defaultUpdateTimeout),
    state: input.state ? structuredClone(input.state) : startRollout(input),
    moves: [],
    events: [],
    outcomes: [],
    budgetNote: null,
  };
  if (input.state === null) begin(t);

  for (const r of input.requests) handleRequest(t, r);
  advance(t);

  const render = renders(t);
  // Conditions and progress describe the fleet as this decision leaves it.
  t.members = withRenders(t, render);
  t.state.conditions = conditions(t);
  return {
    state: t.state,
    render,
    revertFleetTo: t.state.phase === "CanaryFailed" || t.state.phase === "Aborted" ? previous(t) : null,
    requests: t.outcomes,
    events: t.events,
    conditions: t.state.conditions,
    moves: t.moves,
    progress: progress(t),
  };
}

function startRollout(input: RolloutInput): RolloutState {
  return {
    templateVersion: input.targetTemplateVersion,
    previousTemplateVersion: input.previousTemplateVersion,
    phase: "New",
    allAtOnce: input.policy === null || input.previousTemplateVersion === null,
    startedAt: input.now.toISOString(),
    finishedAt: null,
    canary: null,
    pause: null,
    batch: null,
    batchReports: [],
    failure: null,
    ended: null,
    conditions: [],
  };
}

/** The first tick: pick the first phase. */
function begin(t: Tick): void {
  const s = t.state;
  const from = s.previousTemplateVersion === null ? "" : ` (replacing version ${s.previousTemplateVersion})`;
  if (s.allAtOnce) {
    const why = t.policy === null ? "no rollout policy" : "the fleet's first version: nothing to revert to";
    event(t, "RolloutStarted", "AllAtOnce", `version ${s.templateVersion}${from}: every member at once (${why})`);
    move(t, "RollingOut", "server", ROLLOUT_CONTROLLER, why);
    startBatch(t, 0, null);
    return;
  }
  const canary = t.policy?.canary;
  if (canary) {
    const population = [...t.members.values()].filter((m) => matchesSelector(selectorRequirements(canary.selector), m.labels));
    const count = resolveCount(canary.replicas, population.length);
    const devices = population
      .sort(connectedFirst)
      .slice(0, count)
      .map((m) => m.name)
      .sort(byName);
    if (devices.length > 0) {
      s.canary = { devices, startedAt: t.iso, endedAt: null, endedBy: null, restarts: {}, lastRestartAt: null, autoPauseOverride: null };
      event(t, "RolloutStarted", "Canary", `version ${s.templateVersion}${from}: canary of ${plural(devices.length, "device")} (${listNames(devices)})`);
      move(t, "Canary", "server", ROLLOUT_CONTROLLER, `canary ${listNames(devices)}`);
      return;
    }
    event(t, "CanarySkipped", "NoCanaryDevices", "no member matches the canary selector: the rollout starts with its batches");
  }
  event(t, "RolloutStarted", "Batches", `version ${s.templateVersion}${from}: in batches`);
  move(t, "RollingOut", "server", ROLLOUT_CONTROLLER, canary ? "no canary device" : "no canary in the policy");
  startBatch(t, 0, null);
}

// ---------------------------------------------------------------------------------------
// Operator requests

function handleRequest(t: Tick, r: RolloutRequest): void {
  const s = t.state;
  const applied = (message: string): void => {
    t.outcomes.push({ id: r.id, kind: r.kind, outcome: "applied", message });
  };
  const ignored = (message: string): void => {
    t.outcomes.push({ id: r.id, kind: r.kind, outcome: "ignored", message });
    event(t, "RolloutRequestIgnored", r.kind, message, r.actor);
  };
  const why = r.reason ? `: ${r.reason}` : "";

  if (r.at.getTime() < Date.parse(s.startedAt)) return ignored(`${r.kind} was requested before this rollout (version ${s.templateVersion}) started`);
  if (isTerminalRolloutPhase(s.phase)) return ignored(`the rollout of version ${s.templateVersion} has ended (${s.phase})`);

  switch (r.kind) {
    case "pause": {
      if (s.phase === "Canary" || s.phase === "RollingOut") {
        const message = `paused by ${r.actor}${why}`;
        s.pause = { source: "operator", reason: "PausedByOperator", message, devices: [], actor: r.actor, at: t.iso };
        const inCanary = s.phase === "Canary";
        move(t, inCanary ? "CanaryPaused" : "Paused", "operator", r.actor, message);
        return applied(inCanary ? "canary paused: nothing else gets the new version until resumed" : "rollout paused: nothing new is rendered until resumed");
      }
      if (s.phase === "CanaryPaused" || s.phase === "Paused") return ignored(`already paused (${s.pause?.message ?? "no reason"})`);
      return ignored(`nothing is rolling out: ${s.batch?.name ?? "the batch"} is suspended under its success threshold; promote to continue or abort`);
    }
    case "resume": {
      if (s.phase === "CanaryPaused" && s.canary) {
        const wasAuto = s.pause?.source === "auto";
        if (wasAuto) s.canary.autoPauseOverride = { actor: r.actor, at: t.iso };
        s.pause = null;
        move(t, "Canary", "operator", r.actor, `resumed by ${r.actor}${wasAuto ? "; auto-pause is off for the rest of this canary" : ""}`);
        return applied(wasAuto ? "canary resumed; auto-pause is off for the rest of this canary (auto-fail still applies)" : "canary resumed");
      }
      if (s.phase === "Paused") {
        s.pause = null;
        move(t, "RollingOut", "operator", r.actor, `resumed by ${r.actor}`);
        return applied("rollout resumed");
      }
      if (s.phase === "Suspended") return ignored("nothing is paused: the rollout is suspended under a success threshold; promote to continue");
      return ignored("nothing is paused");
    }
    case "promote": {
      if ((s.phase === "Canary" || s.phase === "CanaryPaused") && s.canary) {
        endCanary(t, "operator", r.actor, `promoted by ${r.actor}`);
        return applied(`canary ended by promote; ${s.batch?.name ?? "the next batch"} starts`);
      }
      if (s.phase === "Suspended" && s.batch) {
        const report = s.batchReports.at(-1);
        const under = report ? ` (${report.successPercentage}% under its ${report.successThreshold ?? 0}% threshold)` : "";
        event(t, "BatchApproved", s.batch.name, `${r.actor} continues after ${s.batch.name}${under}`, r.actor);
        const wasFinal = s.batch.final;
        nextBatch(t, "operator", r.actor, { actor: r.actor, at: t.iso });
        return applied(wasFinal ? "approved: that was the last batch, the rollout is complete" : `approved: ${s.batch.name} starts`);
      }
      if (s.phase === "Paused") return ignored("the rollout is paused: resume it first");
      return ignored(`nothing waits for approval: ${s.batch?.name ?? "the rollout"} is rolling out`);
    }
    case "abort": {
      const back = s.previousTemplateVersion === null ? "there is no previous version to revert to" : `the fleet reverts to version ${s.previousTemplateVersion}`;
      s.ended = { actor: r.actor, reason: "Aborted", message: `aborted by ${r.actor}${why}` };
      s.pause = null;
      move(t, "Aborted", "operator", r.actor, `aborted by ${r.actor}${why}; ${back}`);
      return applied(`rollout aborted; ${back}`);
    }
  }
}

// ---------------------------------------------------------------------------------------
// Progress by itself

function advance(t: Tick): void {
  // Each pass makes at most one move; empty batches may chain a few in one tick.
  for (let i = 0; i < 1_000; i++) {
    const before = `${t.state.phase}/${t.state.batch?.index ?? -1}`;
    if (t.state.phase === "Canary" || t.state.phase === "CanaryPaused") evaluateCanary(t);
    else if (t.state.phase === "RollingOut") evaluateBatch(t);
    else return;
    if (`${t.state.phase}/${t.state.batch?.index ?? -1}` === before) return;
  }
  throw new Error("rollout engine: no fixed point after 1000 passes");
}

function trackRestarts(t: Tick, c: CanaryState): void {
  for (const m of presentMembers(t, c.devices)) {
    const count = restartsOnTarget(m, target(t));
    const seen = c.restarts[m.name];
    if (seen === undefined) c.restarts[m.name] = { count, roseAt: count > 0 ? t.iso : null };
    else if (count > seen.count) c.restarts[m.name] = { count, roseAt: t.iso };
    else if (count < seen.count) c.restarts[m.name] = { count, roseAt: seen.roseAt }; // counters restarted with a new apply
    if (count > (seen?.count ?? 0)) c.lastRestartAt = t.iso;
  }
}

interface CanaryVerdict {
  reason: string;
  message: string;
  devices: string[];
}

/** ExtendedDaemonSet's per-device checks, in its order (research C.2). */
function canaryVerdict(t: Tick, c: CanaryState): { fail: CanaryVerdict | null; pause: CanaryVerdict | null } {
  const policy = t.policy?.canary;
  if (!policy) return { fail: null, pause: null };
  const devices = presentMembers(t, c.devices);
  const restarts = (m: RolloutMember) => restartsOnTarget(m, target(t));
  const describe = (list: RolloutMember[], max: number, field: string) =>
    list.map((m) => `${m.name} restarted ${plural(restarts(m), "time")} on version ${target(t)}`).join("; ") + ` (${field} ${max})`;

  if (policy.autoFail.enabled) {
    const over = devices.filter((m) => restarts(m) > policy.autoFail.maxRestarts);
    if (over.length > 0) {
      return { fail: { reason: "RestartsExceeded", message: describe(over, policy.autoFail.maxRestarts, "autoFail.maxRestarts"), devices: over.map((m) => m.name) }, pause: null };
    }
    const { timeoutMs } = canaryDurations(policy);
    if (timeoutMs !== null && t.nowMs - Date.parse(c.startedAt) > timeoutMs) {
      return {
        fail: { reason: "TimeoutExceeded", message: `the canary started at ${c.startedAt}, more than autoFail.canaryTimeout (${policy.autoFail.canaryTimeout}) ago`, devices: [] },
        pause: null,
      };
    }
  }
  const failedUpdate = devices.filter((m) => m.renderedTemplateVersion === target(t) && m.updateState === "Error");
  const failedMessage = failedUpdate.map((m) => `${m.name} failed to update to version ${target(t)} (update state Error)`).join("; ");
  if (failedUpdate.length > 0 && policy.autoFail.enabled) {
    return { fail: { reason: "UpdateFailed", message: failedMessage, devices: failedUpdate.map((m) => m.name) }, pause: null };
  }
  if (c.autoPauseOverride !== null || !policy.autoPause.enabled) return { fail: null, pause: null };
  const over = devices.filter((m) => restarts(m) > policy.autoPause.maxRestarts);
  if (over.length > 0) {
    return { fail: null, pause: { reason: "RestartsExceeded", message: describe(over, policy.autoPause.maxRestarts, "autoPause.maxRestarts"), devices: over.map((m) => m.name) } };
  }
  if (failedUpdate.length > 0) return { fail: null, pause: { reason: "UpdateFailed", message: `${failedMessage} (autoFail is off)`, devices: failedUpdate.map((m) => m.name) } };
  return { fail: null, pause: null };
}

/** When an auto-mode canary may end by itself (EDS IsCanaryDeploymentEnded), or null in manual mode. */
export function canaryEndsAt(policy: NonNullable<RolloutPolicy["canary"]>, c: Pick<CanaryState, "startedAt" | "lastRestartAt">): Date | null {
  const { durationMs, noRestartsMs } = canaryDurations(policy);
  if (durationMs === null) return null;
  const byDuration = Date.parse(c.startedAt) + durationMs;
  const byRestarts = c.lastRestartAt !== null && noRestartsMs !== null ? Date.parse(c.lastRestartAt) + noRestartsMs : -Infinity;
  return new Date(Math.max(byDuration, byRestarts));
}

function evaluateCanary(t: Tick): void {
  const s = t.state;
  const c = s.canary;
  if (!c) throw new Error(`rollout engine: ${s.phase} without canary state`);
  trackRestarts(t, c);
  const verdict = canaryVerdict(t, c);
  if (verdict.fail) {
    s.failure = verdict.fail;
    s.pause = null;
    const back = s.previousTemplateVersion === null ? "" : `; the fleet reverts to version ${s.previousTemplateVersion}`;
    s.ended = { actor: ROLLOUT_CONTROLLER, reason: verdict.fail.reason, message: verdict.fail.message };
    move(t, "CanaryFailed", "server", ROLLOUT_CONTROLLER, `${verdict.fail.reason}: ${verdict.fail.message}${back}`);
    return;
  }
  if (s.phase !== "Canary") return;
  if (verdict.pause) {
    s.pause = { source: "auto", ...verdict.pause, actor: ROLLOUT_CONTROLLER, at: t.iso };
    move(t, "CanaryPaused", "server", ROLLOUT_CONTROLLER, `${verdict.pause.reason}: ${verdict.pause.message}`);
    return;
  }
  const policy = t.policy?.canary;
  if (!policy) {
    // The canary was taken out of the policy while it ran: nothing left to wait for.
    endCanary(t, "server", ROLLOUT_CONTROLLER, "the policy no longer has a canary");
    return;
  }
  const endsAt = canaryEndsAt(policy, c);
  const allUpdated = presentMembers(t, c.devices).every((m) => statusOf(t, m) === "successful");
  if (endsAt !== null && allUpdated && t.nowMs >= endsAt.getTime()) {
    endCanary(t, "server", ROLLOUT_CONTROLLER, "the canary devices updated and ran without restarts long enough");
  }
}

function endCanary(t: Tick, by: RolloutActor, actor: string, why: string): void {
  const c = t.state.canary;
  if (c) {
    c.endedAt = t.iso;
    c.endedBy = actor;
  }
  t.state.pause = null;
  move(t, "RollingOut", by, actor, why);
  startBatch(t, 0, null);
}

function startBatch(t: Tick, index: number, approvedBy: BatchState["approvedBy"]): void {
  const s = t.state;
  const seq = sequence(t);
  const tgt = target(t);
  const all = [...t.members.values()];
  let devices: string[];
  let threshold: number | null;
  let name: string;
  const explicit = seq[index];
  if (s.allAtOnce) {
    name = ALL_MEMBERS_BATCH_NAME;
    threshold = null;
    devices = all.filter((m) => m.renderedTemplateVersion !== tgt).map((m) => m.name);
  } else if (explicit && index < seq.length) {
    name = batchName(index, seq.length);
    threshold = pct(explicit.successThreshold ?? t.policy?.successThreshold ?? ROLLOUT_DEFAULTS.successThreshold);
    const population = all.filter((m) => matchesSelector(selectorRequirements(explicit.selector), m.labels));
    const already = population.filter((m) => m.renderedTemplateVersion === tgt).length;
    // The limit is of the population and counts devices earlier stages already gave the new version (Flight Control).
    const room = explicit.limit === undefined ? Infinity : resolveCount(explicit.limit, population.length) - already;
    devices = population
      .filter((m) => m.renderedTemplateVersion !== tgt && m.connected)
      .map((m) => m.name)
      .sort(byName)
      .slice(0, Math.max(0, room));
  } else {
    name = FINAL_BATCH_NAME;
    threshold = pct(t.policy?.successThreshold ?? ROLLOUT_DEFAULTS.successThreshold);
    devices = all.filter((m) => m.renderedTemplateVersion !== tgt).map((m) => m.name);
  }
  devices.sort(byName);
  s.batch = { index: s.allAtOnce ? 0 : Math.min(index, seq.length), name, final: s.allAtOnce || index >= seq.length, devices, startedAt: t.iso, successThreshold: threshold, approvedBy };
  const who = approvedBy ? `, approved by ${approvedBy.actor}` : "";
  event(t, "BatchStarted", name, devices.length === 0 ? `${name} selects no device${who}` : `${name}: ${plural(devices.length, "device")} (${listNames(devices)})${who}`);
}

function evaluateBatch(t: Tick): void {
  const s = t.state;
  const b = s.batch;
  if (!b) throw new Error("rollout engine: RollingOut without a batch");
  if (b.final) {
    // Members that joined during the last batch belong to it.
    const inBatch = new Set(b.devices);
    const joined = [...t.members.values()].filter((m) => !inBatch.has(m.name) && m.renderedTemplateVersion !== target(t));
    if (joined.length > 0) b.devices = [...b.devices, ...joined.map((m) => m.name)].sort(byName);
  }
  const statuses = presentMembers(t, b.devices).map((m) => statusOf(t, m));
  if (statuses.some((x) => x === "waiting" || x === "updating")) return;
  const count = (x: DeviceRolloutStatus) => statuses.filter((y) => y === x).length;
  const total = statuses.length;
  const successful = count("successful");
  const successPercentage = total === 0 ? 100 : Math.floor((successful * 100) / total);
  const report: BatchReport = {
    batchName: b.name,
    total,
    successful,
    failed: count("failed"),
    timedOut: count("timedOut"),
    successPercentage,
    successThreshold: b.successThreshold,
    passed: b.successThreshold === null || successPercentage >= b.successThreshold,
    completedAt: t.iso,
  };
  s.batchReports.push(report);
  const breakdown = `total=${report.total} successful=${report.successful} failed=${report.failed} timed out=${report.timedOut}`;
  const vs = report.successThreshold === null ? "" : `, threshold ${report.successThreshold}%`;
  event(t, "BatchCompleted", b.name, `${report.successPercentage}% successful${vs}; ${breakdown}`);
  if (!report.passed) {
    move(t, "Suspended", "server", ROLLOUT_CONTROLLER, suspendedMessage(report, report.successThreshold ?? 0));
    return;
  }
  nextBatch(t, "server", ROLLOUT_CONTROLLER, null);
}

function nextBatch(t: Tick, by: RolloutActor, actor: string, approvedBy: BatchState["approvedBy"]): void {
  const s = t.state;
  const b = s.batch;
  if (!b || b.final) {
    const last = s.batchReports.at(-1);
    const message = last && !last.passed ? `version ${s.templateVersion} rolled out; ${last.batchName} was approved by ${actor} under its threshold` : `version ${s.templateVersion} rolled out`;
    s.ended = { actor, reason: "Completed", message };
    move(t, "Completed", by, actor, message);
    return;
  }
  if (s.phase !== "RollingOut") move(t, "RollingOut", by, actor, `${actor} approved the next batch after ${b.name}`);
  startBatch(t, b.index + 1, approvedBy);
}

// ---------------------------------------------------------------------------------------
// Renders and the disruption budget

function renders(t: Tick): RenderOrder[] {
  const s = t.state;
  const tgt = target(t);
  const prev = previous(t);
  const all = [...t.members.values()];
  const out: RenderOrder[] = [];
  switch (s.phase) {
    case "Completed":
      // Members that joined since get the version the fleet now runs.
      for (const m of all) if (m.renderedTemplateVersion !== tgt) out.push({ device: m.name, templateVersion: tgt });
      break;
    case "CanaryFailed":
    case "Aborted":
      // Revert: everyone not on the previous version gets it back at once (never throttled).
      if (prev !== null) for (const m of all) if (m.renderedTemplateVersion !== prev) out.push({ device: m.name, templateVersion: prev });
      break;
    case "Superseded":
    case "New":
      break;
    default: {
      const stage = new Set<string>([...(s.canary?.devices ?? []), ...(s.phase === "Canary" || s.phase === "CanaryPaused" ? [] : (s.batch?.devices ?? []))]);
      const current = s.phase === "Canary" ? (s.canary?.devices ?? []) : s.phase === "RollingOut" ? (s.batch?.devices ?? []) : [];
      const candidates = presentMembers(t, current).filter((m) => m.renderedTemplateVersion !== tgt);
      const budget = s.allAtOnce ? undefined : t.policy?.disruptionBudget;
      const allowed = budget ? applyBudget(t, budget, candidates) : candidates;
      for (const m of allowed) out.push({ device: m.name, templateVersion: tgt });
      // A member with no spec yet (it just joined) runs the known-good version until its stage comes.
      if (prev !== null) for (const m of all) if (m.renderedTemplateVersion === null && !stage.has(m.name)) out.push({ device: m.name, templateVersion: prev });
    }
  }
  return out.sort((a, b) => byName(a.device, b.device));
}

function withRenders(t: Tick, render: readonly RenderOrder[]): Map<string, RolloutMember> {
  const after = new Map(t.members);
  for (const r of render) {
    const m = after.get(r.device);
    if (m) after.set(r.device, { ...m, renderedTemplateVersion: r.templateVersion, renderedAt: t.now, applied: false, updated: "OutOfDate", updateState: null });
  }
  return after;
}

/** "Busy": given the new version and not done with it yet (Flight Control's busy_connected). */
function isBusy(t: Tick, m: RolloutMember): boolean {
  return m.connected && statusOf(t, m) === "updating";
}

function groupKey(budget: DisruptionBudget, m: RolloutMember): string {
  if (budget.groupBy.length === 0) return "the fleet";
  return budget.groupBy.map((k) => `${k}=${m.labels[k] ?? "<none>"}`).join(",");
}

/**
 * Flight Control's per-group budget (disruption_budget/reconciler.go):
 * numToRender = min(maxUnavailable − busyConnected, (connected − busyConnected) − min(minAvailable, total − 1)).
 * The `total − 1` cap means a group always has room for one when every device is connected
 * and idle, whatever minAvailable says; what it holds back is named in the condition.
 */
export function budgetAllowance(budget: Pick<DisruptionBudget, "maxUnavailable" | "minAvailable">, group: { total: number; connected: number; busy: number }): number {
  let n = Infinity;
  if (budget.maxUnavailable !== undefined) n = Math.min(n, budget.maxUnavailable - group.busy);
  if (budget.minAvailable !== undefined) n = Math.min(n, group.connected - group.busy - Math.min(budget.minAvailable, group.total - 1));
  return Math.max(0, n);
}

function applyBudget(t: Tick, budget: DisruptionBudget, candidates: RolloutMember[]): RolloutMember[] {
  const groups = new Map<string, { total: number; connected: number; busy: number; candidates: RolloutMember[] }>();
  for (const m of t.members.values()) {
    const key = groupKey(budget, m);
    const g = groups.get(key) ?? { total: 0, connected: 0, busy: 0, candidates: [] };
    g.total++;
    if (m.connected) g.connected++;
    if (isBusy(t, m)) g.busy++;
    groups.set(key, g);
  }
  for (const m of candidates) groups.get(groupKey(budget, m))?.candidates.push(m);
  const allowed: RolloutMember[] = [];
  const held: string[] = [];
  let heldCount = 0;
  for (const [key, g] of [...groups.entries()].sort(([a], [b]) => byName(a, b))) {
    if (g.candidates.length === 0) continue;
    const n = budgetAllowance(budget, g);
    allowed.push(...g.candidates.sort(connectedFirst).slice(0, n));
    const waiting = g.candidates.length - Math.min(n, g.candidates.length);
    if (waiting === 0) continue;
    heldCount += waiting;
    const limits = [budget.maxUnavailable !== undefined ? `maxUnavailable ${budget.maxUnavailable}` : "", budget.minAvailable !== undefined ? `minAvailable ${budget.minAvailable}` : ""]
      .filter(Boolean)
      .join(", ");
    const stuck = g.busy === 0 ? "; nothing is updating there: waiting for its devices to reconnect" : "";
    held.push(`${key}: ${waiting} waiting (${g.total} devices, ${g.connected} connected, ${g.busy} updating; ${limits})${stuck}`);
  }
  if (heldCount > 0) {
    const shown = held.slice(0, 3).join("; ") + (held.length > 3 ? `; and ${held.length - 3} more groups` : "");
    t.budgetNote = `disruption budget holds back ${plural(heldCount, "device")}: ${shown}`;
  }
  return allowed;
}

// ---------------------------------------------------------------------------------------
// Conditions and progress

function rolloutInProgress(t: Tick): Pick<Condition, "status" | "reason" | "message"> {
  const s = t.state;
  const budget = t.budgetNote ? `; ${t.budgetNote}` : "";
  switch (s.phase) {
    case "Canary": {
      const c = s.canary;
      const policy = t.policy?.canary;
      const devices = presentMembers(t, c?.devices ?? []);
      const done = devices.filter((m) => statusOf(t, m) === "successful");
      const pending = devices.filter((m) => statusOf(t, m) !== "successful").map((m) => `${m.name} (${statusOf(t, m)})`);
      const counts = `${done.length} of ${plural(devices.length, "canary device")} updated`;
      if (pending.length > 0) return { status: "True", reason: "Active", message: `Rolling out canary; ${counts}; waiting for ${listNames(pending)}${budget}` };
      const endsAt = policy && c ? canaryEndsAt(policy, c) : null;
      if (endsAt === null) return { status: "False", reason: "Waiting", message: `Waiting for canary to be promoted; ${counts} (validationMode manual)` };
      return { status: "True", reason: "Active", message: `Rolling out canary; ${counts}; the canary ends at ${endsAt.toISOString()} if no device restarts` };
    }
    case "CanaryPaused":
      return { status: "False", reason: "Suspended", message: `Canary paused: ${s.pause?.message ?? ""}; resume or promote to continue, or abort` };
    case "RollingOut":
      return { status: "True", reason: "Active", message: `Rolling out ${s.batch?.name ?? ""}${budget}` };
    case "Suspended": {
      const r = s.batchReports.at(-1);
      return { status: "False", reason: "Suspended", message: r ? suspendedMessage(r, r.successThreshold ?? 0) : "Suspended" };
    }
    case "Paused":
      return { status: "False", reason: "Suspended", message: `Rollout ${s.pause?.message ?? "paused"}; resume to continue` };
    default:
      return { status: "False", reason: "Inactive", message: s.ended ? `Rollout is not in progress: ${s.phase}, ${s.ended.message}` : "Rollout is not in progress" };
  }
}

function conditions(t: Tick): Condition[] {
  const s = t.state;
  const prior = new Map(s.conditions.map((c) => [c.type, c]));
  const make = (type: string, c: Pick<Condition, "status" | "reason" | "message">): Condition => {
    const before = prior.get(type);
    // Kubernetes: lastTransitionTime moves only when the status does.
    return { type, ...c, lastTransitionTime: before && before.status === c.status ? before.lastTransitionTime : t.iso };
  };
  const paused = s.phase === "CanaryPaused" && s.pause;
  const failed = s.phase === "CanaryFailed" && s.failure;
  return [
    make("RolloutInProgress", rolloutInProgress(t)),
    make("CanaryPaused", paused ? { status: "True", reason: paused.reason, message: paused.message } : { status: "False", reason: "NotPaused", message: "" }),
    make("CanaryFailed", failed ? { status: "True", reason: failed.reason, message: failed.message } : { status: "False", reason: "NotFailed", message: "" }),
  ];
}

function liveProgress(t: Tick, kind: StageProgress["kind"], name: string, status: StageProgress["status"], devices: readonly string[]): StageProgress {
  const statuses = presentMembers(t, devices).map((m) => statusOf(t, m));
  const count = (x: DeviceRolloutStatus) => statuses.filter((y) => y === x).length;
  return {
    kind,
    name,
    status,
    total: statuses.length,
    waiting: count("waiting"),
    updating: count("updating"),
    successful: count("successful"),
    failed: count("failed"),
    timedOut: count("timedOut"),
  };
}

function canaryWatch(t: Tick, c: CanaryState): CanaryWatch {
  const policy = t.policy?.canary;
  const devices = presentMembers(t, c.devices)
    // As last seen on the new version (trackRestarts): once the canary has ended, the counts that ended it.
    .map((m) => ({ name: m.name, restarts: c.restarts[m.name]?.count ?? restartsOnTarget(m, target(t)), status: statusOf(t, m) }))
    .sort((a, b) => b.restarts - a.restarts || byName(a.name, b.name));
  const durations = policy ? canaryDurations(policy) : null;
  const endsAt = policy ? canaryEndsAt(policy, c) : null;
  return {
    devices: devices.slice(0, CANARY_WATCH_DEVICES),
    total: devices.length,
    restarting: devices.filter((d) => d.restarts > 0).length,
    pauseAbove: policy?.autoPause.enabled && c.autoPauseOverride === null ? policy.autoPause.maxRestarts : null,
    failAbove: policy?.autoFail.enabled ? policy.autoFail.maxRestarts : null,
    timeoutAt: durations?.timeoutMs != null ? new Date(Date.parse(c.startedAt) + durations.timeoutMs).toISOString() : null,
    endsAt: endsAt ? endsAt.toISOString() : null,
  };
}

function progress(t: Tick): StageProgress[] {
  const s = t.state;
  const out: StageProgress[] = [];
  const canaryActive = s.phase === "Canary" || s.phase === "CanaryPaused";
  // Running when the rollout ended other than Completed: the stage it ended in.
  const endedIn = endedStageStatus(s.phase);
  if (s.canary) {
    const canaryStatus = canaryActive ? "active" : isTerminalRolloutPhase(s.phase) && s.batch === null ? endedIn : "done";
    const stage = liveProgress(t, "canary", "canary", canaryStatus, s.canary.devices);
    out.push(canaryActive || (isTerminalRolloutPhase(s.phase) && s.batch === null) ? { ...stage, watch: canaryWatch(t, s.canary) } : stage);
  }
  for (const r of s.batchReports) out.push({ kind: "batch", name: r.batchName, status: "done", total: r.total, waiting: 0, updating: 0, successful: r.successful, failed: r.failed, timedOut: r.timedOut });
  const b = s.batch;
  const batchOpen = b !== null && (s.phase === "RollingOut" || s.phase === "Paused" || (isTerminalRolloutPhase(s.phase) && s.batchReports.at(-1)?.batchName !== b.name));
  if (b && batchOpen) out.push(liveProgress(t, "batch", b.name, isTerminalRolloutPhase(s.phase) ? endedIn : "active", b.devices));
  if (!isTerminalRolloutPhase(s.phase) && !s.allAtOnce) {
    const seq = sequence(t);
    const from = b === null ? 0 : b.index + 1;
    if (b === null || !b.final) for (let i = from; i <= seq.length; i++) out.push({ kind: "batch", name: batchName(i, seq.length), status: "pending", total: null, waiting: 0, updating: 0, successful: 0, failed: 0, timedOut: 0 });
  }
  return out;
}

// ---------------------------------------------------------------------------------------
// Superseding

export interface SupersedeResult {
  state: RolloutState;
  moves: RolloutMove[];
  events: RolloutEvent[];
  conditions: Condition[];
}

/**
 * A newer template version replaces a rollout that has not finished: it ends as Superseded
 * (the controller records this state, then starts the new rollout with state null and
 * `previousTemplateVersion = revertTargetForNextRollout(old)`). Devices stay where they are;
 * the new rollout decides. A finished rollout is returned unchanged.
 */
export function supersedeRollout(state: RolloutState, args: { now: Date; byTemplateVersion: string }): SupersedeResult {
  if (isTerminalRolloutPhase(state.phase)) return { state, moves: [], events: [], conditions: state.conditions };
  const t: Tick = {
    now: args.now,
    nowMs: args.now.getTime(),
    iso: args.now.toISOString(),
    input: { now: args.now, policy: null, targetTemplateVersion: state.templateVersion, previousTemplateVersion: state.previousTemplateVersion, members: [], state, requests: [] },
    policy: null,
    members: new Map(),
    timeoutMs: parseDuration(ROLLOUT_DEFAULTS.defaultUpdateTimeout),
    state: structuredClone(state),
    moves: [],
    events: [],
    outcomes: [],
    budgetNote: null,
  };
  const message = `version ${args.byTemplateVersion} replaces version ${state.templateVersion} before it finished rolling out`;
  t.state.ended = { actor: ROLLOUT_CONTROLLER, reason: "Superseded", message };
  t.state.pause = null;
  move(t, "Superseded", "server", ROLLOUT_CONTROLLER, message);
  t.state.conditions = conditions(t);
  return { state: t.state, moves: t.moves, events: t.events, conditions: t.state.conditions };
}
