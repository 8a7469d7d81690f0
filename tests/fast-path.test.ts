/**
 * The fast path's group commit (server/devices/fast-path.ts): writes of one event-loop turn
 * share a transaction, each in its own savepoint.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FastPath } from "../server/devices/fast-path";
import { openDb, type Db } from "../server/db";
import { WriteGate } from "../server/write-gate";

/** The fast path with a scratch table, to drive commit() directly. */
class Probe extends FastPath {
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
  value(k: string): number | undefined {
    return (this.db.prepare(`SELECT v FROM t WHERE k = ?`).get(k) as { v: number } | undefined)?.v;
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

describe("group commit", () => {
  let dir: string;
  let file: string;
  let probe: Probe;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "drover-fast-"));
    file = migratedFile(dir);
    probe = new Probe(file);
  });
  afterEach(() => {
    probe.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("runs the writes of one turn in one transaction, and answers each after the commit", async () => {
    const writes = Array.from({ length: 200 }, (_, i) => probe.put(`k${i}`, i));
    expect(probe.value("k0")).toBeUndefined(); // nothing is written before the turn ends
    expect(await Promise.all(writes)).toEqual(Array.from({ length: 200 }, (_, i) => i));
    expect(probe.transactions).toBe(1);
    expect(probe.value("k199")).toBe(199);

    await probe.put("later", 1);
    expect(probe.transactions).toBe(2);
  });

  it("rolls back and rejects a write that throws, alone", async () => {
    const [a, b, c] = await Promise.allSettled([probe.put("a", 1), probe.put("b", 2, true), probe.put("c", 3)]);
    expect(a).toEqual({ status: "fulfilled", value: 1 });
    expect(b.status).toBe("rejected");
    expect((b as PromiseRejectedResult).reason).toEqual(new Error("write b refused"));
    expect(c).toEqual({ status: "fulfilled", value: 3 });
    expect([probe.value("a"), probe.value("b"), probe.value("c")]).toEqual([1, undefined, 3]);
  });

  it("close writes what it accepted; a write after close fails instead of crashing", async () => {
    const accepted = probe.put("last", 7);
    probe.close();
    await expect(accepted).resolves.toBe(7);
    await expect(probe.put("late", 1)).rejects.toThrow(/closed/);
    probe = new Probe(file);
    expect([probe.value("last"), probe.value("late")]).toEqual([7, undefined]);
  });

  it("rolls back a single write that throws", async () => {
    await expect(probe.put("only", 1, true)).rejects.toThrow("write only refused");
    expect(probe.value("only")).toBeUndefined();
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
