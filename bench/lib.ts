/**
 * What the benchmark (run.ts) and the soak (soak.ts) share: a server process on a fresh
 * database, JSON and metric reads over loopback, RSS from /proc, percentiles.
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import https from "node:https";
import os from "node:os";
import path from "node:path";
import { createNodeHttpTransport } from "../agent/http-transport";
import { ServerTrust } from "../agent/server-trust";

export const root = path.resolve(import.meta.dirname, "..");
/** Node with the tsx loader, so the child pid is the process itself (RSS, clean kill). */
export const node = (file: string, ...args: string[]) => [process.execPath, ["--import", "tsx", file, ...args]] as const;
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function logger(tag: string) {
  return (msg: string) => process.stderr.write(`[${tag} ${new Date().toISOString().slice(11, 19)}] ${msg}\n`);
}

export function rssMb(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return kb / 1024;
}

const MiB = 2 ** 20;
/** glibc's non-main arenas live in heaps of this size, each aligned to it (HEAP_MAX_SIZE on 64-bit). */
const ARENA_HEAP_BYTES = 64 * MiB;

/**
 * Where a process's resident pages are, from /proc/<pid>/smaps: glibc malloc's main heap (the
 * `[heap]` mapping), its other arenas (threads' heaps: an `rw-p` mapping 64 MiB-aligned whose
 * reserved `---p` tail ends 64 MiB later), other anonymous mappings (V8's pages, WebAssembly
 * memory, large malloc blocks, thread stacks) and file pages (the node binary, libraries).
 */
export function residentMb(pid: number): { anon: number; file: number; mallocMain: number; mallocArenas: number; otherAnon: number } {
  const maps: { start: bigint; end: bigint; perms: string; name: string; rssKb: number }[] = [];
  for (const line of fs.readFileSync(`/proc/${pid}/smaps`, "utf8").split("\n")) {
    const head = /^([0-9a-f]+)-([0-9a-f]+) (\S{4}) \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (head) maps.push({ start: BigInt(`0x${head[1]}`), end: BigInt(`0x${head[2]}`), perms: head[3]!, name: head[4]!, rssKb: 0 });
    else if (line.startsWith("Rss:")) maps.at(-1)!.rssKb = Number(/(\d+)/.exec(line)?.[1] ?? 0);
  }
  const out = { anon: 0, file: 0, mallocMain: 0, mallocArenas: 0, otherAnon: 0 };
  const arena = BigInt(ARENA_HEAP_BYTES);
  maps.forEach((m, i) => {
    const mb = m.rssKb / 1024;
    if (m.name.startsWith("/")) return void (out.file += mb);
    out.anon += mb;
    const tail = maps[i + 1];
    if (m.name === "[heap]") out.mallocMain += mb;
    else if (!m.name && m.perms === "rw-p" && m.start % arena === 0n && tail && !tail.name && tail.perms === "---p" && tail.start === m.end && tail.end - m.start === arena) out.mallocArenas += mb;
    else out.otherAnon += mb;
  });
  return out;
}

/** A server's memory at one moment: /proc's view (residentMb) and V8's, from the server's own /metrics (prom-client's process metrics). */
export interface MemoryReading {
  rssMb: number;
  fileMb: number;
  mallocMainMb: number;
  mallocArenasMb: number;
  /** Anonymous pages outside malloc's heaps: V8's heap pages first of all. */
  otherAnonMb: number;
  heapUsedMb: number;
  heapTotalMb: number;
  /** The young generation's committed size (V8's new space), part of heapTotalMb. */
  newSpaceMb: number;
  /** What V8 counts outside its heap (Buffers, ArrayBuffers, native objects that report it). */
  externalMb: number;
  /** Each V8 space's committed size / size in use (old, large objects, code, …). */
  spacesMb: Record<string, [number, number]>;
}

export async function memoryReading(pid: number, metricsText: () => Promise<string>): Promise<MemoryReading> {
  const r = residentMb(pid);
  const rss = rssMb(pid);
  const text = await metricsText();
  const mb = (name: string) => Math.round((sumMetric(text, name) / MiB) * 10) / 10;
  const round = (n: number) => Math.round(n * 10) / 10;
  return {
    rssMb: round(rss),
    fileMb: round(r.file),
    mallocMainMb: round(r.mallocMain),
    mallocArenasMb: round(r.mallocArenas),
    otherAnonMb: round(r.otherAnon),
    heapUsedMb: mb("nodejs_heap_size_used_bytes"),
    heapTotalMb: mb("nodejs_heap_size_total_bytes"),
    newSpaceMb: mb('nodejs_heap_space_size_total_bytes{space="new"}'),
    externalMb: mb("nodejs_external_memory_bytes"),
    spacesMb: Object.fromEntries(
      [...text.matchAll(/^nodejs_heap_space_size_total_bytes\{space="(\w+)"\} /gm)].map(([, space]) => [
        space!,
        [mb(`nodejs_heap_space_size_total_bytes{space="${space}"}`), mb(`nodejs_heap_space_size_used_bytes{space="${space}"}`)] as [number, number],
      ]),
    ),
  };
}

