/**
 * A fleet's members as the rollout engine reads them (lib/rollout.ts `RolloutMember`), from
 * the device rows that heartbeats and renders keep: one statement for the whole fleet, with
 * the reported facts taken out of the JSON by SQLite (no JSON.parse per device per tick).
 *
 * - renderedTemplateVersion: the version of the TemplateVersion row the device's spec refers
 *   to, only when that row is this fleet's (a device that came from another fleet and was
 *   not rendered here yet has none).
 * - applied: the agent reports running its rendered spec (reported renderedVersion ==
 *   renderedVersion).
 * - restarts: the most any application reports, while applied (the agent counts from 0 at
 *   each new spec); 0 otherwise. The engine counts it only on the rollout's target.
 * - connected: the stored summary is not one of the disconnected states (the heartbeat and
 *   the sweep keep it).
 * - updated, updateState: the stored derived statuses, which are derived against the fleet's
 *   templateVersion, that is the rollout's target while it runs. An update state Error the
 *   device has not reported since its spec was rendered is about an earlier spec (the agent
 *   keeps reporting its last failure until it takes a new one): it is not this spec's failure.
 */
import type { Tx, Db } from "../db";
import { dialectOfDb, jsonField, labelsObject, maxInJsonArray, queryRaw } from "../lib/dialect-sql";
import type { RolloutMember } from "../../lib/rollout";
import type { Labels } from "../../lib/label-selector";
import type { UpdatedStatus, UpdateState } from "../../lib/device-status";

export interface LoadedMember extends RolloutMember {
  id: string;
}

const DISCONNECTED = new Set(["Offline", "AwaitingReconnect", "ConflictPaused"]);

interface Row {
  id: string;
  name: string;
  renderedVersion: number | bigint;
  renderedAt: string | Date | null;
  lastSeen: string | Date | null;
  summary: string;
  updatedStatus: string;
  updatingReason: string | null;
  tv: number | bigint | null;
  reportedVersion: number | bigint | null;
  restarts: number | bigint | null;
  labels: string | null;
}

const asDate = (v: string | Date | null): Date | null => (v === null ? null : v instanceof Date ? v : new Date(v));

export async function loadRolloutMembers(db: Tx | Db, fleet: { id: string; name: string }): Promise<LoadedMember[]> {
  const d = dialectOfDb(db);
  // The largest restart count among the reported applications.
  const restarts = maxInJsonArray(d, 'd."reported"', "applications", "restarts");
  const rows = await queryRaw<Row[]>(
    db,
    `SELECT d."id", d."name", d."renderedVersion", d."renderedAt", d."lastSeen", d."summary", d."updatedStatus", d."updatingReason",
       tv."version" AS "tv",
       ${jsonField(d, 'd."reported"', ["config", "renderedVersion"])} AS "reportedVersion",
       ${restarts} AS "restarts",
       ${labelsObject(d, 'd."id"')} AS "labels"
     FROM "Device" d LEFT JOIN "TemplateVersion" tv ON tv."id" = d."renderedSpecId" AND tv."fleetId" = ?
     WHERE d."owner" = ?
     ORDER BY d."name"`,
    fleet.id,
    fleet.name,
  );
  return rows.map((r) => {
    const applied = r.reportedVersion !== null && Number(r.reportedVersion) === Number(r.renderedVersion);
    const renderedAt = asDate(r.renderedAt);
    const lastSeen = asDate(r.lastSeen);
    const reportedSince = renderedAt === null || (lastSeen !== null && lastSeen.getTime() > renderedAt.getTime());
    const updateState = (r.updatingReason as UpdateState | null) ?? null;
    return {
      id: r.id,
      name: r.name,
      labels: (r.labels ? JSON.parse(r.labels) : {}) as Labels,
      renderedTemplateVersion: r.tv === null ? null : String(Number(r.tv)),
      renderedAt,
      applied,
      updated: r.updatedStatus as UpdatedStatus,
      updateState: updateState === "Error" && !reportedSince ? null : updateState,
      connected: !DISCONNECTED.has(r.summary),
      restarts: applied && r.restarts !== null ? Math.max(0, Number(r.restarts)) : 0,
    };
  });
}
