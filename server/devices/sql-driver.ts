/**
 * What the agent store (agent-store-sql.ts) asks of a database: a small driver, one for SQLite
 * (sqlite-driver.ts, better-sqlite3, synchronous) and one for PostgreSQL (pg-driver.ts, `pg`).
 *
 * An operation is written once, as a generator that yields the statements it needs and gets
 * their results back (`const rows = yield* all<Row>(sql, [id])`). The driver runs it: SQLite's
 * synchronously, statement after statement, so a read answers at once and a group commit is one
 * synchronous transaction (no other code, Prisma's included, runs while it is open); PostgreSQL's
 * awaits each statement. The same body, the same statements, the same decisions: what differs
 * is only how a statement runs.
 *
 * Statements are written once with `?` placeholders; PostgreSQL's `::type` casts are written
 * where it needs them (the SQLite driver drops them, and `FOR UPDATE`: its one writer holds the
 * whole file). Dates and booleans are bound as `Date` and `boolean`; each driver converts them.
 * Two kinds of statement let PostgreSQL save round trips where SQLite needs none; both are
 * written as the statement for one key or one row, and PostgreSQL's driver turns it into one
 * over arrays (unnest), where SQLite runs it once a key or row (microseconds each):
 *  - `keyed`: a read for one key (a token, a device). Outside a write, the keyed reads of one
 *    turn of the event loop are one statement (a lateral join over the keys).
 *  - `many`: `INSERT … VALUES (?, …)` or `UPDATE … SET … WHERE …` (no subquery) for many rows.
 *    Its values travel as text arrays: a `?` of another type says so with its cast (`?::timestamp`).
 */
import type { MaybePromise } from "./agent-store";

/** Who asked for a write (issue 22 item 4): its connection, destroyed once the client went away. */
export interface Requester {
  readonly destroyed: boolean;
}

/** A write dropped before its group commit: the client that asked for it had gone. */
export class ClientGone extends Error {
  constructor() {
    super("the client went away before its write's turn");
    this.name = "ClientGone";
  }
}

/** The entries whose client is still there, in order; the others rejected with ClientGone (no database write). */
export function dropGone<E extends { requester?: Requester; reject(error: unknown): void }>(entries: E[]): E[] {
  if (!entries.some((e) => e.requester?.destroyed)) return entries;
  return entries.filter((e) => {
    if (!e.requester?.destroyed) return true;
    e.reject(new ClientGone());
    return false;
  });
}

export type Query =
  | { kind: "all" | "run" | "keyed"; sql: string; values: unknown[] }
  | { kind: "many"; sql: string; rows: unknown[][] }
  | { kind: "each"; sql: string; keys: unknown[][] };

/** An operation: yields statements, gets their results, returns its answer. */
export type Op<T> = Generator<Query, T, unknown>;

/** The rows a statement answers with. */
export function* all<R>(sql: string, values: unknown[]): Op<R[]> {
  return (yield { kind: "all", sql, values }) as R[];
}

/** The number of rows a statement changed. */
export function* run(sql: string, values: unknown[]): Op<number> {
  return (yield { kind: "run", sql, values }) as number;
}

/** The rows of a read for one key (batched with others of its turn on PostgreSQL, outside writes). */
export function* keyed<R>(sql: string, key: unknown[]): Op<R[]> {
  return (yield { kind: "keyed", sql, values: key }) as R[];
}

/** A one-row INSERT or UPDATE for many rows; what it returns (RETURNING), all rows'. */
export function* many<R>(sql: string, rows: unknown[][]): Op<R[]> {
  if (rows.length === 0) return [];
  return (yield { kind: "many", sql, rows }) as R[];
}

/**
 * A read for each of several keys, written as the statement for one key (`FOR UPDATE` allowed):
 * the rows of each key, in the keys' order. One statement on PostgreSQL (a lateral join over
 * the keys as text arrays, so a `?` of another type says so with its cast, as in `many`).
 */
export function* each<R>(sql: string, keys: unknown[][]): Op<R[][]> {
  if (keys.length === 0) return [];
  return (yield { kind: "each", sql, keys }) as R[][];
}

/** Runs an operation whose statements answer synchronously. */
export function runSync<T>(op: Op<T>, exec: (q: Query) => unknown): T {
  let step = op.next();
  while (!step.done) step = op.next(exec(step.value));
  return step.value;
}

