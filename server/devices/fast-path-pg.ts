/**
 * The agent hot path on PostgreSQL (issue 11): the same interface as the SQLite fast path
 * (agent-store.ts), with named prepared statements through a `pg` pool of its own. Decisions
 * (decideReport, the status derivations) are the shared ones; only the SQL differs.
 *
 * Reads go to any pooled connection. Writes are group commits, as on SQLite: the writes that
 * arrive in one turn of the event loop share one transaction on one connection, each in its
 * own savepoint (a write that throws rolls back and rejects alone), and callers are answered
 * after COMMIT. One batch is in flight at a time; what arrives meanwhile is the next batch, so
 * under load a batch grows instead of the commits multiplying. Round trips are what cost here
 * (a statement is ≈ 0.1 ms of network and parsing where SQLite's is microseconds), so:
 *  - the heartbeats of a batch that change no status (`touch`, the common case) are one
 *    multi-row UPDATE over unnest() arrays, whatever their number;
 *  - a batch that is that one statement alone runs without BEGIN/COMMIT (it is atomic);
 *  - savepoint bookkeeping rides in the same round trip as the next one (`RELEASE w; SAVEPOINT w`);
 *  - events are one multi-row INSERT … RETURNING per write, the heartbeat's status write and
 *    its events one statement.
 *
 * Times: the columns are `timestamp(3)` without time zone holding UTC (as Prisma writes them).
 * Parameters go as ISO text (PostgreSQL ignores the zone for that type) and values come back
 * through a parser that reads them as UTC, whatever the process's TZ.
 */
import pg from "pg";
import type { DeviceFactsRow } from "./status";
import type { EventRow, NewEvent } from "../events/events";
import type { ActionReport, OfferedAction } from "../../lib/protocol";
import { decideReport, type StoredAction } from "../actions/report";
import { conflict } from "../errors";
import type { IdempotencyRow } from "../idempotency/idempotency";
import { FINAL_ACTION_STATES } from "../../lib/action-status";
import { DEFAULT_HEALTH_POLICY, POLICY_RANK_SQL } from "../../lib/health-policy";
import {
  lostEvent,
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

const TIMESTAMP_OID = 1114;
/** `timestamp` values are UTC wall times: read them so, not in the process's zone. */
const utcTypes: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: string) =>
    oid === TIMESTAMP_OID ? (text: string) => new Date(`${text.replace(" ", "T")}Z`) : pg.types.getTypeParser(oid, format as "text")) as pg.CustomTypesConfig["getTypeParser"],
};

/** Deadlock detected, serialization failure: the statement may simply run again. */
const retryable = (error: unknown) => typeof error === "object" && error !== null && ["40P01", "40001"].includes((error as { code?: string }).code ?? "");

const iso = (d: Date) => d.toISOString();
const isoOrNull = (d: Date | null | undefined) => (d ? d.toISOString() : null);
const isFinal = (state: string) => (FINAL_ACTION_STATES as readonly string[]).includes(state);

/** A named statement: prepared once per connection by `pg`, then only bound and run. */
export interface Stmt {
  name: string;
  text: string;
}
const st = (name: string, text: string): Stmt => ({ name: `drover_${name}`, text });

/** What a write runs its statements through (the batch's connection, inside the transaction). */
export interface Querier {
  rows<R>(s: Stmt, values: unknown[]): Promise<R[]>;
  count(s: Stmt, values: unknown[]): Promise<number>;
}

const FACT_COLUMNS = `"id", "name", "reported", "lastSeen", "renderedVersion", "templateVersion", "owner", "enrollmentId",
  "decommissionRequestedAt", "conflictPaused", "summary", "updatedStatus", "updatingReason", "applicationSummary",
  "lifecycle", "decommissioning", "credentialRevokedAt",
  (SELECT f."templateVersion" FROM "Fleet" f WHERE f."name" = "Device"."owner") AS "fleetTemplateVersion"`;

type RawDevice = Omit<DeviceWithCredential, "ownerFleet"> & { fleetTemplateVersion: string | null };

function toFacts(r: RawDevice | undefined): DeviceWithCredential | null {
  if (!r) return null;
  const { fleetTemplateVersion, ...rest } = r;
  return { ...rest, ownerFleet: r.owner !== null && fleetTemplateVersion !== null ? { templateVersion: fleetTemplateVersion } : null };
}

