/**
 * The rollout controller (issue 7, DESIGN.md §3, seed 002): the one writer of `Rollout` rows.
 * For a fleet with an open rollout it reads the members (members.ts), the operators' requests
 * not yet handled and the fleet's policy, asks the pure engine (`decideRollout`,
 * lib/rollout.ts) what to do, and applies the decision in ONE transaction:
 *
 * - the Rollout row: phase, the engine's state (plus the last progress per stage, for the
 *   console), `endedAt` once the phase is terminal;
 * - the renders, grouped by version, with `renderDevices` (the canary, a batch, joiners, or
 *   the previous version on a revert), then every touched device re-derived (`finishEffects`);
 * - each request marked handled with its outcome and message;
 * - the engine's events on `Fleet/<name>`, with the actor the engine gives (an operator for
 *   their requests, `rollout-controller` otherwise);
 * - the template version's outcome: RollingOut while it runs, Active when Completed (the one
 *   before becomes Superseded), Failed on CanaryFailed or Aborted (with why);
 * - on `revertFleetTo`, the fleet controller's `revertFleetTemplate` moves the fleet back to
 *   the previous version itself (decision C-1: no new version, no new rollout).
 *
 * The fleet is recounted in the same transaction (`refreshFleetStatusInTx`); after commit the
 * rendered devices' held polls are woken and events published.
 *
 * When it runs: inside the transaction of a template change (`startRollout`: the canary gets
 * the new version in the same request) and of an operator's request (requests.ts); on every
 * controllers' tick for every open rollout (time: canary duration, timeouts); and 150 ms after
 * a member's heartbeat moved its statuses or restart counts (`watchRollouts`), so a canary
 * pauses within a heartbeat of the restarts. A tick that would change nothing is decided
 * outside any transaction first and writes nothing.
 *
 * Concurrency: every decision is re-read and re-decided inside its transaction, and SQLite
 * runs one Prisma transaction at a time, so two triggers for one fleet apply in turn, each
 * on the other's result. (With PostgreSQL and several servers, one leader runs the
 * controllers: server/controllers.ts.)
 */
import type { ServerContext } from "../context";
import type { Db, Tx } from "../db";
import type { EventRow } from "../events/events";
import { topics } from "../bus";
import { RolloutPolicy } from "../../lib/fleet-spec";
import {
  decideRollout,
  revertTargetForNextRollout,
  ROLLOUT_CONTROLLER,
  RolloutStateSchema,
  supersedeRollout,
  type RolloutDecision,
  type RolloutRequestKind,
  type RolloutState,
  type StageProgress,
} from "../../lib/rollout";
import { isTerminalRolloutPhase } from "../../lib/rollout-status";
import { afterCommit, finishEffects, newEffects, renderDevices, type Effects } from "../fleets/render";
import { refreshFleetStatusInTx, revertFleetTemplate } from "../fleets/controller";
import { loadRolloutMembers, type LoadedMember } from "./members";
import { locks, transaction } from "../lib/transactions";

export { ROLLOUT_CONTROLLER };

// ---------------------------------------------------------------------------------------
// The stored state

/**
 * The Rollout row's `state` column: the engine's state with the last progress per stage next
 * to it (`progress`, for the console; not the engine's). `{}` before the first decision.
 */
export function parseStoredState(json: string): RolloutState | null {
  const raw = JSON.parse(json) as Record<string, unknown> | null;
  if (!raw || typeof raw !== "object" || !("phase" in raw)) return null;
  const { progress: _progress, ...state } = raw;
  return RolloutStateSchema.parse(state);
}

function storedProgress(json: string): StageProgress[] {
  const raw = JSON.parse(json) as { progress?: unknown } | null;
  return Array.isArray(raw?.progress) ? (raw.progress as StageProgress[]) : [];
}

const storedJson = (state: RolloutState, progress: StageProgress[]) => JSON.stringify({ ...state, progress });

const openRolloutSelect = { id: true, fleetId: true, templateVersion: true, previousVersion: true, phase: true, state: true } as const;

function parsePolicy(json: string | null): RolloutPolicy | null {
  if (!json) return null;
  const r = RolloutPolicy.safeParse(JSON.parse(json));
  // Stored policies were validated on the way in; an unreadable one (an older schema) is no policy.
  return r.success ? r.data : null;
}

