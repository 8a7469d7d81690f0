/**
 * The agent store's drivers (server/devices/sql-driver.ts): writes of one event-loop turn share
 * a transaction, each in its own savepoint. The same suite runs against the SQLite driver always
 * and, with DROVER_TEST_DATABASE=postgresql, against the PostgreSQL driver on a fresh database;
 * and the one store (agent-store-sql.ts) over each.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SqlAgentStore } from "../server/devices/agent-store-sql";
import { FLUSH_BUDGET_MS, SqliteDriver } from "../server/devices/sqlite-driver";
import { PgDriver } from "../server/devices/pg-driver";
import pg from "pg";
import { all, Batched, many, run } from "../server/devices/sql-driver";
import { openDb, type Db } from "../server/db";
import { statusColumns, storedStatus, type DeviceFactsRow } from "../server/devices/status";
import type { HeartbeatWrite } from "../server/devices/agent-store";
import { WriteGate } from "../server/write-gate";
import { newPgDatabase, testOnPostgres } from "./helpers/server";

/** A device's status columns as they are. */
const statusOf = (d: DeviceFactsRow) => statusColumns(storedStatus(d));

/** What the group-commit suite drives: a scratch table written through the driver's write(). */
interface GroupProbe {
  /** Outermost transactions seen so far (one per group commit). */
  readonly transactions: number;
  /** The one store over the same driver. */
  readonly store: SqlAgentStore;
  put(k: string, v: number, fail?: boolean): Promise<number>;
  value(k: string): Promise<number | undefined>;
  close(): void | Promise<void>;
}

const PUT = `INSERT INTO t (k, v) VALUES (?, ?) ON CONFLICT (k) DO UPDATE SET v = excluded.v`;

/** The SQLite driver with a scratch table; no group commit budget, so a turn's writes are one transaction however slow the machine. */
class Probe implements GroupProbe {
  transactions = 0;
  readonly driver: SqliteDriver;
  readonly store: SqlAgentStore;
  constructor(file: string, spacingMs?: number) {
    this.driver = new SqliteDriver(file, undefined, Infinity, spacingMs);
    this.store = new SqlAgentStore(this.driver);
    const db = this.driver.db;
    db.exec(`CREATE TABLE IF NOT EXISTS t (k TEXT PRIMARY KEY, v INTEGER NOT NULL)`);
    // Count the outermost transactions: BEGIN runs once per group commit.
    const begin = db.transaction.bind(db);
    db.transaction = ((fn: (...args: unknown[]) => unknown) => {
      const tx = begin(fn);
      return ((...args: unknown[]) => {
        if (!db.inTransaction) this.transactions++;
        return tx(...args);
      }) as never;
    }) as never;
  }
  put(k: string, v: number, fail = false): Promise<number> {
    return this.driver.write(
      (function* () {
        yield* run(PUT, [k, v]);
        if (fail) throw new Error(`write ${k} refused`);
        return v;
      })(),
    );
  }
  value(k: string): Promise<number | undefined> {
    return Promise.resolve((this.driver.db.prepare(`SELECT v FROM t WHERE k = ?`).get(k) as { v: number } | undefined)?.v);
  }
  device(id: string) {
    const r = this.driver.db.prepare(`SELECT "reported", "lastSeen" FROM "Device" WHERE "id" = ?`).get(id) as { reported: string | null; lastSeen: string | null };
    return Promise.resolve({ reported: r.reported, lastSeen: r.lastSeen === null ? null : new Date(r.lastSeen) });
  }
  close() {
    return this.driver.close();
  }
}

