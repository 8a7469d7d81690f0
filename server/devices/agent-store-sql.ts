/**
 * The agent hot path (agent-store.ts), written once over a small driver (sql-driver.ts): the
 * token lookup, heartbeats, the sweep's writes, the poll's facts and offers, action creation and
 * request decisions, the agent's reports and LOST, the inventory. Each operation is one
 * generator: which statements, in which order, with which decisions and events, the same on
 * both databases; the driver runs it (SQLite: synchronously, in microseconds; PostgreSQL:
 * awaiting each statement, batching reads and heartbeats). Operator-side writes other than
 * action creation and decisions (of requests, and of actions by id) stay on Prisma.
 *
 * Values come back as each database gives them: dates as text (SQLite) or Date (PostgreSQL),
 * booleans as 0/1 or true/false; `date` and `yes` read either.
 */
import type { DeviceFactsRow } from "./status";
import type { EventRow, NewEvent } from "../events/events";
import type { ActionReport, OfferedAction } from "../../lib/protocol";
import { decideReport, type StoredAction } from "../actions/report";
import { conflict, notFound } from "../errors";
import { FINAL_ACTION_STATES } from "../../lib/action-status";
import { DEFAULT_HEALTH_POLICY, POLICY_RANK_SQL } from "../../lib/health-policy";
import type { IdempotencyRow } from "../idempotency/idempotency";
import { appendSample, type UsageSample } from "./inventory";
import { all, Batched, each, keyed, many, run, type Op, type Outcome, type Requester, type SqlDriver } from "./sql-driver";
import {
  lostEvent,
  REVOKED_OUTCOME_UNKNOWN,
  type AgentActionView,
  type AgentStore,
  type CertificateColumns,
  type CertifiedDevice,
  type DeviceWithCredential,
  type HeartbeatWrite,
  type MaybePromise,
  type NewActionRow,
  type NewRequestRow,
  type ReportOutcome,
  type RequestDecision,
  type ActionsDecision,
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

/** With the facts of a device authenticating, whether it holds NEW or RUNNING actions: most heartbeats then skip looking for lost ones. */
const HOLDS_ACTIONS = `EXISTS (SELECT 1 FROM "Action" a WHERE a."deviceId" = "Device"."id" AND a."state" IN ('NEW', 'RUNNING')) AS "holdsActions"`;

type RawDevice = Omit<DeviceWithCredential, "ownerFleet" | "lastSeen" | "decommissionRequestedAt" | "credentialRevokedAt" | "conflictPaused" | "holdsActions"> & {
  holdsActions?: unknown;
  lastSeen: unknown;
  decommissionRequestedAt: unknown;
  credentialRevokedAt: unknown;
  conflictPaused: unknown;
  fleetTemplateVersion: string | null;
};

/** The report answer's columns as the database gives them. */
type RawView = Omit<AgentActionView, "args" | "createdAt" | "updatedAt"> & { args: string; createdAt: unknown; updatedAt: unknown };
const toView = (r: RawView): AgentActionView => ({
  id: r.id, kind: r.kind, args: JSON.parse(r.args) as Record<string, unknown>, origin: r.origin, state: r.state, output: r.output, error: r.error,
  createdAt: date(r.createdAt)!.toISOString(), updatedAt: date(r.updatedAt)!.toISOString(),
});

/**
 * A batch's items in rounds, one item a key a round (the first of each key in the first round,
 * and so on), so that a second item on the same row is decided on what the first wrote.
 */
function* inRounds<I, R>(items: I[], key: (item: I) => string, round: (items: I[]) => Op<Outcome<R>[]>): Op<Outcome<R>[]> {
  const out: Outcome<R>[] = [];
  let rest = items.map((item, at) => ({ item, at }));
  while (rest.length) {
    const keys = new Set<string>();
    const first = rest.filter((r) => !keys.has(key(r.item)) && keys.add(key(r.item)));
    const outcomes = yield* round(first.map((r) => r.item));
    first.forEach((r, k) => (out[r.at] = outcomes[k]!));
    const done = new Set(first);
    rest = rest.filter((r) => !done.has(r));
  }
  return out;
}

/** A status-changing heartbeat, as `writeHeartbeat` takes it. */
interface HeartbeatItem {
  id: string;
  decide: (fresh: DeviceFactsRow) => { data: HeartbeatWrite; events: NewEvent[] };
}

/** An inventory write, as `writeInventory` takes it. */
interface InventoryItem {
  deviceId: string;
  system: string | null;
  sample: UsageSample | null;
  max: number;
  now: Date;
}

/** An agent's report, as `reportAction` takes it. */
interface ReportItem {
  device: { id: string; name: string };
  id: string;
  report: ActionReport;
  now: Date;
}

function toFacts(r: RawDevice | undefined): DeviceWithCredential | null {
  if (!r) return null;
  const { fleetTemplateVersion, holdsActions, ...rest } = r;
  return {
    ...rest,
    ...(holdsActions === undefined ? {} : { holdsActions: yes(holdsActions) }),
    lastSeen: date(r.lastSeen),
    decommissionRequestedAt: date(r.decommissionRequestedAt),
    credentialRevokedAt: date(r.credentialRevokedAt),
    conflictPaused: yes(r.conflictPaused),
    ownerFleet: r.owner !== null && fleetTemplateVersion !== null ? { templateVersion: fleetTemplateVersion } : null,
  };
}

const ACTION_WORK = `("state" = 'PENDING_SCHEDULE' OR ("state" IN ('NEW', 'RUNNING') AND "cancelRequestedAt" IS NOT NULL))`;

/** The columns of an agent's report answer (AgentActionView). */
const VIEW = `"id", "kind", "args", "origin", "state", "output", "error", "createdAt", "updatedAt"`;

/** The statements, written once (`many`: one row's, see sql-driver.ts). */
/** A decision's move of PENDING_APPROVE actions (by request, or by id), up to its WHERE. */
const DECIDE = `UPDATE "Action" SET "state" = ?, "decision" = ?, "decidedBy" = ?, "decidedAt" = ?::timestamp, "decisionReason" = ?,
    "finishedAt" = COALESCE(?::timestamp, "finishedAt"), "updatedAt" = ?::timestamp WHERE`;

const S = {
  byToken: `SELECT ${FACT_COLUMNS}, ${HOLDS_ACTIONS} FROM "Device" WHERE "tokenHash" = ?`,
  // The same by a client certificate's fingerprint (issue 23): the current one or the one it renewed.
  byCertificate: `SELECT ${FACT_COLUMNS}, "certFingerprint", "certPreviousFingerprint", ${HOLDS_ACTIONS}
    FROM "Device" WHERE "certFingerprint" = ? OR "certPreviousFingerprint" = ?`,
  identity: `SELECT "id", "name", "credentialRevokedAt" IS NOT NULL AS "revoked" FROM "Device" WHERE "tokenHash" = ?`,
  byIdForUpdate: `SELECT ${FACT_COLUMNS} FROM "Device" WHERE "id" = ? FOR UPDATE`,
  heartbeat: `UPDATE "Device" SET "reported" = ?, "lastSeen" = ?::timestamp, "updatedAt" = ?::timestamp, "conflictPaused" = COALESCE(?::boolean, "conflictPaused"),
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
  decide: `${DECIDE} "requestId" = ? AND "state" = 'PENDING_APPROVE' RETURNING "id", "deviceId"`,
  decisionState: `SELECT "id", "state" FROM "Action" WHERE "id" = ? FOR UPDATE`,
  decideAction: `${DECIDE} "id" = ? AND "state" = 'PENDING_APPROVE' RETURNING "id", "deviceId"`,
  decideRow: `UPDATE "ActionRequest" SET "decision" = ?, "decidedBy" = ?, "decidedAt" = ?::timestamp, "decisionReason" = ? WHERE "id" = ?`,
  // The action as it is inside the write (locked against operator-side writes until commit),
  // whether its device is being decommissioned, and the columns of the report's answer, in one statement.
  reported: `SELECT "id", "deviceId", "kind", "args", "origin", "state", "offeredAt", "output", "error", "createdAt", "updatedAt",
      (SELECT d."decommissionRequestedAt" IS NOT NULL FROM "Device" d WHERE d."id" = ?) AS "decommissioning"
    FROM "Action" WHERE "id" = ? FOR UPDATE`,
  decommissioning: `SELECT "decommissionRequestedAt" IS NOT NULL AS "d" FROM "Device" WHERE "id" = ?`,
  // Each answers with the action as the report leaves it (its answer, AgentActionView).
  output: `UPDATE "Action" SET "output" = ?, "updatedAt" = ?::timestamp WHERE "id" = ? AND "state" = 'RUNNING' RETURNING ${VIEW}`,
  createAction: `INSERT INTO "Action" ("id", "deviceId", "kind", "args", "origin", "state", "output", "error", "startedAt", "finishedAt", "createdAt", "updatedAt")
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?::timestamp, ?::timestamp, ?::timestamp, ?::timestamp) RETURNING ${VIEW}`,
  overwrite: `UPDATE "Action" SET "kind" = ?, "args" = ?, "origin" = ?, "state" = ?, "output" = ?, "error" = ?, "startedAt" = ?::timestamp, "finishedAt" = ?::timestamp,
    "updatedAt" = ?::timestamp WHERE "id" = ? RETURNING ${VIEW}`,
  move: `UPDATE "Action" SET "state" = ?, "output" = COALESCE(?::text, "output"), "error" = COALESCE(?::text, "error"),
      "startedAt" = CASE WHEN ?::boolean THEN ?::timestamp ELSE "startedAt" END, "finishedAt" = CASE WHEN ?::boolean THEN ?::timestamp ELSE "finishedAt" END,
      "updatedAt" = ?::timestamp WHERE "id" = ? AND "state" = ? RETURNING ${VIEW}`,
  active: `SELECT "id", "state" FROM "Action" WHERE "deviceId" = ? AND "state" IN ('NEW', 'RUNNING') AND "updatedAt" < ?::timestamp`,
  // Every one, however recent: what a device whose credential ends now still holds.
  held: `SELECT "id", "state" FROM "Action" WHERE "deviceId" = ? AND "state" IN ('NEW', 'RUNNING')`,
  lost: `UPDATE "Action" SET "state" = 'LOST', "error" = COALESCE(?::text, "error"), "finishedAt" = ?::timestamp, "updatedAt" = ?::timestamp
    WHERE "id" = ? AND "state" = ? RETURNING "id"`,
};

/** Template versions are immutable: their parsed specs can be kept (a few, most recent first). */
const SPEC_CACHE_SIZE = 64;

export class SqlAgentStore implements AgentStore {
  private readonly specCache = new Map<string, Record<string, unknown>>();
  private readonly specLoading = new Map<string, Promise<Record<string, unknown> | null>>();

  private readonly reports: Batched<ReportItem, ReportOutcome>;
  private readonly heartbeats: Batched<HeartbeatItem, EventRow[]>;
  private readonly inventories: Batched<InventoryItem, void>;
  private readonly offers: Batched<{ deviceId: string; now: Date; healthRank: number }, OfferedAction[]>;

  /** Writes waiting for their group commit (the batch in flight not counted): each batched item counts as a write. */
  get queued(): number {
    return this.driver.queued + [this.reports, this.offers, this.heartbeats, this.inventories].reduce((n, b) => n + b.waitingBeyondFirst, 0);
  }

  constructor(readonly driver: SqlDriver) {
    // Items of one row in rounds (inRounds): a second on the same row is decided on what the first wrote.
    this.reports = new Batched(driver, (items) => inRounds(items, (r) => r.id, (round) => this.reportRound(round)));
    this.offers = new Batched(driver, (items) => this.offerAll(items));
    this.heartbeats = new Batched(driver, (items) => inRounds(items, (h) => h.id, (round) => this.heartbeatRound(round)));
    this.inventories = new Batched(driver, (items) => inRounds(items, (i) => i.deviceId, (round) => this.inventoryRound(round)));
  }

  deviceByTokenHash(hash: string) {
    return this.driver.read(this.byToken(hash));
  }
  private *byToken(hash: string): Op<DeviceWithCredential | null> {
    return toFacts((yield* keyed<RawDevice>(S.byToken, [hash]))[0]);
  }

  deviceByCertificate(fingerprint: string) {
    return this.driver.read(this.byCertificate(fingerprint));
  }
  private *byCertificate(fingerprint: string): Op<CertifiedDevice | null> {
    return toFacts((yield* keyed<RawDevice & CertificateColumns>(S.byCertificate, [fingerprint, fingerprint]))[0]) as CertifiedDevice | null;
  }

  deviceIdentityByTokenHash(hash: string) {
    return this.driver.read(this.identity(hash));
  }
  private *identity(hash: string): Op<{ id: string; name: string; revoked: boolean } | null> {
    const r = (yield* keyed<{ id: string; name: string; revoked: unknown }>(S.identity, [hash]))[0];
    return r ? { id: r.id, name: r.name, revoked: yes(r.revoked) } : null;
  }

  /**
   * Re-reads the device (locked), lets `decide` compute what to write from that fresh row, and
   * writes it with its events. Batched (`Batched`): the status-changing heartbeats of a group
   * commit are one read, one write and one insert of events for all of them.
   */
  writeHeartbeat(id: string, decide: (fresh: DeviceFactsRow) => { data: HeartbeatWrite; events: NewEvent[] }, requester?: Requester): Promise<EventRow[]> {
    return this.heartbeats.add({ id, decide }, requester);
  }
  private *heartbeatRound(items: HeartbeatItem[]): Op<Outcome<EventRow[]>[]> {
    const fresh = (yield* each<RawDevice>(S.byIdForUpdate, items.map((h) => [h.id]))).map((rows) => toFacts(rows[0]));
    const out: Outcome<EventRow[]>[] = [];
    const writes: { k: number; data: HeartbeatWrite; events: NewEvent[] }[] = [];
    items.forEach((h, k) => {
      const row = fresh[k];
      if (!row) return void (out[k] = { ok: true, value: [] });
      try {
        writes.push({ k, ...h.decide(row) });
      } catch (error) {
        out[k] = { ok: false, error };
      }
    });
    yield* many(
      S.heartbeat,
      writes.map(({ k, data }) => [
        data.reported, data.lastSeen, data.lastSeen, data.conflictPaused ?? null,
        data.summary, data.updatedStatus, data.updatingReason, data.applicationSummary, data.lifecycle, data.decommissioning,
        data.credentialRevokedAt ?? null, items[k]!.id,
      ]),
    );
    const written = yield* this.eventsAt(writes.flatMap((w) => w.events.map((event) => ({ event, at: w.data.lastSeen }))));
    let n = 0;
    for (const w of writes) {
      const events = written.slice(n, (n += w.events.length));
      out[w.k] = { ok: true, value: events };
      // Its decommission ended with this report: the agent can report nothing after it (every
      // request is 401), so what it still holds is LOST now, in this write, whatever the queue it
      // sent says (lifecycle.ts loseActiveActionsOf, for a credential ended on the server's side).
      if (w.data.credentialRevokedAt) {
        const held = yield* all<{ id: string; state: string }>(S.held, [items[w.k]!.id]);
        events.push(...(yield* this.lost(fresh[w.k]!, held, w.data.lastSeen, REVOKED_OUTCOME_UNKNOWN)));
      }
    }
    return out;
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
    return this.inventories.add({ deviceId, system, sample, max, now }, requester);
  }
  /** Batched: a group commit's inventory writes are one read and one upsert a round (one write a device a round). */
  private *inventoryRound(items: InventoryItem[]): Op<Outcome<void>[]> {
    const rows = yield* each<{ samples: string }>(S.inventory, items.map((i) => [i.deviceId]));
    yield* many(
      S.writeInventory,
      items.map(({ deviceId, system, sample, max, now }, k) => {
        const samples = JSON.parse(rows[k]![0]?.samples ?? "[]") as UsageSample[];
        const next = sample ? appendSample(samples, sample, max) : samples;
        return [deviceId, system, system === null ? null : now, JSON.stringify(next), now];
      }),
    );
    return items.map(() => ({ ok: true, value: undefined }));
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
   * A template version's spec content, read and parsed once: when a fleet of 10,000 changes,
   * every member's poll answers with the same version's spec. On PostgreSQL those polls ask
   * together, before the first answer is back: they share its one read (`specLoading`), not
   * 10,000 reads of one row over a pool of 4. Callers must not mutate it.
   */
  templateSpec(id: string): MaybePromise<Record<string, unknown> | null> {
    const hit = this.specCache.get(id) ?? this.specLoading.get(id);
    if (hit) return hit;
    const spec = this.driver.read(this.spec(id));
    if (spec instanceof Promise) {
      this.specLoading.set(id, spec);
      const loaded = () => this.specLoading.delete(id);
      spec.then(loaded, loaded);
    }
    return spec;
  }
  private *spec(id: string): Op<Record<string, unknown> | null> {
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

  /**
   * PENDING_SCHEDULE actions its policy lets a device of `healthRank` take, oldest first, marked
   * offered; and the ids to cancel. Offers are batched as reports are: one statement reads
   * every polling device's, one marks them.
   */
  async offerActions(deviceId: string, now: Date, healthRank: number | null): Promise<{ actions: OfferedAction[]; cancel: string[] }> {
    const [actions, cancels] = await Promise.all([healthRank === null ? [] : this.offers.add({ deviceId, now, healthRank }), this.driver.read(keyed<{ id: string }>(S.cancels, [deviceId]))]);
    return { actions, cancel: cancels.map((c) => c.id) };
  }
  private *offerAll(items: { deviceId: string; now: Date; healthRank: number }[]): Op<Outcome<OfferedAction[]>[]> {
    type Raw = { id: string; kind: string; args: string; createdAt: unknown };
    const found = yield* each<Raw>(S.offer, items.map((o) => [o.deviceId, o.now, o.healthRank]));
    yield* many(S.offered, found.flatMap((rows, k) => rows.map((a) => [items[k]!.now, a.id])));
    // Each device's in the statement's order (a lateral join keeps its inner ORDER BY).
    return found.map((rows) => ({
      ok: true,
      value: rows.map((a) => ({ id: a.id, kind: a.kind, args: JSON.parse(a.args) as Record<string, unknown>, createdAt: date(a.createdAt)!.toISOString() })),
    }));
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
   * Actions decided by id (an operator's approve or reject): their rows read and locked, each
   * checked (missing: 404; not PENDING_APPROVE: 409), then one guarded UPDATE … RETURNING for
   * all of them and one event each. What throws writes nothing (the write's own savepoint).
   */
  decideActions(d: ActionsDecision, now: Date): Promise<{ moved: { id: string; deviceId: string }[]; events: EventRow[] }> {
    return this.driver.write(this.decideIds(d, now));
  }
  private *decideIds(d: ActionsDecision, now: Date): Op<{ moved: { id: string; deviceId: string }[]; events: EventRow[] }> {
    const rows = yield* each<{ id: string; state: string }>(S.decisionState, d.ids.map((id) => [id]));
    const missing = d.ids.filter((_, k) => rows[k]!.length === 0);
    if (missing.length) throw notFound(`action ${missing.join(", ")}`);
    for (const [r] of rows) {
      if (r!.state !== "PENDING_APPROVE") throw conflict(`action ${r!.id} is ${r!.state}, not PENDING_APPROVE: it was already decided`);
    }
    const finishedAt = d.to === "CANCELLED" ? now : null;
    const moved = yield* many<{ id: string; deviceId: string }>(S.decideAction, d.ids.map((id) => [d.to, d.decision, d.actor, now, d.reason, finishedAt, now, id]));
    // Read and locked above, so only a database without row locks could get here: refused whole all the same.
    if (moved.length !== d.ids.length) throw conflict(`${d.ids.length - moved.length} of the actions were decided concurrently`);
    const order = new Map(d.ids.map((id, k) => [id, k]));
    moved.sort((a, b) => order.get(a.id)! - order.get(b.id)!);
    return { moved, events: yield* this.events(moved.map((m) => d.event(m.id)), now) };
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
   * the write, and written with its event. Reports are batched (`Batched`): those that arrive
   * before their group commit's turn are one operation, a few statements for all of them. A
   * refusal worth recording (decision "refuse") is not a failure here: its event is written and
   * committed like any other, and the caller raises `refused` after the commit.
   */
  reportAction(device: { id: string; name: string }, id: string, report: ActionReport, now: Date): Promise<ReportOutcome> {
    return this.reports.add({ device, id, report, now });
  }

  /**
   * Reports on distinct actions: their rows read and locked in one statement, each decided
   * alone (what it would throw is its own failure, nothing of it written), then each kind of
   * write one statement, its answer returned by it, and the events one more.
   */
  private *reportRound(items: ReportItem[]): Op<Outcome<ReportOutcome>[]> {
    type Raw = Omit<StoredAction, "offeredAt"> & RawView & { offeredAt: unknown; decommissioning: unknown };
    const rows = (yield* each<Raw>(S.reported, items.map((r) => [r.device.id, r.id]))).map((r) => r[0]);
    // An action the server never had (the agent made it): whether its device is leaving, read apart.
    const unknown = items.flatMap((r, k) => (rows[k] ? [] : [k]));
    const found = yield* each<{ d: unknown }>(S.decommissioning, unknown.map((k) => [items[k]!.device.id]));
    const leaving = new Map(unknown.map((k, n) => [k, yes(found[n]![0]?.d)]));
    const out: Outcome<ReportOutcome>[] = [];
    type Done = Omit<ReportOutcome, "view" | "events">;
    const writes = new Map<"output" | "createAction" | "overwrite" | "move", { k: number; values: unknown[]; done: Done; event?: NewEvent }[]>();
    // Until its statement says it was written, a write's outcome is what a row that changed meanwhile gets.
    const write = (sql: "output" | "createAction" | "overwrite" | "move", k: number, values: unknown[], done: Done, event?: NewEvent) => {
      out[k] ??= { ok: false, error: conflict(`action "${items[k]!.id}" changed concurrently`) };
      const list = writes.get(sql) ?? [];
      writes.set(sql, list);
      list.push({ k, values, done, event });
    };
    const events: { k: number; event: NewEvent }[] = [];
    items.forEach(({ device, id, report, now }, k) => {
      const row = rows[k];
      const stored: StoredAction | null = row
        ? { id: row.id, deviceId: row.deviceId, kind: row.kind, args: row.args, origin: row.origin, state: row.state, offeredAt: date(row.offeredAt)?.toISOString() ?? null }
        : null;
      let decision: ReturnType<typeof decideReport>;
      try {
        decision = decideReport(stored, id, { ...device, decommissioning: row ? yes(row.decommissioning) : leaving.get(k)! }, report);
      } catch (error) {
        out[k] = { ok: false, error };
        return;
      }
      switch (decision.kind) {
        case "refuse":
          events.push({ k, event: decision.event });
          out[k] = { ok: true, value: { events: [], finished: false, refused: decision.error, view: toView(row!) } };
          return;
        case "noop":
          out[k] = { ok: true, value: { events: [], finished: false, view: toView(row!) } };
          return;
        case "output":
          // Output so far of a running action (issue 10): no event (one a second per running action would
          // flood the log). Not written (it ended meanwhile): answered as it is.
          out[k] = { ok: true, value: { events: [], finished: false, view: toView(row!) } };
          return write("output", k, [decision.output, now, id], { finished: false, output: decision.output });
        case "create": {
          // First heard of now: started now if it runs, finished now if it is over.
          const c = decision.data;
          const values = [c.id, c.deviceId, c.kind, c.args, c.origin, c.state, c.output ?? null, c.error ?? null, c.state === "RUNNING" ? now : null, isFinal(c.state) ? now : null, now, now];
          return write("createAction", k, values, { finished: true }, decision.event);
        }
        case "overwrite": {
          const o = decision.set;
          const values = [o.kind, o.args, o.origin, o.state, o.output ?? null, o.error ?? null, o.state === "RUNNING" ? now : null, isFinal(o.state) ? now : null, now, id];
          return write("overwrite", k, values, { finished: true }, decision.event);
        }
        case "move": {
          const m = decision.set;
          const values = [m.state, m.output ?? null, m.error ?? null, m.started, now, m.finished, now, now, id, decision.from];
          return write("move", k, values, { finished: m.finished }, decision.event);
        }
      }
    });
    for (const [sql, list] of writes) {
      // Each row answers with its action as written; one that changed nothing keeps the outcome set above.
      const written = new Map((yield* many<RawView>(S[sql], list.map((w) => w.values))).map((v) => [v.id, toView(v)]));
      for (const w of list) {
        const view = written.get(items[w.k]!.id);
        if (!view) continue;
        out[w.k] = { ok: true, value: { ...w.done, events: [], view } };
        if (w.event) events.push({ k: w.k, event: w.event });
      }
    }
    events.sort((a, b) => a.k - b.k);
    const rowsOf = yield* this.eventsAt(events.map((e) => ({ event: e.event, at: items[e.k]!.now })));
    events.forEach((e, n) => {
      const o = out[e.k]!;
      if (o.ok) o.value.events.push(rowsOf[n]!);
    });
    return out;
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

  /** Events in one statement (PostgreSQL) or one a row (SQLite), ids in the order given. */
  private *events(list: NewEvent[], now: Date): Op<EventRow[]> {
    return yield* this.eventsAt(list.map((event) => ({ event, at: now })));
  }
  /** Events each at its own time, as `events`. */
  private *eventsAt(list: { event: NewEvent; at: Date }[]): Op<EventRow[]> {
    const rows = list.map(({ event: e, at }) => [at, e.objectKind, e.objectName, e.type, e.reason, e.message ?? "", e.actor]);
    const ids = (yield* many<{ id: number }>(S.events, rows)).map((r) => r.id).sort((a, b) => a - b);
    return list.map(({ event: e, at }, i) => ({ id: ids[i]!, time: at, objectKind: e.objectKind, objectName: e.objectName, type: e.type, reason: e.reason, message: e.message ?? "", actor: e.actor }));
  }

  close() {
    return this.driver.close();
  }
}
