/**
 * The agent store's driver on PostgreSQL (sql-driver.ts, issue 11): named prepared statements
 * (named by their text) through a `pg` pool of its own.
 *
 * Reads go to any pooled connection. Writes are group commits, as on SQLite: the writes that
 * arrive in one turn of the event loop share one transaction on one connection, each in its
 * own savepoint, and callers are answered after COMMIT. One batch is in flight at a time; what
 * arrives meanwhile is the next batch, so under load a batch grows instead of the commits
 * multiplying. Round trips are what cost here (a statement is ≈ 0.1 ms of network and parsing
 * where SQLite's is microseconds), so:
 *  - the keyed reads of one turn (token lookups, the poll's facts, the LOST check) are one
 *    statement over arrays (`ReadBatch`): 128 concurrent heartbeats are one round trip;
 *  - a `many` statement is one statement over arrays (unnest), whatever its rows;
 *  - the merged rows of a batch (the heartbeats that change nothing) are one such statement, and
 *    a batch that is that one statement alone runs without BEGIN/COMMIT (it is atomic);
 *  - savepoint bookkeeping rides in the same round trip as the next one (`RELEASE w; SAVEPOINT w`).
 *
 * Times: the columns are `timestamp(3)` without time zone holding UTC (as Prisma writes them).
 * Parameters go as ISO text (PostgreSQL ignores the zone for that type) and values come back
 * through a parser that reads them as UTC, whatever the process's TZ.
 */
import pg from "pg";
import { dropGone, runAsync, type MergedRow, type Op, type Outcome, type Query, type Requester, type SqlDriver } from "./sql-driver";

const TIMESTAMP_OID = 1114;
/** `timestamp` values are UTC wall times: read them so, not in the process's zone. */
const utcTypes: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: string) =>
    oid === TIMESTAMP_OID ? (text: string) => new Date(`${text.replace(" ", "T")}Z`) : pg.types.getTypeParser(oid, format as "text")) as pg.CustomTypesConfig["getTypeParser"],
};

/** Deadlock detected, serialization failure: the statement may simply run again. */
const retryable = (error: unknown) => typeof error === "object" && error !== null && ["40P01", "40001"].includes((error as { code?: string }).code ?? "");

const bindOne = (v: unknown) => (v instanceof Date ? v.toISOString() : v === undefined ? null : v);
/** An element of a text array. */
const text = (v: unknown) => (v === null || v === undefined ? null : v instanceof Date ? v.toISOString() : String(v));

/** `unnest($1::text[], …) WITH ORDINALITY AS v(k1, …, i)`: the arrays of `types` as rows. */
const unnest = (types: string[]) =>
  `unnest(${types.map((t, k) => `$${k + 1}::${t}[]`).join(", ")}) WITH ORDINALITY AS v(${types.map((_, k) => `k${k + 1}`).join(", ")}, "i")`;

/**
 * A one-row `INSERT … VALUES (…) [ON CONFLICT …]` or `UPDATE … SET … WHERE …` as the same statement
 * over text arrays, one element a row: each `?` becomes its column of the unnest (`v.kN`). (An
 * upsert's rows must have distinct keys: PostgreSQL refuses to update one row twice in a statement.)
 */
export function overRows(sql: string): string {
  let n = 0;
  const body = sql.replace(/\?/g, () => `v.k${++n}`);
  const from = unnest(Array.from({ length: n }, () => "text"));
  const insert = /^(\s*INSERT INTO [\s\S]*?)\bVALUES\s*\(([\s\S]*?)\)(\s*ON CONFLICT [\s\S]*?)?(\s*RETURNING [\s\S]*)?$/.exec(body);
  if (insert) return `${insert[1]}SELECT ${insert[2]} FROM ${from} ORDER BY v."i"${insert[3] ?? ""}${insert[4] ?? ""}`;
  const update = /^(\s*UPDATE [\s\S]*?)\sWHERE\s([\s\S]*)$/.exec(body);
  if (update && !/\bSELECT\b/.test(body)) return `${update[1]} FROM ${from} WHERE ${update[2]}`;
  throw new Error(`not a one-row INSERT … VALUES or UPDATE … WHERE: ${sql}`);
}

/** A statement for one key as one over the keys' text arrays: its rows, each with its key's 1-based position ("i"). */
function forEachKey(sql: string): string {
  let n = 0;
  const body = sql.replace(/\?/g, () => `v.k${++n}`);
  return `SELECT v."i"::int AS "i", r.* FROM ${unnest(Array.from({ length: n }, () => "text"))} CROSS JOIN LATERAL (${body}) r`;
}

