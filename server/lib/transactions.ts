/**
 * Every interactive transaction of the server runs through `transaction()` (issue 22): it locks
 * exactly the objects the transaction reads and decides for, and runs the whole transaction
 * again when PostgreSQL aborted it to break a deadlock or a serialization failure.
 *
 * **No cluster-wide lock.** A transaction names its objects (`locks`: the plan, workflow or
 * fleet it decides for; `sharedLocks`: what it only must not see change under it, e.g. the set
 * of fleet selectors a label change matches against). On PostgreSQL each name is a
 * transaction-level advisory lock (`pg_advisory_xact_lock(namespace, hashtext(name))`), taken
 * in name order before the transaction's first read, so two servers deciding for one plan take
 * turns, and two operators on two plans never wait for each other. Within one server the same
 * names are queued first in memory, so a transaction waiting for a busy plan holds no pool
 * connection while it waits (a burst of a plan's ended actions would otherwise fill the pool
 * and fail Prisma's maxWait), and at most `poolSize - 2` transactions hold connections at once,
 * the rest waiting here, two connections always left to reads.
 *
 * Invariants spanning rows take one of three means, each said where it is used: a lock named
 * for the invariant itself (the enrollment inbox's limits, the workflows' references, the
 * fleets' selectors); a row lock taken in the transaction (`lockRows`, e.g. the devices a plan
 * signals, so two plans never signal one device and a decommission never lands between a
 * pass's read and its write); or an advisory lock taken once the transaction knows what it
 * touches (`lockInTx`, e.g. the fleets a device joins). Not SERIALIZABLE: Prisma 6.19's
 * PostgreSQL adapter never gives back the connection of a transaction whose COMMIT fails
 * (SSI's 40001 comes at commit), so each such failure leaked one of the pool's connections
 * (seen: the server's close then waited for ever).
 *
 * **Retried whole.** A transaction returns its effects (events to publish, devices to wake,
 * tallies) rather than pushing them outside, so running `fn` again is safe: 40001, 40P01
 * (Prisma's P2034) and `Contended` (a transaction that found, after its lock, that what it read
 * has moved) run it again, up to `TRIES` times.
 *
 * On SQLite, Prisma's interactive transactions run one at a time on its one connection: the
 * names are not needed and `fn` runs in `$transaction` as it is.
 */
import type { Db, Tx } from "../db";

type TransactionFn = (fn: (tx: Tx) => Promise<unknown>, options?: unknown) => Promise<unknown>;

export interface TransactionOptions {
  /** What the transaction decides for, locked exclusively (see `locks` below for the names). */
  locks?: readonly string[];
  /** What it must not see change under it, locked shared: such transactions run side by side. */
  sharedLocks?: readonly string[];
  timeout?: number;
  maxWait?: number;
}

/** The names of the objects a transaction locks, one place so the same object always has the same name. */
export const locks = {
  plan: (id: string) => `plan:${id}`,
  workflow: (name: string) => `workflow:${name}`,
  fleet: (name: string) => `fleet:${name}`,
  /**
   * The set of fleets and their selectors, which decides every device's membership
   * (server/fleets/membership.ts): creating or deleting a fleet or changing its selector takes
   * it exclusively; a change that settles some devices' membership against it takes it shared.
   */
  fleetSelectors: "fleets:selectors",
  /** The enrollment inbox's limits (Pending requests per address and in all): a request left Pending takes it. */
  enrollmentInbox: "enrollments:inbox",
  /** References between workflows (no cycle across them): a save of a workflow that refers to others takes it. */
  workflowReferences: "workflows:references",
} as const;

/** The advisory locks' first key: a constant no other lock of Drover's uses ("DRTX"). */
export const LOCK_NAMESPACE = 0x44525458;

/** A transaction found, after taking its locks, that what it had read has moved: run it again. */
export class Contended extends Error {
  constructor(what: string) {
    super(`contended: ${what}`);
    this.name = "Contended";
  }
}

/**
 * Turns in memory, before a connection is asked for. First come, first served, in two kinds:
 * an exclusive turn runs alone; shared turns run side by side, at most `maxShared` at once. A
 * shared turn queued behind an exclusive one waits for it, so shared ones never starve it.
 */
