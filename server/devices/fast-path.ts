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

export class FastPath {
  private readonly db: Database.Database;
  private readonly byToken: Database.Statement<[string], RawDevice>;
  private readonly touchStmt: Database.Statement<[string, string, string, string]>;
  private readonly workStmt: Database.Statement<[string], { renderedVersion: number; spec: string | null; decommissionRequestedAt: string | null; lifecycle: string }>;

  constructor(file: string) {
    this.db = new Database(file);
    this.db.pragma("journal_mode = WAL");
    this.db.pragma("synchronous = NORMAL");
    this.db.pragma("busy_timeout = 5000");
    this.byToken = this.db.prepare(`SELECT ${FACT_COLUMNS} FROM "Device" WHERE "tokenHash" = ?`);
    this.touchStmt = this.db.prepare(`UPDATE "Device" SET "reported" = ?, "lastSeen" = ?, "updatedAt" = ? WHERE "id" = ?`);
    this.workStmt = this.db.prepare(`SELECT renderedVersion, spec, decommissionRequestedAt, lifecycle FROM "Device" WHERE "id" = ?`);
  }

  deviceByTokenHash(hash: string): (DeviceFactsRow & { credentialRevokedAt: Date | null }) | null {
    const r = this.byToken.get(hash);
    if (!r) return null;
    return {
      ...r,
      lastSeen: date(r.lastSeen),
      decommissionRequestedAt: date(r.decommissionRequestedAt),
      credentialRevokedAt: date(r.credentialRevokedAt),
      conflictPaused: r.conflictPaused === 1,
    };
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
