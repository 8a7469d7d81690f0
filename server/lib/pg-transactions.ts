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
 */

/** The advisory lock's key: a constant no other lock of Drover's uses ("DRTX"). */
export const TRANSACTION_LOCK = 0x44525458;

type TransactionFn = (arg: unknown, options?: unknown) => Promise<unknown>;
interface RawTx {
  $executeRawUnsafe(sql: string, ...values: unknown[]): Promise<number>;
}

const unlocked = new WeakMap<object, { $transaction: TransactionFn }>();

/**
 * A FIFO turn within this server, taken before the pool is asked for a connection: the
 * transactions waiting for the advisory lock would otherwise each hold one of the pool's
 * connections while they wait, and past the pool's size the rest fail Prisma's 2 s `maxWait`
 * ("Unable to start a transaction in the given time", P2028). A bench enrolling 10,000 agents
 * turned that into a storm of 500s. Waiting here costs no connection and has no deadline; the
 * advisory lock then only decides between servers.
 */
export class TurnQueue {
  private tail: Promise<void> = Promise.resolve();

  /** Runs `fn` after every `fn` queued before it has settled. */
  run<R>(fn: () => Promise<R>): Promise<R> {
    const before = this.tail;
    let done!: () => void;
    this.tail = new Promise<void>((resolve) => (done = resolve));
    return before.then(fn).finally(done);
  }
}

/** The client, with `$transaction(fn)` taking the lock before `fn` runs. Batches (`$transaction([...])`) are left as they are. */
export function serializeTransactions<T extends object>(client: T): T {
  const turns = new TurnQueue();
  const proxy = new Proxy(client, {
    get(target, prop, receiver) {
      const value: unknown = Reflect.get(target, prop, receiver);
      if (prop !== "$transaction" || typeof value !== "function") return value;
      const transaction = value as TransactionFn;
      return (arg: unknown, options?: unknown) =>
        typeof arg === "function"
          ? turns.run(() =>
              transaction.call(
                target,
                async (tx: RawTx) => {
                  await tx.$executeRawUnsafe(`SELECT pg_advisory_xact_lock(${TRANSACTION_LOCK})`);
                  return (arg as (tx: RawTx) => unknown)(tx);
                },
                options,
              ),
            )
          : transaction.call(target, arg, options);
    },
  });
  unlocked.set(proxy, client as unknown as { $transaction: TransactionFn });
  return proxy;
}

/**
 * Several reads that must agree with each other (a fleet and its rollout, written by one
 * transaction), on PostgreSQL in one REPEATABLE READ snapshot without the writers' lock:
 * under READ COMMITTED a commit could land between two of them. On SQLite (or any client not
 * made here) `read` runs on the client as it is, as before.
 */
export function snapshotRead<D extends object, R>(db: D, read: (db: D) => Promise<R>): Promise<R> {
  const raw = unlocked.get(db);
  if (!raw) return read(db);
  return raw.$transaction((tx: unknown) => read(tx as D), { isolationLevel: "RepeatableRead" }) as Promise<R>;
}
