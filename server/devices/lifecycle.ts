/**
 * Operator moves on a device: decommission (seed 003 lifecycle), resume from ConflictPaused and
 * revoke its credential (issue 23). Each re-derives the statuses, records events and wakes the
 * device's poll.
 */
import { assertTransition } from "../../lib/state-machine";
import { lifecycleMachine, type Lifecycle } from "../../lib/device-status";
import type { ServerContext } from "../context";
import type { Tx } from "../db";
import { ACTIVE_ACTION_STATES, actionMachine, canMove, PENDING_ACTION_STATES, type ActionState } from "../../lib/action-status";
import { conflict, notFound } from "../errors";
import { publishEvents, recordEvents, type EventRow, type NewEvent } from "../events/events";
import { actionsEnded } from "../actions/agent-reports";
import { topics } from "../bus";
import { refreshFleetStatus } from "../fleets/controller";
import { deviceFactsSelect, rederive, parseReported, statusChangeEvents, statusColumns, storedStatus, type DeviceFactsRow } from "./status";
import { lockRows, transaction } from "../lib/transactions";
import { lostEvent, REVOKED_OUTCOME_UNKNOWN } from "./agent-store";

async function mutateDevice(
  ctx: ServerContext,
  name: string,
  /** Null: nothing to change (nothing written, no event, no wake). */
  change: (row: DeviceFactsRow) => { patch: Partial<DeviceFactsRow>; events: NewEvent[] } | null,
  actor: string,
  /** More writes in the same transaction, with their events. */
  alongside?: (tx: Tx, row: DeviceFactsRow, now: Date) => Promise<NewEvent[]>,
): Promise<EventRow[] | null> {
  const now = ctx.now();
  const done = await transaction(ctx.db, async (tx) => {
    // The device's row, locked first: what is decided here is decided on what it is now.
    await lockRows(tx, "Device", [name], "name");
    const row = await tx.device.findUnique({ where: { name }, select: deviceFactsSelect });
    if (!row) throw notFound(`device "${name}"`);
    const changed = change(row);
    if (!changed) return null;
    const { patch, events } = changed;
    const next = { ...row, ...patch };
    const after = rederive(next, now, ctx.statusSettings);
    const more = alongside ? await alongside(tx, row, now) : [];
    const all = [...events, ...more, ...statusChangeEvents(name, storedStatus(row), after, actor)];
    await tx.device.update({
      where: { id: row.id },
      data: {
        decommissionRequestedAt: next.decommissionRequestedAt,
        conflictPaused: next.conflictPaused,
        renderedVersion: next.renderedVersion,
        credentialRevokedAt: next.credentialRevokedAt,
        owner: next.owner,
        ...(next.owner === null ? { multipleOwners: null } : {}),
        ...statusColumns(after),
        ...(patch.decommissionRequestedAt ? { decommissionRequestedBy: actor } : {}),
      },
    });
    return { rows: await recordEvents(tx, all), deviceId: row.id };
  });
  if (!done) return null;
  publishEvents(ctx, done.rows);
  ctx.bus.publish(topics.device(done.deviceId), { at: Date.now() });
  actionsEnded(ctx, done.rows);
  return done.rows;
}

export async function requestDecommission(ctx: ServerContext, name: string, actor: string): Promise<void> {
  let fleet: string | null = null;
  await mutateDevice(
    ctx,
    name,
    (row) => {
      const change = decommissionChange(ctx, row, actor);
      fleet = row.owner;
      return change;
    },
    actor,
    endActions(actor),
  );
  if (fleet !== null) await refreshFleetStatus(ctx, [fleet]);
}

/**
 * The rule of a decommission request, for one device or many (devices/bulk.ts): throws 409
 * unless the device is Enrolled. `reason` (bulk requests) goes into the event. A device whose
 * credential an operator revoked cannot take part (its agent is refused): its decommission
 * completes at once on the server (lib/device-status: DeviceDecommissioning CredentialRevoked).
 */
