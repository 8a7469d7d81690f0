/**
 * Bulk operations on devices (issue 10): decommission, resume and label many devices at once,
 * named (up to 10,000) or as the devices a list filter matches. Each device gets the same
 * rule as the single-device move (lifecycle.ts, labels.ts); a device the rule refuses is
 * skipped and counted with why, never an error for the whole request. The work is done in
 * chunks of CHUNK devices, one transaction each: a Prisma transaction holds the write gate
 * (fast-path heartbeats wait for it), so no single one may last long.
 */
import type { Labels } from "../../lib/label-selector";
import type { ServerContext } from "../context";
import type { Prisma, Tx } from "../db";
import { AppError } from "../errors";
import { publishEvents, recordEvents, type NewEvent } from "../events/events";
import { topics } from "../bus";
import { refreshFleetStatus } from "../fleets/controller";
import { afterCommit, finishEffects, newEffects } from "../fleets/render";
import { reconcileMembership } from "../fleets/membership";
import { cancelPendingActionsOf, decommissionChange, loseActiveActionsOf, resumeChange } from "./lifecycle";
import { actionsEnded } from "../actions/agent-reports";
import { deviceWhere, type DeviceFilter } from "./queries";
import { dialectOfDb } from "../lib/dialect-sql";
import { deviceFactsSelect, rederive, statusChangeEvents, statusColumns, storedStatus, type DeviceFactsRow } from "./status";
import { lockRows, locks, transaction } from "../lib/transactions";

export const MAX_BULK_NAMES = 10_000;
/** Devices per transaction. */
const CHUNK = 200;
/** Names listed per skip reason in the answer (the count is always whole). */
const NAMES_PER_REASON = 20;

export type BulkTarget = { names: string[] } | { filter: DeviceFilter };

export interface BulkResult {
  /** Devices the names or filter designated (existing or not). */
  matched: number;
  changed: number;
  /** The devices left as they were, grouped by why, with the first few names of each group. */
  skipped: { reason: string; count: number; names: string[] }[];
}

class Tally {
  changed = 0;
  private readonly skips = new Map<string, { count: number; names: string[] }>();
  constructor(public matched: number) {}
  skip(reason: string, name: string) {
    const s = this.skips.get(reason) ?? { count: 0, names: [] };
    s.count++;
    if (s.names.length < NAMES_PER_REASON) s.names.push(name);
    this.skips.set(reason, s);
  }
  result(): BulkResult {
    return { matched: this.matched, changed: this.changed, skipped: [...this.skips].map(([reason, s]) => ({ reason, ...s })) };
  }
}

/**
 * Between two chunks, let the requests that arrived meanwhile (heartbeats, other operators'
 * reads) run before the next transaction takes the connection and the write gate again.
 */
const breathe = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

const chunks = <T>(items: T[], size = CHUNK): T[][] => Array.from({ length: Math.ceil(items.length / size) }, (_, i) => items.slice(i * size, (i + 1) * size));

/** The names to work on, in name order; names that do not exist are skipped as such. */
async function resolveTargets(ctx: ServerContext, target: BulkTarget): Promise<{ names: string[]; tally: Tally }> {
  if ("filter" in target) {
    const rows = await ctx.db.device.findMany({ where: deviceWhere(target.filter, dialectOfDb(ctx.db)), select: { name: true }, orderBy: { name: "asc" } });
    return { names: rows.map((r) => r.name), tally: new Tally(rows.length) };
  }
  const wanted = [...new Set(target.names)];
  const tally = new Tally(wanted.length);
  const found = new Set<string>();
  for (const part of chunks(wanted, 500)) {
    for (const r of await ctx.db.device.findMany({ where: { name: { in: part } }, select: { name: true } })) found.add(r.name);
  }
  for (const n of wanted) if (!found.has(n)) tally.skip("no such device", n);
  return { names: wanted.filter((n) => found.has(n)).sort(), tally };
}

type Change = (row: DeviceFactsRow) => { patch: Partial<DeviceFactsRow>; events: NewEvent[] };

