/**
 * The agent hot path on embedded SQLite: the device lookup by token, the heartbeat write
 * that changes nothing but lastSeen and the report, and the work check of a long-poll, as
 * prepared better-sqlite3 statements on a second connection to the same WAL database.
 * Prisma's query engine costs ≈1–1.5 ms a query here; these cost tens of microseconds, which
 * is what lets one process ingest thousands of heartbeats a second. Anything that changes a
 * status still goes through Prisma in a transaction with its events. On PostgreSQL there is
 * no fast path: callers fall back to Prisma.
 */
import Database from "better-sqlite3";
import type { DeviceFactsRow } from "./status";
import type { EventRow, NewEvent } from "../events/events";

/** What a heartbeat writes: the report, lastSeen and every derived column. */
export interface HeartbeatWrite {
  reported: string;
  lastSeen: Date;
  conflictPaused?: boolean;
  summary: string;
  updatedStatus: string;
  updatingReason: string | null;
  applicationSummary: string;
  lifecycle: string;
  decommissioning: string | null;
  credentialRevokedAt?: Date;
}

/** Prisma's SQLite DateTime text format, so raw writes compare and parse like Prisma's. */
export function sqliteDate(d: Date): string {
  return d.toISOString().replace("Z", "+00:00");
}

const date = (v: unknown): Date | null => (typeof v === "string" ? new Date(v) : null);

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
}

const FACT_COLUMNS = `id, name, reported, lastSeen, renderedVersion, templateVersion, owner, enrollmentId,
  decommissionRequestedAt, conflictPaused, summary, updatedStatus, updatingReason, applicationSummary,
  lifecycle, decommissioning, credentialRevokedAt`;

function toFacts(r: RawDevice | undefined): (DeviceFactsRow & { credentialRevokedAt: Date | null }) | null {
  if (!r) return null;
  return {
    ...r,
    lastSeen: date(r.lastSeen),
    decommissionRequestedAt: date(r.decommissionRequestedAt),
    credentialRevokedAt: date(r.credentialRevokedAt),
    conflictPaused: r.conflictPaused === 1,
  };
}

export class FastPath {
  private readonly db: Database.Database;
  private readonly byToken: Database.Statement<[string], RawDevice>;
  private readonly touchStmt: Database.Statement<[string, string, string, string]>;
  private readonly byId: Database.Statement<[string], RawDevice>;
  private readonly writeStmt: Database.Statement<unknown[]>;
  private readonly eventStmt: Database.Statement<unknown[], { id: number }>;
  private readonly sweepStmt: Database.Statement<unknown[]>;
  private readonly workStmt: Database.Statement<[string], { renderedVersion: number; spec: string | null; decommissionRequestedAt: string | null; lifecycle: string }>;

  constructor(file: string) {
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
    this.workStmt = this.db.prepare(`SELECT renderedVersion, spec, decommissionRequestedAt, lifecycle FROM "Device" WHERE "id" = ?`);
  }

  deviceByTokenHash(hash: string): (DeviceFactsRow & { credentialRevokedAt: Date | null }) | null {
    return toFacts(this.byToken.get(hash));
  }

  /**
   * Re-reads the device, lets `decide` compute what to write from that fresh row, and writes
   * it with its events, in one synchronous SQLite transaction: nothing can interleave.
   */
  writeHeartbeat(id: string, decide: (fresh: DeviceFactsRow) => { data: HeartbeatWrite; events: NewEvent[] }): EventRow[] {
    return this.db.transaction(() => {
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
    })();
  }

  /**
   * The sweep's writes: derived columns of devices the clock disconnected, each guarded by
   * the lastSeen it was derived from (a device that reported meanwhile is skipped), with
   * their events, in one synchronous transaction.
   */
  writeSweep(items: { id: string; lastSeen: Date; columns: Omit<HeartbeatWrite, "reported" | "lastSeen" | "conflictPaused" | "credentialRevokedAt">; events: NewEvent[] }[], now: Date): EventRow[] {
    return this.db.transaction(() => {
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
    })();
  }

  /** A heartbeat that changed no status: lastSeen and the report only. */
  touch(id: string, reported: string, lastSeen: Date): void {
    const at = sqliteDate(lastSeen);
    this.touchStmt.run(reported, at, at, id);
  }

  workFacts(id: string) {
    const r = this.workStmt.get(id);
    return r ? { ...r, decommissionRequestedAt: date(r.decommissionRequestedAt) } : null;
  }

  close(): void {
    this.db.close();
  }
}