// Events: one INSERT for any number, in order (ids are drawn in the order unnest yields rows,
// and sorted again on the way back).
const EVENT_INSERT = `INSERT INTO "Event" ("time", "objectKind", "objectName", "type", "reason", "message", "actor")
  SELECT $1::timestamp, k, n, t, r, m, a FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[]) WITH ORDINALITY AS e(k, n, t, r, m, a, i) ORDER BY i
  RETURNING "id"`;

function eventArrays(events: NewEvent[]): unknown[] {
  return [events.map((e) => e.objectKind), events.map((e) => e.objectName), events.map((e) => e.type), events.map((e) => e.reason), events.map((e) => e.message ?? ""), events.map((e) => e.actor)];
}

function eventRows(events: NewEvent[], ids: { id: number }[], now: Date): EventRow[] {
  const sorted = ids.map((r) => r.id).sort((a, b) => a - b);
  return events.map((e, i) => ({ id: sorted[i]!, time: now, objectKind: e.objectKind, objectName: e.objectName, type: e.type, reason: e.reason, message: e.message ?? "", actor: e.actor }));
}

const S = {
  // Reads of one turn batched (ReadBatch): the i-th key's rows come back with "i".
  byToken: st("by_token", `SELECT v.i::int AS "i", ${FACT_COLUMNS} FROM unnest($1::text[]) WITH ORDINALITY AS v(hash, i) JOIN "Device" ON "Device"."tokenHash" = v.hash`),
  identity: st(
    "identity",
    `SELECT v.i::int AS "i", "id", "name", "credentialRevokedAt" IS NOT NULL AS "revoked" FROM unnest($1::text[]) WITH ORDINALITY AS v(hash, i) JOIN "Device" ON "Device"."tokenHash" = v.hash`,
  ),
  byIdForUpdate: st("by_id_for_update", `SELECT ${FACT_COLUMNS} FROM "Device" WHERE "id" = $1 FOR UPDATE`),
  touch: st(
    "touch",
    `UPDATE "Device" AS d SET "reported" = v.reported, "lastSeen" = v.at, "updatedAt" = v.at
      FROM unnest($1::text[], $2::text[], $3::timestamp[]) AS v(id, reported, at) WHERE d."id" = v.id`,
  ),
  // The status write and its events in one statement (a data-modifying CTE runs even unreferenced).
  heartbeat: st(
    "heartbeat",
    `WITH u AS (UPDATE "Device" SET "reported" = $8, "lastSeen" = $1, "updatedAt" = $1, "conflictPaused" = COALESCE($9::boolean, "conflictPaused"),
        "summary" = $10, "updatedStatus" = $11, "updatingReason" = $12, "applicationSummary" = $13, "lifecycle" = $14, "decommissioning" = $15,
        "credentialRevokedAt" = COALESCE($16::timestamp, "credentialRevokedAt") WHERE "id" = $17)
     ${EVENT_INSERT}`,
  ),
  events: st("events", EVENT_INSERT),
  sweep: st(
    "sweep",
    `UPDATE "Device" AS d SET "summary" = v.summary, "updatedStatus" = v.updated, "updatingReason" = v.reason, "applicationSummary" = v.apps,
        "lifecycle" = v.lifecycle, "decommissioning" = v.decom, "updatedAt" = $1
      FROM unnest($2::text[], $3::timestamp[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[])
        AS v(id, seen, summary, updated, reason, apps, lifecycle, decom)
      WHERE d."id" = v.id AND d."lastSeen" = v.seen RETURNING d."id"`,
  ),
  inventory: st(
    "inventory",
    `INSERT INTO "DeviceInventory" ("deviceId", "system", "systemAt", "samples", "updatedAt")
      VALUES ($1, $2::text, CASE WHEN $2::text IS NULL THEN NULL ELSE $3::timestamp END, CASE WHEN $4::text IS NULL THEN '[]' ELSE jsonb_build_array($4::jsonb)::text END, $3::timestamp)
    ON CONFLICT ("deviceId") DO UPDATE SET
      "system" = COALESCE(EXCLUDED."system", "DeviceInventory"."system"),
      "systemAt" = COALESCE(EXCLUDED."systemAt", "DeviceInventory"."systemAt"),
      "samples" = CASE WHEN $4::text IS NULL OR COALESCE(("DeviceInventory"."samples"::jsonb -> -1 ->> 0)::numeric, 0) >= $5::numeric THEN "DeviceInventory"."samples"
        ELSE ((CASE WHEN jsonb_array_length("DeviceInventory"."samples"::jsonb) >= $6::int THEN "DeviceInventory"."samples"::jsonb - 0 ELSE "DeviceInventory"."samples"::jsonb END)
          || jsonb_build_array($4::jsonb))::text END,
      "updatedAt" = EXCLUDED."updatedAt"`,
  ),
  // The poll's facts and its cheap first check for actions, in one round trip.
  work: st(
    "work",
    `SELECT v.i::int AS "i", "renderedVersion", "templateVersion", "renderedSpecId", "spec", "decommissionRequestedAt", "lifecycle", "summary",
      "credentialRevokedAt" IS NOT NULL AS "revoked",
      EXISTS (SELECT 1 FROM "Action" a WHERE a."deviceId" = "Device"."id"
        AND (a."state" = 'PENDING_SCHEDULE' OR (a."state" IN ('NEW', 'RUNNING') AND a."cancelRequestedAt" IS NOT NULL))) AS "actionWork"
    FROM unnest($1::text[]) WITH ORDINALITY AS v(id, i) JOIN "Device" ON "Device"."id" = v.id`,
  ),
  spec: st("spec", `SELECT "spec" FROM "TemplateVersion" WHERE "id" = $1`),
  counts: st(
    "status_counts",
    `SELECT 'summary' AS axis, "summary" AS value, count(*)::int AS n FROM "Device" GROUP BY "summary"
     UNION ALL SELECT 'updated', "updatedStatus", count(*)::int FROM "Device" GROUP BY "updatedStatus"
     UNION ALL SELECT 'applicationSummary', "applicationSummary", count(*)::int FROM "Device" GROUP BY "applicationSummary"
     UNION ALL SELECT 'lifecycle', "lifecycle", count(*)::int FROM "Device" GROUP BY "lifecycle"`,
  ),
  hasWork: st(
    "has_work",
    `SELECT EXISTS (SELECT 1 FROM "Action" WHERE "deviceId" = $1
      AND ("state" = 'PENDING_SCHEDULE' OR ("state" IN ('NEW', 'RUNNING') AND "cancelRequestedAt" IS NOT NULL))) AS "w"`,
  ),
  // The offer: every PENDING_SCHEDULE action, oldest first, marked offered where it was not yet.
  // An expired action is never offered, even in the moment before the tick cancels it.
  offer: st(
    "offer",
    `WITH a AS (SELECT "id", "kind", "args", "createdAt" FROM "Action"
        WHERE "deviceId" = $1 AND "state" = 'PENDING_SCHEDULE' AND ("expiresAt" IS NULL OR "expiresAt" > $2::timestamp)
          AND ${POLICY_RANK_SQL} >= $3::int),
      o AS (UPDATE "Action" SET "offeredAt" = $2::timestamp WHERE "id" IN (SELECT "id" FROM a) AND "offeredAt" IS NULL)
    SELECT * FROM a ORDER BY "createdAt", "id"`,
  ),
  cancels: st(
    "cancels",
    `SELECT "id" FROM "Action" WHERE "deviceId" = $1 AND "state" IN ('NEW', 'RUNNING') AND "cancelRequestedAt" IS NOT NULL ORDER BY "createdAt"`,
  ),
  insertIdempotencyKey: st(
    "insert_idempotency_key",
    `INSERT INTO "IdempotencyKey" ("scope", "key", "operation", "fingerprint", "ref", "createdAt", "expiresAt") VALUES ($1, $2, $3, $4, $5, $6, $7)`,
  ),
  insertRequest: st(
    "insert_request",
    `INSERT INTO "ActionRequest" ("id", "kind", "args", "origin", "ref", "targetKind", "target", "createdBy", "createdAt", "requireApproval")
      VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
  ),
  insertActions: st(
    "insert_actions",
    `INSERT INTO "Action" ("id", "deviceId", "kind", "args", "origin", "state", "requireApproval", "createdBy", "createdAt", "updatedAt", "expiresAt", "requestId", "rerunOf", "healthPolicy")
      SELECT id, dev, kind, args, origin, state, approval, who, created, $1::timestamp, expires, req, rerun, health
      FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::boolean[], $9::text[], $10::timestamp[], $11::timestamp[], $12::text[], $13::text[], $14::text[])
        AS v(id, dev, kind, args, origin, state, approval, who, created, expires, req, rerun, health)`,
  ),
  decide: st(
    "decide_request",
    `UPDATE "Action" SET "state" = $1, "decision" = $2, "decidedBy" = $3, "decidedAt" = $4, "decisionReason" = $5, "finishedAt" = COALESCE($6::timestamp, "finishedAt"), "updatedAt" = $4
      WHERE "requestId" = $7 AND "state" = 'PENDING_APPROVE' RETURNING "id", "deviceId"`,
  ),
  decideRow: st("decide_request_row", `UPDATE "ActionRequest" SET "decision" = $1, "decidedBy" = $2, "decidedAt" = $3, "decisionReason" = $4 WHERE "id" = $5`),
  // The action as it is inside the write (locked against operator-side writes until commit),
  // and whether its device is being decommissioned, in one round trip.
  reported: st(
    "reported_action",
    `SELECT "id", "deviceId", "kind", "args", "origin", "state", "offeredAt",
      (SELECT d."decommissionRequestedAt" IS NOT NULL FROM "Device" d WHERE d."id" = $2) AS "decommissioning"
    FROM "Action" WHERE "id" = $1 FOR UPDATE`,
  ),
  decommissioning: st("decommissioning", `SELECT "decommissionRequestedAt" IS NOT NULL AS "d" FROM "Device" WHERE "id" = $1`),
  output: st("action_output", `UPDATE "Action" SET "output" = $1, "updatedAt" = $2 WHERE "id" = $3 AND "state" = 'RUNNING'`),
  createAction: st(
    "agent_action",
    `INSERT INTO "Action" ("id", "deviceId", "kind", "args", "origin", "state", "output", "error", "startedAt", "finishedAt", "createdAt", "updatedAt")
      VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $11)`,
  ),
  overwrite: st(
    "overwrite_action",
    `UPDATE "Action" SET "kind" = $1, "args" = $2, "origin" = $3, "state" = $4, "output" = $5, "error" = $6, "startedAt" = $7, "finishedAt" = $8, "updatedAt" = $9 WHERE "id" = $10`,
  ),
  move: st(
    "move_action",
    `UPDATE "Action" SET "state" = $1, "output" = COALESCE($2::text, "output"), "error" = COALESCE($3::text, "error"),
      "startedAt" = CASE WHEN $4::boolean THEN $6::timestamp ELSE "startedAt" END, "finishedAt" = CASE WHEN $5::boolean THEN $6::timestamp ELSE "finishedAt" END,
      "updatedAt" = $6::timestamp WHERE "id" = $7 AND "state" = $8`,
  ),
  active: st(
    "active_actions",
    `SELECT v.i::int AS "i", a."id", a."state" FROM unnest($1::text[], $2::timestamp[]) WITH ORDINALITY AS v(device, before, i)
      JOIN "Action" a ON a."deviceId" = v.device AND a."state" IN ('NEW', 'RUNNING') AND a."updatedAt" < v.before`,
  ),
  lost: st(
    "lost",
    `UPDATE "Action" AS a SET "state" = 'LOST', "finishedAt" = $1, "updatedAt" = $1
      FROM unnest($2::text[], $3::text[]) AS v(id, state) WHERE a."id" = v.id AND a."state" = v.state RETURNING a."id", v.state AS "state"`,
  ),
  view: st("action_view", `SELECT "id", "kind", "args", "origin", "state", "output", "error", "createdAt", "updatedAt" FROM "Action" WHERE "id" = $1`),
};

/**
 * The reads every request makes (the token lookup, the poll's facts, the LOST check) of one
 * turn of the event loop, as one statement over arrays: 128 concurrent heartbeats are one round
 * trip, not 128 waiting for the pool's connections. Each call gets the rows of its own key
 * (its 1-based position, "i").
 */
class ReadBatch<K extends unknown[], R extends { i: number }> {
  private queue: { key: K; resolve: (rows: R[]) => void; reject: (error: unknown) => void }[] = [];
  constructor(private readonly run: (keys: K[]) => Promise<R[]>) {}

  load(...key: K): Promise<R[]> {
    return new Promise((resolve, reject) => {
      if (this.queue.length === 0) setImmediate(() => this.flush());
      this.queue.push({ key, resolve, reject });
    });
  }

  private flush(): void {
    const queue = this.queue;
    this.queue = [];
    this.run(queue.map((q) => q.key)).then(
      (rows) => {
        const by: R[][] = queue.map(() => []);
        for (const r of rows) by[r.i - 1]!.push(r);
        queue.forEach((q, n) => q.resolve(by[n]!));
      },
      (error: unknown) => queue.forEach((q) => q.reject(error)),
    );
  }
}

/** Template versions are immutable: their parsed specs can be kept (a few, most recent first). */
const SPEC_CACHE_SIZE = 64;

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };
interface Pending {
  write: (q: Querier) => Promise<unknown>;
  /** The write is one statement: alone in its batch, it needs no BEGIN/COMMIT. */
  single: boolean;
  resolve: (value: never) => void;
  reject: (error: unknown) => void;
}
interface PendingTouch {
  id: string;
  reported: string;
  at: string;
  resolve: () => void;
  reject: (error: unknown) => void;
}

export interface PgFastPathOptions {
  /** Connections of this pool (beside Prisma's own). */
  max?: number;
  /** Called when an idle connection fails (the pool replaces it). */
  onError?: (error: Error) => void;
}

export class PgFastPath implements AgentStore {
  protected readonly pool: pg.Pool;
  private readonly specCache = new Map<string, Record<string, unknown>>();
  private pending: Pending[] = [];
  private touches: PendingTouch[] = [];
  private scheduled = false;
  private flushing: Promise<void> | null = null;
  private closed = false;
  private readonly byToken = new ReadBatch<[string], RawDevice & { i: number }>((keys) => this.rows(S.byToken, [keys.map((k) => k[0])]));
  private readonly identity = new ReadBatch<[string], { i: number; id: string; name: string; revoked: boolean }>((keys) => this.rows(S.identity, [keys.map((k) => k[0])]));
  private readonly work = new ReadBatch<[string], WorkFacts & { actionWork: boolean; i: number }>((keys) => this.rows(S.work, [keys.map((k) => k[0])]));
  private readonly active = new ReadBatch<[string, string], { i: number; id: string; state: string }>((keys) => this.rows(S.active, [keys.map((k) => k[0]), keys.map((k) => k[1])]));

  constructor(connectionString: string, options: PgFastPathOptions = {}) {
    // Few connections do: one batch of writes is in flight at a time, and reads are batched too.
    this.pool = new pg.Pool({ connectionString, max: options.max ?? 4, types: utcTypes });
    // An idle connection that dies (a restart, a terminated backend) must not crash the server.
    this.pool.on("error", (error) => options.onError?.(error));
  }

  private async rows<R>(s: Stmt, values: unknown[]): Promise<R[]> {
    return (await this.pool.query<R & pg.QueryResultRow>({ name: s.name, text: s.text, values })).rows;
  }

  /** Runs `write` in the next group commit; settles once that transaction has committed. */
  protected commit<T>(write: (q: Querier) => Promise<T>, single = false): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (this.closed) return reject(new Error("the database connection is closed"));
      this.pending.push({ write, single, resolve: resolve as (value: never) => void, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.flushing) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.flushing = this.flush().finally(() => {
        this.flushing = null;
        // What arrived while this batch was in flight is the next batch.
        if (this.pending.length || this.touches.length) this.schedule();
      });
    });
  }

  private async flush(): Promise<void> {
    const batch = this.pending;
    const touches = this.touches;
    this.pending = [];
    this.touches = [];
    if (batch.length === 0 && touches.length === 0) return;
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (error) {
      for (const op of batch) op.reject(error);
      for (const t of touches) t.reject(error);
      return;
    }
    let broken: Error | undefined;
    // A checked-out client has no listener of the pool's: a connection cut mid-batch (PostgreSQL
    // stopped, issue 22) would be an uncaught 'error' and end the process. Its queries reject
    // with it; the client is then dropped, not reused.
    const onError = (error: Error) => void (broken ??= error);
    client.on("error", onError);
    const run = async (s: Stmt, values: unknown[]) => client.query({ name: s.name, text: s.text, values });
    const q: Querier = {
      rows: async <R>(s: Stmt, values: unknown[]) => (await run(s, values)).rows as R[],
      count: async (s: Stmt, values: unknown[]) => (await run(s, values)).rowCount ?? 0,
    };
    // The last report of a device in this batch wins (one row per device in the UPDATE).
    const last = new Map<string, PendingTouch>();
    for (const t of touches) last.set(t.id, t);
    const list = [...last.values()];
    const values = [list.map((t) => t.id), list.map((t) => t.reported), list.map((t) => t.at)];
    // Many rows in one statement can deadlock with an operator's transaction locking devices in
    // another order (PostgreSQL then aborts one of the two): the heartbeats try once more.
    const touch = async (undo?: string) => {
      try {
        await q.count(S.touch, values);
      } catch (error) {
        if (!retryable(error)) throw error;
        if (undo) await client.query(undo);
        await q.count(S.touch, values);
      }
    };
    try {
      if (batch.length === 0) {
        // Only heartbeats that changed nothing: one statement, atomic alone, no transaction.
        await touch();
        for (const t of touches) t.resolve();
        return;
      }
      const outcomes: Outcome[] = [];
      const alone = batch.length === 1 && touches.length === 0;
      if (alone && batch[0]!.single) {
        // One statement is atomic by itself: no transaction around it.
        batch[0]!.resolve((await batch[0]!.write(q)) as never);
        return;
      }
      await client.query(alone ? "BEGIN" : "BEGIN; SAVEPOINT w");
      // The touches first, in their own savepoint (they fail or succeed together).
      let next = "SAVEPOINT w";
      if (touches.length) {
        try {
          await touch("ROLLBACK TO w");
          next = "RELEASE w; SAVEPOINT w";
        } catch (error) {
          await client.query("ROLLBACK TO w; RELEASE w");
          for (const t of touches) t.reject(error);
          touches.length = 0;
        }
      } else if (!alone) {
        next = "";
      }
      for (const op of batch) {
        if (alone) {
          outcomes.push({ ok: true, value: await op.write(q) });
          continue;
        }
        // Each write in its own savepoint, released or rolled back on its own; the bookkeeping
        // goes in the same round trip as the next savepoint.
        if (next) await client.query(next);
        try {
          outcomes.push({ ok: true, value: await op.write(q) });
          next = "RELEASE w; SAVEPOINT w";
        } catch (error) {
          await client.query("ROLLBACK TO w; RELEASE w");
          next = "SAVEPOINT w";
          outcomes.push({ ok: false, error });
        }
      }
      await client.query("COMMIT");
      for (const t of touches) t.resolve();
      batch.forEach((op, i) => {
        const o = outcomes[i]!;
        if (o.ok) op.resolve(o.value as never);
        else op.reject(o.error);
      });
    } catch (error) {
      // The commit failed (or the only write threw): nothing of the batch is written.
      // A connection that cannot even roll back is dropped from the pool, not reused.
      await client.query("ROLLBACK").catch((e: unknown) => {
        broken = e instanceof Error ? e : new Error(String(e));
      });
      for (const op of batch) op.reject(error);
      for (const t of touches) t.reject(error);
    } finally {
      client.off("error", onError);
      client.release(broken);
    }
  }

  deviceByTokenHash(hash: string): Promise<DeviceWithCredential | null> {
    return this.byToken.load(hash).then((r) => {
      if (!r[0]) return null;
      const { i: _i, ...row } = r[0];
      return toFacts(row);
    });
  }

  async deviceIdentityByTokenHash(hash: string): Promise<{ id: string; name: string; revoked: boolean } | null> {
    const r = (await this.identity.load(hash))[0];
    return r ? { id: r.id, name: r.name, revoked: r.revoked } : null;
  }

  writeHeartbeat(id: string, decide: (fresh: DeviceFactsRow) => { data: HeartbeatWrite; events: NewEvent[] }): Promise<EventRow[]> {
    return this.commit(async (q) => {
      const fresh = toFacts((await q.rows<RawDevice>(S.byIdForUpdate, [id]))[0]);
      if (!fresh) return [];
      const { data, events } = decide(fresh);
      const at = iso(data.lastSeen);
      const ids = await q.rows<{ id: number }>(S.heartbeat, [
        at, ...eventArrays(events),
        data.reported, data.conflictPaused ?? null,
        data.summary, data.updatedStatus, data.updatingReason, data.applicationSummary, data.lifecycle, data.decommissioning,
        isoOrNull(data.credentialRevokedAt), id,
      ]);
      return eventRows(events, ids, data.lastSeen);
    });
  }

  writeSweep(items: SweepItem[], now: Date): Promise<EventRow[]> {
    return this.commit(async (q) => {
      if (items.length === 0) return [];
      const c = items.map((i) => i.columns);
      const written = new Set(
        (
          await q.rows<{ id: string }>(S.sweep, [
            iso(now), items.map((i) => i.id), items.map((i) => iso(i.lastSeen)),
            c.map((x) => x.summary), c.map((x) => x.updatedStatus), c.map((x) => x.updatingReason), c.map((x) => x.applicationSummary), c.map((x) => x.lifecycle), c.map((x) => x.decommissioning),
          ])
        ).map((r) => r.id),
      );
      // A device that reported since it was read is skipped, events and all.
      return this.insertEvents(q, items.filter((i) => written.has(i.id)).flatMap((i) => i.events), now);
    });
  }

  touch(id: string, reported: string, lastSeen: Date): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (this.closed) return reject(new Error("the database connection is closed"));
      this.touches.push({ id, reported, at: iso(lastSeen), resolve, reject });
      this.schedule();
    });
  }

  writeInventory(deviceId: string, system: string | null, sample: string | null, notBefore: number, max: number, now: Date): Promise<void> {
    return this.commit(async (q) => void (await q.count(S.inventory, [deviceId, system, iso(now), sample, notBefore, max])), true);
  }

  async workFacts(id: string): Promise<(WorkFacts & { actionWork: boolean }) | null> {
    const r = (await this.work.load(id))[0];
    if (!r) return null;
    const { i: _i, ...facts } = r;
    return facts;
  }

  async templateSpec(id: string): Promise<Record<string, unknown> | null> {
    const hit = this.specCache.get(id);
    if (hit) return hit;
    const row = (await this.rows<{ spec: string }>(S.spec, [id]))[0];
    if (!row) return null;
    const spec = JSON.parse(row.spec) as Record<string, unknown>;
    if (this.specCache.size >= SPEC_CACHE_SIZE) this.specCache.delete(this.specCache.keys().next().value!);
    this.specCache.set(id, spec);
    return spec;
  }

  statusCounts(): Promise<{ axis: string; value: string; n: number }[]> {
    return this.rows(S.counts, []);
  }

  async hasActionWork(deviceId: string): Promise<boolean> {
    return (await this.rows<{ w: boolean }>(S.hasWork, [deviceId]))[0]?.w ?? false;
  }

  async offerActions(deviceId: string, now: Date, healthRank: number | null): Promise<{ actions: OfferedAction[]; cancel: string[] }> {
    const cancels = async () => (await this.rows<{ id: string }>(S.cancels, [deviceId])).map((c) => c.id);
    if (healthRank === null) return { actions: [], cancel: await cancels() };
    const rows = await this.commit((q) => q.rows<{ id: string; kind: string; args: string; createdAt: Date }>(S.offer, [deviceId, iso(now), healthRank]), true);
    const actions = rows.map((a) => ({ id: a.id, kind: a.kind, args: JSON.parse(a.args) as Record<string, unknown>, createdAt: a.createdAt.toISOString() }));
    return { actions, cancel: await cancels() };
  }

  insertActions(rows: NewActionRow[], events: NewEvent[], now: Date, request?: NewRequestRow, idempotency?: IdempotencyRow): Promise<EventRow[]> {
    return this.commit(async (q) => {
      if (idempotency) {
        const k = idempotency;
        await q.count(S.insertIdempotencyKey, [k.scope, k.key, k.operation, k.fingerprint, k.ref, iso(k.createdAt), iso(k.expiresAt)]);
      }
      if (request) {
        const r = request;
        await q.count(S.insertRequest, [r.id, r.kind, r.args, r.origin, r.ref, r.targetKind, r.target, r.createdBy, iso(r.createdAt), r.requireApproval]);
      }
      if (rows.length) {
        await q.count(S.insertActions, [
          iso(now), rows.map((r) => r.id), rows.map((r) => r.deviceId), rows.map((r) => r.kind), rows.map((r) => r.args), rows.map((r) => r.origin), rows.map((r) => r.state),
          rows.map((r) => r.requireApproval), rows.map((r) => r.createdBy), rows.map((r) => iso(r.createdAt)), rows.map((r) => isoOrNull(r.expiresAt)),
          rows.map((r) => r.requestId ?? null), rows.map((r) => r.rerunOf ?? null), rows.map((r) => r.healthPolicy ?? DEFAULT_HEALTH_POLICY),
        ]);
      }
      return this.insertEvents(q, events, now);
    });
  }

  decideRequest(d: RequestDecision, now: Date): Promise<{ moved: { id: string; deviceId: string }[]; events: EventRow[] }> {
    return this.commit(async (q) => {
      const at = iso(now);
      const moved = await q.rows<{ id: string; deviceId: string }>(S.decide, [d.to, d.decision, d.actor, at, d.reason, d.to === "CANCELLED" ? at : null, d.requestId]);
      if (moved.length === 0) return { moved, events: [] };
      await q.count(S.decideRow, [d.decision, d.actor, at, d.reason, d.requestId]);
      const events = await this.insertEvents(q, [...moved.map((m) => d.actionEvent(m.id)), d.requestEvent(moved.length)], now);
      return { moved, events };
    });
  }

  reportAction(device: { id: string; name: string }, id: string, report: ActionReport, now: Date): Promise<ReportOutcome> {
    return this.commit(async (q): Promise<ReportOutcome> => {
      const row = (await q.rows<Omit<StoredAction, "offeredAt"> & { offeredAt: Date | null; decommissioning: boolean | null }>(S.reported, [id, device.id]))[0];
      const decommissioning = row ? row.decommissioning === true : (await q.rows<{ d: boolean }>(S.decommissioning, [device.id]))[0]?.d === true;
      const stored: StoredAction | null = row
        ? { id: row.id, deviceId: row.deviceId, kind: row.kind, args: row.args, origin: row.origin, state: row.state, offeredAt: isoOrNull(row.offeredAt) }
        : null;
      const decision = decideReport(stored, id, { ...device, decommissioning }, report);
      const at = iso(now);
      switch (decision.kind) {
        case "refuse":
          return { events: await this.insertEvents(q, [decision.event], now), finished: false, refused: decision.error };
        case "noop":
          return { events: [], finished: false };
        case "output": {
          // Output so far of a running action (issue 10): one statement, no event.
          const changed = await q.count(S.output, [decision.output, at, id]);
          return changed === 1 ? { events: [], finished: false, output: decision.output } : { events: [], finished: false };
        }
        case "create": {
          const c = decision.data;
          // First heard of now: started now if it runs, finished now if it is over.
          await q.count(S.createAction, [c.id, c.deviceId, c.kind, c.args, c.origin, c.state, c.output ?? null, c.error ?? null, c.state === "RUNNING" ? at : null, isFinal(c.state) ? at : null, at]);
          return { events: await this.insertEvents(q, [decision.event], now), finished: true };
        }
        case "overwrite": {
          const o = decision.set;
          await q.count(S.overwrite, [o.kind, o.args, o.origin, o.state, o.output ?? null, o.error ?? null, o.state === "RUNNING" ? at : null, isFinal(o.state) ? at : null, at, id]);
          return { events: await this.insertEvents(q, [decision.event], now), finished: true };
        }
        case "move": {
          const m = decision.set;
          const changed = await q.count(S.move, [m.state, m.output ?? null, m.error ?? null, m.started, m.finished, at, id, decision.from]);
          if (changed !== 1) throw conflict(`action "${id}" changed concurrently`);
          return { events: await this.insertEvents(q, [decision.event], now), finished: m.finished };
        }
      }
    });
  }

  async markLost(device: { id: string; name: string }, queued: Set<string>, now: Date, graceMs: number): Promise<EventRow[]> {
    // The common heartbeat loses nothing: look first, write only when needed.
    const active = await this.active.load(device.id, iso(new Date(now.getTime() - graceMs)));
    const missing = active.filter((a) => !queued.has(a.id));
    if (missing.length === 0) return [];
    return this.commit(async (q) => {
      const lost = await q.rows<{ id: string; state: string }>(S.lost, [iso(now), missing.map((a) => a.id), missing.map((a) => a.state)]);
      const order = new Map(missing.map((a, i) => [a.id, i]));
      lost.sort((a, b) => order.get(a.id)! - order.get(b.id)!);
      return this.insertEvents(q, lost.map((a) => lostEvent(device, a)), now);
    });
  }

  async actionView(id: string): Promise<AgentActionView | null> {
    const r = (await this.rows<Omit<AgentActionView, "args" | "createdAt" | "updatedAt"> & { args: string; createdAt: Date; updatedAt: Date }>(S.view, [id]))[0];
    if (!r) return null;
    return { ...r, args: JSON.parse(r.args) as Record<string, unknown>, createdAt: r.createdAt.toISOString(), updatedAt: r.updatedAt.toISOString() };
  }

  private async insertEvents(q: Querier, events: NewEvent[], now: Date): Promise<EventRow[]> {
    if (events.length === 0) return [];
    return eventRows(events, await q.rows<{ id: number }>(S.events, [iso(now), ...eventArrays(events)]), now);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    // Writes already accepted are committed before the pool goes.
    while (this.flushing || this.scheduled || this.pending.length || this.touches.length) {
      if (this.flushing) await this.flushing;
      else await new Promise((resolve) => setImmediate(resolve));
    }
    await this.pool.end();
  }
}
