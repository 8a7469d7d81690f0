/**
 * Interactive transactions on PostgreSQL take turns, as they do on SQLite (issue 11).
 *
 * On SQLite, Prisma's interactive transactions run one at a time on its one connection, and
 * the domain code relies on it: a controller pass reads a plan, a workflow or a rollout,
 * decides, and writes, knowing no other pass wrote in between. On PostgreSQL, Prisma's pool
 * runs them side by side under READ COMMITTED, and two passes of the same plan (a tick and an
 * ended action's watcher, or two servers) would each write a decision taken on the same old
 * read: a lost update. So every interactive transaction first takes one transaction-level
 * advisory lock, held until it commits or rolls back: the same one-writer-at-a-time rule as
 * SQLite's, on every server sharing the database. Reads outside transactions, single-statement
 * writes and the agent hot path (its own `pg` pool) do not take it.
 *
 * A transaction whose every write is guarded by its own rows (`sharedTransaction` below: an
 * enrollment approved at once, a device token issued) takes the same lock shared instead: such
 * transactions run side by side, and still never beside an ordinary one.
 */

/** The advisory lock's key: a constant no other lock of Drover's uses ("DRTX"). */
export const TRANSACTION_LOCK = 0x44525458;

type TransactionFn = (arg: unknown, options?: unknown) => Promise<unknown>;
interface RawTx {
  $executeRawUnsafe(sql: string, ...values: unknown[]): Promise<number>;
}

/** What `serializeTransactions` made, by the proxy it returned. */
const made = new WeakMap<object, { client: { $transaction: TransactionFn }; turns: TurnQueue }>();

/**
 * Turns within this server, taken before the pool is asked for a connection: the transactions
 * waiting for the advisory lock would otherwise each hold one of the pool's connections while
 * they wait, and past the pool's size the rest fail Prisma's 2 s `maxWait` ("Unable to start a
 * transaction in the given time", P2028). A bench enrolling 10,000 agents turned that into a
 * storm of 500s. Waiting here costs no connection and has no deadline; the advisory lock then
 * only decides between servers.
 *
 * First come, first served, in two kinds: an exclusive turn runs alone; shared turns run side
 * by side, at most `maxShared` at once. A shared turn queued behind an exclusive one waits for
 * it, so a stream of shared turns never starves an exclusive one.
 */
export class TurnQueue {
  private readonly queue: { exclusive: boolean; start: () => void }[] = [];
  private running = 0;
  private exclusiveRunning = false;

  constructor(private readonly maxShared = 1) {}

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

function lockedTransaction(client: { $transaction: TransactionFn }, lock: string, fn: (tx: RawTx) => unknown, options?: unknown): Promise<unknown> {
  return client.$transaction(async (tx: RawTx) => {
    await tx.$executeRawUnsafe(`SELECT ${lock}(${TRANSACTION_LOCK})`);
    return fn(tx);
  }, options);
}

/**
 * The client, with `$transaction(fn)` taking the lock before `fn` runs. Batches
 * (`$transaction([...])`) are left as they are. `poolSize`: the client's pool; shared
 * transactions (`sharedTransaction`) leave two of its connections to reads.
 */
export function serializeTransactions<T extends object>(client: T, poolSize = 10): T {
  const turns = new TurnQueue(Math.max(1, poolSize - 2));
  const raw = client as unknown as { $transaction: TransactionFn };
  const proxy = new Proxy(client, {
    get(target, prop, receiver) {
      const value: unknown = Reflect.get(target, prop, receiver);
      if (prop !== "$transaction" || typeof value !== "function") return value;
      return (arg: unknown, options?: unknown) =>
        typeof arg === "function"
          ? turns.run(() => lockedTransaction(raw, "pg_advisory_xact_lock", arg as (tx: RawTx) => unknown, options))
          : (value as TransactionFn).call(target, arg, options);
    },
  });
  made.set(proxy, { client: raw, turns });
  return proxy;
}

/**
 * A transaction that may run beside others of its kind: every write it makes is guarded by
 * its own rows (a unique key, a status or `IS NULL` guard in the UPDATE's WHERE, a counter
 * checked in the statement), and what it reads that others write is only read by exclusive
 * transactions' rules. It still never overlaps an ordinary (exclusive) transaction, on this
 * server or another: it takes the advisory lock shared. Enrollment approved at once and a
 * device token's issue are of this kind: ≈ 20 ms of round trips each, a 10,000-agent burst
 * took them one at a time (issue 11's bench). On SQLite (one connection) it is `$transaction`.
 */
export function sharedTransaction<D extends object, T, R>(db: D, fn: (tx: T) => Promise<R>, options?: { timeout?: number; maxWait?: number }): Promise<R> {
  const found = made.get(db);
  if (!found) return (db as unknown as { $transaction: TransactionFn }).$transaction(fn, options) as Promise<R>;
  return found.turns.runShared(() => lockedTransaction(found.client, "pg_advisory_xact_lock_shared", fn as (tx: RawTx) => unknown, options)) as Promise<R>;
}

/**
 * Several reads that must agree with each other (a fleet and its rollout, written by one
 * transaction), on PostgreSQL in one REPEATABLE READ snapshot without the writers' lock:
 * under READ COMMITTED a commit could land between two of them. On SQLite (or any client not
 * made here) `read` runs on the client as it is, as before.
 */
export function snapshotRead<D extends object, R>(db: D, read: (db: D) => Promise<R>): Promise<R> {
  const raw = made.get(db)?.client;
  if (!raw) return read(db);
  return raw.$transaction((tx: unknown) => read(tx as D), { isolationLevel: "RepeatableRead" }) as Promise<R>;
}

/** PostgreSQL aborted the transaction to break a deadlock (40P01) or a serialization failure (40001): running it again may succeed. */
export function isDeadlock(error: unknown): boolean {
  if (typeof error !== "object" || error === null) return false;
  const e = error as { code?: unknown; meta?: { code?: unknown }; message?: unknown };
  // P2034: Prisma's "write conflict or deadlock"; raw statements fail P2010 with the database's code.
  if (e.code === "P2034" || e.code === "40P01" || e.code === "40001") return true;
  if (e.meta?.code === "40P01" || e.meta?.code === "40001") return true;
  return typeof e.message === "string" && /\b(40P01|40001)\b|deadlock detected/.test(e.message);
}

const DEADLOCK_TRIES = 4;

/**
 * Runs `attempt` again when PostgreSQL aborted its transaction to break a deadlock. An operator's
 * transaction updating many devices (a fleet's 10,000 members joining, a rollout's batch, the
 * sweep) can lock them in another order than the agent hot path's multi-row heartbeat UPDATE,
 * which takes no turn: PostgreSQL then aborts one of the two, and either may be chosen (the hot
 * path retries its own). Nothing of an aborted transaction was written, so `attempt` must build
 * everything it returns afresh each time (its Effects inside, not before). Never on SQLite.
 */
export async function retryDeadlocks<R>(attempt: () => Promise<R>): Promise<R> {
  for (let tries = 1; ; tries++) {
    try {
      return await attempt();
    } catch (error) {
      if (tries >= DEADLOCK_TRIES || !isDeadlock(error)) throw error;
      await new Promise((r) => setTimeout(r, 20 * tries + Math.random() * 30));
    }
  }
}