/** Rows as text arrays, one a column. */
const columns = (rows: unknown[][]) => rows[0]!.map((_, c) => rows.map((r) => text(r[c])));

/** The rows of a statement over keys, split by their key's position ("i", 1-based). */
function byKey(keys: number, rows: { i: number }[]): unknown[][] {
  const by: unknown[][] = Array.from({ length: keys }, () => []);
  for (const r of rows) {
    const { i, ...row } = r;
    by[i - 1]!.push(row);
  }
  return by;
}

/** A named statement: prepared once per connection by `pg`, then only bound and run. */
interface Stmt {
  name: string;
  text: string;
}

/**
 * The keyed reads of one turn of the event loop, as one statement over arrays. Each call gets
 * the rows of its own key (its 1-based position, "i").
 */
class ReadBatch {
  private queue: { key: unknown[]; resolve: (rows: unknown[]) => void; reject: (error: unknown) => void }[] = [];
  constructor(private readonly run: (keys: unknown[][]) => Promise<unknown[][]>) {}

  load(key: unknown[]): Promise<unknown[]> {
    return new Promise((resolve, reject) => {
      if (this.queue.length === 0) setImmediate(() => this.flush());
      this.queue.push({ key, resolve, reject });
    });
  }

  private flush(): void {
    const queue = this.queue;
    this.queue = [];
    this.run(queue.map((q) => q.key)).then(
      (by) => queue.forEach((q, n) => q.resolve(by[n]!)),
      (error: unknown) => queue.forEach((q) => q.reject(error)),
    );
  }
}

interface Unit {
  run(q: (query: Query) => Promise<unknown>): Promise<unknown>;
  requester?: Requester;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

export interface PgDriverOptions {
  /** Connections of this pool (beside Prisma's own). */
  max?: number;
  /** Called when an idle connection fails (the pool replaces it). */
  onError?: (error: Error) => void;
}

export class PgDriver implements SqlDriver {
  readonly pool: pg.Pool;
  private readonly statements = new Map<string, Stmt>();
  private readonly batches = new Map<string, ReadBatch>();
  private pending: Unit[] = [];
  private merged: MergedRow[] = [];
  private scheduled = false;
  private flushing: Promise<void> | null = null;
  private closed = false;

  constructor(connectionString: string, options: PgDriverOptions = {}) {
    // Few connections do: one batch of writes is in flight at a time, and reads are batched too.
    this.pool = new pg.Pool({ connectionString, max: options.max ?? 4, types: utcTypes });
    // An idle connection that dies (a restart, a terminated backend) must not crash the server.
    this.pool.on("error", (error) => options.onError?.(error));
  }

  /** The named statement of a text (`kind` "many", "each": its form over arrays); `?` → `$1, $2, …` (no `?` inside literals here). */
  private stmt(sql: string, kind: "one" | "many" | "each" = "one"): Stmt {
    const id = kind === "one" ? sql : `${kind}:${sql}`;
    let s = this.statements.get(id);
    if (!s) {
      let n = 0;
      const text = kind === "many" ? overRows(sql) : kind === "each" ? forEachKey(sql) : sql.replace(/\?/g, () => `$${++n}`);
      s = { name: `drover_${this.statements.size}`, text };
      this.statements.set(id, s);
    }
    return s;
  }

  private async exec(on: pg.Pool | pg.PoolClient, q: Query): Promise<unknown> {
    if (q.kind === "each") {
      const s = this.stmt(q.sql, "each");
      const rows = (await on.query<{ i: number }>({ name: s.name, text: s.text, values: columns(q.keys) })).rows;
      return byKey(q.keys.length, rows);
    }
    const s = this.stmt(q.sql, q.kind === "many" ? "many" : "one");
    const values = q.kind === "many" ? columns(q.rows) : q.values.map(bindOne);
    const result = await on.query({ name: s.name, text: s.text, values });
    return q.kind === "run" ? (result.rowCount ?? 0) : result.rows;
  }

  /** A keyed read, with the others of its turn: the statement over every key's arrays (`each`), split by key. */
  private load(sql: string, key: unknown[]): Promise<unknown[]> {
    let batch = this.batches.get(sql);
    if (!batch) {
      batch = new ReadBatch((keys) => this.exec(this.pool, { kind: "each", sql, keys }) as Promise<unknown[][]>);
      this.batches.set(sql, batch);
    }
    return batch.load(key);
  }

  read<T>(op: Op<T>): Promise<T> {
    return runAsync(op, (q) => (q.kind === "keyed" ? this.load(q.sql, q.values) : this.exec(this.pool, q)));
  }