/**
 * lifecycle.ts's mutateDevice for a chunk of devices in one transaction: the same rule,
 * derivation, columns and events per device, written set-wise (one UPDATE per distinct set of
 * new values: at 10,000 devices an UPDATE each took two minutes). A CONFLICT from the rule
 * skips that device with `skipReason` (the rule's message names the device; the answer groups
 * by a reason without it). `alongside` runs once per chunk for the devices changed.
 */
async function mutateDevices(
  ctx: ServerContext,
  names: string[],
  tally: Tally,
  actor: string,
  change: Change,
  skipReason: (row: DeviceFactsRow) => string,
  alongside?: (tx: Tx, rows: DeviceFactsRow[], now: Date) => Promise<NewEvent[]>,
): Promise<Set<string>> {
  const fleets = new Set<string>();
  for (const part of chunks(names)) {
    const now = ctx.now();
    // What it tallies is returned, not kept: lib/transactions.ts may run it again.
    const { rows, touched, skipped, left } = await transaction(ctx.db, async (tx) => {
      await lockRows(tx, "Device", part, "name");
      const found = await tx.device.findMany({ where: { name: { in: part } }, select: deviceFactsSelect });
      const skipped: [reason: string, name: string][] = [];
      const left = new Set<string>();
      const events: NewEvent[] = [];
      const changed: DeviceFactsRow[] = [];
      const updates = new Map<string, { data: Prisma.DeviceUncheckedUpdateManyInput; ids: string[] }>();
      for (const row of found) {
        let c: ReturnType<Change>;
        try {
          c = change(row);
        } catch (error) {
          if (error instanceof AppError && error.code === "CONFLICT") {
            skipped.push([skipReason(row), row.name]);
            continue;
          }
          throw error;
        }
        const next = { ...row, ...c.patch };
        const after = rederive(next, now, ctx.statusSettings);
        events.push(...c.events, ...statusChangeEvents(row.name, storedStatus(row), after, actor));
        // What mutateDevice writes, less the columns the rule left as they were.
        const { ownerFleet: _relation, ...patched } = c.patch;
        const data: Prisma.DeviceUncheckedUpdateManyInput = {
          ...patched,
          ...(next.owner === null ? { multipleOwners: null } : {}),
          ...statusColumns(after),
          ...(c.patch.decommissionRequestedAt ? { decommissionRequestedBy: actor } : {}),
        };
        const key = JSON.stringify(data);
        const group = updates.get(key) ?? { data, ids: [] };
        group.ids.push(row.id);
        updates.set(key, group);
        if (row.owner !== null && next.owner !== row.owner) left.add(row.owner);
        changed.push(row);
      }
      for (const { data, ids } of updates.values()) await tx.device.updateMany({ where: { id: { in: ids } }, data });
      if (alongside && changed.length) events.push(...(await alongside(tx, changed, now)));
      return { rows: await recordEvents(tx, events), touched: changed.map((r) => r.id), skipped, left };
    });
    for (const [reason, name] of skipped) tally.skip(reason, name);
    for (const f of left) fleets.add(f);
    tally.changed += touched.length;
    publishEvents(ctx, rows);
    for (const id of touched) ctx.bus.publish(topics.device(id), { at: Date.now() });
    actionsEnded(ctx, rows);
    await breathe();
  }
  return fleets;
}

/** Request decommissioning of every Enrolled device among the targets; the others are skipped. */
export async function bulkDecommission(ctx: ServerContext, target: BulkTarget, actor: string, reason?: string): Promise<BulkResult> {
  const { names, tally } = await resolveTargets(ctx, target);
  const fleets = await mutateDevices(
    ctx,
    names,
    tally,
    actor,
    (row) => decommissionChange(ctx, row, actor, reason),
    (row) => `already ${row.lifecycle}: only an Enrolled device can be decommissioned`,
    // A revoked device's decommission completes at once, without its agent: what it held is LOST (lifecycle.ts endActions).
    async (tx, rows, now) => [
      ...(await cancelPendingActionsOf(tx, rows, now, actor)),
      ...(await loseActiveActionsOf(tx, rows.filter((r) => r.credentialRevokedAt !== null), now)),
    ],
  );
  if (fleets.size) await refreshFleetStatus(ctx, [...fleets]);
  return tally.result();
}