// ---------------------------------------------------------------------------------------
// One decision

interface Evaluation {
  rollout: { id: string; templateVersion: string; state: string; phase: string };
  fleet: { id: string; name: string; templateVersion: string };
  members: LoadedMember[];
  decision: RolloutDecision;
  json: string;
  /** The version to revert the fleet to now, when the decision asks and the fleet is not there yet. */
  revert: string | null;
  changed: boolean;
}

async function evaluate(db: Tx | Db, fleetId: string, now: Date): Promise<Evaluation | null> {
  const rollout = await db.rollout.findFirst({ where: { fleetId, endedAt: null }, orderBy: { createdAt: "desc" }, select: openRolloutSelect });
  if (!rollout) return null;
  const fleet = await db.fleet.findUnique({ where: { id: fleetId }, select: { id: true, name: true, templateVersion: true, rolloutPolicy: true } });
  if (!fleet) return null;
  const members = await loadRolloutMembers(db, fleet);
  const requests = await db.rolloutRequest.findMany({ where: { fleetId, handledAt: null }, orderBy: [{ createdAt: "asc" }, { id: "asc" }] });
  const decision = decideRollout({
    now,
    policy: parsePolicy(fleet.rolloutPolicy),
    targetTemplateVersion: rollout.templateVersion,
    previousTemplateVersion: rollout.previousVersion,
    members,
    state: parseStoredState(rollout.state),
    requests: requests.map((r) => ({ id: r.id, kind: r.kind as RolloutRequestKind, actor: r.actor, at: r.createdAt, ...(r.reason ? { reason: r.reason } : {}) })),
  });
  const json = storedJson(decision.state, decision.progress);
  const revert = decision.revertFleetTo !== null && decision.revertFleetTo !== fleet.templateVersion ? decision.revertFleetTo : null;
  const changed =
    json !== rollout.state ||
    decision.render.length > 0 ||
    requests.length > 0 ||
    decision.events.length > 0 ||
    revert !== null ||
    isTerminalRolloutPhase(decision.state.phase);
  return { rollout, fleet, members, decision, json, revert, changed };
}

/** Writes one decision inside the caller's transaction; effects are finished by the caller. */
async function persist(tx: Tx, ev: Evaluation, now: Date, effects: Effects): Promise<void> {
  const { decision, fleet } = ev;
  const phase = decision.state.phase;
  const terminal = isTerminalRolloutPhase(phase);
  await tx.rollout.update({ where: { id: ev.rollout.id }, data: { phase, state: ev.json, ...(terminal ? { endedAt: now } : {}) } });

  // Renders, one statement per version.
  const ids = new Map(ev.members.map((m) => [m.name, m.id]));
  const byVersion = new Map<string, string[]>();
  for (const r of decision.render) {
    const id = ids.get(r.device);
    if (id === undefined) continue;
    const list = byVersion.get(r.templateVersion) ?? [];
    list.push(id);
    byVersion.set(r.templateVersion, list);
  }
  for (const [version, list] of byVersion) await renderDevices(tx, fleet, version, now, ROLLOUT_CONTROLLER, effects, list);

  for (const r of decision.requests) {
    await tx.rolloutRequest.update({ where: { id: r.id }, data: { handledAt: now, outcome: r.outcome === "applied" ? "Applied" : "Ignored", message: r.message } });
  }
  for (const e of decision.events) effects.events.push({ objectKind: "Fleet", objectName: fleet.name, ...e });
  effects.fleets.add(fleet.name);

  if (terminal) await recordOutcome(tx, fleet.id, decision.state);
  if (ev.revert !== null) {
    const why =
      phase === "Aborted"
        ? (decision.state.ended?.message ?? "the rollout was aborted")
        : `the canary of version ${decision.state.templateVersion} failed (${decision.state.failure?.reason ?? "CanaryFailed"})`;
    await revertFleetTemplate(tx, fleet, ev.revert, why, effects);
  }
}