export function decommissionChange(ctx: ServerContext, row: DeviceFactsRow, actor: string, reason?: string): { patch: Partial<DeviceFactsRow>; events: NewEvent[] } {
  const name = row.name;
  const from = row.lifecycle as Lifecycle;
  if (from !== "Enrolled") throw conflict(`device "${name}" is ${from}: only an Enrolled device can be decommissioned`);
  const revoked = row.credentialRevokedAt !== null;
  assertTransition(lifecycleMachine, from, revoked ? "Decommissioned" : "Decommissioning");
  const why = revoked ? "its credential is revoked, so its agent cannot take part: the decommission completes at once on the server" : undefined;
  const message = [reason, why].filter(Boolean).join("; ");
  const events: NewEvent[] = [{ objectKind: "Device", objectName: name, type: "DecommissionRequested", reason: "Requested", ...(message ? { message } : {}), actor }];
  // It leaves its fleet now (a device being decommissioned is no member): it keeps its
  // spec, unmanaged, and its fleet's counts no longer include it.
  if (row.owner !== null) {
    events.push({ objectKind: "Device", objectName: name, type: "FleetLeft", reason: row.owner, message: `left fleet ${row.owner}: the device is being decommissioned`, actor });
  }
  return {
    patch: { decommissionRequestedAt: ctx.now(), owner: null, ownerFleet: null },
    events,
  };
}

/**
 * A device being decommissioned is never offered work again (work.ts), so its actions still
 * waiting for approval or to be scheduled would wait forever: they are cancelled with the
 * request. What it already holds (NEW, RUNNING) it finishes or cancels itself, unless its
 * credential is revoked (`revoked`, or already on the row: its decommission then completes at
 * once on the server): it can never report them, so they are LOST (loseActiveActionsOf).
 */
export function endActions(actor: string, because = "is being decommissioned", revoked = false) {
  return async (tx: Tx, row: DeviceFactsRow, now: Date): Promise<NewEvent[]> => [
    ...(await cancelPendingActionsOf(tx, [row], now, actor, because)),
    ...(revoked || row.credentialRevokedAt !== null ? await loseActiveActionsOf(tx, [row], now) : []),
  ];
}

/** cancelPendingActions for many devices at once (devices/bulk.ts): one read, one write. */
export async function cancelPendingActionsOf(
  tx: Tx,
  devices: { id: string; name: string }[],
  now: Date,
  actor: string,
  because = "is being decommissioned",
): Promise<NewEvent[]> {
  const pending = await tx.action.findMany({
    where: { deviceId: { in: devices.map((d) => d.id) }, state: { in: [...PENDING_ACTION_STATES] } },
    select: { id: true, state: true, deviceId: true },
  });
  if (pending.length === 0) return [];
  for (const a of pending) assertTransition(actionMachine, a.state as ActionState, "CANCELLED");
  await tx.action.updateMany({
    where: { id: { in: pending.map((a) => a.id) }, state: { in: [...PENDING_ACTION_STATES] } },
    data: { state: "CANCELLED", finishedAt: now, cancelRequestedAt: now, cancelRequestedBy: actor },
  });
  const names = new Map(devices.map((d) => [d.id, d.name]));
  return pending.map((a) => ({
    objectKind: "Action",
    objectName: a.id,
    type: "ActionStateChanged",
    reason: "CANCELLED",
    message: `${a.state} → CANCELLED: the device ${names.get(a.deviceId ?? "")} ${because}`,
    actor,
  }));
}

/** A revoked device's NEW and RUNNING actions: their error, and why in their LOST event. */

/**
 * A device whose credential is revoked can never report again (every request is 401) and no
 * heartbeat of it will leave out what it no longer holds, so its NEW and RUNNING actions would
 * never end: they are LOST now, in the transaction of the revoke (or of the decommission that
 * completes without its agent), by the table's `revoked` move. Their events go out after
 * the commit like a heartbeat's LOST, so whatever waits on them (a plan node, a workflow step, a
 * request's progress) sees them end the same way. Guarded by state: one the agent ended in the
 * meantime stays as it ended.
 */
