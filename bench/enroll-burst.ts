/**
 * An enrollment burst (issue 11): BENCH_AGENTS devices (2,000) ask to join at once, BENCH_CONCURRENCY
 * (200) requests in flight, auto-approved (bench=true), and each then asks for its decision
 * and gets its device token, as an agent's first two calls do. Reports enrollments and tokens
 * a second, their latencies (p50/p99) and refusals (429) or failures (5xx) by status. The
 * server on SQLite, or `--db postgresql` on a fresh PostgreSQL database. Step 1 of `npm run bench`
 * enrolls the same way through the simulator; this measures the server alone.
 *
 * Alone: `npx tsx bench/enroll-burst.ts [--db postgresql]` (JSON on stdout).
 * Options (env): BENCH_AGENTS (2000), BENCH_CONCURRENCY (200), BENCH_PORT (3297), BENCH_URL (a server
 * already running, with DROVER_AUTO_APPROVE=bench=true, e.g. one started under a profiler).
 */
import { randomBytes } from "node:crypto";
import { benchDb, client, logger, percentile, runScope, startServerProcess } from "./lib";

export interface EnrollBurstReport {
  db: string;
  devices: number;
  concurrency: number;
  enroll: { perSecond: number; p50Ms: number; p99Ms: number };
  token: { perSecond: number; p50Ms: number; p99Ms: number };
  /** Answers other than 201/200 by status, retried until they were (429 waits its Retry-After, at most 1 s here). */
  refused: Record<string, number>;
}

/** Runs `count` jobs, `concurrency` at a time; returns each job's duration in ms and the wall time. */
async function pool(count: number, concurrency: number, job: (i: number) => Promise<void>): Promise<{ ms: number[]; wallMs: number }> {
  const ms: number[] = [];
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: Math.min(concurrency, count) }, async () => {
      for (let i = next++; i < count; i = next++) {
        const start = performance.now();
        await job(i);
        ms.push(performance.now() - start);
      }
    }),
  );
  return { ms: ms.sort((a, b) => a - b), wallMs: performance.now() - t0 };
}

export async function benchEnrollBurst(url: string, devices: number, concurrency: number, log: (m: string) => void): Promise<EnrollBurstReport> {
  const { json } = client(url);
  const refused: Record<string, number> = {};
  /** Sends until the answer is `ok`, counting every other status. */
  const until = async <T>(ok: number, send: () => Promise<{ status: number; body: T }>): Promise<T> => {
    for (;;) {
      const r = await send();
      if (r.status === ok) return r.body;
      refused[r.status] = (refused[r.status] ?? 0) + 1;
      if (r.status !== 429 && r.status < 500) throw new Error(`${r.status} ${JSON.stringify(r.body)}`);
      await new Promise((res) => setTimeout(res, 200 + Math.random() * 800));
    }
  };
  const agents = Array.from({ length: devices }, (_, i) => ({ name: `burst-${String(i).padStart(5, "0")}`, secret: randomBytes(32).toString("base64url"), id: "" }));
  const enroll = await pool(devices, concurrency, async (i) => {
    const a = agents[i]!;
    const body = { deviceName: a.name, labels: { bench: "true" }, platform: "linux-amd64", role: "worker", agentVersion: "bench", secret: a.secret };
    const created = await until<{ enrollmentId: string; status: string }>(201, () => json("POST", "/api/agent/v1/enrollments", body, {}, true));
    if (created.status !== "Approved") throw new Error(`${a.name}: ${created.status}, not auto-approved`);
    a.id = created.enrollmentId;
  });
  log(`${devices} enrollments in ${(enroll.wallMs / 1000).toFixed(1)} s`);
  const token = await pool(devices, concurrency, async (i) => {
    const a = agents[i]!;
    const decision = await until<{ token?: string }>(200, () => json("GET", `/api/agent/v1/enrollments/${a.id}?wait=0`, undefined, { "x-enrollment-secret": a.secret }));
    if (!decision.token) throw new Error(`${a.name}: no token in its first approved answer`);
  });
  log(`${devices} tokens in ${(token.wallMs / 1000).toFixed(1)} s`);
  const figures = (r: { ms: number[]; wallMs: number }) => ({
    perSecond: Math.round(devices / (r.wallMs / 1000)),
    p50Ms: Math.round(percentile(r.ms, 50)),
    p99Ms: Math.round(percentile(r.ms, 99)),
  });
  return { db: benchDb, devices, concurrency, enroll: figures(enroll), token: figures(token), refused };
}

// Alone: its own server on a fresh database.
if (import.meta.url === `file://${process.argv[1]}`) {
  const log = logger("bench-enroll");
  const port = Number(process.env.BENCH_PORT ?? 3297);
  const { deadline, children, dir } = runScope("bench-enroll", 900);
  void (async () => {
    const url = process.env.BENCH_URL ?? `http://127.0.0.1:${port}`;
    if (!process.env.BENCH_URL) children.push(await startServerProcess({ port, dir, adminPassword: "bench-admin-password", env: { DROVER_AUTO_APPROVE: "bench=true" }, deadline }));
    const report = await benchEnrollBurst(url, Number(process.env.BENCH_AGENTS ?? 2000), Number(process.env.BENCH_CONCURRENCY ?? 200), log);
    process.stdout.write(JSON.stringify({ enrollBurst: report }, null, 2) + "\n");
    process.exit(0);
  })().catch((error: unknown) => {
    log(`failed: ${error instanceof Error ? error.stack : String(error)}`);
    process.exit(1);
  });
}
