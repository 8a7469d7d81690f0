/**
 * The fleet controller: the one writer of a fleet's `status` (seed 002, one owner per status):
 * device counts per update status and the fleet's own conditions. It reads devices (whose
 * statuses heartbeats write) and never writes them. It runs after every fleet change (the
 * domain awaits it, so an answer shows fresh counts), shortly after device events that move
 * the counts (a debounced bus subscription), and on every controllers' tick.
 *
 * It also reverts a fleet's template version when its rollout failed or was aborted
 * (`revertFleetTemplate`, decision C-1), asked by the rollout controller, which alone writes
 * the Rollout rows.
 */
import type { ServerContext } from "../context";
import type { EventRow, NewEvent } from "../events/events";
import { publishEvents, recordEvents } from "../events/events";
import { topics } from "../bus";
import type { Condition } from "../../lib/fleet-spec";
import type { Db, Tx } from "../db";
import type { Effects } from "./render";
import { executeRaw } from "../lib/dialect-sql";

export const FLEET_CONTROLLER = "fleet-controller";

/**
 * Decision C-1: a canary that failed, or a rollout an operator aborted, sends the fleet back
 * to the version it replaced, that version itself: `templateVersion` moves back, it is the
 * Active version again, and no new version or rollout is made (so a revert can never start
 * another canary). Idempotent. Inside the rollout controller's transaction: every member is
 * re-derived there (UpToDate is against the fleet's version), the rollout's own renders give
 * the devices the previous spec back. Returns whether anything moved.
 */
export async function revertFleetTemplate(tx: Tx, fleet: { id: string; name: string }, version: string, why: string, effects: Effects): Promise<boolean> {
  const row = await tx.fleet.findUnique({ where: { id: fleet.id }, select: { templateVersion: true } });
  if (!row || row.templateVersion === version) return false;
  await tx.fleet.update({ where: { id: fleet.id }, data: { templateVersion: version, generation: { increment: 1 }, updatedBy: FLEET_CONTROLLER } });
  await tx.templateVersion.update({ where: { fleetId_version: { fleetId: fleet.id, version: Number(version) } }, data: { outcome: "Active" } });
  const members = await tx.device.findMany({ where: { owner: fleet.name }, select: { id: true } });
  for (const m of members) effects.touched.add(m.id);
  effects.events.push({
    objectKind: "Fleet",
    objectName: fleet.name,
    type: "TemplateReverted",
    reason: version,
    message: `template version ${row.templateVersion} → ${version}: ${why}`,
    actor: FLEET_CONTROLLER,
  });
  effects.fleets.add(fleet.name);
  return true;
}

export interface DeviceCounts {
  total: number;
  upToDate: number;
  updating: number;
  outOfDate: number;
  unknown: number;
}

export interface FleetStatusDoc {
  devices: DeviceCounts;
  conditions: Condition[];
  /** The fleet generation these counts and conditions were computed for. */
  observedGeneration: number;
}

export const emptyCounts = (): DeviceCounts => ({ total: 0, upToDate: 0, updating: 0, outOfDate: 0, unknown: 0 });

const COUNT_KEY: Record<string, keyof DeviceCounts> = { UpToDate: "upToDate", Updating: "updating", OutOfDate: "outOfDate", Unknown: "unknown" };

export function parseFleetStatus(json: string): FleetStatusDoc {
  const doc = JSON.parse(json) as Partial<FleetStatusDoc>;
  return { devices: { ...emptyCounts(), ...doc.devices }, conditions: doc.conditions ?? [], observedGeneration: doc.observedGeneration ?? 0 };
}

/** The fleet's own conditions from its counts and overlaps (pure). */
export function fleetConditions(
  f: { templateVersion: string },
  counts: DeviceCounts,
  overlaps: { devices: number; fleets: string[] },
  previous: Condition[],
  now: Date,
): Condition[] {
  const at = now.toISOString();
  const notUpToDate = counts.total - counts.upToDate;
  const byStatus = `${counts.outOfDate} OutOfDate, ${counts.updating} Updating, ${counts.unknown} Unknown`;
  const upToDate: Omit<Condition, "lastTransitionTime"> =
    counts.total === 0
      ? { type: "DevicesUpToDate", status: "True", reason: "NoDevices", message: "no device is a member of this fleet" }
      : notUpToDate === 0
        ? { type: "DevicesUpToDate", status: "True", reason: "AllUpToDate", message: `all ${counts.total} devices run template version ${f.templateVersion}` }
        : {
            type: "DevicesUpToDate",
            status: "False",
            reason: counts.updating > 0 ? "Updating" : counts.outOfDate > 0 ? "OutOfDate" : "Unknown",
            message: `${notUpToDate} of ${counts.total} devices are not up to date with template version ${f.templateVersion}: ${byStatus}`,
          };
  const overlapping: Omit<Condition, "lastTransitionTime"> =
    overlaps.devices === 0
      ? { type: "OverlappingSelectors", status: "False", reason: "NoOverlap", message: "no device matches another fleet's selector too" }
      : {
          type: "OverlappingSelectors",
          status: "True",
          reason: "MultipleOwners",
          message: `${overlaps.devices} device${overlaps.devices === 1 ? "" : "s"} also match fleet${overlaps.fleets.length === 1 ? "" : "s"} ${overlaps.fleets.join(", ")}: each stays in the fleet it is in (condition MultipleOwners on the device)`,
        };
  return [upToDate, overlapping].map((c) => {
    const old = previous.find((p) => p.type === c.type);
    // Kubernetes: the time moves when the status does.
    return { ...c, lastTransitionTime: old && old.status === c.status ? old.lastTransitionTime : at };
  });
}