/** The PostgreSQL driver with a scratch table; transactions counted by their ids (txid_current()). */
class PgProbe implements GroupProbe {
  private readonly txids = new Set<string>();
  readonly store: SqlAgentStore;
  private constructor(readonly driver: PgDriver) {
    this.store = new SqlAgentStore(driver);
  }
  get transactions() {
    return this.txids.size;
  }
  static async open(url: string): Promise<PgProbe> {
    const probe = new PgProbe(new PgDriver(url));
    await probe.driver.pool.query(`CREATE TABLE IF NOT EXISTS t (k TEXT PRIMARY KEY, v INTEGER NOT NULL)`);
    return probe;
  }
  put(k: string, v: number, fail = false): Promise<number> {
    const txids = this.txids;
    return this.driver.write(
      (function* () {
        yield* run(PUT, [k, v]);
        txids.add((yield* all<{ x: string }>(`SELECT txid_current()::text AS x`, []))[0]!.x);
        if (fail) throw new Error(`write ${k} refused`);
        return v;
      })(),
    );
  }
  async value(k: string): Promise<number | undefined> {
    return (await this.driver.pool.query<{ v: number }>(`SELECT v FROM t WHERE k = $1`, [k])).rows[0]?.v;
  }
  device(id: string) {
    return this.driver.pool.query<{ reported: string | null; lastSeen: Date | null }>(`SELECT "reported", "lastSeen" FROM "Device" WHERE "id" = $1`, [id]).then((r) => r.rows[0]);
  }
  close() {
    return this.driver.close();
  }
}

/** A fresh database file with Drover's schema, which the fast path prepares its statements against. */
function migratedFile(dir: string): string {
  const file = path.join(dir, "x.db");
  const schema = new Database(file);
  const migrations = path.resolve(import.meta.dirname, "../prisma/migrations");
  for (const m of fs.readdirSync(migrations).filter((d) => fs.existsSync(path.join(migrations, d, "migration.sql"))).sort()) {
    schema.exec(fs.readFileSync(path.join(migrations, m, "migration.sql"), "utf8"));
  }
  schema.close();
  return file;
}

/** Opens a probe on a fresh store; `open` again opens another on the same one; `drop` removes it. */
interface ProbeStore {
  /** DATABASE_URL of the store, for Prisma. */
  url: string;
  /** The error code of a NOT NULL violation. */
  notNull: string;
  open(): Promise<GroupProbe & { device(id: string): Promise<{ reported: string | null; lastSeen: Date | null } | undefined> }>;
  drop(): Promise<void>;
}

async function sqliteStore(): Promise<ProbeStore> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "drover-fast-"));
  const file = migratedFile(dir);
  return { url: `file:${file}`, notNull: "SQLITE_CONSTRAINT_NOTNULL", open: async () => new Probe(file), drop: async () => fs.rmSync(dir, { recursive: true, force: true }) };
}

async function pgStore(): Promise<ProbeStore> {
  const database = await newPgDatabase();
  return { url: database.url, notNull: "23502", open: () => PgProbe.open(database.url), drop: () => database.drop() };
}

const stores: [string, () => Promise<ProbeStore>][] = [["SQLite", sqliteStore]];
if (testOnPostgres) stores.push(["PostgreSQL", pgStore]);

describe.each(stores)("group commit on %s", (_name, makeStore) => {
  let store: ProbeStore;
  let probe: GroupProbe;
  beforeEach(async () => {
    store = await makeStore();
    probe = await store.open();
  });
  afterEach(async () => {
    await probe.close();
    await store.drop();
  });

  it("runs the writes of one turn in one transaction, and answers each after the commit", async () => {
    const writes = Array.from({ length: 200 }, (_, i) => probe.put(`k${i}`, i));
    expect(await probe.value("k0")).toBeUndefined(); // nothing is written before the turn ends
    expect(await Promise.all(writes)).toEqual(Array.from({ length: 200 }, (_, i) => i));
    expect(probe.transactions).toBe(1);
    expect(await probe.value("k199")).toBe(199);

    await probe.put("later", 1);
    expect(probe.transactions).toBe(2);
  });

  it("rolls back and rejects a write that throws, alone", async () => {
    const [a, b, c] = await Promise.allSettled([probe.put("a", 1), probe.put("b", 2, true), probe.put("c", 3)]);
    expect(a).toEqual({ status: "fulfilled", value: 1 });
    expect(b.status).toBe("rejected");
    expect((b as PromiseRejectedResult).reason).toEqual(new Error("write b refused"));
    expect(c).toEqual({ status: "fulfilled", value: 3 });
    expect([await probe.value("a"), await probe.value("b"), await probe.value("c")]).toEqual([1, undefined, 3]);
  });

  it("close writes what it accepted; a write after close fails instead of crashing", async () => {
    const accepted = probe.put("last", 7);
    await probe.close();
    await expect(accepted).resolves.toBe(7);
    await expect(probe.put("late", 1)).rejects.toThrow(/closed/);
    probe = await store.open();
    expect([await probe.value("last"), await probe.value("late")]).toEqual([7, undefined]);
  });

  it("a batched write does the items of one turn in one operation; when it throws, each item is done again alone and only the bad one fails", async () => {
    const batches: string[][] = [];
    const puts = new Batched<{ k: string; v: number | null }, string>(probe.store.driver, function* (items) {
      batches.push(items.map((i) => i.k));
      yield* many(`INSERT INTO t (k, v) VALUES (?, ?::int)`, items.map((i) => [i.k, i.v]));
      return items.map((i) => ({ ok: true, value: i.k }));
    });
    expect(await Promise.all(["a", "b", "c"].map((k) => puts.add({ k, v: 1 })))).toEqual(["a", "b", "c"]);
    expect(batches).toEqual([["a", "b", "c"]]);
    // e's NULL fails the one statement of all three: nothing of it is written, then each goes alone.
    const outcomes = await Promise.allSettled([puts.add({ k: "d", v: 4 }), puts.add({ k: "e", v: null }), puts.add({ k: "f", v: 6 })]);
    expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect(batches.slice(1)).toEqual([["d", "e", "f"], ["d"], ["e"], ["f"]]);
    expect([await probe.value("d"), await probe.value("e"), await probe.value("f")]).toEqual([4, undefined, 6]);
  });

  it("rolls back a single write that throws", async () => {
    await expect(probe.put("only", 1, true)).rejects.toThrow("write only refused");
    expect(await probe.value("only")).toBeUndefined();
  });
});

