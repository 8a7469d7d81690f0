/**
 * The agent store's group commit (server/devices/agent-store.ts): writes of one event-loop turn
 * share a transaction, each in its own savepoint. The same suite runs against the SQLite fast
 * path (fast-path.ts) always and, with DROVER_TEST_DATABASE=postgresql, against PgFastPath
 * (fast-path-pg.ts) on a fresh database.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FastPath } from "../server/devices/fast-path";
import { PgFastPath, type Querier } from "../server/devices/fast-path-pg";
import { openDb, type Db } from "../server/db";
import { WriteGate } from "../server/write-gate";
import { newPgDatabase, testOnPostgres } from "./helpers/server";

/** What the group-commit suite drives: a scratch table written through commit(). */
interface GroupProbe {
  /** Outermost transactions seen so far (one per group commit). */
  readonly transactions: number;
  put(k: string, v: number, fail?: boolean): Promise<number>;
  value(k: string): Promise<number | undefined>;
  close(): void | Promise<void>;
}

/** The SQLite fast path with a scratch table, to drive commit() directly. */
class Probe extends FastPath implements GroupProbe {
  transactions = 0;
  constructor(file: string) {
    super(file);
    this.db.exec(`CREATE TABLE IF NOT EXISTS t (k TEXT PRIMARY KEY, v INTEGER NOT NULL)`);
    // Count the outermost transactions: BEGIN runs once per group commit.
    const begin = this.db.transaction.bind(this.db);
    this.db.transaction = ((fn: (...args: unknown[]) => unknown) => {
      const tx = begin(fn);
      return ((...args: unknown[]) => {
        if (!this.db.inTransaction) this.transactions++;
        return tx(...args);
      }) as never;
    }) as never;
  }
  put(k: string, v: number, fail = false): Promise<number> {
    return this.commit(() => {
      this.db.prepare(`INSERT INTO t (k, v) VALUES (?, ?) ON CONFLICT (k) DO UPDATE SET v = excluded.v`).run(k, v);
      if (fail) throw new Error(`write ${k} refused`);
      return v;
    });
  }
  value(k: string): Promise<number | undefined> {
    return Promise.resolve((this.db.prepare(`SELECT v FROM t WHERE k = ?`).get(k) as { v: number } | undefined)?.v);
  }
}

/** PgFastPath with a scratch table; transactions counted by their ids (txid_current()). */
class PgProbe extends PgFastPath implements GroupProbe {
  private readonly txids = new Set<string>();
  get transactions() {
    return this.txids.size;
  }
  static async open(url: string): Promise<PgProbe> {
    const probe = new PgProbe(url);
    await probe.pool.query(`CREATE TABLE IF NOT EXISTS t (k TEXT PRIMARY KEY, v INTEGER NOT NULL)`);
    return probe;
  }
  put(k: string, v: number, fail = false): Promise<number> {
    return this.commit(async (q: Querier) => {
      await q.count({ name: "probe_put", text: `INSERT INTO t (k, v) VALUES ($1, $2) ON CONFLICT (k) DO UPDATE SET v = EXCLUDED.v` }, [k, v]);
      this.txids.add((await q.rows<{ x: string }>({ name: "probe_txid", text: `SELECT txid_current()::text AS x` }, []))[0]!.x);
      if (fail) throw new Error(`write ${k} refused`);
      return v;
    });
  }
  async value(k: string): Promise<number | undefined> {
    return (await this.pool.query<{ v: number }>(`SELECT v FROM t WHERE k = $1`, [k])).rows[0]?.v;
  }
  /** A statement the database refuses (a NOT NULL column), inside the write. */
  putNull(k: string): Promise<number> {
    return this.commit(async (q: Querier) => (await q.count({ name: "probe_null", text: `INSERT INTO t (k, v) VALUES ($1, NULL)` }, [k])));
  }
  device(id: string) {
    return this.pool.query<{ reported: string | null; lastSeen: Date | null }>(`SELECT "reported", "lastSeen" FROM "Device" WHERE "id" = $1`, [id]).then((r) => r.rows[0]);
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

/** Opens a probe on a fresh store; `reopen` opens another on the same one; `drop` removes it. */
interface ProbeStore {
  open(): Promise<GroupProbe>;
  drop(): Promise<void>;
}

async function sqliteStore(): Promise<ProbeStore> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "drover-fast-"));
  const file = migratedFile(dir);
  return { open: async () => new Probe(file), drop: async () => fs.rmSync(dir, { recursive: true, force: true }) };
}

async function pgStore(): Promise<ProbeStore> {
  const database = await newPgDatabase();
  return { open: () => PgProbe.open(database.url), drop: () => database.drop() };
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

  it("rolls back a single write that throws", async () => {
    await expect(probe.put("only", 1, true)).rejects.toThrow("write only refused");
    expect(await probe.value("only")).toBeUndefined();
  });
});

