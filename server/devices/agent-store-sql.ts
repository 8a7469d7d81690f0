/**
 * The agent hot path (agent-store.ts), written once over a small driver (sql-driver.ts): the
 * token lookup, heartbeats, the sweep's writes, the poll's facts and offers, action creation and
 * request decisions, the agent's reports and LOST, the inventory. Each operation is one
 * generator: which statements, in which order, with which decisions and events, the same on
 * both databases; the driver runs it (SQLite: synchronously, in microseconds; PostgreSQL:
 * awaiting each statement, batching reads and heartbeats). Operator-side writes other than
 * action creation and request decisions stay on Prisma.
 *
 * Values come back as each database gives them: dates as text (SQLite) or Date (PostgreSQL),
 * booleans as 0/1 or true/false; `date` and `yes` read either.
 */
import type { DeviceFactsRow } from "./status";
import type { EventRow, NewEvent } from "../events/events";
import type { ActionReport, OfferedAction } from "../../lib/protocol";
import { decideReport, type StoredAction } from "../actions/report";
import { conflict } from "../errors";
import { FINAL_ACTION_STATES } from "../../lib/action-status";
import { DEFAULT_HEALTH_POLICY, POLICY_RANK_SQL } from "../../lib/health-policy";
import type { IdempotencyRow } from "../idempotency/idempotency";
import { appendSample, type UsageSample } from "./inventory";
import { all, keyed, many, run, type Op, type Requester, type SqlDriver } from "./sql-driver";
import {
  lostEvent,
  REVOKED_OUTCOME_UNKNOWN,
  type AgentActionView,
  type AgentStore,
  type DeviceWithCredential,
  type HeartbeatWrite,
  type NewActionRow,
  type NewRequestRow,
  type ReportOutcome,
  type RequestDecision,
  type SweepItem,
  type WorkFacts,
} from "./agent-store";

const date = (v: unknown): Date | null => (v === null || v === undefined ? null : v instanceof Date ? v : new Date(v as string));
const yes = (v: unknown) => v === true || v === 1;
const isFinal = (state: string) => (FINAL_ACTION_STATES as readonly string[]).includes(state);

// The owner fleet's templateVersion comes along (a lookup by its unique name): UpToDate needs
// it (seed 003, deviceIsUpdatedToFleetSpec) on every derivation, heartbeats included.
const FACT_COLUMNS = `"id", "name", "reported", "lastSeen", "renderedVersion", "templateVersion", "owner", "enrollmentId",
  "decommissionRequestedAt", "conflictPaused", "summary", "updatedStatus", "updatingReason", "applicationSummary",
  "lifecycle", "decommissioning", "credentialRevokedAt",
  (SELECT f."templateVersion" FROM "Fleet" f WHERE f."name" = "Device"."owner") AS "fleetTemplateVersion"`;

type RawDevice = Omit<DeviceWithCredential, "ownerFleet" | "lastSeen" | "decommissionRequestedAt" | "credentialRevokedAt" | "conflictPaused"> & {
  lastSeen: unknown;
  decommissionRequestedAt: unknown;
  credentialRevokedAt: unknown;
  conflictPaused: unknown;
  fleetTemplateVersion: string | null;
};

function toFacts(r: RawDevice | undefined): DeviceWithCredential | null {
  if (!r) return null;
  const { fleetTemplateVersion, ...rest } = r;
  return {
    ...rest,
    lastSeen: date(r.lastSeen),
    decommissionRequestedAt: date(r.decommissionRequestedAt),
    credentialRevokedAt: date(r.credentialRevokedAt),
    conflictPaused: yes(r.conflictPaused),
    ownerFleet: r.owner !== null && fleetTemplateVersion !== null ? { templateVersion: fleetTemplateVersion } : null,
  };
}

const ACTION_WORK = `("state" = 'PENDING_SCHEDULE' OR ("state" IN ('NEW', 'RUNNING') AND "cancelRequestedAt" IS NOT NULL))`;

