/**
 * The agent store's driver on embedded SQLite (sql-driver.ts): a second connection to the same
 * WAL file with prepared better-sqlite3 statements, run synchronously. Prisma's query engine costs
 * ≈1–1.5 ms a query here; these cost tens of microseconds, which is what lets one process ingest
 * thousands of heartbeats a second.
 *
 * Group commit: the writes that arrive in one turn of the event loop run in one synchronous
 * transaction, each in its own savepoint. A commit costs ≈40–150 µs and dirties the same pages
 * again and again; under load, hundreds of heartbeats and reports share one. Heartbeats that change
 * nothing (merged rows) wait up to MERGE_SPACING_MS for company when a commit ran just before. Never
 * while a Prisma interactive transaction is open (write-gate.ts): the batch waits for it to end.
 *
 * A batch runs on the event loop, so it holds for at most `FLUSH_BUDGET_MS` (and its first
 * write): what is left commits in the next turn, after the I/O that waited. Otherwise the writes
 * that piled up behind a long Prisma transaction (3,000 heartbeats behind a fleet's template
 * change) would stop every held poll's answer for a hundred milliseconds and more.
 */
import Database from "better-sqlite3";
import { WriteGate } from "../write-gate";
import { dropGone, runSync, type MergedRow, type Op, type Outcome, type Query, type Requester, type SqlDriver } from "./sql-driver";

/** Prisma's SQLite DateTime text format, so raw writes compare and parse like Prisma's. */
export function sqliteDate(d: Date): string {
  return d.toISOString().replace("Z", "+00:00");
}

/** What SQLite does without: PostgreSQL's casts, and row locks (its one writer holds the whole file). */
const forSqlite = (sql: string) => sql.replace(/::[a-z0-9]+(\[\])?/g, "").replace(/ FOR UPDATE\b/g, "");

const bindOne = (v: unknown) => (v instanceof Date ? sqliteDate(v) : typeof v === "boolean" ? (v ? 1 : 0) : v === undefined ? null : v);
const bind = (values: unknown[]) => values.map(bindOne);

/** The longest one group commit holds the event loop (its first write runs whatever it costs). */
export const FLUSH_BUDGET_MS = 4;
/** The least time between two group commits of merged rows alone (`schedule`). */
export const MERGE_SPACING_MS = 10;

interface Unit {
  run(): unknown;
  requester?: Requester;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

export class SqliteDriver implements SqlDriver {
  readonly db: Database.Database;
  private readonly prepared = new Map<string, Database.Statement>();
  private pending: Unit[] = [];
  private merged: MergedRow[] = [];
  /** The flush to come: in this turn ("now"), after the merge spacing ("later"), once the gate opens ("gate"), or none scheduled. */
  private armed: "now" | "later" | "gate" | null = null;
  private timer: NodeJS.Timeout | undefined;
  private lastFlush = -Infinity;

  constructor(
    file: string,
    private readonly gate: WriteGate = new WriteGate(),
    /** How long one group commit may hold the event loop (tests counting transactions pass Infinity). */
    private readonly budgetMs = FLUSH_BUDGET_MS,
    /** The least time between two group commits of merged rows alone. */
    private readonly spacingMs = MERGE_SPACING_MS,
  ) {
    this.db = new Database(file);
    this.db.pragma("journal_mode = WAL");
    this.db.pragma("synchronous = NORMAL");
    this.db.pragma("busy_timeout = 5000");
  }

  read<T>(op: Op<T>): T {
    return runSync(op, this.exec);
  }

