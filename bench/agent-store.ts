/**
 * Heartbeats per second through the agent store (server/devices/agent-store.ts), in process:
 * the SQLite fast path against PgFastPath, rounds interleaved so that other work on the machine
 * weighs on both alike. Each heartbeat is what the agent API does for `POST /status` less HTTP:
 * the token lookup and `ingestStatus` (a report that changes no status: the touch, batched by
 * group commit, and the LOST check), 128 at a time, over 500 devices.
 *
 *   npx tsx bench/agent-store.ts [rounds=6] [perRound=4000]
 *
 * PostgreSQL: the test server's (DROVER_TEST_PG_URL, default postgres:postgres@127.0.0.1:5432);
 * it is skipped when unreachable, or left out with DROVER_BENCH_STORES=sqlite (to compare the
 * SQLite path alone across versions). Prints the median heartbeats/s of each store as JSON.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createHash, randomBytes } from "node:crypto";
import { startServer, type RunningServer } from "../server/main";
import { newPgDatabase } from "../tests/helpers/server";
import { ingestStatus } from "../server/devices/heartbeat";
import { StatusReport } from "../lib/protocol";

const rounds = Number(process.argv[2] ?? 6);
const perRound = Number(process.argv[3] ?? 4000);
const DEVICES = 500;
const CONCURRENCY = 128;

const env = { PORT: "0", HOST: "127.0.0.1", LOG_LEVEL: "silent", DROVER_ADMIN_PASSWORD: "bench-password-1", DROVER_SWEEP_SECONDS: "3600" };

interface Store {
  name: string;
  server: RunningServer;
  hashes: string[];
  cleanup(): Promise<void>;
}

async function withDevices(name: string, server: RunningServer, cleanup: () => Promise<void>): Promise<Store> {
  const hashes: string[] = [];
  const rows = Array.from({ length: DEVICES }, (_, i) => {
    const hash = createHash("sha256").update(randomBytes(32)).digest("hex");
    hashes.push(hash);
    return { name: `bench-${i}`, platform: "linux-amd64", role: "worker", agentVersion: "1.0.0", tokenHash: hash };
  });
  await server.ctx.db.device.createMany({ data: rows });
  return { name, server, hashes, cleanup };
}

async function sqlite(): Promise<Store> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "drover-bench-store-"));
  const server = await startServer({ console: false, env: { ...env, DATABASE_URL: `file:${path.join(dir, "drover.db")}` } });
  return withDevices("sqlite", server, async () => {
    await server.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });
}

async function postgresql(): Promise<Store | null> {
  let database: Awaited<ReturnType<typeof newPgDatabase>>;
  try {
    database = await newPgDatabase();
  } catch (error) {
    console.error(`PostgreSQL skipped: ${(error as Error).message}`);
    return null;
  }
  const server = await startServer({ console: false, skipMigrate: true, env: { ...env, DATABASE_URL: database.url } });
  return withDevices("postgresql", server, async () => {
    await server.close();
    await database.drop();
  });
}

const report = StatusReport.parse({ resources: { cpu: "Healthy", memory: "Healthy", disk: "Healthy" }, applications: [], config: { renderedVersion: 0 }, actions: [] });

/** One round: `perRound` heartbeats, CONCURRENCY in flight; answers heartbeats per second. */
async function round(store: Store, count = perRound): Promise<number> {
  const { ctx } = store.server;
  let next = 0;
  const t0 = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < count) {
        const i = next++;
        const device = await ctx.fast!.deviceByTokenHash(store.hashes[i % store.hashes.length]!);
        await ingestStatus(ctx, device!, report);
      }
    }),
  );
  return count / (Number(process.hrtime.bigint() - t0) / 1e9);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const only = process.env.DROVER_BENCH_STORES?.split(",");
const stores = [!only || only.includes("sqlite") ? await sqlite() : null, !only || only.includes("postgresql") ? await postgresql() : null].filter((s): s is Store => s !== null);
try {
  // Warm-up: every device Online (its first report changes its status), statements prepared.
  for (const s of stores) await round(s, DEVICES * 2);
  const results: Record<string, number[]> = Object.fromEntries(stores.map((s) => [s.name, []]));
  for (let r = 0; r < rounds; r++) for (const s of stores) results[s.name]!.push(await round(s));
  console.log(
    JSON.stringify(
      {
        rounds,
        perRound,
        devices: DEVICES,
        concurrency: CONCURRENCY,
        heartbeatsPerSecond: Object.fromEntries(Object.entries(results).map(([k, v]) => [k, { median: Math.round(median(v)), rounds: v.map(Math.round) }])),
        loadAverage: os.loadavg().map((x) => Math.round(x * 10) / 10),
      },
      null,
      2,
    ),
  );
} finally {
  for (const s of stores) await s.cleanup();
}