/** The sum of a metric's series (all label values; `name` may carry the labels of one series) in an exposition text. */
export function sumMetric(text: string, name: string): number {
  let sum = 0;
  for (const line of text.split("\n")) if (line.startsWith(name + " ") || line.startsWith(name + "{")) sum += Number(line.split(" ").pop());
  return sum;
}

/** CPU time (user + system) the process has used so far, in ms (Linux: /proc/<pid>/stat, 100 ticks a second). */
export function cpuMs(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
  // Fields after the command's closing parenthesis: state is the 3rd field, utime the 14th, stime the 15th.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

export function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

/** Network errors the bench's own probes met and retried (a full server resets connections). */
export const probeRetries = { count: 0 };

/** A GET probe, or a request the protocol makes idempotent, is retried on a network error (up to 5 times); other requests are not. */
async function fetchProbe(input: string, init: RequestInit = {}, idempotent = false, fetchImpl: typeof fetch = fetch): Promise<Response> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fetchImpl(input, init);
    } catch (error) {
      if (((init.method ?? "GET") !== "GET" && !idempotent) || attempt >= 5) throw error;
      probeRetries.count++;
      await sleep(200 * attempt);
    }
  }
}

/** `caFile`: an https server trusted through that CA alone (the agent's node:http transport: global fetch takes no CA). */
export function client(url: string, caFile?: string) {
  const fetchImpl = caFile ? createNodeHttpTransport({ trust: new ServerTrust({ caFile }) }).fetch : fetch;
  return {
    /** `idempotent`: the same request again changes nothing (an enrollment with the same name and secret, a heartbeat), so a network error is retried. */
    async json<T>(method: string, p: string, body?: unknown, headers: Record<string, string> = {}, idempotent = false): Promise<{ status: number; body: T }> {
      const res = await fetchProbe(
        url + p,
        {
          method,
          headers: { ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers },
          body: body === undefined ? undefined : JSON.stringify(body),
        },
        idempotent,
        fetchImpl,
      );
      const text = await res.text();
      return { status: res.status, body: (text ? JSON.parse(text) : undefined) as T };
    },
    /** The sum of a metric's series (all label values). */
    async metric(name: string): Promise<number> {
      return sumMetric(await (await fetchProbe(`${url}/metrics`, {}, false, fetchImpl)).text(), name);
    },
    /** The whole exposition text, for several metrics read at one moment (sumMetric). */
    async metricsText(): Promise<string> {
      return (await fetchProbe(`${url}/metrics`, {}, false, fetchImpl)).text();
    },
  };
}

/** `npm start`'s server (production build) on `port`, data in `dir`; resolves once /healthz answers. */
/**
 * Which database the bench's servers use: `npm run bench -- --db postgresql` (or
 * BENCH_DB=postgresql) puts each run on a fresh database on BENCH_PG_URL's server (issue 11),
 * dropped when the run ends; otherwise a SQLite file in the run's folder.
 */
export const benchDb: "sqlite" | "postgresql" = process.argv.includes("--db") ? (process.argv[process.argv.indexOf("--db") + 1] === "postgresql" ? "postgresql" : "sqlite") : process.env.BENCH_DB === "postgresql" ? "postgresql" : "sqlite";
const BENCH_PG_URL = process.env.BENCH_PG_URL ?? "postgresql://postgres:postgres@127.0.0.1:5432/postgres";
const pgDatabases = new Map<string, string>();

/** The run's database URL (one per scratch folder: servers started on the same `dir` share it, as several servers share one PostgreSQL). */
export async function benchDatabaseUrl(dir: string): Promise<string> {
  if (benchDb === "sqlite") return `file:${dir}/drover.db`;
  const known = pgDatabases.get(dir);
  if (known) return known;
  const name = `drover_bench_${process.pid}_${pgDatabases.size}`;
  const admin = async (sql: string) => {
    const { default: pg } = await import("pg");
    const c = new pg.Client({ connectionString: BENCH_PG_URL });
    await c.connect();
    try {
      await c.query(sql);
    } finally {
      await c.end();
    }
  };
  await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin(`CREATE DATABASE ${name}`);
  process.on("exit", () => {
    // Best effort, synchronously: psql from Debian's package.
    try {
      execFileSync("psql", [BENCH_PG_URL, "-qc", `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`], { stdio: "ignore" });
    } catch { /* left for the next run's DROP … IF EXISTS */ }
  });
  const url = new URL(BENCH_PG_URL);
  url.pathname = `/${name}`;
  pgDatabases.set(dir, url.toString());
  return url.toString();
}