describe.each(stores)("the agent store on %s", (name, makeStore) => {
  let store: ProbeStore;
  let probe: Awaited<ReturnType<ProbeStore["open"]>>;
  let db: Db;
  beforeEach(async () => {
    store = await makeStore();
    probe = await store.open();
    db = await openDb(store.url);
  });
  afterEach(async () => {
    await probe.close();
    await db.$disconnect();
    await store.drop();
  });

  const newDevice = (name: string, tokenHash?: string) => db.device.create({ data: { name, platform: "linux-amd64", role: "worker", agentVersion: "t", tokenHash } });
  /** The statements sent to PostgreSQL's pool and connections from now on (their texts); none on SQLite. */
  function statementsSent(): string[] {
    const sent: string[] = [];
    if (!(probe instanceof PgProbe)) return sent;
    const pool = probe.driver.pool;
    const query = pool.query.bind(pool);
    pool.query = ((config: { text?: string }, ...rest: unknown[]) => {
      sent.push(config.text ?? "?");
      return (query as (...args: unknown[]) => unknown)(config, ...rest);
    }) as never;
    return sent;
  }

  it("a statement the database refuses rolls back its own savepoint only; the batch's other writes and heartbeats commit", async () => {
    const { id } = await newDevice("s-1");
    const at = new Date("2026-01-02T03:04:05.678Z");
    const putNull = probe.store.driver.write(run(`INSERT INTO t (k, v) VALUES (?, NULL)`, ["bad"]));
    const outcomes = await Promise.allSettled([probe.put("a", 1), probe.store.touch(id, '{"n":1}', at), putNull, probe.put("c", 3)]);
    expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "fulfilled", "rejected", "fulfilled"]);
    expect((outcomes[2] as PromiseRejectedResult).reason).toMatchObject({ code: store.notNull });
    expect([await probe.value("a"), await probe.value("bad"), await probe.value("c")]).toEqual([1, undefined, 3]);
    expect(await probe.device(id)).toEqual({ reported: '{"n":1}', lastSeen: at });
    expect(probe.transactions).toBe(1);
  });

  it("heartbeats of one turn are one write (one UPDATE on PostgreSQL; the last report of a device wins), times read back as Prisma writes them", async () => {
    const devices = await Promise.all(Array.from({ length: 50 }, (_, i) => newDevice(`t${i}`)));
    const at = new Date("2026-03-04T05:06:07.891Z");
    await Promise.all([...devices.map((d, i) => probe.store.touch(d.id, `{"i":${i}}`, at)), probe.store.touch(devices[0]!.id, '{"i":"last"}', at)]);
    // Prisma reads the same instant back (timestamp without time zone holds UTC on PostgreSQL, Prisma's text on SQLite).
    const rows = await db.device.findMany({ where: { id: { in: devices.map((d) => d.id) } }, select: { name: true, reported: true, lastSeen: true } });
    expect(rows.every((r) => r.lastSeen?.getTime() === at.getTime())).toBe(true);
    expect(rows.find((r) => r.name === "t0")!.reported).toBe('{"i":"last"}');
    expect(rows.find((r) => r.name === "t7")!.reported).toBe('{"i":7}');
    // And what Prisma writes, the store reads as the same instant.
    const seen = new Date("2026-05-06T07:08:09.123Z");
    await db.device.update({ where: { id: devices[1]!.id }, data: { lastSeen: seen, tokenHash: "t1-hash" } });
    expect((await probe.device(devices[1]!.id))!.lastSeen).toEqual(seen);
    expect((await probe.store.deviceByTokenHash("t1-hash"))!.lastSeen).toEqual(seen);
  });

  it("on SQLite, heartbeats that change nothing arriving turns apart just after a commit share the next one; a lone one is written at once", async () => {
    if (name !== "SQLite") return;
    const devices = await Promise.all(Array.from({ length: 3 }, (_, i) => newDevice(`sp${i}`)));
    // Its own driver on the same file, spaced 300 ms (the server's is MERGE_SPACING_MS): wide enough for a loaded machine.
    const spaced = new Probe(store.url.slice("file:".length), 300);
    try {
      const at = new Date();
      // Nothing committed lately: written at once, in a commit of its own.
      const t0 = performance.now();
      await spaced.store.touch(devices[0]!.id, "{}", at);
      expect(spaced.transactions).toBe(1);
      // Right after that commit, two more a turn apart: one commit for both, once the spacing is over.
      const first = spaced.store.touch(devices[1]!.id, "{}", at);
      await new Promise((r) => setImmediate(r));
      await Promise.all([first, spaced.store.touch(devices[2]!.id, "{}", at)]);
      expect(spaced.transactions).toBe(2);
      expect(performance.now() - t0).toBeGreaterThanOrEqual(300);
      expect((await db.device.findMany({ where: { name: { startsWith: "sp" } }, select: { lastSeen: true } })).every((d) => d.lastSeen?.getTime() === at.getTime())).toBe(true);
    } finally {
      spaced.close();
    }
  });

  it("the token lookups and LOST checks of one turn are one statement each on PostgreSQL, every caller answered with its own rows", async () => {
    const devices = await Promise.all(Array.from({ length: 20 }, (_, i) => newDevice(`r${i}`, `hash-${i}`)));
    const now = new Date();
    const old = new Date(now.getTime() - 60_000);
    // Two running actions on every other device, unchanged for a minute.
    await db.action.createMany({
      data: devices.flatMap((d, i) => (i % 2 ? [] : [0, 1].map((n) => ({ id: `${d.name}-a${n}`, deviceId: d.id, kind: "noop", origin: "user", state: "RUNNING", createdAt: old, updatedAt: old })))),
    });
    const sent = statementsSent();
    const found = await Promise.all([...devices.map((_, i) => probe.store.deviceByTokenHash(`hash-${i}`)), probe.store.deviceByTokenHash("nobody"), probe.store.deviceIdentityByTokenHash("hash-3")]);
    expect(found.slice(0, 20).map((d) => d && "name" in d && d.name)).toEqual(devices.map((d) => d.name));
    expect(found[20]).toBeNull();
    expect(found[21]).toEqual({ id: devices[3]!.id, name: "r3", revoked: false });
    if (name === "PostgreSQL") expect(sent.filter((s) => s.includes(`"tokenHash" = v.k1`))).toHaveLength(2); // the lookups, the identity
    // Each device's queue lacks its second action: exactly that one is LOST, on the devices that had it.
    const lost = await Promise.all(devices.map((d) => probe.store.markLost(d, new Set([`${d.name}-a0`]), now, 5_000)));
    expect(lost.map((events) => events.map((e) => e.objectName))).toEqual(devices.map((d, i) => (i % 2 ? [] : [`${d.name}-a1`])));
    expect(lost[0]![0]).toMatchObject({ objectKind: "Action", reason: "LOST", message: "RUNNING → LOST: missing from r0's queue" });
    if (name === "PostgreSQL") expect(sent.filter((s) => s.includes(`"updatedAt" < v.k2`))).toHaveLength(1);
    expect(await db.action.count({ where: { state: "LOST" } })).toBe(10);
    expect((await db.action.findUniqueOrThrow({ where: { id: "r0-a1" } })).finishedAt).toEqual(now);
  });

  /** Runs `body` with every statement any pg connection sends (the store's writes run on a client of its pool) counted by what they contain. */
  async function countingStatements(body: (count: (text: string) => number) => Promise<void>): Promise<void> {
    const sent: string[] = [];
    const query = pg.Client.prototype.query;
    pg.Client.prototype.query = function (this: pg.Client, config: unknown, ...rest: unknown[]) {
      sent.push(typeof config === "string" ? config : ((config as { text?: string }).text ?? ""));
      return (query as (...args: unknown[]) => unknown).call(this, config, ...rest);
    } as never;
    try {
      await body((text) => sent.filter((s) => s.includes(text)).length);
    } finally {
      pg.Client.prototype.query = query;
    }
  }

  it("status-changing heartbeats of one turn are one operation: on PostgreSQL one read, one write and one insert of events a round", async () => {
    const devices = await Promise.all(Array.from({ length: 10 }, (_, i) => newDevice(`h${i}`)));
    const at = new Date("2026-04-05T06:07:08.900Z");
    const to = (summary: HeartbeatWrite["summary"]) => (fresh: DeviceFactsRow) => ({
      data: { ...statusOf(fresh), summary, reported: `{"s":"${summary}"}`, lastSeen: at },
      events: [{ objectKind: "Device" as const, objectName: fresh.name, type: "SummaryChanged", reason: summary, actor: "test" }],
    });
    await countingStatements(async (count) => {
      const outcomes = await Promise.allSettled([
        ...devices.map((d) => probe.store.writeHeartbeat(d.id, to("Online"))),
        probe.store.writeHeartbeat(devices[0]!.id, (fresh) => to(fresh.summary === "Online" ? "Degraded" : "Error")(fresh)), // derives from the first
        probe.store.writeHeartbeat(devices[1]!.id, () => {
          throw new Error("refused");
        }),
        probe.store.writeHeartbeat("nobody", to("Online")),
      ]);
      expect(outcomes.map((o) => o.status)).toEqual([...devices.map(() => "fulfilled"), "fulfilled", "rejected", "fulfilled"]);
      const events = outcomes.map((o) => (o.status === "fulfilled" ? o.value : null));
      expect(events[3]).toMatchObject([{ objectName: "h3", reason: "Online", time: at }]);
      expect(events[10]).toMatchObject([{ objectName: "h0", reason: "Degraded" }]);
      expect(events[12]).toEqual([]);
      expect(new Set(events.flatMap((e) => e ?? []).map((e) => e.id)).size).toBe(11);
      const rows = await db.device.findMany({ where: { id: { in: devices.map((d) => d.id) } }, orderBy: { name: "asc" }, select: { summary: true, lastSeen: true } });
      expect(rows.map((r) => r.summary)).toEqual(["Degraded", ...devices.slice(1).map(() => "Online")]);
      expect(rows.every((r) => r.lastSeen?.getTime() === at.getTime())).toBe(true);
      if (name === "PostgreSQL") {
        expect(count(`FOR UPDATE) r`)).toBe(2); // a round, and one for the device reported twice
        expect(count(`UPDATE "Device" SET "reported" = v.k1`)).toBe(2);
        expect(count(`INSERT INTO "Event"`)).toBe(2);
      }
    });
  });

  it("the offers and reports of one turn are one operation each: on PostgreSQL a statement a kind for all, each caller answered with its own outcome", async () => {
    const devices = await Promise.all(Array.from({ length: 20 }, (_, i) => newDevice(`o${i}`)));
    const t0 = new Date(Date.now() - 1000);
    await db.action.createMany({ data: devices.map((d) => ({ id: `${d.name}-a`, deviceId: d.id, kind: "noop", origin: "user", state: "PENDING_SCHEDULE", createdAt: t0, updatedAt: t0 })) });
    await countingStatements(async (count) => {
      const now = new Date();
      const offers = await Promise.all(devices.map((d) => probe.store.offerActions(d.id, now, 0))); // rank 0: Online
      expect(offers.map((o) => o.actions.map((a) => a.id))).toEqual(devices.map((d) => [`${d.name}-a`]));
      expect(await db.action.count({ where: { offeredAt: now } })).toBe(20);
      const reports = await Promise.allSettled([
        ...devices.map((d) => probe.store.reportAction(d, `${d.name}-a`, { state: "NEW" }, now)),
        probe.store.reportAction(devices[0]!, `${devices[0]!.name}-a`, { state: "RUNNING" }, now), // the same action again: decided on the NEW before it
        probe.store.reportAction(devices[1]!, `${devices[2]!.name}-a`, { state: "RUNNING" }, now), // another device's: refused alone
      ]);
      expect(reports.map((r) => r.status)).toEqual([...devices.map(() => "fulfilled"), "fulfilled", "rejected"]);
      expect((reports[21] as PromiseRejectedResult).reason).toMatchObject({ code: "FORBIDDEN" });
      const answers = reports.slice(0, 21).map((r) => (r as PromiseFulfilledResult<Awaited<ReturnType<SqlAgentStore["reportAction"]>>>).value);
      expect(answers.map((a) => a.view.state)).toEqual([...devices.map(() => "NEW"), "RUNNING"]);
      expect(answers[5]!.events).toMatchObject([{ objectName: "o5-a", reason: "NEW", message: "PENDING_SCHEDULE → NEW" }]);
      expect(answers[20]!.events).toMatchObject([{ objectName: "o0-a", reason: "RUNNING", message: "NEW → RUNNING" }]);
      expect((await db.action.findUniqueOrThrow({ where: { id: "o0-a" } })).state).toBe("RUNNING");
      expect(await db.action.count({ where: { state: "NEW" } })).toBe(19);
      if (name === "PostgreSQL") {
        expect(count(`"state" = 'PENDING_SCHEDULE' AND`)).toBe(1); // the offers' read
        expect(count(`SET "offeredAt"`)).toBe(1);
        expect(count(`FOR UPDATE) r`)).toBe(2); // the reports' read: a round, and one for the action reported twice
        expect(count(`UPDATE "Action" SET "state"`)).toBe(2);
        expect(count(`INSERT INTO "Event"`)).toBe(2);
      }
    });
  });

  it("a template version's spec asked for by many polls at once is read once (one statement on PostgreSQL), then kept", async () => {
    const fleet = await db.fleet.create({ data: { name: "f", selector: "{}", templateVersion: "1", createdBy: "t", updatedBy: "t" } });
    const version = await db.templateVersion.create({ data: { fleetId: fleet.id, version: 1, spec: '{"version":"1.0.0"}', author: "t" } });
    await countingStatements(async (count) => {
      const specs = await Promise.all(Array.from({ length: 50 }, () => probe.store.templateSpec(version.id)));
      expect(new Set(specs).size).toBe(1);
      expect(specs[0]).toEqual({ version: "1.0.0" });
      expect(await probe.store.templateSpec(version.id)).toBe(specs[0]);
      expect(await probe.store.templateSpec("no-such-version")).toBeNull();
      if (name === "PostgreSQL") expect(count(`FROM "TemplateVersion"`)).toBe(2); // the version's, and the missing one's
    });
  });

  it("the inventory upsert keeps one sample a minute and the newest `max`", async () => {
    const { id } = await newDevice("inv");
    const t0 = 1_800_000_000 - (1_800_000_000 % 60);
    const now = new Date(t0 * 1000);
    await probe.store.writeInventory(id, '{"os":"debian"}', [t0, 1, 2, 3], 3, now);
    await probe.store.writeInventory(id, null, [t0 + 30, 9, 9, 9], 3, now); // same minute: kept out
    for (const m of [1, 2, 3]) await probe.store.writeInventory(id, null, [t0 + 60 * m, m, m, m], 3, now);
    const row = await db.deviceInventory.findUniqueOrThrow({ where: { deviceId: id } });
    expect(row.system).toBe('{"os":"debian"}');
    expect(row.systemAt).toEqual(now);
    expect(JSON.parse(row.samples)).toEqual([1, 2, 3].map((m) => [t0 + 60 * m, m, m, m]));
  });
});

