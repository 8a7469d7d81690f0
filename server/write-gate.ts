/**
 * One writer at a time across Drover's two connections to the SQLite file: Prisma's and the
 * agent store's (devices/sqlite-driver.ts).
 *
 * Prisma's interactive transactions on SQLite are `BEGIN` (deferred), then queries with
 * awaits between them. A fast-path commit landing in such a gap either waits on the lock
 * Prisma holds (better-sqlite3 waits synchronously: the event loop stalls for the busy
 * timeout, and Prisma, on that same loop, cannot commit to let it go), or, when Prisma has
 * only read so far, makes Prisma's first write fail with SQLITE_BUSY_SNAPSHOT. So the fast
 * path holds its group commits while a Prisma transaction is open and flushes them when it
 * ends. Fast-path transactions are synchronous: Prisma never sees one open.
 */
import { PrismaBetterSQLite3 } from "@prisma/adapter-better-sqlite3";
import type Database from "better-sqlite3";

export class WriteGate {
  private open = 0;
  private waiting: (() => void)[] = [];
  /** Transactions that asked to start while writes were waiting: they go after those writes. */
  private behind: (() => void)[] = [];

  /** Whether a Prisma transaction is open (or about to be). */
  get held(): boolean {
    return this.open > 0;
  }

  hold(): () => void {
    this.open++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.open--;
      if (this.open === 0) {
        const waiting = this.waiting;
        const behind = this.behind;
        this.waiting = [];
        this.behind = [];
        setImmediate(() => {
          for (const run of waiting) run();
          for (const start of behind) start();
        });
      }
    };
  }

  /**
   * `hold`, for a transaction about to start: after the writes already waiting for the gate, if
   * any. Without this a stream of Prisma transactions (a fleet enrolling: each enrollment is one)
   * keeps the gate held from one to the next, and the agent store's heartbeats wait for all of
   * them, past their agents' patience.
   */
  async turn(): Promise<() => void> {
    if (this.waiting.length > 0) await new Promise<void>((resolve) => this.behind.push(resolve));
    return this.hold();
  }

  /** Runs `run` once no Prisma transaction is open (on a later turn of the event loop). */
  afterRelease(run: () => void): void {
    this.waiting.push(run);
  }
}

/** Prisma's better-sqlite3 adapter, with its transactions holding `gate` from BEGIN to COMMIT or ROLLBACK. */
export class GatedSQLite3 extends PrismaBetterSQLite3 {
  constructor(
    config: ConstructorParameters<typeof PrismaBetterSQLite3>[0],
    private readonly gate: WriteGate,
  ) {
    super(config);
  }

  override async connect() {
    const adapter = await super.connect();
    keepStatements((adapter as unknown as { client: Database.Database }).client);
    const start = adapter.startTransaction.bind(adapter);
    const gate = this.gate;
    adapter.startTransaction = async (isolationLevel) => {
      const release = await gate.turn();
      try {
        const tx = await start(isolationLevel);
        const commit = tx.commit.bind(tx);
        const rollback = tx.rollback.bind(tx);
        tx.commit = () => commit().finally(release);
        tx.rollback = () => rollback().finally(release);
        return tx;
      } catch (error) {
        release();
        throw error;
      }
    };
    return adapter;
  }
}

/** Prepared statements kept per connection, by their text; the least recently used goes past this. */
const STATEMENTS_KEPT = 500;

/**
 * Prisma's adapter prepares every query it runs (`client.prepare(sql).bind(args)`): 7 % of the
 * server's CPU through an enrollment ramp of 10,000 agents (issue 22), for statements whose
 * texts repeat. Here each text is prepared once and kept; `bind` hands the arguments to each
 * call instead of binding them to the statement for good (which would make it single-use).
 */
function keepStatements(db: Database.Database): void {
  const prepare = db.prepare.bind(db);
  const kept = new Map<string, Database.Statement>();
  db.prepare = ((sql: string) => {
    let st = kept.get(sql);
    if (st) {
      kept.delete(sql);
    } else {
      st = prepare(sql);
      if (kept.size >= STATEMENTS_KEPT) kept.delete(kept.keys().next().value!);
    }
    kept.set(sql, st);
    return withArgs(st);
  }) as typeof db.prepare;
}

/** The statement as the adapter uses it, `bind(args)` giving a view that passes them to each call. */
function withArgs(st: Database.Statement) {
  return {
    get reader() {
      return st.reader;
    },
    // Unbound, the adapter only runs BEGIN.
    run: (...args: unknown[]) => st.run(...args),
    bind: (args: unknown[]) => ({
      get reader() {
        return st.reader;
      },
      run: () => st.run(...args),
      columns: () => st.columns(),
      raw: () => ({ all: () => st.raw(true).all(...args) }),
    }),
  } as unknown as Database.Statement;
}
