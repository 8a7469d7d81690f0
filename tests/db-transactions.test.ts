/**
 * Transactions lock what they decide for, and nothing else (issue 22, server/lib/transactions.ts):
 * a read-decide-write on one object never writes a decision taken on a read another transaction
 * has since changed, on one server or several, and two operators working on two different
 * plans, workflows or fleets never wait for each other. SQLite gets the first from Prisma's one
 * connection (and has no second: it runs one transaction at a time by design).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { randomUUID } from "node:crypto";
import pg from "pg";
import type { Db } from "../server/db";
import { insertActionRowsInTx } from "../server/actions/actions";
import { LOCK_NAMESPACE, locks, transaction } from "../server/lib/transactions";
import { enrollDevice, uniqueName } from "./helpers/devices";
import { startTestServer, testOnPostgres, type TestServer } from "./helpers/server";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s?.close();
});

/** `count` transactions at once, each reading `key`'s counter, pausing `pauseMs`, and writing it plus one, under the lock named `key`. */
function increments(key: string, count: number, pauseMs: number, options: { timeout?: number; maxWait?: number } = {}) {
  return Promise.allSettled(
    Array.from({ length: count }, () =>
      transaction(
        s.ctx.db,
        async (tx) => {
          const row = await tx.serverState.findUniqueOrThrow({ where: { key } });
          // Another transaction would read the same value meanwhile, if they ran side by side.
          await new Promise((r) => setTimeout(r, pauseMs));
          await tx.serverState.update({ where: { key }, data: { value: String(Number(row.value) + 1) } });
        },
        { locks: [key], ...options },
      ),
    ),
  );
}

const failures = (results: PromiseSettledResult<unknown>[]) => results.filter((r) => r.status === "rejected").map((r) => String((r as PromiseRejectedResult).reason).slice(0, 200));

it("ten read-then-write transactions on one object at once lose no update", async () => {
  const key = "tx-counter";
  await s.ctx.db.serverState.create({ data: { key, value: "0" } });
  expect(failures(await increments(key, 10, 20, { timeout: 20_000, maxWait: 20_000 }))).toEqual([]);
  expect((await s.ctx.db.serverState.findUniqueOrThrow({ where: { key } })).value).toBe("10");
});

// PostgreSQL only: SQLite keeps Prisma's own queue on its one connection, where transactions of
// a few ms never meet the 2 s maxWait (a burst of 40 slow ones would; not seen in any bench).
it.runIf(testOnPostgres)("more transactions at once than the pool has connections, each slower than its share of the 2 s maxWait: all commit", async () => {
  const key = "tx-queue";
  await s.ctx.db.serverState.create({ data: { key, value: "0" } });
  // Prisma's defaults (maxWait 2 s): 40 × 100 ms on one object is 4 s. Waiting for the turn must
  // not hold a pool connection, or the ones past the pool's size fail "Unable to start a transaction".
  expect(failures(await increments(key, 40, 100))).toEqual([]);
  expect((await s.ctx.db.serverState.findUniqueOrThrow({ where: { key } })).value).toBe("40");
});

// PostgreSQL only: on SQLite nothing commits beside a transaction, so nothing is read again.
it.runIf(testOnPostgres)("an action for a device whose decommission committed after it was read is not written: the transaction runs again and refuses", async () => {
  const d = await enrollDevice(s, uniqueName("held"));
  const device = await s.ctx.db.device.findUniqueOrThrow({ where: { name: d.name }, select: { id: true } });
  expect((await s.api("POST", `/devices/${d.name}/decommission`, {})).status).toBe(200);
  // As a pass that read the device Enrolled before the decommission would write its action.
  const row = { id: randomUUID(), deviceId: device.id, kind: "noop", args: "{}", origin: "workflow", state: "PENDING_SCHEDULE", createdBy: "test", createdAt: new Date(), updatedAt: new Date() };
  await expect(transaction(s.ctx.db, (tx) => insertActionRowsInTx(tx, [row]))).rejects.toThrow(/no longer Enrolled/);
  expect(await s.ctx.db.action.count({ where: { id: row.id } })).toBe(0);
});