describe("write gate", () => {
  let dir: string;
  let db: Db;
  let fast: SqlAgentStore;
  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "drover-gate-"));
    const file = migratedFile(dir);
    const gate = new WriteGate();
    db = await openDb(`file:${file}`, gate);
    fast = new SqlAgentStore(new SqliteDriver(file, gate));
  });
  afterEach(async () => {
    await fast.close();
    await db.$disconnect();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("holds fast-path commits while a Prisma transaction is open, then writes them", async () => {
    const { id } = await db.device.create({ data: { name: "gate-1", platform: "linux-amd64", role: "worker", agentVersion: "t" } });
    const order: string[] = [];
    let touched: Promise<void> | undefined;
    await db.$transaction(async (tx) => {
      // Read first: a commit from the other connection now would make the write below fail
      // with SQLITE_BUSY_SNAPSHOT.
      await tx.device.findUniqueOrThrow({ where: { id } });
      touched = fast.touch(id, '{"from":"fast"}', new Date()).then(() => void order.push("fast"));
      await new Promise((r) => setTimeout(r, 50));
      await tx.device.update({ where: { id }, data: { agentVersion: "prisma" } });
      order.push("prisma");
    });
    await touched;
    expect(order).toEqual(["prisma", "fast"]);
    expect(await db.device.findUniqueOrThrow({ where: { id }, select: { agentVersion: true, reported: true } })).toEqual({ agentVersion: "prisma", reported: '{"from":"fast"}' });
  });

  it("a Prisma transaction asking to start while fast-path writes wait for the gate goes after them, not before", async () => {
    const { id } = await db.device.create({ data: { name: "gate-3", platform: "linux-amd64", role: "worker", agentVersion: "t" } });
    const order: string[] = [];
    let touched: Promise<void> | undefined;
    let next: Promise<void> | undefined;
    await db.$transaction(async (tx) => {
      await tx.device.findUniqueOrThrow({ where: { id } });
      touched = fast.touch(id, '{"from":"fast"}', new Date()).then(() => void order.push("fast"));
      await new Promise((r) => setTimeout(r, 20)); // the touch's group commit now waits for the gate
      // Another transaction asks while the first is open and the touch waits: before this, it took
      // the gate straight from the first, and a stream of them kept the touch waiting to the end.
      next = db.$transaction(async (tx2) => {
        await tx2.device.update({ where: { id }, data: { agentVersion: "second" } });
        order.push("second");
      });
      await new Promise((r) => setTimeout(r, 50));
      order.push("first");
    });
    await Promise.all([touched, next]);
    expect(order).toEqual(["first", "fast", "second"]);
  });

  it("lets the gate go when a Prisma transaction rolls back", async () => {
    const { id } = await db.device.create({ data: { name: "gate-2", platform: "linux-amd64", role: "worker", agentVersion: "t" } });
    await expect(
      db.$transaction(async (tx) => {
        await tx.device.update({ where: { id }, data: { agentVersion: "rolled back" } });
        throw new Error("no");
      }),
    ).rejects.toThrow("no");
    await fast.touch(id, "{}", new Date());
    expect((await db.device.findUniqueOrThrow({ where: { id } })).agentVersion).toBe("t");
  });
});

