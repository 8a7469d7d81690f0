/**
 * The agent store's own cost on SQLite (server/devices/agent-store-sql.ts), without HTTP or the
 * heartbeat's decisions: 20,000 token lookups (`deviceByTokenHash`) each followed by a `touch`,
 * 128 touches a group commit, over 500 devices. Prints the CPU milliseconds (user + system) of
 * five rounds after a warm-up, and the median per lookup-and-touch pair: CPU time, not wall
 * time, so that other work on a shared machine weighs less.
 *
 *   npx tsx bench/agent-store-micro.mts
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { SqlAgentStore } from "../server/devices/agent-store-sql";
import { SqliteDriver } from "../server/devices/sqlite-driver";

const N = 20_000;
const C = 128;
const DEVICES = 500;

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "drover-micro-"));
const file = path.join(dir, "x.db");
const schema = new Database(file);
const migrations = path.resolve(import.meta.dirname, "../prisma/migrations");
for (const m of fs.readdirSync(migrations).filter((d) => fs.existsSync(path.join(migrations, d, "migration.sql"))).sort()) {
  schema.exec(fs.readFileSync(path.join(migrations, m, "migration.sql"), "utf8"));
}
const insert = schema.prepare(
  `INSERT INTO "Device" ("id", "name", "platform", "role", "agentVersion", "tokenHash", "createdAt", "updatedAt")
    VALUES (?, ?, 'linux-amd64', 'worker', 't', ?, '2026-01-01T00:00:00.000+00:00', '2026-01-01T00:00:00.000+00:00')`,
);
for (let i = 0; i < DEVICES; i++) insert.run(`d${i}`, `dev-${i}`, `hash-${i}`);
schema.close();
const store = new SqlAgentStore(new SqliteDriver(file));

/** One round: CPU milliseconds for N lookup-and-touch pairs. */
async function round(): Promise<number> {
  const c0 = process.cpuUsage();
  for (let done = 0; done < N; done += C) {
    const touches: Promise<void>[] = [];
    for (let j = 0; j < C && done + j < N; j++) {
      const device = (await store.deviceByTokenHash(`hash-${(done + j) % DEVICES}`))!;
      touches.push(store.touch(device.id, `{"n":${done + j}}`, new Date()));
    }
    await Promise.all(touches);
  }
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / 1000;
}

await round();
const ms: number[] = [];
for (let r = 0; r < 5; r++) ms.push(await round());
ms.sort((a, b) => a - b);
console.log(JSON.stringify({ cpuMs: ms.map((m) => Math.round(m)), medianCpuMs: Math.round(ms[2]!), cpuUsPerPair: +((ms[2]! * 1000) / N).toFixed(2) }));
await store.close();
fs.rmSync(dir, { recursive: true, force: true });
