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

export class WriteGate {
  private open = 0;
  private waiting: (() => void)[] = [];

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
        this.waiting = [];
        for (const run of waiting) setImmediate(run);
      }
    };
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
    const start = adapter.startTransaction.bind(adapter);
    const gate = this.gate;
    adapter.startTransaction = async (isolationLevel) => {
      const release = gate.hold();
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