// PostgreSQL only: on SQLite one transaction at a time is the database's own rule.
describe.runIf(testOnPostgres)("two operators on two objects never wait for each other, on one server or two", () => {
  let two: TestServer;
  beforeAll(async () => {
    two = await startTestServer({}, { sameDatabaseAs: s });
  });
  afterAll(async () => {
    await two?.close();
  });

  /** Runs `work` while a transaction on server one holds `held`'s lock; answers whether it finished before the lock was let go. */
  async function whileHeld(db: Db, held: string, work: () => Promise<unknown>, patienceMs = 15_000): Promise<{ finishedFirst: boolean }> {
    let release!: () => void;
    const holding = new Promise<void>((r) => (release = r));
    let locked!: () => void;
    const taken = new Promise<void>((r) => (locked = r));
    const holder = transaction(
      db,
      async () => {
        locked();
        await holding;
      },
      { locks: [held], timeout: 30_000 },
    );
    await taken;
    let finishedFirst = false;
    const done = work().then(() => (finishedFirst = true));
    // Generous for what takes tens of ms (a loaded CI machine); a pass does not wait it out.
    const settled = await Promise.race([done.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), patienceMs))]);
    release();
    await holder;
    await done;
    return { finishedFirst: settled && finishedFirst };
  }

  const job = (devices: string[]) => ({ jobTemplate: { kind: "noop", args: {}, targets: { devices } } });
  const fleetBody = (name: string, version: string) => ({ metadata: { name }, spec: { selector: { matchLabels: { tx: name } }, template: { spec: { version } } } });

  it("a plan, a workflow and a fleet change go on while another plan's, workflow's and fleet's lock is held, on this server and the other", async () => {
    const d = await enrollDevice(s, uniqueName("tx"));
    for (const fleet of ["tx-a", "tx-b"]) expect((await s.api("POST", "/fleets", fleetBody(fleet, "1.0.0"))).status).toBe(201);
    let n = 0;
    for (const srv of [s, two]) {
      n += 1;
      const plan = { apiVersion: "drover/v1", kind: "Plan", spec: { commands: [{ action: { kind: "noop", args: {}, targets: { workers: { discovery: { static: { nodes: [d.name] } } } } } }] } };
      const planWork = await whileHeld(s.ctx.db, locks.plan("some-other-plan"), async () => expect((await srv.api("POST", "/plans", plan)).status).toBe(201));
      expect(planWork.finishedFirst).toBe(true);
      const wfWork = await whileHeld(s.ctx.db, locks.workflow("tx-held"), async () =>
        expect((await srv.api("POST", "/workflows?start=false", { metadata: { name: `tx-free-${n}` }, spec: { steps: { A: job([d.name]) } } })).status).toBe(201),
      );
      expect(wfWork.finishedFirst).toBe(true);
      const fleetWork = await whileHeld(s.ctx.db, locks.fleet("tx-a"), async () => expect((await srv.api("PUT", "/fleets/tx-b", fleetBody("tx-b", `2.${n}.0`))).status).toBe(200));
      expect(fleetWork.finishedFirst).toBe(true);
    }
  });

  it("the same object's change waits for its lock, on the other server too", async () => {
    const waited = await whileHeld(s.ctx.db, locks.workflow("tx-same"), async () =>
      expect((await two.api("POST", "/workflows?start=false", { metadata: { name: "tx-same" }, spec: { steps: { A: job(["nobody"]) } } })).status).toBe(201),
      1_000,
    );
    expect(waited.finishedFirst).toBe(false);
    expect((await s.api("POST", "/fleets", fleetBody("tx-c", "1.0.0"))).status).toBe(201);
    const fleet = await whileHeld(s.ctx.db, locks.fleet("tx-c"), async () => expect((await two.api("PUT", "/fleets/tx-c", fleetBody("tx-c", "2.0.0"))).status).toBe(200), 1_000);
    expect(fleet.finishedFirst).toBe(false);
  });
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
    // The fleet's transaction takes its locks (the fleet, the fleets' selectors), then waits for b's row to make both members.
    const created = s.api("POST", "/fleets", { metadata: { name: label }, spec: { selector: { matchLabels: { dl: label } }, template: { spec: { version: "1.0.0" } } } });
    await new Promise((r) => setTimeout(r, 500));
    // The other writer now waits for the selectors' lock: a cycle, which PostgreSQL breaks by aborting the fleet's transaction.
    await other.query(`SELECT pg_advisory_xact_lock_shared(${LOCK_NAMESPACE}, hashtext($1))`, [locks.fleetSelectors]);
    await other.query("COMMIT");
    expect((await created).status).toBe(201);
  } finally {
    await other.end();
  }
  for (const d of [a, b]) expect((await s.api<{ fleet: string | null }>("GET", `/devices/${d.name}`)).body.fleet).toBe(label);
}, 30_000);
