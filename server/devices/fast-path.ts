/**
 * The agent hot path on embedded SQLite: the device lookup by token, the heartbeat write
 * that changes nothing but lastSeen and the report, and the work check of a long-poll, as
 * prepared better-sqlite3 statements on a second connection to the same WAL database.
 * Prisma's query engine costs ≈1–1.5 ms a query here; these cost tens of microseconds, which
 * is what lets one process ingest thousands of heartbeats a second. Status changes from a
 * heartbeat are written here too, with their events, in the same transaction. Operator-side
 * writes other than action creation stay on Prisma. On PostgreSQL the same interface
 * (agent-store.ts) is fast-path-pg.ts.
 *
 * Group commit: every write here goes through `commit()`, which runs the writes that arrive
 * in one turn of the event loop in one transaction, each in its own savepoint (a write that
 * throws rolls back alone and rejects alone). A commit costs ≈40–150 µs and dirties the same
 * table and index pages again and again; under load, hundreds of heartbeats and reports
 * share one. A caller's promise settles after the commit, so nothing is answered before it
 * is durable in the WAL.
 */
import Database from "better-sqlite3";
import type { DeviceFactsRow } from "./status";
import type { EventRow, NewEvent } from "../events/events";
import type { ActionReport, OfferedAction } from "../../lib/protocol";
import { decideReport, type StoredAction } from "../actions/report";
import { conflict } from "../errors";
import { FINAL_ACTION_STATES } from "../../lib/action-status";
import { DEFAULT_HEALTH_POLICY, POLICY_RANK_SQL } from "../../lib/health-policy";
import { WriteGate } from "../write-gate";
import type { IdempotencyRow } from "../idempotency/idempotency";
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

export type { HeartbeatWrite, NewActionRow, NewRequestRow, WorkFacts } from "./agent-store";

/** Prisma's SQLite DateTime text format, so raw writes compare and parse like Prisma's. */
export function sqliteDate(d: Date): string {
  return d.toISOString().replace("Z", "+00:00");
}

const date = (v: unknown): Date | null => (typeof v === "string" ? new Date(v) : null);

/** Times of an action the server first hears of (or replaces) in `state` at `at`. */
const startedAt = (state: string, at: string): string | null => (state === "RUNNING" ? at : null);
const finishedAt = (state: string, at: string): string | null => ((FINAL_ACTION_STATES as readonly string[]).includes(state) ? at : null);

interface RawDevice {
  id: string;
  name: string;
  reported: string | null;
  lastSeen: string | null;
  renderedVersion: number;
  templateVersion: string | null;
  owner: string | null;
  enrollmentId: string | null;
  decommissionRequestedAt: string | null;
  conflictPaused: number;
  summary: string;
  updatedStatus: string;
  updatingReason: string | null;
  applicationSummary: string;
  lifecycle: string;
  decommissioning: string | null;
  credentialRevokedAt: string | null;
  fleetTemplateVersion: string | null;
}

// The owner fleet's templateVersion comes along (a lookup by its unique name): UpToDate needs
// it (seed 003, deviceIsUpdatedToFleetSpec) on every derivation, heartbeats included.
const FACT_COLUMNS = `id, name, reported, lastSeen, renderedVersion, templateVersion, owner, enrollmentId,
  decommissionRequestedAt, conflictPaused, summary, updatedStatus, updatingReason, applicationSummary,
  lifecycle, decommissioning, credentialRevokedAt,
  (SELECT f."templateVersion" FROM "Fleet" f WHERE f."name" = "Device"."owner") AS fleetTemplateVersion`;

function toFacts(r: RawDevice | undefined): DeviceWithCredential | null {
  if (!r) return null;
  const { fleetTemplateVersion, ...rest } = r;
  return {
    ...rest,
    lastSeen: date(r.lastSeen),
    decommissionRequestedAt: date(r.decommissionRequestedAt),
    credentialRevokedAt: date(r.credentialRevokedAt),
    conflictPaused: r.conflictPaused === 1,
    ownerFleet: r.owner !== null && fleetTemplateVersion !== null ? { templateVersion: fleetTemplateVersion } : null,
  };
}

