/**
 * Step 6 of `npm run bench` (issue 23, item 5): what TLS costs. Twice, on a fresh server each (its
 * own database), once on plain HTTP and once on DROVER_TLS=auto, the same N simulated agents
 * (separate processes; over TLS trusting the CA from /ca.pem, `--ca-file`):
 *  - held polls: the server's RSS, V8 heap and external memory before and with them held, per
 *    1,000 held polls: TLS's cost is the difference between the two servers;
 *  - a reconnect storm: the server killed (SIGKILL) with every poll held, started again on the
 *    same database and port; the time from its first answer to /healthz until 50 %, 99 % and all
 *    of the polls are held again (the agents come back after their own backoff: 1 s doubling to
 *    30 s, full jitter, agent/timing.ts), the server's CPU seconds over that time, and over TLS
 *    the handshakes it completed, new or resumed (drover_tls_handshakes_total): the agents keep
 *    their TLS session through the restart (agent/http-transport.ts) and the server's ticket keys
 *    outlive the process (server/tls/session-tickets.ts).
 */
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { client, cpuMs, fetchCaFile, node, root, rssMb, sleep, startServerProcess } from "./lib";

export interface HeldPollsCost {
  pollsHeld: number;
  serverRssBaselineMb: number;
  serverRssHeldMb: number;
  /** (RSS with them held − baseline) per 1,000 held polls, and the same for the V8 heap in use and V8's external memory. */
  rssMbPer1000Held: number;
  heapUsedMbPer1000Held: number;
  externalMbPer1000Held: number;
}

export interface ReconnectStorm {
  pollsBefore: number;
  /** From the kill until the new server answered /healthz (its start: tsx, migrations, the CA read). */
  serverDownMs: number;
  /** From the new server's first /healthz answer until that share of the polls held before was held again (null: not within the step's time). */
  heldAgainMs: { p50: number | null; p99: number | null; all: number | null };
  pollsHeldAtEnd: number;
  /** CPU seconds the new server spent from its first /healthz answer until every poll was held again (or the step's time ran out). */
  serverCpuSeconds: number;
  /** Handshakes the new server completed (new or resumed) and those that did not complete (its deadline, the client gone, a TLS error). */
  handshakes?: Handshakes;
}

interface Handshakes {
  new: number;
  resumed: number;
  failed: { timeout: number; reset: number; tls: number };
}

async function handshakes(metric: (name: string) => Promise<number>): Promise<Handshakes> {
  const failed = (reason: string) => metric(`drover_tls_handshake_failures_total{reason="${reason}"}`).catch(() => 0);
  return {
    new: await metric('drover_tls_handshakes_total{session="new"}').catch(() => 0),
    resumed: await metric('drover_tls_handshakes_total{session="resumed"}').catch(() => 0),
    failed: { timeout: await failed("timeout"), reset: await failed("reset"), tls: await failed("tls") },
  };
}

export interface TlsBenchReport {
  agents: number;
  plain: { heldPolls: HeldPollsCost; reconnectStorm: ReconnectStorm } | null;
  tls: { heldPolls: HeldPollsCost; reconnectStorm: ReconnectStorm };
  /** TLS's own cost: the TLS server's figure minus the plain one's. */
  tlsExtraMbPer1000Held: { rss: number | null; heapUsed: number | null; external: number | null };
}

interface Options {
  agents: number;
  agentsPerProcess: number;
  rate: number;
  /** false: the TLS half alone (BENCH_TLS_PLAIN=0), to study the TLS storm without waiting for the plain one. */
  plain?: boolean;
  /** The plain server's port; the TLS server takes the next. */
  port: number;
  dir: string;
  adminPassword: string;
  children: ChildProcess[];
  deadline: number;
  /** How long a storm may take before it is reported as it stands. */
  stormSeconds: number;
  log: (msg: string) => void;
}

const round1 = (n: number) => Number(n.toFixed(1));
const MB = 2 ** 20;

export async function benchTls(o: Options): Promise<TlsBenchReport> {
  const plain = o.plain === false ? null : await heldAndStorm(o, false);
  const secure = await heldAndStorm(o, true);
  const extra = (key: keyof HeldPollsCost) => (plain ? round1(secure.heldPolls[key] - plain.heldPolls[key]) : null);
  return {
    agents: o.agents,
    plain,
    tls: secure,
    tlsExtraMbPer1000Held: { rss: extra("rssMbPer1000Held"), heapUsed: extra("heapUsedMbPer1000Held"), external: extra("externalMbPer1000Held") },
  };
}