  write<T>(op: Op<T>, requester?: Requester): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.schedule();
      this.pending.push({ run: () => runSync(op, this.exec), requester, resolve: resolve as (value: unknown) => void, reject });
    });
  }

  get queued(): number {
    return this.pending.length + this.merged.length;
  }

  merge(sql: string, key: string, row: unknown[], requester?: Requester): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.schedule(false);
      this.merged.push({ sql, key, row, requester, resolve, reject });
    });
  }

  /** Prepares a statement once and keeps it, by its text (preparing costs more than running a small one). */
  private stmt(sql: string): Database.Statement {
    let st = this.prepared.get(sql);
    if (!st) {
      st = this.db.prepare(forSqlite(sql));
      this.prepared.set(sql, st);
    }
    return st;
  }

  private readonly exec = (q: Query): unknown => {
    const st = this.stmt(q.sql);
    if (q.kind === "run") return st.run(...bind(q.values)).changes;
    if (q.kind === "each") return q.keys.map((k) => st.all(...bind(k)));
    if (q.kind !== "many") return st.all(...bind(q.values));
    const out: unknown[] = [];
    for (const row of q.rows) {
      if (st.reader) out.push(...st.all(...bind(row)));
      else st.run(...bind(row));
    }
    return out;
  };

  /**
   * A flush in this turn's check phase; for merged rows alone (the heartbeats that change
   * nothing), no sooner than `spacingMs` (MERGE_SPACING_MS) after the last one. At rest with 10,000 agents a
   * heartbeat arrives every 3 ms, and each was a commit of its own: 120 µs of COMMIT beside
   * its 60 µs UPDATE. Spaced, a commit takes several, and an agent waits a few ms more for
   * its answer. A lone heartbeat (nothing flushed lately) is written at once.
   */
  private schedule(urgent = true): void {
    if (this.armed === "now" || this.armed === "gate") return;
    if (urgent) {
      if (this.timer) clearTimeout(this.timer);
      this.timer = undefined;
      this.armed = "now";
      setImmediate(this.fire);
      return;
    }
    if (this.armed === "later") return;
    const wait = this.lastFlush + this.spacingMs - performance.now();
    if (wait <= 0) return this.schedule(true);
    this.armed = "later";
    this.timer = setTimeout(this.fire, wait);
  }

  private readonly fire = (): void => {
    this.armed = null;
    this.timer = undefined;
    this.flush();
  };

  /** The merged rows of a batch: the last per key, each statement's in order of arrival. */
  private runMerged(merged: MergedRow[]): void {
    const by = new Map<string, Map<string, unknown[]>>();
    for (const m of merged) {
      let rows = by.get(m.sql);
      if (!rows) by.set(m.sql, (rows = new Map()));
      rows.delete(m.key);
      rows.set(m.key, m.row);
    }
    for (const [sql, rows] of by) this.exec({ kind: "many", sql, rows: [...rows.values()] });
  }

  private flush(budgetMs = this.budgetMs): void {
    // Never inside an open Prisma transaction (write-gate.ts): wait for it to end.
    if (this.gate.held) {
      this.armed = "gate";
      return this.gate.afterRelease(this.fire);
    }
    // Writes whose client went away while they waited (a Prisma transaction open): dropped unwritten.
    const units = dropGone(this.pending);
    const merged = dropGone(this.merged);
    this.pending = [];
    this.merged = [];
    if (merged.length) {
      units.unshift({ run: () => this.runMerged(merged), resolve: () => merged.forEach((m) => m.resolve()), reject: (e) => merged.forEach((m) => m.reject(e)) });
    }
    if (units.length === 0) return;
    this.lastFlush = performance.now();
    const outcomes: Outcome<unknown>[] = [];
    const deadline = performance.now() + budgetMs;
    try {
      if (!this.db.open) throw new Error("the database connection is closed");
      const savepoint = this.stmt("SAVEPOINT w");
      const release = this.stmt("RELEASE w");
      const rollbackTo = this.stmt("ROLLBACK TO w");
      this.db.transaction(() => {
        for (const unit of units) {
          if (outcomes.length > 0 && performance.now() > deadline) break;
          if (units.length === 1) {
            outcomes.push({ ok: true, value: unit.run() });
            continue;
          }
          // Each write in its own savepoint, released or rolled back on its own.
          savepoint.run();
          try {
            outcomes.push({ ok: true, value: unit.run() });
            release.run();
          } catch (error) {
            rollbackTo.run();
            release.run();
            outcomes.push({ ok: false, error });
          }
        }
      })();
    } catch (error) {
      // The commit failed (or the only write threw): nothing of what ran is written. What the
      // budget left for later is tried in the next turn, unless the connection is gone.
      const ran = this.db.open ? outcomes.length + 1 : units.length;
      for (const unit of units.slice(0, ran)) unit.reject(error);
      this.requeue(units.slice(ran));
      return;
    }
    this.requeue(units.slice(outcomes.length));
    outcomes.forEach((o, i) => {
      const unit = units[i]!;
      if (o.ok) unit.resolve(o.value);
      else unit.reject(o.error);
    });
  }

  /** Writes a batch's budget left: first in the next one, before any that arrived since. */
  private requeue(rest: Unit[]): void {
    if (rest.length === 0) return;
    this.schedule();
    this.pending.unshift(...rest);
  }

  close(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    // Writes already accepted reach the disk before the connection goes, all of them now.
    if (!this.gate.held) while (this.pending.length > 0 || this.merged.length > 0) this.flush(Infinity);
    this.db.close();
  }
}