describe("group commit budget (SQLite)", () => {
  it("holds the event loop for at most its budget: a pile of writes commits over several turns, in order, every one", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "drover-budget-"));
    const driver = new SqliteDriver(migratedFile(dir));
    try {
      driver.db.exec(`CREATE TABLE "Slow" ("n" INTEGER)`);
      // Each write ≈ 1 ms (a busy loop inside SQLite's function call), 40 of them: ≈ 40 ms in one turn without a budget.
      driver.db.function("spin", (n: number) => {
        const until = performance.now() + 1;
        while (performance.now() < until);
        return n;
      });
      const turns: number[] = [];
      let turn = 0;
      const ticking = setInterval(() => turn++, 0);
      const writes = Array.from({ length: 40 }, (_, n) =>
        driver.write(run(`INSERT INTO "Slow" ("n") VALUES (spin(?))`, [n])).then(() => void turns.push(turn)),
      );
      await Promise.all(writes);
      clearInterval(ticking);
      expect(driver.db.prepare(`SELECT group_concat("n") AS s FROM (SELECT "n" FROM "Slow" ORDER BY rowid)`).get()).toEqual({ s: Array.from({ length: 40 }, (_, n) => n).join(",") });
      // Committed over several turns of the event loop (a timer ran between them), each batch ≤ budget + one write.
      expect(FLUSH_BUDGET_MS).toBeLessThanOrEqual(5);
      expect(new Set(turns).size).toBeGreaterThanOrEqual(6);
    } finally {
      driver.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
