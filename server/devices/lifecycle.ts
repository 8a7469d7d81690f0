/**
 * Operator moves on a device: decommission (seed 003 lifecycle) and resume from
 * ConflictPaused. Each re-derives the statuses, records events and wakes the device's poll.
 */
import { assertTransition } from "../../lib/state-machine";
import { lifecycleMachine, type Lifecycle } from "../../lib/device-status";
import type { ServerContext } from "../context";
import { conflict, notFound } from "../errors";
import { publishEvents, recordEvents, type NewEvent } from "../events/events";
import { topics } from "../bus";
import { deviceFactsSelect, derive, parseReported, statusChangeEvents, statusColumns, storedStatus, type DeviceFactsRow } from "./status";

async function mutateDevice(
  ctx: ServerContext,
  name: string,
  change: (row: DeviceFactsRow) => { patch: Partial<DeviceFactsRow>; events: NewEvent[] },
  actor: string,
): Promise<void> {
  const now = ctx.now();
  const { rows, deviceId } = await ctx.db.$transaction(async (tx) => {
    const row = await tx.device.findUnique({ where: { name }, select: deviceFactsSelect });
    if (!row) throw notFound(`device "${name}"`);
    const { patch, events } = change(row);
    const next = { ...row, ...patch };
    const after = derive(next, now, ctx.statusSettings);
    const all = [...events, ...statusChangeEvents(name, storedStatus(row), after, actor)];
    await tx.device.update({
      where: { id: row.id },
      data: {
        decommissionRequestedAt: next.decommissionRequestedAt,
        conflictPaused: next.conflictPaused,
        renderedVersion: next.renderedVersion,
        ...statusColumns(after),
        ...(patch.decommissionRequestedAt ? { decommissionRequestedBy: actor } : {}),
      },
    });
    return { rows: await recordEvents(tx, all), deviceId: row.id };
  });
  publishEvents(ctx, rows);
  ctx.bus.publish(topics.device(deviceId), { at: Date.now() });
}

export async function requestDecommission(ctx: ServerContext, name: string, actor: string): Promise<void> {
  await mutateDevice(
    ctx,
    name,
    (row) => {
      const from = row.lifecycle as Lifecycle;
      if (from !== "Enrolled") throw conflict(`device "${name}" is ${from}: only an Enrolled device can be decommissioned`);
      assertTransition(lifecycleMachine, from, "Decommissioning");
      return {
        patch: { decommissionRequestedAt: ctx.now() },
        events: [{ objectKind: "Device", objectName: name, type: "DecommissionRequested", reason: "Requested", actor }],
      };
    },
    actor,
  );
}

export async function resumeDevice(ctx: ServerContext, name: string, actor: string): Promise<void> {
  await mutateDevice(
    ctx,
    name,
    (row) => {
      if (!row.conflictPaused) throw conflict(`device "${name}" is not ConflictPaused`);
      // Resuming accepts the version the device runs as known to the service; otherwise its
      // next heartbeat (same renderedVersion) would pause it again at once.
      const reported = parseReported(row.reported)?.config.renderedVersion ?? 0;
      return {
        patch: { conflictPaused: false, renderedVersion: Math.max(row.renderedVersion, reported) },
        events: [{ objectKind: "Device", objectName: name, type: "Resumed", reason: "ConflictResolved", actor }],
      };
    },
    actor,
  );
}

/** Nudge (seed 004): reconcile one device now: re-derive its statuses and wake its long-poll. */
export async function nudgeDevice(ctx: ServerContext, name: string, actor: string): Promise<void> {
  await mutateDevice(ctx, name, () => ({ patch: {}, events: [{ objectKind: "Device", objectName: name, type: "Nudged", reason: "Reconcile", actor }] }), actor);
}