export async function loseActiveActionsOf(tx: Tx, devices: { id: string; name: string }[], now: Date): Promise<NewEvent[]> {
  if (devices.length === 0) return [];
  const active = await tx.action.findMany({
    where: { deviceId: { in: devices.map((d) => d.id) }, state: { in: [...ACTIVE_ACTION_STATES] } },
    select: { id: true, state: true, deviceId: true },
  });
  if (active.length === 0) return [];
  for (const a of active) {
    if (!canMove(a.state as ActionState, "LOST", "server")) throw conflict(`action "${a.id}" is ${a.state}: the server cannot mark it LOST`);
  }
  // An event only for what this write moved: a report let in before the revoke may end one meanwhile.
  const moved = await tx.action.updateManyAndReturn({
    where: { id: { in: active.map((a) => a.id) }, state: { in: [...ACTIVE_ACTION_STATES] } },
    data: { state: "LOST", finishedAt: now, error: REVOKED_OUTCOME_UNKNOWN },
    select: { id: true },
  });
  const lost = new Set(moved.map((a) => a.id));
  const names = new Map(devices.map((d) => [d.id, d.name]));
  return active.filter((a) => lost.has(a.id)).map((a) => {
    const name = names.get(a.deviceId ?? "") ?? "";
    return lostEvent({ name }, a, `${REVOKED_OUTCOME_UNKNOWN} (${name})`);
  });
}

export async function resumeDevice(ctx: ServerContext, name: string, actor: string): Promise<void> {
  await mutateDevice(ctx, name, resumeChange(actor), actor);
}

/** The rule of a resume, for one device or many (devices/bulk.ts): throws 409 unless ConflictPaused. */
export function resumeChange(actor: string) {
  return (row: DeviceFactsRow): { patch: Partial<DeviceFactsRow>; events: NewEvent[] } => {
    const name = row.name;
    if (!row.conflictPaused) throw conflict(`device "${name}" is not ConflictPaused`);
    // Resuming accepts the version the device runs as known to the service; otherwise its
    // next heartbeat (same renderedVersion) would pause it again at once. A device the
    // service rendered a spec for (a fleet's template) is sent that spec again, numbered
    // past the device's: what it runs came from state the service lost, so it converges
    // back to what the service knows, through its long-poll, like any spec change.
    const reported = parseReported(row.reported)?.config.renderedVersion ?? 0;
    const resend = row.templateVersion !== null ? 1 : 0;
    return {
      patch: { conflictPaused: false, renderedVersion: Math.max(row.renderedVersion, reported) + resend },
      events: [{ objectKind: "Device", objectName: name, type: "Resumed", reason: "ConflictResolved", actor }],
    };
  };
}

/** Nudge (seed 004): reconcile one device now: re-derive its statuses and wake its long-poll. */
export async function nudgeDevice(ctx: ServerContext, name: string, actor: string): Promise<void> {
  await mutateDevice(ctx, name, () => ({ patch: {}, events: [{ objectKind: "Device", objectName: name, type: "Nudged", reason: "Reconcile", actor }] }), actor);
}

export const REVOKE_REASON_MAX = 500;

/**
 * Revoke a device's credential (issue 23) without its cooperation: a key or token thought
 * stolen. From the commit every request with its certificate or token is 401 (credentials.ts,
 * certificates.ts: checked per request), and its held poll, woken here, answers 401 at once
 * (work.ts). It stays listed, and goes Offline by the sweep as any silent device; its actions
 * still waiting for approval or to be scheduled would wait forever, so they are cancelled, and
 * those it held (NEW, RUNNING) can never be reported, so they are LOST. A device already
 * revoked (Decommissioned included) is left as it is: false, no event. Revoked while
 * Decommissioning, its decommission completes at once (lib/device-status).
 */
export async function revokeCredential(ctx: ServerContext, name: string, actor: string, reason: string): Promise<boolean> {
  const rows = await mutateDevice(
    ctx,
    name,
    (row) =>
      row.credentialRevokedAt !== null
        ? null
        : {
            patch: { credentialRevokedAt: ctx.now() },
            events: [{ objectKind: "Device", objectName: name, type: "CredentialRevoked", reason: "Revoked", message: reason, actor }],
          },
    actor,
    endActions(actor, "had its credential revoked", true),
  );
  return rows !== null;
}