export class TurnQueue {
  private readonly queue: { exclusive: boolean; start: () => void }[] = [];
  private running = 0;
  private exclusiveRunning = false;

  constructor(private readonly maxShared = Infinity) {}

  get idle(): boolean {
    return this.running === 0 && this.queue.length === 0;
  }

  /** Runs `fn` alone, after every turn queued before it has settled. */
  run<R>(fn: () => Promise<R>): Promise<R> {
    return this.enqueue(true, fn);
  }

  /** Runs `fn` beside other shared turns, after the exclusive turns queued before it. */
  runShared<R>(fn: () => Promise<R>): Promise<R> {
    return this.enqueue(false, fn);
  }

  private enqueue<R>(exclusive: boolean, fn: () => Promise<R>): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.queue.push({
        exclusive,
        start: () => {
          Promise.resolve()
            .then(fn)
            .then(resolve, reject)
            .finally(() => {
              this.running -= 1;
              this.exclusiveRunning = false;
              this.next();
            });
        },
      });
      this.next();
    });
  }

  private next(): void {
    for (let head = this.queue[0]; head; head = this.queue[0]) {
      if (this.exclusiveRunning || this.running >= (head.exclusive ? 1 : this.maxShared)) return;
      this.queue.shift();
      this.running += 1;
      this.exclusiveRunning = head.exclusive;
      head.start();
    }
  }
}

/** One server's turns for one PostgreSQL client: a queue per locked name, and the pool's slots. */
class Turns {
  private readonly byName = new Map<string, TurnQueue>();
  readonly slots: TurnQueue;

  constructor(poolSize: number) {
    this.slots = new TurnQueue(Math.max(1, poolSize - 2));
  }

  /** Runs `fn` holding every name's turn (in name order, so two transactions never wait on each other in a circle). */
  withNames<R>(names: { name: string; exclusive: boolean }[], fn: () => Promise<R>): Promise<R> {
    const [first, ...rest] = names;
    if (!first) return fn();
    const queue = this.byName.get(first.name) ?? new TurnQueue();
    this.byName.set(first.name, queue);
    const inner = () => this.withNames(rest, fn);
    return (first.exclusive ? queue.run(inner) : queue.runShared(inner)).finally(() => {
      if (queue.idle && this.byName.get(first.name) === queue) this.byName.delete(first.name);
    });
  }
}

const postgres = new WeakMap<object, Turns>();

/** Marks `db` as a PostgreSQL client with a pool of `poolSize` (server/db.ts, once per client). */
export function registerPostgres(db: object, poolSize: number): void {
  postgres.set(db, new Turns(poolSize));
}

/** Names sorted, each once (an exclusive wins over a shared one of the same name). */
function lockList(options: TransactionOptions): { name: string; exclusive: boolean }[] {
  const byName = new Map<string, boolean>();
  for (const name of options.sharedLocks ?? []) byName.set(name, false);
  for (const name of options.locks ?? []) byName.set(name, true);
  return [...byName].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([name, exclusive]) => ({ name, exclusive }));
}

async function takeAdvisory(tx: Tx, names: { name: string; exclusive: boolean }[]): Promise<void> {
  for (const { name, exclusive } of names) {
    await tx.$executeRawUnsafe(`SELECT ${exclusive ? "pg_advisory_xact_lock" : "pg_advisory_xact_lock_shared"}(${LOCK_NAMESPACE}, hashtext($1))`, name);
  }
}

/** Runs `fn` in one interactive transaction, with the locks it names, run again whole when it may succeed on another try. */
export async function transaction<R>(db: Db, fn: (tx: Tx) => Promise<R>, options: TransactionOptions = {}): Promise<R> {
  const turns = postgres.get(db);
  const raw = db as unknown as { $transaction: TransactionFn };
  const prismaOptions = { ...(options.timeout !== undefined ? { timeout: options.timeout } : {}), ...(options.maxWait !== undefined ? { maxWait: options.maxWait } : {}) };
  if (!turns) return retried(() => raw.$transaction(fn, prismaOptions) as Promise<R>);
  const names = lockList(options);
  const run = () =>
    raw.$transaction(
      async (tx) => {
        await takeAdvisory(tx, names);
        return fn(tx);
      },
      prismaOptions,
    ) as Promise<R>;
  return retried(() => turns.withNames(names, () => turns.slots.runShared(run)));
}