/** The statements, written once (`many`: one row's, see sql-driver.ts). */
const S = {
  byToken: `SELECT ${FACT_COLUMNS} FROM "Device" WHERE "tokenHash" = ?`,
  identity: `SELECT "id", "name", "credentialRevokedAt" IS NOT NULL AS "revoked" FROM "Device" WHERE "tokenHash" = ?`,
  byIdForUpdate: `SELECT ${FACT_COLUMNS} FROM "Device" WHERE "id" = ? FOR UPDATE`,
  heartbeat: `UPDATE "Device" SET "reported" = ?, "lastSeen" = ?, "updatedAt" = ?, "conflictPaused" = COALESCE(?::boolean, "conflictPaused"),
    "summary" = ?, "updatedStatus" = ?, "updatingReason" = ?, "applicationSummary" = ?, "lifecycle" = ?, "decommissioning" = ?,
    "credentialRevokedAt" = COALESCE(?::timestamp, "credentialRevokedAt") WHERE "id" = ?`,
  touch: `UPDATE "Device" SET "reported" = ?, "lastSeen" = ?::timestamp, "updatedAt" = ?::timestamp WHERE "id" = ?`,
  events: `INSERT INTO "Event" ("time", "objectKind", "objectName", "type", "reason", "message", "actor") VALUES (?::timestamp, ?, ?, ?, ?, ?, ?) RETURNING "id"`,
  // Each guarded by the lastSeen it was derived from.
  sweep: `UPDATE "Device" SET "summary" = ?, "updatedStatus" = ?, "updatingReason" = ?, "applicationSummary" = ?, "lifecycle" = ?, "decommissioning" = ?,
    "updatedAt" = ?::timestamp WHERE "id" = ? AND "lastSeen" = ?::timestamp RETURNING "id"`,
  inventory: `SELECT "samples" FROM "DeviceInventory" WHERE "deviceId" = ? FOR UPDATE`,
  writeInventory: `INSERT INTO "DeviceInventory" ("deviceId", "system", "systemAt", "samples", "updatedAt") VALUES (?, ?, ?::timestamp, ?, ?::timestamp)
    ON CONFLICT ("deviceId") DO UPDATE SET "system" = COALESCE(excluded."system", "DeviceInventory"."system"),
      "systemAt" = COALESCE(excluded."systemAt", "DeviceInventory"."systemAt"), "samples" = excluded."samples", "updatedAt" = excluded."updatedAt"`,
  // The poll's facts and its cheap first check for actions, in one statement.
  work: `SELECT "renderedVersion", "templateVersion", "renderedSpecId", "spec", "decommissionRequestedAt", "lifecycle", "summary",
      "credentialRevokedAt" IS NOT NULL AS "revoked",
      EXISTS (SELECT 1 FROM "Action" a WHERE a."deviceId" = "Device"."id" AND ${ACTION_WORK}) AS "actionWork"
    FROM "Device" WHERE "id" = ?`,
  spec: `SELECT "spec" FROM "TemplateVersion" WHERE "id" = ?`,
  counts: `SELECT 'summary' AS "axis", "summary" AS "value", count(*)::int AS "n" FROM "Device" GROUP BY "summary"
    UNION ALL SELECT 'updated', "updatedStatus", count(*)::int FROM "Device" GROUP BY "updatedStatus"
    UNION ALL SELECT 'applicationSummary', "applicationSummary", count(*)::int FROM "Device" GROUP BY "applicationSummary"
    UNION ALL SELECT 'lifecycle', "lifecycle", count(*)::int FROM "Device" GROUP BY "lifecycle"`,
  // An expired action is never offered, even in the moment before the tick cancels it.
  offer: `SELECT "id", "kind", "args", "createdAt" FROM "Action"
    WHERE "deviceId" = ? AND "state" = 'PENDING_SCHEDULE' AND ("expiresAt" IS NULL OR "expiresAt" > ?::timestamp) AND ${POLICY_RANK_SQL} >= ?::int
    ORDER BY "createdAt", "id"`,
  offered: `UPDATE "Action" SET "offeredAt" = ?::timestamp WHERE "id" = ? AND "offeredAt" IS NULL`,
  cancels: `SELECT "id" FROM "Action" WHERE "deviceId" = ? AND "state" IN ('NEW', 'RUNNING') AND "cancelRequestedAt" IS NOT NULL ORDER BY "createdAt"`,
  insertIdempotencyKey: `INSERT INTO "IdempotencyKey" ("scope", "key", "operation", "fingerprint", "ref", "createdAt", "expiresAt") VALUES (?, ?, ?, ?, ?, ?, ?)`,
  insertRequest: `INSERT INTO "ActionRequest" ("id", "kind", "args", "origin", "ref", "targetKind", "target", "createdBy", "createdAt", "requireApproval")
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  insertActions: `INSERT INTO "Action" ("id", "deviceId", "kind", "args", "origin", "state", "requireApproval", "createdBy", "createdAt", "updatedAt", "expiresAt", "requestId", "rerunOf", "healthPolicy")
    VALUES (?, ?, ?, ?, ?, ?, ?::boolean, ?, ?::timestamp, ?::timestamp, ?::timestamp, ?, ?, ?)`,
  decide: `UPDATE "Action" SET "state" = ?, "decision" = ?, "decidedBy" = ?, "decidedAt" = ?::timestamp, "decisionReason" = ?,
      "finishedAt" = COALESCE(?::timestamp, "finishedAt"), "updatedAt" = ?::timestamp
    WHERE "requestId" = ? AND "state" = 'PENDING_APPROVE' RETURNING "id", "deviceId"`,
  decideRow: `UPDATE "ActionRequest" SET "decision" = ?, "decidedBy" = ?, "decidedAt" = ?::timestamp, "decisionReason" = ? WHERE "id" = ?`,
  // The action as it is inside the write (locked against operator-side writes until commit),
  // and whether its device is being decommissioned, in one statement.
  reported: `SELECT "id", "deviceId", "kind", "args", "origin", "state", "offeredAt",
      (SELECT d."decommissionRequestedAt" IS NOT NULL FROM "Device" d WHERE d."id" = ?) AS "decommissioning"
    FROM "Action" WHERE "id" = ? FOR UPDATE`,
  decommissioning: `SELECT "decommissionRequestedAt" IS NOT NULL AS "d" FROM "Device" WHERE "id" = ?`,
  output: `UPDATE "Action" SET "output" = ?, "updatedAt" = ?::timestamp WHERE "id" = ? AND "state" = 'RUNNING'`,
  createAction: `INSERT INTO "Action" ("id", "deviceId", "kind", "args", "origin", "state", "output", "error", "startedAt", "finishedAt", "createdAt", "updatedAt")
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?::timestamp, ?::timestamp, ?::timestamp, ?::timestamp)`,
  overwrite: `UPDATE "Action" SET "kind" = ?, "args" = ?, "origin" = ?, "state" = ?, "output" = ?, "error" = ?, "startedAt" = ?::timestamp, "finishedAt" = ?::timestamp,
    "updatedAt" = ?::timestamp WHERE "id" = ?`,
  move: `UPDATE "Action" SET "state" = ?, "output" = COALESCE(?::text, "output"), "error" = COALESCE(?::text, "error"),
      "startedAt" = CASE WHEN ?::boolean THEN ?::timestamp ELSE "startedAt" END, "finishedAt" = CASE WHEN ?::boolean THEN ?::timestamp ELSE "finishedAt" END,
      "updatedAt" = ?::timestamp WHERE "id" = ? AND "state" = ?`,
  active: `SELECT "id", "state" FROM "Action" WHERE "deviceId" = ? AND "state" IN ('NEW', 'RUNNING') AND "updatedAt" < ?::timestamp`,
  // Every one, however recent: what a device whose credential ends now still holds.
  held: `SELECT "id", "state" FROM "Action" WHERE "deviceId" = ? AND "state" IN ('NEW', 'RUNNING')`,
  lost: `UPDATE "Action" SET "state" = 'LOST', "error" = COALESCE(?::text, "error"), "finishedAt" = ?::timestamp, "updatedAt" = ?::timestamp
    WHERE "id" = ? AND "state" = ? RETURNING "id"`,
  view: `SELECT "id", "kind", "args", "origin", "state", "output", "error", "createdAt", "updatedAt" FROM "Action" WHERE "id" = ?`,
};

/** Template versions are immutable: their parsed specs can be kept (a few, most recent first). */
const SPEC_CACHE_SIZE = 64;

export class SqlAgentStore implements AgentStore {
  private readonly specCache = new Map<string, Record<string, unknown>>();

  constructor(readonly driver: SqlDriver) {}

  deviceByTokenHash(hash: string) {
    return this.driver.read(this.byToken(hash));
  }
  private *byToken(hash: string): Op<DeviceWithCredential | null> {
    return toFacts((yield* keyed<RawDevice>(S.byToken, [hash]))[0]);
  }

  deviceIdentityByTokenHash(hash: string) {
    return this.driver.read(this.identity(hash));
  }
  private *identity(hash: string): Op<{ id: string; name: string; revoked: boolean } | null> {
    const r = (yield* keyed<{ id: string; name: string; revoked: unknown }>(S.identity, [hash]))[0];
    return r ? { id: r.id, name: r.name, revoked: yes(r.revoked) } : null;
  }

  /** Re-reads the device (locked), lets `decide` compute what to write from that fresh row, and writes it with its events. */
  writeHeartbeat(id: string, decide: (fresh: DeviceFactsRow) => { data: HeartbeatWrite; events: NewEvent[] }, requester?: Requester): Promise<EventRow[]> {
    return this.driver.write(this.heartbeat(id, decide), requester);
  }
  private *heartbeat(id: string, decide: (fresh: DeviceFactsRow) => { data: HeartbeatWrite; events: NewEvent[] }): Op<EventRow[]> {
    const fresh = toFacts((yield* all<RawDevice>(S.byIdForUpdate, [id]))[0]);
    if (!fresh) return [];
    const { data, events } = decide(fresh);
    const at = data.lastSeen;
    yield* run(S.heartbeat, [
      data.reported, at, at, data.conflictPaused ?? null,
      data.summary, data.updatedStatus, data.updatingReason, data.applicationSummary, data.lifecycle, data.decommissioning,
      data.credentialRevokedAt ?? null, id,
    ]);
    // Its decommission ended with this report: the agent can report nothing after it (every
    // request is 401), so what it still holds is LOST now, in this write, whatever the queue it
    // sent says (lifecycle.ts loseActiveActionsOf, for a credential ended on the server's side).
    const written = yield* this.events(events, at);
    if (!data.credentialRevokedAt) return written;
    return [...written, ...(yield* this.lost(fresh, yield* all<{ id: string; state: string }>(S.held, [id]), at, REVOKED_OUTCOME_UNKNOWN))];
  }

  /** The sweep's writes, each guarded by the lastSeen it was derived from (a device that reported meanwhile is skipped, events and all). */
  writeSweep(items: SweepItem[], now: Date): Promise<EventRow[]> {
    return this.driver.write(this.sweep(items, now));
  }
  private *sweep(items: SweepItem[], now: Date): Op<EventRow[]> {
    const rows = items.map((i) => {
      const c = i.columns;
      return [c.summary, c.updatedStatus, c.updatingReason, c.applicationSummary, c.lifecycle, c.decommissioning, now, i.id, i.lastSeen];
    });
    const written = new Set((yield* many<{ id: string }>(S.sweep, rows)).map((r) => r.id));
    return yield* this.events(items.filter((i) => written.has(i.id)).flatMap((i) => i.events), now);
  }

  /** A heartbeat that changed no status: lastSeen and the report only (the last of a device in a batch wins). */
  touch(id: string, reported: string, lastSeen: Date, requester?: Requester): Promise<void> {
    return this.driver.merge(S.touch, id, [reported, lastSeen, lastSeen, id], requester);
  }

  /**
   * The inventory's write (inventory.ts): the full static facts when sent (else kept), and a
   * usage sample appended unless the last one is of the same minute, keeping the newest `max`
   * (the row read locked, so a second server never doubles a minute).
   */
  writeInventory(deviceId: string, system: string | null, sample: UsageSample | null, max: number, now: Date, requester?: Requester): Promise<void> {
    return this.driver.write(this.inventory(deviceId, system, sample, max, now), requester);
  }
  private *inventory(deviceId: string, system: string | null, sample: UsageSample | null, max: number, now: Date): Op<void> {
    const row = (yield* all<{ samples: string }>(S.inventory, [deviceId]))[0];
    const samples = JSON.parse(row?.samples ?? "[]") as UsageSample[];
    const next = sample ? appendSample(samples, sample, max) : samples;
    yield* run(S.writeInventory, [deviceId, system, system === null ? null : now, JSON.stringify(next), now]);
  }

  /** The poll's facts, with whether the device has actions to offer or cancels to tell. */
  workFacts(id: string) {
    return this.driver.read(this.work(id));
  }
  private *work(id: string): Op<WorkFacts | null> {
    const r = (yield* keyed<WorkFacts & { decommissionRequestedAt: unknown; actionWork: unknown; revoked: unknown }>(S.work, [id]))[0];
    return r ? { ...r, decommissionRequestedAt: date(r.decommissionRequestedAt), actionWork: yes(r.actionWork), revoked: yes(r.revoked) } : null;
  }

  /**
   * A template version's spec content, parsed once: when a fleet of 10,000 changes, every
   * member's poll answers with the same version's spec. Callers must not mutate it.
   */
  templateSpec(id: string) {
    return this.driver.read(this.spec(id));
  }
  private *spec(id: string): Op<Record<string, unknown> | null> {
    const hit = this.specCache.get(id);
    if (hit) return hit;
    const row = (yield* all<{ spec: string }>(S.spec, [id]))[0];
    if (!row) return null;
    const spec = JSON.parse(row.spec) as Record<string, unknown>;
    if (this.specCache.size >= SPEC_CACHE_SIZE) this.specCache.delete(this.specCache.keys().next().value!);
    this.specCache.set(id, spec);
    return spec;
  }

  /** Devices per value of each status axis, in one pass over the indexed columns. */
  statusCounts() {
    return this.driver.read(all<{ axis: string; value: string; n: number }>(S.counts, []));
  }

  /** PENDING_SCHEDULE actions its policy lets a device of `healthRank` take, oldest first, marked offered; and the ids to cancel. */
  async offerActions(deviceId: string, now: Date, healthRank: number | null): Promise<{ actions: OfferedAction[]; cancel: string[] }> {
    const actions = healthRank === null ? [] : await this.driver.write(this.offer(deviceId, now, healthRank));
    const cancel = (await this.driver.read(all<{ id: string }>(S.cancels, [deviceId]))).map((c) => c.id);
    return { actions, cancel };
  }
  private *offer(deviceId: string, now: Date, healthRank: number): Op<OfferedAction[]> {
    const rows = yield* all<{ id: string; kind: string; args: string; createdAt: unknown }>(S.offer, [deviceId, now, healthRank]);
    yield* many(S.offered, rows.map((a) => [now, a.id]));
    return rows.map((a) => ({ id: a.id, kind: a.kind, args: JSON.parse(a.args) as Record<string, unknown>, createdAt: date(a.createdAt)!.toISOString() }));
  }

  /** Operator-created actions with their events (and their request row, after its idempotency key), in one group commit. */
  insertActions(rows: NewActionRow[], events: NewEvent[], now: Date, request?: NewRequestRow, idempotency?: IdempotencyRow): Promise<EventRow[]> {
    return this.driver.write(this.insert(rows, events, now, request, idempotency));
  }
  private *insert(rows: NewActionRow[], events: NewEvent[], now: Date, request?: NewRequestRow, k?: IdempotencyRow): Op<EventRow[]> {
    if (k) yield* run(S.insertIdempotencyKey, [k.scope, k.key, k.operation, k.fingerprint, k.ref, k.createdAt, k.expiresAt]);
    if (request) {
      const q = request;
      yield* run(S.insertRequest, [q.id, q.kind, q.args, q.origin, q.ref, q.targetKind, q.target, q.createdBy, q.createdAt, q.requireApproval]);
    }
    yield* many(
      S.insertActions,
      rows.map((r) => [
        r.id, r.deviceId, r.kind, r.args, r.origin, r.state, r.requireApproval, r.createdBy, r.createdAt, now,
        r.expiresAt ?? null, r.requestId ?? null, r.rerunOf ?? null, r.healthPolicy ?? DEFAULT_HEALTH_POLICY,
      ]),
    );
    return yield* this.events(events, now);
  }

  /**
   * An action request decided as a unit (server/requests, issue 10): its PENDING_APPROVE
   * actions moved by one guarded UPDATE … RETURNING, the request's record, and one event per
   * action moved plus one on the request, in one commit. None waiting: nothing is written.
   */
  decideRequest(d: RequestDecision, now: Date): Promise<{ moved: { id: string; deviceId: string }[]; events: EventRow[] }> {
    return this.driver.write(this.decide(d, now));
  }
  private *decide(d: RequestDecision, now: Date): Op<{ moved: { id: string; deviceId: string }[]; events: EventRow[] }> {
    const finishedAt = d.to === "CANCELLED" ? now : null;
    const moved = yield* all<{ id: string; deviceId: string }>(S.decide, [d.to, d.decision, d.actor, now, d.reason, finishedAt, now, d.requestId]);
    if (moved.length === 0) return { moved, events: [] };
    yield* run(S.decideRow, [d.decision, d.actor, now, d.reason, d.requestId]);
    return { moved, events: yield* this.events([...moved.map((m) => d.actionEvent(m.id)), d.requestEvent(moved.length)], now) };
  }

  /**
   * An agent's report on one action: decided by decideReport from the rows as they are inside
   * this write, and written with its event. A refusal worth recording (decision "refuse")
   * does not throw here: a throw would roll its savepoint back, event and all. Its event is
   * written and committed like any other, and the caller raises `refused` after the commit.
   */
  reportAction(device: { id: string; name: string }, id: string, report: ActionReport, now: Date): Promise<ReportOutcome> {
    return this.driver.write(this.report(device, id, report, now));
  }
  private *report(device: { id: string; name: string }, id: string, report: ActionReport, now: Date): Op<ReportOutcome> {
    const row = (yield* all<Omit<StoredAction, "offeredAt"> & { offeredAt: unknown; decommissioning: unknown }>(S.reported, [device.id, id]))[0];
    const decommissioning = row ? yes(row.decommissioning) : yes((yield* all<{ d: unknown }>(S.decommissioning, [device.id]))[0]?.d);
    const stored: StoredAction | null = row
      ? { id: row.id, deviceId: row.deviceId, kind: row.kind, args: row.args, origin: row.origin, state: row.state, offeredAt: date(row.offeredAt)?.toISOString() ?? null }
      : null;
    const decision = decideReport(stored, id, { ...device, decommissioning }, report);
    switch (decision.kind) {
      case "refuse":
        return { events: yield* this.events([decision.event], now), finished: false, refused: decision.error };
      case "noop":
        return { events: [], finished: false };
      case "output": {
        // Output so far of a running action (issue 10): one statement, no event (one a second per running action would flood the log).
        const changed = yield* run(S.output, [decision.output, now, id]);
        return changed === 1 ? { events: [], finished: false, output: decision.output } : { events: [], finished: false };
      }
      case "create": {
        const c = decision.data;
        // First heard of now: started now if it runs, finished now if it is over.
        yield* run(S.createAction, [
          c.id, c.deviceId, c.kind, c.args, c.origin, c.state, c.output ?? null, c.error ?? null,
          c.state === "RUNNING" ? now : null, isFinal(c.state) ? now : null, now, now,
        ]);
        return { events: yield* this.events([decision.event], now), finished: true };
      }
      case "overwrite": {
        const o = decision.set;
        yield* run(S.overwrite, [o.kind, o.args, o.origin, o.state, o.output ?? null, o.error ?? null, o.state === "RUNNING" ? now : null, isFinal(o.state) ? now : null, now, id]);
        return { events: yield* this.events([decision.event], now), finished: true };
      }
      case "move": {
        const m = decision.set;
        const changed = yield* run(S.move, [m.state, m.output ?? null, m.error ?? null, m.started, now, m.finished, now, now, id, decision.from]);
        if (changed !== 1) throw conflict(`action "${id}" changed concurrently`);
        return { events: yield* this.events([decision.event], now), finished: m.finished };
      }
    }
  }

  /**
   * The heartbeat's queue against ours: NEW or RUNNING actions of this device that the agent
   * no longer lists become LOST. Only actions unchanged for `graceMs` count, so a report in
   * flight alongside the heartbeat is not mistaken for a loss.
   */
  async markLost(device: { id: string; name: string }, queued: Set<string>, now: Date, graceMs: number): Promise<EventRow[]> {
    // The common heartbeat loses nothing: look first, write only when needed.
    const active = await this.driver.read(keyed<{ id: string; state: string }>(S.active, [device.id, new Date(now.getTime() - graceMs)]));
    const missing = active.filter((a) => !queued.has(a.id));
    if (missing.length === 0) return [];
    return this.driver.write(this.lost(device, missing, now));
  }
  /** These actions LOST (those still as read), with their events; `error` says why when the queue is not the reason. */
  private *lost(device: { name: string }, missing: { id: string; state: string }[], now: Date, error?: string): Op<EventRow[]> {
    const lost = new Set((yield* many<{ id: string }>(S.lost, missing.map((a) => [error ?? null, now, now, a.id, a.state]))).map((r) => r.id));
    const why = error === undefined ? undefined : `${error} (${device.name})`;
    return yield* this.events(missing.filter((a) => lost.has(a.id)).map((a) => lostEvent(device, a, why)), now);
  }

  /** The action as recorded, for the agent's report answer. */
  actionView(id: string) {
    return this.driver.read(this.view(id));
  }
  private *view(id: string): Op<AgentActionView | null> {
    type Raw = Omit<AgentActionView, "args" | "createdAt" | "updatedAt"> & { args: string; createdAt: unknown; updatedAt: unknown };
    const r = (yield* all<Raw>(S.view, [id]))[0];
    if (!r) return null;
    return { ...r, args: JSON.parse(r.args) as Record<string, unknown>, createdAt: date(r.createdAt)!.toISOString(), updatedAt: date(r.updatedAt)!.toISOString() };
  }

  /** Events in one statement (PostgreSQL) or one a row (SQLite), ids in the order given. */
  private *events(list: NewEvent[], now: Date): Op<EventRow[]> {
    const rows = list.map((e) => [now, e.objectKind, e.objectName, e.type, e.reason, e.message ?? "", e.actor]);
    const ids = (yield* many<{ id: number }>(S.events, rows)).map((r) => r.id).sort((a, b) => a - b);
    return list.map((e, i) => ({ id: ids[i]!, time: now, objectKind: e.objectKind, objectName: e.objectName, type: e.type, reason: e.reason, message: e.message ?? "", actor: e.actor }));
  }

  close() {
    return this.driver.close();
  }
}