/** GET /healthz answered 200; over TLS without checking the certificate (a readiness probe on loopback, before the CA is known). */
function healthy(port: number, tls: boolean): Promise<boolean> {
  if (!tls) return fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.ok, () => false);
  return new Promise((resolve) => {
    const req = https.get({ host: "127.0.0.1", port, path: "/healthz", rejectUnauthorized: false, agent: false }, (res) => (res.resume(), resolve(res.statusCode === 200)));
    req.on("error", () => resolve(false));
  });
}

/** The CA a DROVER_TLS=auto server serves at /ca.pem, written to `file` (fetched unchecked: the bench's own server on loopback). */
export function fetchCaFile(port: number, file: string): Promise<string> {
  return new Promise((resolve, reject) => {
    https
      .get({ host: "127.0.0.1", port, path: "/ca.pem", rejectUnauthorized: false, agent: false }, (res) => {
        let pem = "";
        res.on("data", (d: Buffer) => (pem += d.toString()));
        res.on("end", () => (res.statusCode === 200 ? (fs.writeFileSync(file, pem), resolve(file)) : reject(new Error(`/ca.pem: ${res.statusCode} ${pem}`))));
      })
      .on("error", reject);
  });
}

/** Servers started with BENCH_SERVER_PROF (a folder): their CPU profiles are written when they exit. */
const profiledServers: ChildProcess[] = [];

/** Stops the profiled servers with SIGTERM (a graceful exit writes the profile; the run's exit would SIGKILL them). */
export async function stopProfiledServers(): Promise<void> {
  await Promise.all(profiledServers.filter((s) => s.exitCode === null).map((s) => new Promise((r) => (s.once("exit", r), s.kill("SIGTERM")))));
}

/** `tls`: the server's own CA and certificate (DROVER_TLS=auto), /healthz probed over TLS. */
export async function startServerProcess(opts: { port: number; dir: string; adminPassword: string; env?: Record<string, string>; deadline: number; tls?: boolean }): Promise<ChildProcess> {
  // BENCH_CONSOLE=0: the server without the console (scripts/api-server.ts), where Next cannot build (a worktree).
  const [exe, args] = node(path.join(root, ...(process.env.BENCH_CONSOLE === "0" ? ["scripts", "api-server.ts"] : ["server", "main.ts"])));
  const prof = process.env.BENCH_SERVER_PROF ? ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_SERVER_PROF}`] : [];
  const server = spawn(exe, [...prof, ...args], {
    cwd: root,
    env: {
      ...process.env, NODE_ENV: "production", PORT: String(opts.port), HOST: "127.0.0.1", DATABASE_URL: await benchDatabaseUrl(opts.dir),
      DROVER_ADMIN_PASSWORD: opts.adminPassword, LOG_LEVEL: "warn", ...(opts.tls ? { DROVER_TLS: "auto" } : {}), ...opts.env,
    },
    stdio: ["ignore", "ignore", "inherit"],
  });
  if (prof.length > 0) profiledServers.push(server);
  for (;;) {
    if (Date.now() > opts.deadline) throw new Error("the server did not start in time");
    if (server.exitCode !== null) throw new Error(`the server exited with ${server.exitCode}`);
    if (await healthy(opts.port, opts.tls === true)) return server;
    await sleep(200);
  }
}

/**
 * A run's scratch folder and child processes, both gone when the process exits, and its
 * deadline: a run is bounded in time whatever happens.
 */
export function runScope(tag: string, deadlineSeconds: number) {
  const deadline = Date.now() + deadlineSeconds * 1000;
  const children: ChildProcess[] = [];
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `drover-${tag}-`));
  process.on("exit", () => {
    for (const c of children) c.kill("SIGKILL");
    fs.rmSync(dir, { recursive: true, force: true });
  });
  process.on("SIGINT", () => process.exit(130));
  return {
    deadline,
    children,
    dir,
    checkDeadline() {
      if (Date.now() > deadline) throw new Error(`${tag} deadline passed`);
    },
  };
}