/** The target version's outcome when its rollout ends (template versions list them). */
async function recordOutcome(tx: Tx, fleetId: string, state: RolloutState): Promise<void> {
  const version = Number(state.templateVersion);
  const where = { fleetId_version: { fleetId, version } };
  switch (state.phase) {
    case "Completed":
      // The new version is the fleet's Active one; the one it replaced is done.
      await tx.templateVersion.updateMany({ where: { fleetId, outcome: "Active", version: { not: version } }, data: { outcome: "Superseded" } });
      await tx.templateVersion.update({ where, data: { outcome: "Active", outcomeMessage: state.ended?.message ?? null } });
      return;
    case "CanaryFailed":
      await tx.templateVersion.update({ where, data: { outcome: "Failed", outcomeMessage: state.failure ? `${state.failure.reason}: ${state.failure.message}` : null } });
      return;
    case "Aborted":
      // Reverted like a failed canary; the message says an operator did it.
      await tx.templateVersion.update({ where, data: { outcome: "Failed", outcomeMessage: state.ended?.message ?? "aborted" } });
      return;
    default:
      return;
  }
}

/**
 * Runs the controller for one fleet inside the caller's transaction (a template change, an
 * operator's request). Returns the decision, or null when the fleet has no open rollout.
 */
export async function runRolloutInTx(tx: Tx, fleetId: string, now: Date, effects: Effects): Promise<RolloutDecision | null> {
  const ev = await evaluate(tx, fleetId, now);
  if (!ev) return null;
  if (ev.changed) await persist(tx, ev, now, effects);
  return ev.decision;
}

// ---------------------------------------------------------------------------------------
// Template changes (called by the fleet domain inside its transaction)

/**
 * A newer template version replaces the open rollout, if any: it ends as Superseded (devices
 * stay where they are; the new rollout decides), its version's outcome is Superseded, its
 * unhandled requests are answered. Returns the version the next rollout reverts to (the last
 * one that finished rolling out), or null when nothing was open.
 */
export async function supersedeOpenRollout(tx: Tx, fleet: { id: string; name: string }, byVersion: string, now: Date, effects: Effects): Promise<string | null> {
  const open = await tx.rollout.findMany({ where: { fleetId: fleet.id, endedAt: null }, orderBy: { createdAt: "desc" }, select: openRolloutSelect });
  let revertTo: string | null = null;
  for (const [i, r] of open.entries()) {
    const state = parseStoredState(r.state);
    const message = `version ${byVersion} replaces version ${r.templateVersion} before it finished rolling out`;
    if (state) {
      const s = supersedeRollout(state, { now, byTemplateVersion: byVersion });
      await tx.rollout.update({ where: { id: r.id }, data: { phase: s.state.phase, state: storedJson(s.state, storedProgress(r.state)), endedAt: now } });
      for (const e of s.events) effects.events.push({ objectKind: "Fleet", objectName: fleet.name, ...e });
      if (i === 0) revertTo = revertTargetForNextRollout(s.state);
    } else {
      // Never decided (the server stopped in between): nothing ran, nothing to undo.
      await tx.rollout.update({ where: { id: r.id }, data: { phase: "Superseded", endedAt: now } });
      effects.events.push({ objectKind: "Fleet", objectName: fleet.name, type: "RolloutPhaseChanged", reason: "Superseded", message, actor: ROLLOUT_CONTROLLER });
      if (i === 0) revertTo = r.previousVersion;
    }
    await tx.templateVersion.updateMany({
      where: { fleetId: fleet.id, version: Number(r.templateVersion), outcome: { in: ["Pending", "RollingOut"] } },
      data: { outcome: "Superseded", outcomeMessage: message },
    });
  }
  if (open.length > 0) {
    await tx.rolloutRequest.updateMany({
      where: { fleetId: fleet.id, handledAt: null },
      data: { handledAt: now, outcome: "Ignored", message: `the rollout was superseded by version ${byVersion}` },
    });
    effects.fleets.add(fleet.name);
  }
  return revertTo;
}

/**
 * Starts the rollout of `target` (the fleet's templateVersion has just moved to it) and makes
 * its first decision at once, in the caller's transaction: the canary devices get the new
 * version in the same request. Every member is re-derived (UpToDate is against the fleet's
 * version, which moved), so those not chosen yet show OutOfDate with why.
 */
