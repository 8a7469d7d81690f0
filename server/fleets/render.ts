/**
 * Rendering (DESIGN.md §3): a member's device spec is its fleet's template at the version the
 * rollout gave it. A device's rendered spec is a reference to that immutable TemplateVersion
 * row (the members of a fleet share one copy), plus two numbers of its own: `renderedVersion`,
 * which grows by one on every change of its spec and is never reused, and `templateVersion`.
 * The agent gets `{renderedVersion, templateVersion, ...spec}` in its long-poll (work.ts).
 *
 * A render reads the members it changes (locked), derives the statuses each will have once
 * rendered, and writes spec and statuses together: one UPDATE per distinct new status, so a
 * template change to 10,000 members writes each row once. Devices changed otherwise (a join,
 * a leave) are re-derived at the end of the transaction (`finishEffects`); after commit the
 * rendered devices' polls are woken (`afterCommit`).
 */
import type { Tx } from "../db";
import type { ServerContext } from "../context";
import type { NewEvent, EventRow } from "../events/events";
import { publishEvents } from "../events/events";
import { topics } from "../bus";
import { executeRaw, queryRaw } from "../lib/dialect-sql";
import { notFound } from "../errors";
import type { StatusSettings } from "../../lib/device-status";
import { deriveRows, inIds, insertEvents, loadFactsBehind, rederiveStatuses, STATUS_SET, statusValues } from "./sql";

/** What a change did, to finish inside its transaction and announce after commit. */
export interface Effects {
  events: NewEvent[];
  /** Devices whose spec changed: their held polls are woken after commit. */
  wake: Set<string>;
  /**
   * Devices whose owner (or anything else their statuses derive from) changed since their
   * statuses were last derived in this transaction: re-derived before commit. A render derives
   * what it renders, so it takes its devices out; a change after it puts them back.
   */
  touched: Set<string>;
  /** Fleets whose status (counts, conditions) the fleet controller recomputes after commit. */
  fleets: Set<string>;
  /** What the statuses are derived with (the server's disconnection timeout). */
  settings: StatusSettings;
}

export function newEffects(settings: StatusSettings): Effects {
  return { events: [], wake: new Set(), touched: new Set(), fleets: new Set(), settings };
}

export interface FleetRef {
  id: string;
  name: string;
}

/**
 * Renders fleet `fleet`'s template version `version` to `deviceIds` (every member when
 * omitted), with the statuses each rendered device then has. Only members are rendered, and
 * only those not already on that version (rendering the same version again is no change, so
 * renderedVersion stays). Returns the ids rendered. This is what the rollout controller calls
 * to give N devices version V (the canary, a batch, or the previous version on a revert).
 */
export async function renderDevices(
  tx: Tx,
  fleet: FleetRef,
  version: number | string,
  now: Date,
  actor: string,
  effects: Effects,
  deviceIds?: string[],
): Promise<string[]> {
  const tv = await tx.templateVersion.findUnique({ where: { fleetId_version: { fleetId: fleet.id, version: Number(version) } }, select: { id: true, version: true } });
  if (!tv) throw notFound(`template version ${version} of fleet "${fleet.name}"`);
  if (deviceIds && deviceIds.length === 0) return [];
  const templateVersion = String(tv.version);
  const rows = await loadFactsBehind(tx, fleet.name, tv.id, deviceIds);
  const rendered = (r: { renderedVersion: number }) => r.renderedVersion + 1;
  const { groups, events } = deriveRows(rows, now, effects.settings, actor, (r) => ({ ...r, renderedVersion: rendered(r), templateVersion }));
  for (const { columns, ids } of groups.values()) {
    await executeRaw(
      tx,
      `UPDATE "Device" SET "renderedSpecId" = ?, "templateVersion" = ?, "spec" = NULL, "renderedVersion" = "renderedVersion" + 1, "renderedAt" = ?,
         ${STATUS_SET}, "updatedAt" = ? WHERE "id" ${inIds(tx)}`,
      tv.id,
      templateVersion,
      now,
      ...statusValues(columns),
      now,
      JSON.stringify(ids),
    );
  }
  for (const r of rows) {
    effects.wake.add(r.id);
    effects.touched.delete(r.id);
    effects.events.push({
      objectKind: "Device",
      objectName: r.name,
      type: "SpecRendered",
      reason: String(rendered(r)),
      message: `renderedVersion ${rendered(r)}: fleet ${fleet.name} template version ${tv.version}`,
      actor,
    });
  }
  effects.events.push(...events);
  if (rows.length) effects.fleets.add(fleet.name);
  return rows.map((r) => r.id);
}

/**
 * Inside the transaction, last: re-derives every touched device's statuses (their events join
 * the rest) and writes all events. Returns the event rows to publish after commit.
 */
export async function finishEffects(tx: Tx, effects: Effects, now: Date, actor: string): Promise<EventRow[]> {
  const statusEvents = await rederiveStatuses(tx, [...effects.touched], now, effects.settings, actor);
  return insertEvents(tx, [...effects.events, ...statusEvents], now);
}

/**
 * After commit: wake the held polls of devices with a new spec first (they answer within
 * milliseconds), then publish the events (the fleet controller recounts on them).
 */
export function afterCommit(ctx: ServerContext, effects: Effects, rows: EventRow[]): void {
  const at = Date.now();
  for (const id of effects.wake) ctx.bus.publish(topics.device(id), { at });
  publishEvents(ctx, rows);
}

/** Members of a fleet whose rendered spec is not `templateVersionId`: what a render would change. */
export async function membersBehind(tx: Tx, fleetName: string, templateVersionId: string): Promise<number> {
  const [row] = await queryRaw<{ n: number | bigint }[]>(
    tx,
    `SELECT count(*) AS n FROM "Device" WHERE "owner" = ? AND ("renderedSpecId" IS NULL OR "renderedSpecId" <> ?)`,
    fleetName,
    templateVersionId,
  );
  return Number(row?.n ?? 0);
}
