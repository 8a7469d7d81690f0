import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { Db } from "../db";
import { Contended, isDeadlock, transaction, TurnQueue } from "./transactions";

/** A turn that records when it started and ended, and ends when told to. */
function recorder() {
  const log: string[] = [];
  const release = new Map<string, () => void>();
  const turn = (name: string) => () =>
    new Promise<string>((resolve) => {
      log.push(`+${name}`);
      release.set(name, () => {
        log.push(`-${name}`);
        resolve(name);
      });
    });
  const end = async (name: string) => {
    release.get(name)!();
    await new Promise((r) => setTimeout(r, 0));
  };
  return { log, turn, end };
}

const tick = () => new Promise((r) => setTimeout(r, 0));

describe("TurnQueue", () => {
  it("runs exclusive turns one at a time, in order", async () => {
    const q = new TurnQueue(4);
    const { log, turn, end } = recorder();
    const done = [q.run(turn("a")), q.run(turn("b"))];
    await tick();
    expect(log).toEqual(["+a"]);
    await end("a");
    expect(log).toEqual(["+a", "-a", "+b"]);
    await end("b");
    expect(await Promise.all(done)).toEqual(["a", "b"]);
  });

  it("runs shared turns side by side, at most maxShared at once", async () => {
    const q = new TurnQueue(2);
    const { log, turn, end } = recorder();
    const done = [q.runShared(turn("s1")), q.runShared(turn("s2")), q.runShared(turn("s3"))];
    await tick();
    expect(log).toEqual(["+s1", "+s2"]);
    await end("s2");
    expect(log).toEqual(["+s1", "+s2", "-s2", "+s3"]);
    await end("s1");
    await end("s3");
    await Promise.all(done);
  });

  it("an exclusive turn waits for the shared ones running, and shared ones queued after it wait for it", async () => {
    const q = new TurnQueue(4);
    const { log, turn, end } = recorder();
    const done = [q.runShared(turn("s1")), q.run(turn("x")), q.runShared(turn("s2"))];
    await tick();
    expect(log).toEqual(["+s1"]);
    await end("s1");
    expect(log).toEqual(["+s1", "-s1", "+x"]);
    await end("x");
    expect(log).toEqual(["+s1", "-s1", "+x", "-x", "+s2"]);
    await end("s2");
    await Promise.all(done);
  });

  it("a turn that throws, at once or later, passes its error on and frees its place", async () => {
    const q = new TurnQueue(1);
    const sync = q.run(() => {
      throw new Error("at once");
    });
    const later = q.runShared(() => Promise.reject(new Error("later")));
    const after = q.run(() => Promise.resolve("next"));
    await expect(sync).rejects.toThrow("at once");
    await expect(later).rejects.toThrow("later");
    expect(await after).toBe("next");
  });
});

describe("transaction: run again whole", () => {
  const deadlock = Object.assign(new Error("Raw query failed. Code: `40P01`. Message: `deadlock detected`"), { code: "P2010" });
  // A client as `transaction` sees one that is not PostgreSQL's: `$transaction(fn)` runs fn.
  const client = { $transaction: (fn: (tx: unknown) => Promise<unknown>) => fn({}) } as unknown as Db;
  it("runs the transaction again after a deadlock, a serialization failure or a contention, and gives up after six", async () => {
    let calls = 0;
    const failures = [deadlock, { code: "P2034" }, new Contended("plan p moved")];
    expect(await transaction(client, async () => (calls < 3 ? Promise.reject(failures[calls++]) : (calls++, "done")))).toBe("done");
    expect(calls).toBe(4);
    calls = 0;
    await expect(transaction(client, async () => (++calls, Promise.reject(deadlock)))).rejects.toBe(deadlock);
    expect(calls).toBe(6);
  });
  it("passes any other error on at once", async () => {
    let calls = 0;
    await expect(transaction(client, async () => (++calls, Promise.reject(new Error("unique constraint"))))).rejects.toThrow("unique");
    expect(calls).toBe(1);
  });
  it("knows Prisma's and PostgreSQL's codes for it", () => {
    const commitFailed = Object.assign(new Error("TransactionWriteConflict"), { cause: { originalCode: "40001", kind: "TransactionWriteConflict" } });
    expect([{ code: "P2034" }, { code: "40001" }, { meta: { code: "40P01" } }, deadlock, commitFailed].map(isDeadlock)).toEqual([true, true, true, true, true]);
    expect([{ code: "P2002" }, new Error("timeout"), null, "40P01"].map(isDeadlock)).toEqual([false, false, false, false]);
  });
});

describe("one door each (issue 22)", () => {
  const root = path.resolve(__dirname, "..");
  const sources = (fs.readdirSync(root, { recursive: true }) as string[]).filter((f) => f.endsWith(".ts") && !f.endsWith(".test.ts") && !f.startsWith("generated"));
  const matching = (pattern: RegExp, except: string[]) => sources.filter((f) => !except.includes(f) && pattern.test(fs.readFileSync(path.join(root, f), "utf8")));

  it("no server code opens an interactive transaction but through transaction()", () => {
    expect(sources.length).toBeGreaterThan(50);
    expect(matching(/\.\$transaction\(/, [path.join("lib", "transactions.ts")])).toEqual([]);
  });

  it("no server code writes action rows but server/actions (and the agent store it calls)", () => {
    const store = [path.join("actions", "actions.ts"), path.join("devices", "agent-store-sql.ts")];
    expect(matching(/\baction\.create(Many)?\(|INSERT INTO "Action"/, store)).toEqual([]);
  });

  it("outside the store and the database's set-up, at most five lines branch on the database kind", () => {
    const storeAndSetUp = [
      ["lib", "dialect-sql.ts"],
      ["lib", "transactions.ts"],
      ["devices", "agent-store-sql.ts"],
      ["devices", "sqlite-driver.ts"],
      ["devices", "pg-driver.ts"],
      ["db.ts"],
      ["migrate.ts"],
      ["bus-pg.ts"],
    ].map((p) => path.join(...p));
    const branch = /[!=]== "(postgresql|sqlite)"|isPostgres(Url|Client)\(|sqlitePath\(|_activeProvider/;
    const lines = sources
      .filter((f) => !storeAndSetUp.includes(f))
      .flatMap((f) => fs.readFileSync(path.join(root, f), "utf8").split("\n").flatMap((line, i) => (branch.test(line) ? [`${f}:${i + 1}`] : [])));
    // Today: the controllers' leader (PostgreSQL only) and the agent store's choice at start.
    expect(lines.length, lines.join("\n")).toBeLessThanOrEqual(5);
  });
});