describe.runIf(testOnPostgres)("PgFastPath", () => {
  let database: { url: string; drop(): Promise<void> };
  let probe: PgProbe;
  let db: Db;
  beforeEach(async () => {
    database = await newPgDatabase();
    probe = await PgProbe.open(database.url);
    db = await openDb(database.url);
  });
  afterEach(async () => {
    await probe.close();
    await db.$disconnect();
    await database.drop();
  });

  const newDevice = (name: string) => db.device.create({ data: { name, platform: "linux-amd64", role: "worker", agentVersion: "t" } });

  it("a statement the database refuses rolls back its own savepoint only; the batch's other writes and heartbeats commit", async () => {
    const { id } = await newDevice("pg-1");
    const at = new Date("2026-01-02T03:04:05.678Z");
    const outcomes = await Promise.allSettled([probe.put("a", 1), probe.touch(id, '{"n":1}', at), probe.putNull("bad"), probe.put("c", 3)]);
    expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "fulfilled", "rejected", "fulfilled"]);
    expect((outcomes[2] as PromiseRejectedResult).reason).toMatchObject({ code: "23502" }); // not_null_violation
    expect([await probe.value("a"), await probe.value("bad"), await probe.value("c")]).toEqual([1, undefined, 3]);
    expect(await probe.device(id)).toEqual({ reported: '{"n":1}', lastSeen: at });
    expect(probe.transactions).toBe(1);
  });

  it("heartbeats of one turn are one UPDATE (the last report of a device wins), times read back as Prisma writes them", async () => {
    const devices = await Promise.all(Array.from({ length: 50 }, (_, i) => newDevice(`pg-t${i}`)));
    const at = new Date("2026-03-04T05:06:07.891Z");
    await Promise.all([...devices.map((d, i) => probe.touch(d.id, `{"i":${i}}`, at)), probe.touch(devices[0]!.id, '{"i":"last"}', at)]);
    // Prisma reads the same instant back (timestamp without time zone holds UTC on both).
    const rows = await db.device.findMany({ where: { id: { in: devices.map((d) => d.id) } }, select: { name: true, reported: true, lastSeen: true } });
    expect(rows.every((r) => r.lastSeen?.getTime() === at.getTime())).toBe(true);
    expect(rows.find((r) => r.name === "pg-t0")!.reported).toBe('{"i":"last"}');
    expect(rows.find((r) => r.name === "pg-t7")!.reported).toBe('{"i":7}');
    // And what Prisma writes, the store reads as the same instant.
    const seen = new Date("2026-05-06T07:08:09.123Z");
    await db.device.update({ where: { id: devices[1]!.id }, data: { lastSeen: seen } });
    expect((await probe.device(devices[1]!.id))!.lastSeen).toEqual(seen);
  });

  it("the token lookups and LOST checks of one turn are one statement each, every caller answered with its own rows", async () => {
    const devices = await Promise.all(Array.from({ length: 20 }, (_, i) => db.device.create({ data: { name: `pg-r${i}`, platform: "linux-amd64", role: "worker", agentVersion: "t", tokenHash: `hash-${i}` } })));
    const now = new Date();
    const old = new Date(now.getTime() - 60_000);
    // Two running actions on every other device, unchanged for a minute.
    await db.action.createMany({
      data: devices.flatMap((d, i) => (i % 2 ? [] : [0, 1].map((n) => ({ id: `${d.name}-a${n}`, deviceId: d.id, kind: "noop", origin: "user", state: "RUNNING", createdAt: old, updatedAt: old })))),
    });
    const statements: string[] = [];
    const query = probe["pool"].query.bind(probe["pool"]);
    probe["pool"].query = ((config: { name?: string }, ...rest: unknown[]) => {
      statements.push(config.name ?? "?");
      return (query as (...args: unknown[]) => unknown)(config, ...rest);
    }) as never;
    const found = await Promise.all([...devices.map((_, i) => probe.deviceByTokenHash(`hash-${i}`)), probe.deviceByTokenHash("nobody"), probe.deviceIdentityByTokenHash("hash-3")]);
    expect(found.slice(0, 20).map((d) => d?.name)).toEqual(devices.map((d) => d.name));
    expect(found[20]).toBeNull();
    expect(found[21]).toEqual({ id: devices[3]!.id, name: "pg-r3", revoked: false });
    expect(statements.filter((s) => s === "drover_by_token")).toHaveLength(1);
    // Each device's queue lacks its second action: exactly that one is LOST, on the devices that had it.
    const lost = await Promise.all(devices.map((d) => probe.markLost(d, new Set([`${d.name}-a0`]), now, 5_000)));
    expect(lost.map((events) => events.map((e) => e.objectName))).toEqual(devices.map((d, i) => (i % 2 ? [] : [`${d.name}-a1`])));
    expect(statements.filter((s) => s === "drover_active_actions")).toHaveLength(1);
    expect(await db.action.count({ where: { state: "LOST" } })).toBe(10);
  });

  it("the inventory upsert keeps one sample a minute and the newest `max`", async () => {
    const { id } = await newDevice("pg-inv");
    const t0 = 1_800_000_000 - (1_800_000_000 % 60);
    const now = new Date(t0 * 1000);
    await probe.writeInventory(id, '{"os":"debian"}', JSON.stringify([t0, 1, 2, 3]), t0, 3, now);
    await probe.writeInventory(id, null, JSON.stringify([t0 + 30, 9, 9, 9]), t0, 3, now); // same minute: kept out
    for (const m of [1, 2, 3]) await probe.writeInventory(id, null, JSON.stringify([t0 + 60 * m, m, m, m]), t0 + 60 * m, 3, now);
    const row = await db.deviceInventory.findUniqueOrThrow({ where: { deviceId: id } });
    expect(row.system).toBe('{"os":"debian"}');
    expect(JSON.parse(row.samples)).toEqual([1, 2, 3].map((m) => [t0 + 60 * m, m, m, m]));
  });
});

describe("write gate", () => {
  let dir: string;
  let db: Db;
  let fast: FastPath;
  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "drover-gate-"));
    const file = migratedFile(dir);
    const gate = new WriteGate();
    db = await openDb(`file:${file}`, gate);
    fast = new FastPath(file, gate);
  });
  afterEach(async () => {
    fast.close();
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
