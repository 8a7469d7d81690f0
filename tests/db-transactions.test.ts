/**
 * Interactive transactions take turns on both databases (issue 11): a read-decide-write pass
 * never writes a decision taken on a read another transaction has since changed. SQLite gets
 * it from Prisma's one connection; PostgreSQL from server/lib/pg-transactions.ts.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { openDb } from "../server/db";
import pg from "pg";
import { sharedTransaction, TRANSACTION_LOCK } from "../server/lib/pg-transactions";
import { enrollDevice, uniqueName } from "./helpers/devices";
import { startTestServer, testOnPostgres, type TestServer } from "./helpers/server";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s?.close();
});

it("ten read-then-write transactions at once lose no update", async () => {
  const key = "tx-counter";
  await s.ctx.db.serverState.create({ data: { key, value: "0" } });
  await Promise.all(
    Array.from({ length: 10 }, () =>
      s.ctx.db.$transaction(async (tx) => {
        const row = await tx.serverState.findUniqueOrThrow({ where: { key } });
        // Another transaction would read the same value meanwhile, if they ran side by side.
        await new Promise((r) => setTimeout(r, 20));
        await tx.serverState.update({ where: { key }, data: { value: String(Number(row.value) + 1) } });
      }, { timeout: 20_000, maxWait: 20_000 }),
    ),
  );
  expect((await s.ctx.db.serverState.findUniqueOrThrow({ where: { key } })).value).toBe("10");
});

// PostgreSQL only: SQLite keeps Prisma's own queue on its one connection, where transactions of
// a few ms never meet the 2 s maxWait (a burst of 40 slow ones would; not seen in any bench).
it.runIf(testOnPostgres)("more transactions at once than the pool has connections, each slower than its share of the 2 s maxWait: all commit", async () => {
  const key = "tx-queue";
  await s.ctx.db.serverState.create({ data: { key, value: "0" } });
  // Prisma's defaults (maxWait 2 s): 40 × 100 ms in turn is 4 s. Waiting for the turn must not
  // hold a pool connection, or the ones past the pool's size fail "Unable to start a transaction".
  const results = await Promise.allSettled(
    Array.from({ length: 40 }, () =>
      s.ctx.db.$transaction(async (tx) => {
        const row = await tx.serverState.findUniqueOrThrow({ where: { key } });
        await new Promise((r) => setTimeout(r, 100));
        await tx.serverState.update({ where: { key }, data: { value: String(Number(row.value) + 1) } });
      }),
    ),
  );
  expect(results.filter((r) => r.status === "rejected").map((r) => String((r as PromiseRejectedResult).reason).slice(0, 200))).toEqual([]);
  expect((await s.ctx.db.serverState.findUniqueOrThrow({ where: { key } })).value).toBe("40");
});

// PostgreSQL only: on SQLite every transaction has Prisma's one connection to itself.
it.runIf(testOnPostgres)("shared transactions run side by side, never beside an exclusive one, on this server or another", async () => {
  // A second client on the same database, as a second server has.
  const other = await openDb(s.ctx.env.DATABASE_URL);
  try {
    const spans: { kind: string; start: number; end: number }[] = [];
    // Recorded inside, after the lock is taken and before the commit that frees it.
    const span = (kind: string) => async () => {
      const start = performance.now();
      await new Promise((r) => setTimeout(r, 150));
      spans.push({ kind, start, end: performance.now() });
    };
    const options = { timeout: 20_000 };
    await Promise.all([
      sharedTransaction(s.ctx.db, span("shared"), options),
      sharedTransaction(s.ctx.db, span("shared"), options),
      s.ctx.db.$transaction(span("exclusive"), options),
      sharedTransaction(other, span("shared"), options),
      sharedTransaction(s.ctx.db, span("shared"), options),
      other.$transaction(span("exclusive"), options),
      sharedTransaction(other, span("shared"), options),
    ]);
    const overlap = (a: { start: number; end: number }, b: { start: number; end: number }) => a.start < b.end && b.start < a.end;
    const pairs = spans.flatMap((a, i) => spans.slice(i + 1).map((b) => [a, b] as const));
    expect(pairs.filter(([a, b]) => (a.kind === "exclusive" || b.kind === "exclusive") && overlap(a, b))).toEqual([]);
    expect(pairs.some(([a, b]) => a.kind === "shared" && b.kind === "shared" && overlap(a, b))).toBe(true);
  } finally {
    await other.$disconnect();
  }
});

// PostgreSQL only: SQLite has one writer and no deadlocks.
it.runIf(testOnPostgres)("a fleet change that PostgreSQL aborts to break a deadlock with another writer is run again and succeeds", async () => {
  const label = `deadlock-${Date.now()}`;
  const a = await enrollDevice(s, uniqueName("dl"), { dl: label });
  const b = await enrollDevice(s, uniqueName("dl"), { dl: label });
  // Another writer (as the agent hot path is: its own connection, no turn) holds b's row...
  const other = new pg.Client({ connectionString: s.ctx.env.DATABASE_URL });
  await other.connect();
  try {
    await other.query("BEGIN");
    // ...and leaves the deadlock check to the fleet's transaction (1 s by default), so it is the one aborted.
    await other.query("SET LOCAL deadlock_timeout = '20s'");
    await other.query(`UPDATE "Device" SET "updatedAt" = now() WHERE "name" = $1`, [b.name]);
    // The fleet's transaction takes the turn lock, then waits for b's row to make both members.
    const created = s.api("POST", "/fleets", { metadata: { name: label }, spec: { selector: { matchLabels: { dl: label } }, template: { spec: { version: "1.0.0" } } } });
    await new Promise((r) => setTimeout(r, 500));
    // The other writer now waits for the turn lock: a cycle, which PostgreSQL breaks by aborting the fleet's transaction.
    await other.query(`SELECT pg_advisory_xact_lock_shared(${TRANSACTION_LOCK})`);
    await other.query("COMMIT");
    expect((await created).status).toBe(201);
  } finally {
    await other.end();
  }
  for (const d of [a, b]) expect((await s.api<{ fleet: string | null }>("GET", `/devices/${d.name}`)).body.fleet).toBe(label);
}, 30_000);