export async function startRollout(tx: Tx, fleet: { id: string; name: string }, target: string, previous: string, now: Date, effects: Effects): Promise<RolloutDecision | null> {
  await tx.rollout.create({ data: { fleetId: fleet.id, templateVersion: target, previousVersion: previous, phase: "New", state: "{}", createdAt: now } });
  const members = await tx.device.findMany({ where: { owner: fleet.name }, select: { id: true } });
  for (const m of members) effects.touched.add(m.id);
  effects.fleets.add(fleet.name);
  return runRolloutInTx(tx, fleet.id, now, effects);
}

/**
 * The version a device that joins the fleet now gets: while a rollout is open, the version it
 * replaces (the known-good one; the rollout gives the joiner the new one when its stage comes),
 * else the fleet's templateVersion. For membership (fleets/membership.ts).
 */
export async function joinVersions(tx: Tx): Promise<Map<string, string>> {
  const open = await tx.rollout.findMany({ where: { endedAt: null, previousVersion: { not: null } }, select: { fleetId: true, previousVersion: true } });
  return new Map(open.map((r) => [r.fleetId, r.previousVersion as string]));
}

// ---------------------------------------------------------------------------------------
// Running by itself: the tick and the watcher

const serial = new WeakMap<ServerContext, Promise<void>>();

/**
 * Decides every open rollout (or those of fleets `names`), one transaction per fleet that
 * changes. One pass at a time per server.
 */
export function runRollouts(ctx: ServerContext, names?: string[]): Promise<void> {
  const previous = serial.get(ctx) ?? Promise.resolve();
  const next = previous.catch(() => undefined).then(() => runOnce(ctx, names));
  serial.set(ctx, next);
  return next;
}

async function runOnce(ctx: ServerContext, names?: string[]): Promise<void> {
  if (names && names.length === 0) return;
  const open = await ctx.db.rollout.findMany({
    where: { endedAt: null, ...(names ? { fleet: { name: { in: names } } } : {}) },
    select: { fleetId: true },
  });
  for (const fleetId of new Set(open.map((r) => r.fleetId))) {
    try {
      await runOne(ctx, fleetId);
    } catch (err) {
      ctx.log.error({ err, fleetId }, "rollout controller failed");
    }
  }
}

async function runOne(ctx: ServerContext, fleetId: string): Promise<void> {
  // A look without a transaction first: most ticks change nothing and hold no lock.
  const look = await evaluate(ctx.db, fleetId, ctx.now());
  if (!look?.changed) return;
  const now = ctx.now();
  const done = await transaction(
    ctx.db,
    async (tx) => {
      const effects = newEffects(ctx.statusSettings);
      const ev = await evaluate(tx, fleetId, now);
      if (!ev?.changed) return null;
      await persist(tx, ev, now, effects);
      const rows = await finishEffects(tx, effects, now, ROLLOUT_CONTROLLER);
      // The counts commit with the phase: a reader never sees Completed beside the counts before it.
      return { effects, rows: [...rows, ...(await refreshFleetStatusInTx(tx, ctx, [...effects.fleets]))] };
    },
    { locks: [locks.fleet(look.fleet.name)], timeout: 60_000, maxWait: 30_000 },
  );
  if (!done) return;
  afterCommit(ctx, done.effects, done.rows);
}

/**
 * Runs the controller for a fleet shortly after its members' heartbeats moved a status or a
 * restart count, and after a device joined it (debounced: a burst is one pass per fleet).
 */
export function watchRollouts(ctx: ServerContext, delayMs = 150): { stop(): void } {
  const pending = new Set<string>();
  let timer: NodeJS.Timeout | null = null;
  let stopped = false;
  const run = () => {
    timer = null;
    if (stopped) return;
    const names = [...pending];
    pending.clear();
    runRollouts(ctx, names).catch((err: unknown) => {
      if (!stopped) ctx.log.error({ err }, "rollout controller failed");
    });
  };
  const schedule = (fleet: string) => {
    pending.add(fleet);
    if (!timer && !stopped) {
      timer = setTimeout(run, delayMs);
      timer.unref();
    }
  };
  const offReports = ctx.bus.subscribe<{ owner: string }>(topics.memberReports, (p) => schedule(p.owner));
  const offEvents = ctx.bus.subscribe<EventRow>(topics.events, (row) => {
    if (row.objectKind === "Device" && row.type === "FleetJoined") schedule(row.reason);
  });
  return {
    stop() {
      stopped = true;
      offReports();
      offEvents();
      if (timer) clearTimeout(timer);
    },
  };
}