/**
 * Recomputes the status of `names` (every fleet when omitted) and writes those that changed,
 * with an event per condition whose status moved. Two GROUP BYs over indexed columns.
 */
export function refreshFleetStatus(ctx: ServerContext, names?: string[]): Promise<void> {
  // One pass at a time per server: two interleaved passes could record a condition change twice.
  const previous = serial.get(ctx) ?? Promise.resolve();
  const next = previous
    .catch(() => undefined)
    .then(async () => publishEvents(ctx, await refreshOnce(ctx, ctx.db, names)));
  serial.set(ctx, next);
  return next;
}

const serial = new WeakMap<ServerContext, Promise<void>>();

/**
 * The same pass inside the caller's transaction, for a change whose answer must agree with the
 * counts (a rollout's last step: Completed is never shown beside counts from before it). The
 * caller publishes the returned events after commit.
 */
export function refreshFleetStatusInTx(tx: Tx, ctx: ServerContext, names: string[]): Promise<EventRow[]> {
  return names.length ? refreshOnce(ctx, tx, names) : Promise.resolve([]);
}

async function refreshOnce(ctx: ServerContext, db: Db | Tx, names?: string[]): Promise<EventRow[]> {
  const fleets = await db.fleet.findMany({
    where: names ? { name: { in: names } } : undefined,
    select: { id: true, name: true, templateVersion: true, generation: true, status: true },
  });
  if (fleets.length === 0) return [];
  const counts = await db.$queryRawUnsafe<{ owner: string; updatedStatus: string; n: number | bigint }[]>(
    `SELECT "owner", "updatedStatus", count(*) AS n FROM "Device" WHERE "owner" IS NOT NULL GROUP BY "owner", "updatedStatus"`,
  );
  const overlapRows = await db.$queryRawUnsafe<{ multipleOwners: string; owner: string | null; n: number | bigint }[]>(
    `SELECT "multipleOwners", "owner", count(*) AS n FROM "Device" WHERE "multipleOwners" IS NOT NULL GROUP BY "multipleOwners", "owner"`,
  );
  const now = ctx.now();
  const events: NewEvent[] = [];
  for (const f of fleets) {
    const c = emptyCounts();
    for (const r of counts) {
      if (r.owner !== f.name) continue;
      const n = Number(r.n);
      c.total += n;
      const key = COUNT_KEY[r.updatedStatus];
      if (key) c[key] += n;
    }
    const overlaps = { devices: 0, fleets: new Set<string>() };
    for (const r of overlapRows) {
      const all = JSON.parse(r.multipleOwners) as string[];
      if (!all.includes(f.name)) continue;
      overlaps.devices += Number(r.n);
      for (const other of all) if (other !== f.name) overlaps.fleets.add(other);
    }
    const previous = parseFleetStatus(f.status);
    const doc: FleetStatusDoc = {
      devices: c,
      conditions: fleetConditions(f, c, { devices: overlaps.devices, fleets: [...overlaps.fleets].sort() }, previous.conditions, now),
      observedGeneration: f.generation,
    };
    const json = JSON.stringify(doc);
    if (json === JSON.stringify(previous)) continue;
    // Only the status column: the spec's updatedAt is not the controller's to move.
    await executeRaw(db, `UPDATE "Fleet" SET "status" = ? WHERE "id" = ?`, json, f.id);
    for (const cond of doc.conditions) {
      const old = previous.conditions.find((p) => p.type === cond.type);
      if (old && old.status === cond.status && old.reason === cond.reason) continue;
      events.push({ objectKind: "Fleet", objectName: f.name, type: "FleetConditionChanged", reason: `${cond.type}=${cond.status}`, message: `${cond.reason}: ${cond.message}`, actor: FLEET_CONTROLLER });
    }
  }
  return events.length ? recordEvents(db, events) : [];
}

/** Device events that move a fleet's counts or overlaps. */
const COUNTED = new Set(["UpdatedStatusChanged", "FleetJoined", "FleetLeft", "MultipleOwnersChanged", "SpecRendered", "DeviceEnrolled"]);

/**
 * Recounts shortly after device events that matter (debounced: one pass for a burst, such as
 * 10,000 heartbeats reporting a new version), so fleet pages follow their devices live.
 */
export function watchFleetStatus(ctx: ServerContext, delayMs = 150): { stop(): void } {
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<void> | null = null;
  let again = false;
  let stopped = false;
  const run = () => {
    timer = null;
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    running = refreshFleetStatus(ctx)
      .catch((err: unknown) => {
        if (!stopped) ctx.log.error({ err }, "fleet status refresh failed");
      })
      .finally(() => {
        running = null;
        if (again) {
          again = false;
          schedule();
        }
      });
  };
  const schedule = () => {
    if (!timer && !stopped) {
      timer = setTimeout(run, delayMs);
      timer.unref();
    }
  };
  const unsubscribe = ctx.bus.subscribe<EventRow>(topics.events, (row) => {
    if (row.objectKind === "Device" && COUNTED.has(row.type)) schedule();
  });
  return {
    stop() {
      stopped = true;
      unsubscribe();
      if (timer) clearTimeout(timer);
    },
  };
}
