/**
 * Set-at-a-time statements for fleet-wide changes, inside the caller's Prisma transaction:
 * a fleet of 10,000 members is changed with a handful of statements, never one Prisma call
 * per device. Lists of ids travel as one JSON parameter (`json_each`, `jsonb_array_elements_text`),
 * so no statement meets a bound-parameter limit. One statement per rule on both databases, with
 * the fragments that differ from server/lib/dialect-sql.ts.
 */
import type { Tx } from "../db";
import type { EventRow, NewEvent } from "../events/events";
import { dialectOfDb, executeRaw, inJsonList, jsonArrayRows, queryRaw, lockedInKeyOrder } from "../lib/dialect-sql";
import { rederive, statusChangeEvents, statusColumns, storedStatus, type DeviceFactsRow, type StatusColumns } from "../devices/status";
import type { StatusSettings } from "../../lib/device-status";

/** `"id" IN (…)` for a list of any length, bound as one JSON array parameter. */
export function inIds(tx: Tx): string {
  return inJsonList(dialectOfDb(tx));
}

const asDate = (v: unknown): Date | null => (v === null || v === undefined ? null : v instanceof Date ? v : new Date(String(v)));
const asBool = (v: unknown): boolean => v === true || v === 1 || v === 1n;

/** Writes many events in one statement; the rows come back (oldest first) to publish after commit. */
export async function insertEvents(tx: Tx, events: NewEvent[], now: Date): Promise<EventRow[]> {
  if (events.length === 0) return [];
  const payload = JSON.stringify(events.map((e) => [e.objectKind, e.objectName, e.type, e.reason, e.message ?? "", e.actor]));
  const from = jsonArrayRows(dialectOfDb(tx));
  const rows = await queryRaw<{ id: number | bigint }[]>(
    tx,
    `INSERT INTO "Event" ("time", "objectKind", "objectName", "type", "reason", "message", "actor")
     SELECT ?, value ->> 0, value ->> 1, value ->> 2, value ->> 3, value ->> 4, value ->> 5 FROM ${from} ORDER BY key
     RETURNING "id"`,
    now,
    payload,
  );
  // Inserted in order, so ids ascend with the list.
  const ids = rows.map((r) => Number(r.id)).sort((a, b) => a - b);
  return events.map((e, i) => ({
    id: ids[i]!,
    time: now,
    objectKind: e.objectKind,
    objectName: e.objectName,
    type: e.type,
    reason: e.reason,
    message: e.message ?? "",
    actor: e.actor,
  }));
}

const FACTS = `SELECT d."id", d."name", d."reported", d."lastSeen", d."renderedVersion", d."templateVersion", d."owner", d."enrollmentId",
    d."decommissionRequestedAt", d."conflictPaused", d."summary", d."updatedStatus", d."updatingReason", d."applicationSummary",
    d."lifecycle", d."decommissioning", d."credentialRevokedAt", f."templateVersion" AS "fleetTemplateVersion"
  FROM "Device" d LEFT JOIN "Fleet" f ON f."name" = d."owner"`;

function factsRow(r: Record<string, unknown>): DeviceFactsRow {
  return {
    id: String(r.id),
    name: String(r.name),
    reported: (r.reported as string | null) ?? null,
    lastSeen: asDate(r.lastSeen),
    renderedVersion: Number(r.renderedVersion),
    templateVersion: (r.templateVersion as string | null) ?? null,
    owner: (r.owner as string | null) ?? null,
    enrollmentId: (r.enrollmentId as string | null) ?? null,
    decommissionRequestedAt: asDate(r.decommissionRequestedAt),
    conflictPaused: asBool(r.conflictPaused),
    summary: String(r.summary),
    updatedStatus: String(r.updatedStatus),
    updatingReason: (r.updatingReason as string | null) ?? null,
    applicationSummary: String(r.applicationSummary),
    lifecycle: String(r.lifecycle),
    decommissioning: (r.decommissioning as string | null) ?? null,
    credentialRevokedAt: asDate(r.credentialRevokedAt),
    ownerFleet: r.owner !== null && r.fleetTemplateVersion !== null ? { templateVersion: String(r.fleetTemplateVersion) } : null,
  };
}