/** Resume every ConflictPaused device among the targets; the others are skipped. */
export async function bulkResume(ctx: ServerContext, target: BulkTarget, actor: string): Promise<BulkResult> {
  const { names, tally } = await resolveTargets(ctx, target);
  await mutateDevices(ctx, names, tally, actor, resumeChange(actor), () => "not ConflictPaused");
  return tally.result();
}

// Same format as labels.ts's LabelsChanged message.
const show = (labels: Labels) => {
  const entries = Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : 1));
  return entries.length ? entries.map(([k, v]) => `${k}=${v}`).join(",") : "(none)";
};

export interface LabelPatch {
  /** Labels to set (added, or their value replaced). */
  add: Labels;
  /** Keys to remove. */
  remove: string[];
}

/**
 * Add and remove labels on every target. Fleet membership follows in the same transaction
 * (as setDeviceLabels): devices join, leave or change fleet at once.
 */
export async function bulkLabel(ctx: ServerContext, target: BulkTarget, patch: LabelPatch, actor: string): Promise<BulkResult> {
  const { names, tally } = await resolveTargets(ctx, target);
  const keys = [...new Set([...Object.keys(patch.add), ...patch.remove])];
  const fleets = new Set<string>();
  for (const part of chunks(names)) {
    const now = ctx.now();
    // What it tallies is returned, not kept: lib/transactions.ts may run it again.
    const { rows, effects, skipped, changed } = await transaction(ctx.db, async (tx) => {
      const effects = newEffects(ctx.statusSettings);
      await lockRows(tx, "Device", part, "name");
      const skipped: [reason: string, name: string][] = [];
      const devices = await tx.device.findMany({ where: { name: { in: part } }, select: { id: true, name: true, labels: { select: { key: true, value: true } } } });
      const changed: { id: string; labels: Labels }[] = [];
      for (const d of devices) {
        const before = Object.fromEntries(d.labels.map((l) => [l.key, l.value])) as Labels;
        const after: Labels = { ...before, ...patch.add };
        for (const k of patch.remove) delete after[k];
        if (show(before) === show(after)) {
          skipped.push(["labels already so", d.name]);
          continue;
        }
        // The single-device rule (LabelsSchema): at most 64 labels.
        if (Object.keys(after).length > 64) {
          skipped.push(["would have more than 64 labels", d.name]);
          continue;
        }
        changed.push({ id: d.id, labels: after });
        effects.events.push({ objectKind: "Device", objectName: d.name, type: "LabelsChanged", reason: "Updated", message: `${show(before)} → ${show(after)}`, actor });
      }
      if (changed.length === 0) return { rows: [], effects, skipped, changed: 0 };
      const ids = changed.map((d) => d.id);
      await tx.deviceLabel.deleteMany({ where: { deviceId: { in: ids }, key: { in: keys } } });
      await tx.deviceLabel.createMany({ data: changed.flatMap((d) => Object.entries(patch.add).map(([key, value]) => ({ deviceId: d.id, key, value }))) });
      await reconcileMembership(tx, { deviceIds: ids }, now, actor, effects);
      return { rows: await finishEffects(tx, effects, now, actor), effects, skipped, changed: changed.length };
      // Fleets settled against the fleets' selectors (server/fleets/membership.ts).
    }, { sharedLocks: [locks.fleetSelectors] });
    for (const [reason, name] of skipped) tally.skip(reason, name);
    tally.changed += changed;
    afterCommit(ctx, effects, rows);
    for (const f of effects.fleets) fleets.add(f);
    await breathe();
  }
  if (fleets.size) await refreshFleetStatus(ctx, [...fleets]);
  return tally.result();
}