/** Runs an operation whose statements answer with promises. */
export async function runAsync<T>(op: Op<T>, exec: (q: Query) => Promise<unknown>): Promise<T> {
  let step = op.next();
  while (!step.done) step = op.next(await exec(step.value));
  return step.value;
}

export interface SqlDriver {
  /** Runs a read outside any transaction: synchronously on SQLite. */
  read<T>(op: Op<T>): MaybePromise<T>;
  /**
   * Runs a write in the next group commit: the writes of one turn of the event loop share one
   * transaction, each in its own savepoint (one that throws rolls back and rejects alone); the
   * promise settles after the commit.
   */
  write<T>(op: Op<T>, requester?: Requester): Promise<T>;
  /**
   * A row of a `many` statement, written in the next group commit with the
   * other rows of that statement (the last row per `key` winning): one statement for all of them
   * on PostgreSQL, in a savepoint of their own (they fail or succeed together).
   * A write or row whose `requester` is destroyed when its group commit starts is dropped
   * unwritten (rejected with ClientGone): a heartbeat whose agent gave up costs no write.
   */
  merge(sql: string, key: string, row: unknown[], requester?: Requester): Promise<void>;
  /** Writes and merged rows waiting for their group commit (the batch in flight not counted). */
  readonly queued: number;
  /** Writes what it accepted, then lets the connection(s) go. */
  close(): MaybePromise<void>;
}

export type Outcome<T> = { ok: true; value: T } | { ok: false; error: unknown };

/**
 * One kind of write for many callers at once (issue 22): the items that arrive before their
 * write's turn in a group commit are done by one operation over all of them, so that a hundred
 * reports are a few statements on PostgreSQL, not a few each. The operation is taken when the
 * driver runs it: while a batch is in flight the next one grows. It answers each item's outcome
 * (what an item alone would have thrown is its failure; nothing of that item may be written);
 * one that throws (a deadlock, a broken connection) has written nothing, and its items are done
 * again each alone, so one bad item never fails the others.
 */
export class Batched<I, R> {
  private queue: { item: I; requester?: Requester; resolve(value: R): void; reject(error: unknown): void }[] = [];

  constructor(
    private readonly driver: SqlDriver,
    private readonly op: (items: I[]) => Op<Outcome<R>[]>,
  ) {}

  /** Items waiting beyond the first: the first is counted by the driver, as the one write their batch will be. */
  get waitingBeyondFirst(): number {
    return Math.max(0, this.queue.length - 1);
  }

  /** `requester`: as for a write, an item whose client went away before its batch ran is dropped unwritten (ClientGone). */
  add(item: I, requester?: Requester): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ item, requester, resolve, reject });
      if (this.queue.length === 1) this.submit();
    });
  }

  /** The queue as it is now, emptied: the items of the batch about to run. */
  private take() {
    const taken = this.queue;
    this.queue = [];
    return taken;
  }

  private *whole(onTaken: (taken: typeof this.queue) => void): Op<Outcome<R>[]> {
    const taken = dropGone(this.take());
    onTaken(taken);
    return yield* this.op(taken.map((t) => t.item));
  }

  private submit(): void {
    let taken: typeof this.queue | null = null;
    this.driver.write(this.whole((t) => (taken = t))).then(
      (outcomes) => taken!.forEach((t, i) => settle(t, outcomes[i]!)),
      (error: unknown) => {
        // Refused before it ran (the driver closed): the whole queue is this batch.
        taken ??= this.take();
        if (taken.length === 1) return taken[0]!.reject(error);
        for (const t of taken) this.driver.write(this.op([t.item])).then((o) => settle(t, o[0]!), t.reject);
      },
    );
  }
}

function settle<R>(t: { resolve(value: R): void; reject(error: unknown): void }, o: Outcome<R>): void {
  if (o.ok) t.resolve(o.value);
  else t.reject(o.error);
}

/** A one-row statement waiting to be merged with the batch's others of the same text (`merge`): the last row per key wins. */
export interface MergedRow {
  sql: string;
  key: string;
  row: unknown[];
  requester?: Requester;
  resolve(): void;
  reject(error: unknown): void;
}