/** Template versions are immutable: their parsed specs can be kept (a few, most recent first). */
const SPEC_CACHE_SIZE = 64;

export class FastPath implements AgentStore {
  protected readonly db: Database.Database;
  private readonly byToken: Database.Statement<[string], RawDevice>;
  private readonly touchStmt: Database.Statement<[string, string, string, string]>;
  private readonly byId: Database.Statement<[string], RawDevice>;
  private readonly writeStmt: Database.Statement<unknown[]>;
  private readonly eventStmt: Database.Statement<unknown[], { id: number }>;
  private readonly sweepStmt: Database.Statement<unknown[]>;
  private readonly workStmt: Database.Statement<[string], Omit<WorkFacts, "decommissionRequestedAt" | "revoked"> & { decommissionRequestedAt: string | null; revoked: number }>;
  private readonly specStmt: Database.Statement<[string], { spec: string }>;
  private readonly specCache = new Map<string, Record<string, unknown>>();
  private readonly actionStmt: Database.Statement<[string], StoredAction>;
  private readonly offerStmt: Database.Statement<[string, string, number], { id: string; kind: string; args: string; createdAt: string }>;
  private readonly offeredStmt: Database.Statement<[string, string]>;
  private readonly cancelStmt: Database.Statement<[string], { id: string }>;
  private readonly activeStmt: Database.Statement<[string, string], { id: string; state: string }>;
  private readonly lostStmt: Database.Statement<[string, string, string, string]>;
  private readonly pendingCountStmt: Database.Statement<[string], { n: number }>;

  private readonly prepared = new Map<string, Database.Statement>();
  private pending: { write: () => unknown; resolve: (value: never) => void; reject: (error: unknown) => void }[] = [];

