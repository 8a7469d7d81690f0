/**
 * Rendering (DESIGN.md §3): a member's device spec is its fleet's template at the version the
 * rollout gave it. A device's rendered spec is a reference to that immutable TemplateVersion
 * row (the members of a fleet share one copy), plus two numbers of its own: `renderedVersion`,
 * which grows by one on every change of its spec and is never reused, and `templateVersion`.
 * The agent gets `{renderedVersion, templateVersion, ...spec}` in its long-poll (work.ts).
 *
 * One UPDATE renders any number of devices at one version. Callers then re-derive the
 * rendered devices' statuses in the same transaction (`rederiveStatuses`) and, after commit,
 * wake their polls (`afterCommit`).
 */
import type { Tx } from "../db";
import type { ServerContext } from "../context";
import type { NewEvent, EventRow } from "../events/events";
import { publishEvents } from "../events/events";
import { topics } from "../bus";
import { queryRaw } from "../lib/dialect-sql";
import { notFound } from "../errors";
import { inIds, insertEvents, rederiveStatuses } from "./sql";

/** What a change did, to finish inside its transaction and announce after commit. */
export interface Effects {
  events: NewEvent[];
  /** Devices whose spec changed: their held polls are woken after commit. */
  wake: Set<string>;
  /** Devices whose owner or spec changed: their statuses are re-derived before commit. */
  touched: Set<string>;
  /** Fleets whose status (counts, conditions) the fleet controller recomputes after commit. */
  fleets: Set<string>;
}

export function newEffects(): Effects {
  return { events: [], wake: new Set(), touched: new Set(), fleets: new Set() };
}

export interface FleetRef {
  id: string;
  name: string;
}

/**
 * Renders fleet `fleet`'s template version `version` to `deviceIds` (every member when
 * omitted): one statement. Only members are rendered, and only those not already on that
 * version (rendering the same version again is no change, so renderedVersion stays).
 * Returns the ids rendered. This is what the rollout controller calls to give N devices
 * version V (the canary, a batch, or the previous version on a revert).
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
  const at = now;
  const rows = await queryRaw<{ id: string; name: string; renderedVersion: number | bigint }[]>(
    tx,
    `UPDATE "Device" SET "renderedSpecId" = ?, "templateVersion" = ?, "spec" = NULL, "renderedVersion" = "renderedVersion" + 1,
       "renderedAt" = ?, "updatedAt" = ?
     WHERE "owner" = ? AND ("renderedSpecId" IS NULL OR "renderedSpecId" <> ?)${deviceIds ? ` AND "id" ${inIds(tx)}` : ""}
     RETURNING "id", "name", "renderedVersion"`,
    tv.id,
    String(tv.version),
    at,
    at,
    fleet.name,
    tv.id,
    ...(deviceIds ? [JSON.stringify(deviceIds)] : []),
  );
  for (const r of rows) {
    effects.wake.add(r.id);
    effects.touched.add(r.id);
    effects.events.push({
      objectKind: "Device",
      objectName: r.name,
      type: "SpecRendered",
      reason: String(Number(r.renderedVersion)),
      message: `renderedVersion ${Number(r.renderedVersion)}: fleet ${fleet.name} template version ${tv.version}`,
      actor,
    });
  }
  if (rows.length) effects.fleets.add(fleet.name);
  return rows.map((r) => r.id);
}

/**
 * Inside the transaction, last: re-derives every touched device's statuses (their events join
 * the rest) and writes all events. Returns the event rows to publish after commit.
 */
export async function finishEffects(tx: Tx, ctx: ServerContext, effects: Effects, now: Date, actor: string): Promise<EventRow[]> {
  const statusEvents = await rederiveStatuses(tx, [...effects.touched], now, ctx.statusSettings, actor);
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