async function heldAndStorm(o: Options, tls: boolean): Promise<{ heldPolls: HeldPollsCost; reconnectStorm: ReconnectStorm }> {
  const what = tls ? "TLS" : "plain HTTP";
  const port = o.port + (tls ? 1 : 0);
  // A database of its own (benchDatabaseUrl keys it by folder), shared by the server and its restart.
  const dir = path.join(o.dir, tls ? "tls" : "plain");
  fs.mkdirSync(dir, { recursive: true });
  const env = { DROVER_AUTO_APPROVE: "bench=true", DROVER_MAX_HELD_POLLS: String(Math.max(15_000, o.agents + 100)) };
  const start = async () => {
    const server = await startServerProcess({ port, dir, adminPassword: o.adminPassword, env, deadline: o.deadline, tls });
    o.children.push(server);
    return server;
  };
  let server = await start();
  const url = `${tls ? "https" : "http"}://127.0.0.1:${port}`;
  const caFile = tls ? await fetchCaFile(port, path.join(dir, "ca.pem")) : undefined;
  const { metric } = client(url, caFile);
  await sleep(2000);
  const baseline = { rss: rssMb(server.pid!), heap: await metric("nodejs_heap_size_used_bytes"), external: await metric("nodejs_external_memory_bytes") };

  o.log(`${what}: ${o.agents} simulated agents holding polls on ${url}`);
  const sims: ChildProcess[] = [];
  const processes = Math.ceil(o.agents / o.agentsPerProcess);
  for (let p = 0; p < processes; p++) {
    const n = Math.min(o.agentsPerProcess, o.agents - p * o.agentsPerProcess);
    const [exe, simArgs] = node(path.join(root, "agent", "simulate.ts"), "--server", url, "--agents", String(n), "--prefix", `${tls ? "tls" : "plain"}${p}`, "--labels", "bench=true",
        "--degraded", "0", "--error", "0", "--restarts", "0", "--flap", "0", "--silent", "0", "--rate", String(o.rate / processes), "--summary-seconds", "10",
        "--log-level", "fatal", ...(caFile ? ["--ca-file", caFile] : []));
    const sim = spawn(exe, [...(process.env.BENCH_SIM_PROF ? ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_SIM_PROF}`] : []), ...simArgs],
      { cwd: root, stdio: ["ignore", "ignore", "inherit"], env: { ...process.env, NODE_OPTIONS: "--max-old-space-size=4096" } },
    );
    sims.push(sim);
    o.children.push(sim);
  }
  const rampStart = Date.now();
  let held = 0;
  while (Date.now() - rampStart < Math.max(10, o.agents / 1000) * 60_000 && Date.now() < o.deadline) {
    held = await metric("drover_held_polls");
    if (held >= o.agents * 0.99) break;
    await sleep(2000);
  }
  await sleep(3000);
  held = await metric("drover_held_polls");
  const withHeld = { rss: rssMb(server.pid!), heap: await metric("nodejs_heap_size_used_bytes"), external: await metric("nodejs_external_memory_bytes") };
  const per1000 = (delta: number) => round1((delta / held) * 1000);
  const heldPolls: HeldPollsCost = {
    pollsHeld: held,
    serverRssBaselineMb: Math.round(baseline.rss),
    serverRssHeldMb: Math.round(withHeld.rss),
    rssMbPer1000Held: per1000(withHeld.rss - baseline.rss),
    heapUsedMbPer1000Held: per1000((withHeld.heap - baseline.heap) / MB),
    externalMbPer1000Held: per1000((withHeld.external - baseline.external) / MB),
  };
  o.log(`${what}: ${held} held, ${heldPolls.rssMbPer1000Held} MB RSS per 1,000 (heap ${heldPolls.heapUsedMbPer1000Held}, external ${heldPolls.externalMbPer1000Held})`);

  // The storm: killed with every poll held, started again on the same database and port.
  o.log(`${what}: reconnect storm, the server killed with ${held} polls held`);
  const killedAt = performance.now();
  server.kill("SIGKILL");
  await new Promise((r) => (server.exitCode !== null || server.signalCode !== null ? r(undefined) : server.once("exit", r)));
  server = await start();
  const upAt = performance.now();
  const cpu0 = cpuMs(server.pid!);
  const at: { p50: number | null; p99: number | null; all: number | null } = { p50: null, p99: null, all: null };
  let now = 0;
  const stormEnd = Math.min(o.deadline, Date.now() + o.stormSeconds * 1000);
  let nextProgress = Date.now() + 5000;
  while (Date.now() < stormEnd) {
    if (Date.now() >= nextProgress) {
      nextProgress += 5000;
      o.log(`${what}: storm at ${Math.round((performance.now() - upAt) / 1000)} s: ${now} held${tls ? `, handshakes ${JSON.stringify(await handshakes(metric))}` : ""}`);
    }
    now = await metric("drover_held_polls").catch(() => now);
    const t = Math.round(performance.now() - upAt);
    if (at.p50 === null && now >= held * 0.5) at.p50 = t;
    if (at.p99 === null && now >= held * 0.99) at.p99 = t;
    if (now >= held) {
      at.all = t;
      break;
    }
    await sleep(250);
  }
  const reconnectStorm: ReconnectStorm = {
    pollsBefore: held,
    serverDownMs: Math.round(upAt - killedAt),
    heldAgainMs: at,
    pollsHeldAtEnd: now,
    serverCpuSeconds: round1((cpuMs(server.pid!) - cpu0) / 1000),
  };
  if (tls) reconnectStorm.handshakes = await handshakes(metric);
  o.log(`${what}: storm ${JSON.stringify(reconnectStorm)}`);
  if (process.env.BENCH_SIM_PROF) {
    for (const sim of sims) sim.kill("SIGTERM");
    await sleep(12_000);
  }
  for (const sim of sims) sim.kill("SIGKILL");
  server.kill("SIGKILL");
  await sleep(1000);
  return { heldPolls, reconnectStorm };
}