/**
 * Exclusive advisory locks taken inside a transaction, once it knows what it touches (the fleets
 * devices join). Two transactions may then wait on each other in a circle: PostgreSQL aborts
 * one (40P01) and `transaction` runs it again. Nothing on SQLite.
 */
export async function lockInTx(tx: Tx, names: readonly string[]): Promise<void> {
  if (!isPostgresTx(tx) || names.length === 0) return;
  await takeAdvisory(tx, [...new Set(names)].sort().map((name) => ({ name, exclusive: true })));
}

/**
 * Row locks on the rows of `table` whose `column` (a unique one) is in `keys` (FOR NO KEY
 * UPDATE, in that column's order), inside a transaction: a concurrent transaction updating one
 * of them waits for this one's commit. Take them before reading what is decided on; the
 * columns in `read` come back from the same statement, current once locked. Nothing on SQLite
 * (answers null: nothing there runs beside it, so nothing needs reading again).
 */
export async function lockRows<C extends string = never>(
  tx: Tx,
  table: "Device",
  keys: readonly string[],
  column: "id" | "name" = "id",
  read: readonly C[] = [],
): Promise<Record<C, unknown>[] | null> {
  if (!isPostgresTx(tx) || keys.length === 0) return null;
  const columns = read.length > 0 ? read.map((c) => `"${c}"`).join(", ") : "1";
  return tx.$queryRawUnsafe<Record<C, unknown>[]>(
    `SELECT ${columns} FROM "${table}" WHERE "${column}" IN (SELECT jsonb_array_elements_text($1::jsonb)) ORDER BY "${column}" FOR NO KEY UPDATE`,
    JSON.stringify([...new Set(keys)]),
  );
}

/** (lib/dialect-sql.ts's dialectOfDb, not imported: db.ts imports this module.) */
function isPostgresTx(tx: Tx): boolean {
  return (tx as unknown as { _activeProvider?: string })._activeProvider === "postgresql";
}

/**
 * Several reads that must agree with each other (a fleet and its rollout, written by one
 * transaction), on PostgreSQL in one REPEATABLE READ snapshot: under READ COMMITTED a commit
 * could land between two of them. On SQLite `read` runs on the client as it is.
 */
export function snapshotRead<R>(db: Db, read: (db: Db) => Promise<R>): Promise<R> {
  if (!postgres.has(db)) return read(db);
  return (db as unknown as { $transaction: TransactionFn }).$transaction((tx) => read(tx as unknown as Db), { isolationLevel: "RepeatableRead" }) as Promise<R>;
}

/** PostgreSQL aborted the transaction to break a deadlock (40P01) or a serialization failure (40001): running it again may succeed. */
export function isDeadlock(error: unknown): boolean {
  if (typeof error !== "object" || error === null) return false;
  const e = error as { code?: unknown; meta?: { code?: unknown }; cause?: { originalCode?: unknown }; message?: unknown };
  // P2034: Prisma's "write conflict or deadlock"; raw statements fail P2010 with the database's
  // code; a failed commit is the adapter's own error ("TransactionWriteConflict") with it as the cause.
  const retryable = (code: unknown) => code === "40P01" || code === "40001";
  if (e.code === "P2034" || retryable(e.code) || retryable(e.meta?.code) || retryable(e.cause?.originalCode)) return true;
  return typeof e.message === "string" && /\b(40P01|40001)\b|deadlock detected|could not serialize access/.test(e.message);
}

const TRIES = 6;

async function retried<R>(attempt: () => Promise<R>): Promise<R> {
  for (let tries = 1; ; tries++) {
    try {
      return await attempt();
    } catch (error) {
      if (tries >= TRIES || !(error instanceof Contended || isDeadlock(error))) throw error;
      await new Promise((r) => setTimeout(r, 10 * tries + Math.random() * 20 * tries));
    }
  }
}