  /** Runs `write` in the next group commit; settles once that transaction has committed. */
  protected commit<T>(write: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (this.pending.length === 0) setImmediate(() => this.flush());
      this.pending.push({ write, resolve: resolve as (value: never) => void, reject });
    });
  }

  private flush(): void {
    // Never inside an open Prisma transaction (write-gate.ts): wait for it to end.
    if (this.gate.held) return this.gate.afterRelease(() => this.flush());
    const batch = this.pending;
    this.pending = [];
    if (batch.length === 0) return;
    const outcomes: ({ ok: true; value: unknown } | { ok: false; error: unknown })[] = [];
    try {
      if (!this.db.open) throw new Error("the database connection is closed");
      const savepoint = this.stmt("SAVEPOINT w");
      const release = this.stmt("RELEASE w");
      const rollbackTo = this.stmt("ROLLBACK TO w");
      this.db.transaction(() => {
        for (const op of batch) {
          if (batch.length === 1) {
            outcomes.push({ ok: true, value: op.write() });
            continue;
          }
          // Each write in its own savepoint, released or rolled back on its own.
          savepoint.run();
          try {
            outcomes.push({ ok: true, value: op.write() });
            release.run();
          } catch (error) {
            rollbackTo.run();
            release.run();
            outcomes.push({ ok: false, error });
          }
        }
      })();
    } catch (error) {
      // The commit failed (or the only write threw): nothing of the batch is written.
      for (const op of batch) op.reject(error);
      return;
    }
    batch.forEach((op, i) => {
      const o = outcomes[i]!;
      if (o.ok) op.resolve(o.value as never);
      else op.reject(o.error);
    });
  }

  /** Prepares a statement once and keeps it (preparing costs more than running a small one). */
  private stmt(sql: string): Database.Statement {
    let st = this.prepared.get(sql);
    if (!st) {
      st = this.db.prepare(sql);
      this.prepared.set(sql, st);
    }
    return st;
  }

  constructor(
    file: string,
    private readonly gate: WriteGate = new WriteGate(),
  ) {
    this.db = new Database(file);
    this.db.pragma("journal_mode = WAL");
    this.db.pragma("synchronous = NORMAL");
    this.db.pragma("busy_timeout = 5000");
    this.byToken = this.db.prepare(`SELECT ${FACT_COLUMNS} FROM "Device" WHERE "tokenHash" = ?`);
    this.touchStmt = this.db.prepare(`UPDATE "Device" SET "reported" = ?, "lastSeen" = ?, "updatedAt" = ? WHERE "id" = ?`);
    this.byId = this.db.prepare(`SELECT ${FACT_COLUMNS} FROM "Device" WHERE "id" = ?`);
    this.writeStmt = this.db.prepare(
      `UPDATE "Device" SET "reported" = ?, "lastSeen" = ?, "updatedAt" = ?, "conflictPaused" = COALESCE(?, "conflictPaused"),
        "summary" = ?, "updatedStatus" = ?, "updatingReason" = ?, "applicationSummary" = ?, "lifecycle" = ?, "decommissioning" = ?,
        "credentialRevokedAt" = COALESCE(?, "credentialRevokedAt") WHERE "id" = ?`,
    );
    this.eventStmt = this.db.prepare(
      `INSERT INTO "Event" ("time", "objectKind", "objectName", "type", "reason", "message", "actor") VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING "id"`,
    );
    this.sweepStmt = this.db.prepare(
      `UPDATE "Device" SET "summary" = ?, "updatedStatus" = ?, "updatingReason" = ?, "applicationSummary" = ?, "lifecycle" = ?,
        "decommissioning" = ?, "updatedAt" = ? WHERE "id" = ? AND "lastSeen" = ?`,
    );
    this.workStmt = this.db.prepare(
      `SELECT renderedVersion, templateVersion, renderedSpecId, spec, decommissionRequestedAt, lifecycle, summary, credentialRevokedAt IS NOT NULL AS revoked
       FROM "Device" WHERE "id" = ?`,
    );
    this.specStmt = this.db.prepare(`SELECT spec FROM "TemplateVersion" WHERE "id" = ?`);
    this.actionStmt = this.db.prepare(`SELECT id, deviceId, kind, args, origin, state, offeredAt FROM "Action" WHERE "id" = ?`);
    this.offerStmt = this.db.prepare(
      // An expired action is never offered, even in the moment before the tick cancels it.
      `SELECT id, kind, args, createdAt FROM "Action" WHERE "deviceId" = ? AND "state" = 'PENDING_SCHEDULE' AND ("expiresAt" IS NULL OR "expiresAt" > ?)
        AND ${POLICY_RANK_SQL} >= ? ORDER BY "createdAt", "id"`,
    );
    this.offeredStmt = this.db.prepare(`UPDATE "Action" SET "offeredAt" = ? WHERE "id" = ? AND "offeredAt" IS NULL`);
    this.cancelStmt = this.db.prepare(
      `SELECT id FROM "Action" WHERE "deviceId" = ? AND "state" IN ('NEW', 'RUNNING') AND "cancelRequestedAt" IS NOT NULL ORDER BY "createdAt"`,
    );
    this.activeStmt = this.db.prepare(`SELECT id, state FROM "Action" WHERE "deviceId" = ? AND "state" IN ('NEW', 'RUNNING') AND "updatedAt" < ?`);
    this.lostStmt = this.db.prepare(`UPDATE "Action" SET "state" = 'LOST', "finishedAt" = ?, "updatedAt" = ? WHERE "id" = ? AND "state" = ?`);
    this.pendingCountStmt = this.db.prepare(
      `SELECT count(*) AS n FROM "Action" WHERE "deviceId" = ? AND ("state" = 'PENDING_SCHEDULE' OR ("state" IN ('NEW', 'RUNNING') AND "cancelRequestedAt" IS NOT NULL))`,
    );
  }

  deviceByTokenHash(hash: string): DeviceWithCredential | null {
    return toFacts(this.byToken.get(hash));
  }

  /** Who a token belongs to, without the status facts (polls and action reports need no more). */
  deviceIdentityByTokenHash(hash: string): { id: string; name: string; revoked: boolean } | null {
    const r = this.stmt(`SELECT id, name, credentialRevokedAt IS NOT NULL AS revoked FROM "Device" WHERE "tokenHash" = ?`).get(hash) as
      | { id: string; name: string; revoked: number }
      | undefined;
    return r ? { id: r.id, name: r.name, revoked: r.revoked === 1 } : null;
  }

  /**
   * Re-reads the device, lets `decide` compute what to write from that fresh row, and writes
   * it with its events, in one synchronous SQLite transaction: nothing can interleave.
   */
  writeHeartbeat(id: string, decide: (fresh: DeviceFactsRow) => { data: HeartbeatWrite; events: NewEvent[] }): Promise<EventRow[]> {
    return this.commit(() => {
      const fresh = toFacts(this.byId.get(id));
      if (!fresh) return [];
      const { data, events } = decide(fresh);
      const at = sqliteDate(data.lastSeen);
      this.writeStmt.run(
        data.reported, at, at, data.conflictPaused === undefined ? null : data.conflictPaused ? 1 : 0,
        data.summary, data.updatedStatus, data.updatingReason, data.applicationSummary, data.lifecycle, data.decommissioning,
        data.credentialRevokedAt ? sqliteDate(data.credentialRevokedAt) : null, id,
      );
      return events.map((e) => {
        const message = e.message ?? "";
        const { id: eventId } = this.eventStmt.get(at, e.objectKind, e.objectName, e.type, e.reason, message, e.actor)!;
        return { id: eventId, time: data.lastSeen, objectKind: e.objectKind, objectName: e.objectName, type: e.type, reason: e.reason, message, actor: e.actor };
      });
    });
  }

  /**
   * The sweep's writes: derived columns of devices the clock disconnected, each guarded by
   * the lastSeen it was derived from (a device that reported meanwhile is skipped), with
   * their events, in one synchronous transaction.
   */
  writeSweep(items: SweepItem[], now: Date): Promise<EventRow[]> {
    return this.commit(() => {
      const at = sqliteDate(now);
      const out: EventRow[] = [];
      for (const item of items) {
        const c = item.columns;
        const { changes } = this.sweepStmt.run(c.summary, c.updatedStatus, c.updatingReason, c.applicationSummary, c.lifecycle, c.decommissioning, at, item.id, sqliteDate(item.lastSeen));
        if (changes !== 1) continue;
        for (const e of item.events) {
          const message = e.message ?? "";
          const { id: eventId } = this.eventStmt.get(at, e.objectKind, e.objectName, e.type, e.reason, message, e.actor)!;
          out.push({ id: eventId, time: now, objectKind: e.objectKind, objectName: e.objectName, type: e.type, reason: e.reason, message, actor: e.actor });
        }
      }
      return out;
    });
  }

  /** A heartbeat that changed no status: lastSeen and the report only. */
  touch(id: string, reported: string, lastSeen: Date): Promise<void> {
    const at = sqliteDate(lastSeen);
    return this.commit(() => void this.touchStmt.run(reported, at, at, id));
  }

  /**
   * The inventory's write (inventory.ts): the full static facts when sent (else kept), and
   * a usage sample appended unless the last one is at or after `notBefore` (the minute's
   * start), keeping the newest `max`. One upsert, in the heartbeat's group commit.
   */
  writeInventory(deviceId: string, system: string | null, sample: string | null, notBefore: number, max: number, now: Date): Promise<void> {
    const at = sqliteDate(now);
    return this.commit(
      () =>
        void this.stmt(
          `INSERT INTO "DeviceInventory" ("deviceId", "system", "systemAt", "samples", "updatedAt")
            VALUES (@deviceId, @system, CASE WHEN @system IS NULL THEN NULL ELSE @at END, CASE WHEN @sample IS NULL THEN '[]' ELSE json_array(json(@sample)) END, @at)
          ON CONFLICT ("deviceId") DO UPDATE SET
            "system" = COALESCE(excluded."system", "system"),
            "systemAt" = COALESCE(excluded."systemAt", "systemAt"),
            "samples" = CASE WHEN @sample IS NULL OR COALESCE(json_extract("samples", '$[#-1][0]'), 0) >= @notBefore THEN "samples"
              ELSE json_insert(CASE WHEN json_array_length("samples") >= @max THEN json_remove("samples", '$[0]') ELSE "samples" END, '$[#]', json(@sample)) END,
            "updatedAt" = excluded."updatedAt"`,
        ).run({ deviceId, system, sample, at, notBefore, max }),
    );
  }

  workFacts(id: string): WorkFacts | null {
    const r = this.workStmt.get(id);
    return r ? { ...r, decommissionRequestedAt: date(r.decommissionRequestedAt), revoked: r.revoked === 1 } : null;
  }

  /**
   * A template version's spec content, parsed once: when a fleet of 10,000 changes, every
   * member's poll answers with the same version's spec. Callers must not mutate it.
   */
  templateSpec(id: string): Record<string, unknown> | null {
    const hit = this.specCache.get(id);
    if (hit) return hit;
    const row = this.specStmt.get(id);
    if (!row) return null;
    const spec = JSON.parse(row.spec) as Record<string, unknown>;
    if (this.specCache.size >= SPEC_CACHE_SIZE) this.specCache.delete(this.specCache.keys().next().value!);
    this.specCache.set(id, spec);
    return spec;
  }

  /** Devices per value of each status axis, in one pass over the indexed columns. */
  statusCounts(): { axis: string; value: string; n: number }[] {
    return this
      .stmt(
        `SELECT 'summary' AS axis, summary AS value, count(*) AS n FROM "Device" GROUP BY summary
         UNION ALL SELECT 'updated', updatedStatus, count(*) FROM "Device" GROUP BY updatedStatus
         UNION ALL SELECT 'applicationSummary', applicationSummary, count(*) FROM "Device" GROUP BY applicationSummary
         UNION ALL SELECT 'lifecycle', lifecycle, count(*) FROM "Device" GROUP BY lifecycle`,
      )
      .all() as { axis: string; value: string; n: number }[];
  }

  /** Whether the device has actions to offer or cancels to tell: the poll's cheap first check. */
  hasActionWork(deviceId: string): boolean {
    return (this.pendingCountStmt.get(deviceId)?.n ?? 0) > 0;
  }

  /** PENDING_SCHEDULE actions its policy lets a device of `healthRank` take, oldest first, marked offered; and the ids to cancel. */
  async offerActions(deviceId: string, now: Date, healthRank: number | null): Promise<{ actions: OfferedAction[]; cancel: string[] }> {
    if (healthRank === null) return { actions: [], cancel: this.cancelStmt.all(deviceId).map((c) => c.id) };
    return this.commit(() => {
      const at = sqliteDate(now);
      const actions = this.offerStmt.all(deviceId, at, healthRank).map((a) => {
        this.offeredStmt.run(at, a.id);
        return { id: a.id, kind: a.kind, args: JSON.parse(a.args) as Record<string, unknown>, createdAt: new Date(a.createdAt).toISOString() };
      });
      return { actions, cancel: this.cancelStmt.all(deviceId).map((c) => c.id) };
    });
  }

  /** Operator-created actions with their events (one per action), in one group commit. */
  insertActions(rows: NewActionRow[], events: NewEvent[], now: Date, request?: NewRequestRow, idempotency?: IdempotencyRow): Promise<EventRow[]> {
    return this.commit(() => {
      if (idempotency) {
        const k = idempotency;
        this.stmt(`INSERT INTO "IdempotencyKey" ("scope", "key", "operation", "fingerprint", "ref", "createdAt", "expiresAt") VALUES (?, ?, ?, ?, ?, ?, ?)`).run(
          k.scope, k.key, k.operation, k.fingerprint, k.ref, sqliteDate(k.createdAt), sqliteDate(k.expiresAt),
        );
      }
      if (request) {
        const q = request;
        this.stmt(
          `INSERT INTO "ActionRequest" ("id", "kind", "args", "origin", "ref", "targetKind", "target", "createdBy", "createdAt", "requireApproval")
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        ).run(q.id, q.kind, q.args, q.origin, q.ref, q.targetKind, q.target, q.createdBy, sqliteDate(q.createdAt), q.requireApproval ? 1 : 0);
      }
      const insert = this.stmt(
        `INSERT INTO "Action" ("id", "deviceId", "kind", "args", "origin", "state", "requireApproval", "createdBy", "createdAt", "updatedAt", "expiresAt", "requestId", "rerunOf", "healthPolicy")
          VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      );
      const at = sqliteDate(now);
      for (const r of rows)
        insert.run(
          r.id, r.deviceId, r.kind, r.args, r.origin, r.state, r.requireApproval ? 1 : 0, r.createdBy, sqliteDate(r.createdAt), at,
          r.expiresAt ? sqliteDate(r.expiresAt) : null, r.requestId ?? null, r.rerunOf ?? null, r.healthPolicy ?? DEFAULT_HEALTH_POLICY,
        );
      return events.map((e) => this.insertEvent(e, now));
    });
  }

  /**
   * An action request decided as a unit (server/requests, issue 10): its PENDING_APPROVE
   * actions moved by one guarded UPDATE … RETURNING, the request's record, and one event per
   * action moved plus one on the request, in one commit (2,000 actions: milliseconds, where
   * Prisma's event insert alone took most of a second). None waiting: nothing is written.
   */
  decideRequest(d: RequestDecision, now: Date): Promise<{ moved: { id: string; deviceId: string }[]; events: EventRow[] }> {
    return this.commit(() => {
      const at = sqliteDate(now);
      const finishedAt = d.to === "CANCELLED" ? at : null;
      const moved = this.stmt(
        `UPDATE "Action" SET "state" = ?, "decision" = ?, "decidedBy" = ?, "decidedAt" = ?, "decisionReason" = ?, "finishedAt" = COALESCE(?, "finishedAt"), "updatedAt" = ?
          WHERE "requestId" = ? AND "state" = 'PENDING_APPROVE' RETURNING "id", "deviceId"`,
      ).all(d.to, d.decision, d.actor, at, d.reason, finishedAt, at, d.requestId) as { id: string; deviceId: string }[];
      if (moved.length === 0) return { moved, events: [] };
      this.stmt(`UPDATE "ActionRequest" SET "decision" = ?, "decidedBy" = ?, "decidedAt" = ?, "decisionReason" = ? WHERE "id" = ?`).run(d.decision, d.actor, at, d.reason, d.requestId);
      const events = moved.map((m) => this.insertEvent(d.actionEvent(m.id), now));
      events.push(this.insertEvent(d.requestEvent(moved.length), now));
      return { moved, events };
    });
  }

  /**
   * An agent's report on one action: decided by decideReport from the rows as they are inside
   * this write, and written with its event. A refusal worth recording (decision "refuse")
   * does not throw here: a throw would roll its savepoint back, event and all. Its event is
   * written and committed like any other, and the caller raises `refused` after the commit.
   */
  reportAction(
    device: { id: string; name: string },
    id: string,
    report: ActionReport,
    now: Date,
  ): Promise<ReportOutcome> {
    return this.commit(() => {
      const decommissioning = this.stmt(`SELECT "decommissionRequestedAt" IS NOT NULL AS d FROM "Device" WHERE "id" = ?`).get(device.id) as { d: number } | undefined;
      const decision = decideReport(this.actionStmt.get(id) ?? null, id, { ...device, decommissioning: decommissioning?.d === 1 }, report);
      const at = sqliteDate(now);
      switch (decision.kind) {
        case "refuse":
          return { events: [this.insertEvent(decision.event, now)], finished: false, refused: decision.error };
        case "noop":
          return { events: [], finished: false };
        case "output": {
          // Output so far of a running action (issue 10): one statement, no event (one a second per running action would flood the log).
          const { changes } = this.stmt(`UPDATE "Action" SET "output" = ?, "updatedAt" = ? WHERE "id" = ? AND "state" = 'RUNNING'`).run(decision.output, at, id);
          return changes === 1 ? { events: [], finished: false, output: decision.output } : { events: [], finished: false };
        }
        case "create": {
          const d = decision.data;
          // First heard of now: started now if it runs, finished now if it is over.
          this
            .stmt(
              `INSERT INTO "Action" ("id", "deviceId", "kind", "args", "origin", "state", "output", "error", "startedAt", "finishedAt", "createdAt", "updatedAt")
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
            )
            .run(d.id, d.deviceId, d.kind, d.args, d.origin, d.state, d.output ?? null, d.error ?? null, startedAt(d.state, at), finishedAt(d.state, at), at, at);
          return { events: [this.insertEvent(decision.event, now)], finished: true };
        }
        case "overwrite": {
          const o = decision.set;
          this
            .stmt(
              `UPDATE "Action" SET "kind" = ?, "args" = ?, "origin" = ?, "state" = ?, "output" = ?, "error" = ?, "startedAt" = ?, "finishedAt" = ?, "updatedAt" = ? WHERE "id" = ?`,
            )
            .run(o.kind, o.args, o.origin, o.state, o.output ?? null, o.error ?? null, startedAt(o.state, at), finishedAt(o.state, at), at, id);
          return { events: [this.insertEvent(decision.event, now)], finished: true };
        }
        case "move": {
          const m = decision.set;
          const { changes } = this
            .stmt(
              `UPDATE "Action" SET "state" = ?, "output" = COALESCE(?, "output"), "error" = COALESCE(?, "error"),
                "startedAt" = CASE WHEN ? THEN ? ELSE "startedAt" END, "finishedAt" = CASE WHEN ? THEN ? ELSE "finishedAt" END,
                "updatedAt" = ? WHERE "id" = ? AND "state" = ?`,
            )
            .run(m.state, m.output ?? null, m.error ?? null, m.started ? 1 : 0, at, m.finished ? 1 : 0, at, at, id, decision.from);
          if (changes !== 1) throw conflict(`action "${id}" changed concurrently`);
          return { events: [this.insertEvent(decision.event, now)], finished: m.finished };
        }
      }
    });
  }

  /**
   * The heartbeat's queue against ours: NEW or RUNNING actions of this device that the agent
   * no longer lists become LOST. Only actions unchanged for `graceMs` count, so a report in
   * flight alongside the heartbeat is not mistaken for a loss.
   */
  async markLost(device: { id: string; name: string }, queued: Set<string>, now: Date, graceMs: number): Promise<EventRow[]> {
    // The common heartbeat loses nothing: look first, write only when needed.
    const missing = this.activeStmt.all(device.id, sqliteDate(new Date(now.getTime() - graceMs))).filter((a) => !queued.has(a.id));
    if (missing.length === 0) return [];
    return this.commit(() => {
      const at = sqliteDate(now);
      const out: EventRow[] = [];
      for (const a of missing) {
        if (this.lostStmt.run(at, at, a.id, a.state).changes !== 1) continue;
        out.push(this.insertEvent(lostEvent(device, a), now));
      }
      return out;
    });
  }

  /** The action as recorded, for the agent's report answer. */
  actionView(id: string): AgentActionView | null {
    const r = this
      .stmt(`SELECT id, kind, args, origin, state, output, error, createdAt, updatedAt FROM "Action" WHERE "id" = ?`)
      .get(id) as { id: string; kind: string; args: string; origin: string; state: string; output: string | null; error: string | null; createdAt: string; updatedAt: string } | undefined;
    if (!r) return null;
    return { ...r, args: JSON.parse(r.args) as Record<string, unknown>, createdAt: new Date(r.createdAt).toISOString(), updatedAt: new Date(r.updatedAt).toISOString() };
  }

  private insertEvent(e: NewEvent, now: Date): EventRow {
    const message = e.message ?? "";
    const { id } = this.eventStmt.get(sqliteDate(now), e.objectKind, e.objectName, e.type, e.reason, message, e.actor)!;
    return { id, time: now, objectKind: e.objectKind, objectName: e.objectName, type: e.type, reason: e.reason, message, actor: e.actor };
  }

  close(): void {
    // Writes already accepted reach the disk before the connection goes.
    if (!this.gate.held) this.flush();
    this.db.close();
  }
}