  write<T>(op: Op<T>, requester?: Requester): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (this.closed) return reject(new Error("the database connection is closed"));
      this.pending.push({ run: (q) => runAsync(op, q), requester, resolve: resolve as (value: unknown) => void, reject });
      this.schedule();
    });
  }

  get queued(): number {
    return this.pending.length + this.merged.length;
  }

  merge(sql: string, key: string, row: unknown[], requester?: Requester): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (this.closed) return reject(new Error("the database connection is closed"));
      this.merged.push({ sql, key, row, requester, resolve, reject });
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
        if (this.pending.length || this.merged.length) this.schedule();
      });
    });
  }

  private async flush(): Promise<void> {
    // Writes whose client went away while they queued behind the batch before: dropped unwritten.
    const batch = dropGone(this.pending);
    const merged = dropGone(this.merged);
    this.pending = [];
    this.merged = [];
    if (batch.length === 0 && merged.length === 0) return;
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (error) {
      for (const op of batch) op.reject(error);
      for (const m of merged) m.reject(error);
      return;
    }
    let broken: Error | undefined;
    // A checked-out client has no listener of the pool's: a connection cut mid-batch (PostgreSQL
    // stopped, issue 22) would be an uncaught 'error' and end the process. Its queries reject
    // with it; the client is then dropped, not reused.
    const onError = (error: Error) => void (broken ??= error);
    client.on("error", onError);
    const q = (query: Query) => this.exec(client, query);
    // The merged rows: the last per key, one statement per text. Many rows in one statement can
    // deadlock with an operator's transaction locking devices in another order (PostgreSQL then
    // aborts one of the two): they try once more.
    const by = new Map<string, Map<string, unknown[]>>();
    for (const m of merged) {
      let rows = by.get(m.sql);
      if (!rows) by.set(m.sql, (rows = new Map()));
      rows.delete(m.key);
      rows.set(m.key, m.row);
    }
    const writeMerged = async (undo?: string) => {
      const once = async () => {
        for (const [sql, rows] of by) await q({ kind: "many", sql, rows: [...rows.values()] });
      };
      try {
        await once();
      } catch (error) {
        if (!retryable(error)) throw error;
        if (undo) await client.query(undo);
        await once();
      }
    };
    try {
      if (batch.length === 0 && by.size === 1) {
        // Only merged rows of one statement: atomic alone, no transaction.
        await writeMerged();
        for (const m of merged) m.resolve();
        return;
      }
      const outcomes: Outcome<unknown>[] = [];
      const alone = batch.length === 1 && merged.length === 0;
      await client.query(alone ? "BEGIN" : "BEGIN; SAVEPOINT w");
      // The merged rows first, in their own savepoint (they fail or succeed together).
      let next = "SAVEPOINT w";
      if (merged.length) {
        try {
          await writeMerged("ROLLBACK TO w");
          next = "RELEASE w; SAVEPOINT w";
        } catch (error) {
          await client.query("ROLLBACK TO w; RELEASE w");
          for (const m of merged) m.reject(error);
          merged.length = 0;
        }
      } else if (!alone) {
        next = "";
      }
      for (const op of batch) {
        if (alone) {
          outcomes.push({ ok: true, value: await op.run(q) });
          continue;
        }
        // Each write in its own savepoint, released or rolled back on its own; the bookkeeping
        // goes in the same round trip as the next savepoint.
        if (next) await client.query(next);
        try {
          outcomes.push({ ok: true, value: await op.run(q) });
          next = "RELEASE w; SAVEPOINT w";
        } catch (error) {
          await client.query("ROLLBACK TO w; RELEASE w");
          next = "SAVEPOINT w";
          outcomes.push({ ok: false, error });
        }
      }
      await client.query("COMMIT");
      for (const m of merged) m.resolve();
      batch.forEach((op, i) => {
        const o = outcomes[i]!;
        if (o.ok) op.resolve(o.value);
        else op.reject(o.error);
      });
    } catch (error) {
      // The commit failed (or the only write threw): nothing of the batch is written.
      // A connection that cannot even roll back is dropped from the pool, not reused.
      await client.query("ROLLBACK").catch((e: unknown) => {
        broken = e instanceof Error ? e : new Error(String(e));
      });
      for (const op of batch) op.reject(error);
      for (const m of merged) m.reject(error);
    } finally {
      client.off("error", onError);
      client.release(broken);
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    // Writes already accepted are committed before the pool goes.
    while (this.flushing || this.scheduled || this.pending.length || this.merged.length) {
      if (this.flushing) await this.flushing;
      else await new Promise((resolve) => setImmediate(resolve));
    }
    await this.pool.end();
  }
}