/** The derivation's facts of many devices, with their owner fleet's templateVersion. */
export async function loadFacts(tx: Tx, ids: string[]): Promise<DeviceFactsRow[]> {
  if (ids.length === 0) return [];
  const rows = await queryRaw<Record<string, unknown>[]>(tx, `${FACTS} WHERE d."id" ${inIds(tx)}`, JSON.stringify(ids));
  return rows.map(factsRow);
}

/**
 * The facts of fleet `owner`'s members whose rendered spec is not template version
 * `templateVersionId` (of `ids` alone, when given): what a render would change. Locked for
 * the rest of the transaction (PostgreSQL; SQLite's writer is one already), in id order, so
 * that a heartbeat of one of them waits for the render and then derives on the new spec.
 */
export async function loadFactsBehind(tx: Tx, owner: string, templateVersionId: string, ids?: string[]): Promise<DeviceFactsRow[]> {
  const rows = await queryRaw<Record<string, unknown>[]>(
    tx,
    `${FACTS} WHERE d."owner" = ? AND (d."renderedSpecId" IS NULL OR d."renderedSpecId" <> ?)${ids ? ` AND d."id" ${inIds(tx)}` : ""}
     ${lockedInKeyOrder(dialectOfDb(tx), "d")}`,
    owner,
    templateVersionId,
    ...(ids ? [JSON.stringify(ids)] : []),
  );
  return rows.map(factsRow);
}

/** Devices grouped by the status columns they get, and one event per changed axis of each. */
export interface Derivation {
  groups: Map<string, { columns: StatusColumns; ids: string[] }>;
  events: NewEvent[];
}

/**
 * Derives each row's statuses from its facts: as they are (only the rows whose statuses change
 * are grouped), or as `rendered` makes them (a render writes every row, so every row is).
 */
export function deriveRows(rows: DeviceFactsRow[], now: Date, settings: StatusSettings, actor: string, rendered?: (row: DeviceFactsRow) => DeviceFactsRow): Derivation {
  const groups: Derivation["groups"] = new Map();
  const events: NewEvent[] = [];
  for (const stored of rows) {
    const row = rendered ? rendered(stored) : stored;
    const before = storedStatus(stored);
    const after = rederive(row, now, settings);
    const changes = statusChangeEvents(row.name, before, after, actor);
    if (changes.length === 0 && !rendered) continue;
    events.push(...changes);
    const columns = statusColumns(after);
    const key = JSON.stringify(columns);
    let group = groups.get(key);
    if (!group) groups.set(key, (group = { columns, ids: [] }));
    group.ids.push(row.id);
  }
  return { groups, events };
}

/** `SET` of the status columns, and their values in order, for one group's UPDATE. */
export const STATUS_SET = `"summary" = ?, "updatedStatus" = ?, "updatingReason" = ?, "applicationSummary" = ?, "lifecycle" = ?, "decommissioning" = ?`;
export const statusValues = (c: StatusColumns) => [c.summary, c.updatedStatus, c.updatingReason, c.applicationSummary, c.lifecycle, c.decommissioning];

/**
 * Re-derives the statuses of `ids` from their rows as they are now in this transaction (after
 * a join or a leave), writes the ones that changed, grouped so that devices with the same new
 * statuses share one UPDATE, and returns one event per changed axis, as the heartbeat's
 * derivation records them.
 */
export async function rederiveStatuses(tx: Tx, ids: string[], now: Date, settings: StatusSettings, actor: string): Promise<NewEvent[]> {
  const { groups, events } = deriveRows(await loadFacts(tx, ids), now, settings, actor);
  for (const { columns, ids: group } of groups.values()) {
    await executeRaw(tx, `UPDATE "Device" SET ${STATUS_SET}, "updatedAt" = ? WHERE "id" ${inIds(tx)}`, ...statusValues(columns), now, JSON.stringify(group));
  }
  return events;
}
