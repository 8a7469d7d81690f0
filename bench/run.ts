/**
 * `npm run bench`: Drover's capacity on this machine, loopback only, bounded in count and time.
 *
 *   0. the workflow run view (issue 9, bench/workflow-graph.ts), first while the machine is
 *      quiet: in Chromium, a 2,000-step workflow from navigation to drawn, and a 10,000-step
 *      one's first draw, frame times while panning and zooming, a click on a step.
 *   0b. the agent as shipped (issue 12, bench/agent-footprint.ts): npm run build:agent's size,
 *      and the built agent's RSS idling against the server (as installed, with plain node, a bare
 *      node, the agent from its sources through tsx).
 *   1. held polls: N simulated agents (separate processes, BENCH_AGENTS_PER_PROCESS each) enroll, get auto-approved and
 *      long-poll; server RSS before and with them held → MB per 1,000 held polls, read 3 s after 99 % are held and again
 *      BENCH_SETTLE_SECONDS later, each reading split into V8's heap, malloc's arenas and the rest (issue 22 item 4).
 *      On a fresh server: steps 0 and 0b run on one of their own, stopped first.
 *   1b. the devices list (issue 10, bench/device-list.ts) in Chromium with them held: first
 *      rows after navigation, a label filter applied, a sort, the next page.
 *   2. wake latency: with them held, the bench's own devices each hold a poll; time from the
 *      decommission request being sent to that device's held poll answering (p50/p99).
 *   3. approve latency: with them held, time from an operator's approve request to the
 *      device's held poll answering with the action (p50/p99).
 *   3b. fleet template change: the held agents as one fleet without a rollout policy; time
 *      from the PUT to every held poll answered with the new spec, and to every member
 *      UpToDate.
 *   4. actions completed per second: 1,000 more simulated agents run noop actions created
 *      for all of them at once by label selector, round after round.
 *   4c. a plan (issue 8): a k0s Plan over the 1,000 simulated workers of step 4 (discovered by
 *      selector), limits.concurrent 100: time from create to Completed, and the server's added
 *      work per node (its CPU time and the rows it wrote), next to a round of bare actions.
 *   4b. the same rounds on 1,000 lean protocol loops (bench/action-load.mjs): the server's
 *      own capacity, without the full simulator's CPU on the same two cores.
 *   5. heartbeat ingestion: a load process sends POST /status as fast as the server takes
 *      them for a fixed window; rate from the server's own counter.
 *   5b. on PostgreSQL: a second server on the same database, the heartbeat load split over both.
 *   6. TLS's cost (issue 23, bench/tls.ts), the earlier steps' simulators stopped first: on two
 *      fresh servers, plain HTTP then DROVER_TLS=auto, BENCH_TLS_AGENTS simulated agents each hold
 *      a poll (MB of RSS, V8 heap and external memory per 1,000 held), then a reconnect storm:
 *      the server killed and started again, the time until 50 %, 99 % and all of the polls are
 *      held again, its CPU seconds, and over TLS its handshakes new and resumed.
 *
 * `npm run bench -- --db postgresql` (or BENCH_DB=postgresql): the same steps with the server on a
 * fresh PostgreSQL database (BENCH_PG_URL, default postgres:postgres@127.0.0.1:5432; issue 11).
 *
 * Options (env): BENCH_AGENTS (10000), BENCH_WAKE_SAMPLES (200), BENCH_ACTION_AGENTS (1000),
 * BENCH_ACTION_ROUNDS (5), BENCH_RATE (400, step 1's enrollments a second), BENCH_PLAN_CONCURRENT (100), BENCH_HEARTBEAT_SECONDS (10), BENCH_PORT (3290),
 * BENCH_DEADLINE_SECONDS (3000: a run on PostgreSQL took ≈ 25 min here, past the old 20), BENCH_GRAPH (1; 0 skips step 0), BENCH_GRAPH_STEPS (2000),
 * BENCH_GRAPH_BIG_STEPS (10000), BENCH_DEVICE_LIST (1; 0 skips step 1b), BENCH_AGENT_FOOTPRINT (1; 0 skips step 0b),
 * BENCH_AGENTS_PER_PROCESS (5000: step 1's simulator is split over processes of at most this many),
 * BENCH_SERVER_HEARTBEAT_SECONDS (the main server's DROVER_HEARTBEAT_SECONDS; unset, its default 30),
 * BENCH_HELD_ONLY (0; 1 runs and reports step 1 alone, steps 0 and 0b only if BENCH_GRAPH=1 / BENCH_AGENT_FOOTPRINT=1:
 * `BENCH_HELD_ONLY=1 BENCH_AGENTS=19000 npm run bench`, one server holding 19,000 polls, issue 22),
 * BENCH_LATENCY_ONLY (0; 1 runs steps 1, 2, 3 and 3b and reports them: the latency targets in ≈ 4 minutes, `BENCH_DEVICE_LIST=0` skipping 1b),
 * BENCH_SETTLE_SECONDS (30: step 1's second reading, that long after the first), BENCH_SIM_NICE (0: the nice value of the
 * simulators of steps 1 and 4, e.g. 10 so that they do not take the server's share of the cores), BENCH_HEAP_SNAPSHOT (a folder: step 1's
 * server writes a heap snapshot there after its last reading),
 * BENCH_CONSOLE (1; 0 runs the server without the console, scripts/api-server.ts, and builds nothing: step 1 alone, where Next
 * cannot build; step 0, the console in Chromium, is then skipped), BENCH_TLS (1; 0 skips step 6), BENCH_TLS_AGENTS (BENCH_AGENTS: step 6's agents, each storm's),
 * BENCH_STORM_SECONDS (300: a storm's longest wait), BENCH_TLS_ONLY (0; 1 runs step 6 alone),
 * BENCH_SERVER_PROF (a folder: the servers of steps 1–5 write their CPU profiles there at the end),
 * BENCH_TLS_PLAIN (1; 0 runs step 6's TLS half alone), BENCH_SIM_PROF (a folder: the simulators of
 * steps 1 and 6 write their CPU profiles there, stopped by SIGTERM: step 1's at the end of the run,
 * step 6's at the end of each half).
 * Step 6 at full size, alone, on a quiet machine (docs/architecture.md "Session 18: what TLS
 * costs" has it at 1,000 agents on a loaded one):
 *   BENCH_TLS_ONLY=1 BENCH_TLS_AGENTS=10000 npm run bench
 */
import { spawn, execFileSync, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { benchDb, client, cpuMs, logger, memoryReading, node, percentile, probeRetries, root, rssMb, runScope, sleep, startServerProcess, stopProfiledServers } from "./lib";
import { benchWorkflowGraph, type GraphBenchReport } from "./workflow-graph";
import { benchDeviceList, enrollQuiet, type DeviceListReport } from "./device-list";
import { benchAgentFootprint, type AgentFootprintReport } from "./agent-footprint";
import { benchTls, type TlsBenchReport } from "./tls";

const AGENTS = Number(process.env.BENCH_AGENTS ?? 10_000);
/** Simulated agents per simulator process: each holds a socket per agent and up to 2,048 idle ones, under its 20,000 open files. */
const AGENTS_PER_PROCESS = Number(process.env.BENCH_AGENTS_PER_PROCESS ?? 5_000);
/** Stop after step 1 (held polls): BENCH_AGENTS=19000 fits one server's sockets alone, not with step 4's agents besides. */
const HELD_ONLY = process.env.BENCH_HELD_ONLY === "1";
/** Stop after step 3b: the held polls and the three latencies (wake, approve, fleet change) alone. */
const LATENCY_ONLY = process.env.BENCH_LATENCY_ONLY === "1";
const WAKE_SAMPLES = Number(process.env.BENCH_WAKE_SAMPLES ?? 200);
const ACTION_AGENTS = Number(process.env.BENCH_ACTION_AGENTS ?? 1000);
const ACTION_ROUNDS = Number(process.env.BENCH_ACTION_ROUNDS ?? 5);
const PLAN_CONCURRENT = Number(process.env.BENCH_PLAN_CONCURRENT ?? 100);
const HEARTBEAT_WINDOW = Number(process.env.BENCH_HEARTBEAT_SECONDS ?? 10);
/**
 * The main server's heartbeat spacing (DROVER_HEARTBEAT_SECONDS; unset, its default of 30 s). The
 * capacity model (docs/architecture.md) assumes 60 s; at 19,000 agents on two cores the
 * simulators' own CPU for a heartbeat every 30 s is what this machine runs out of.
 */
const SERVER_HEARTBEAT_SECONDS = process.env.BENCH_SERVER_HEARTBEAT_SECONDS;
/** Enrollments a second in step 1's ramp (the simulator's --rate). */
const RAMP_RATE = Number(process.env.BENCH_RATE ?? 400);
const PORT = Number(process.env.BENCH_PORT ?? 3290);
const TLS_STEP = process.env.BENCH_TLS !== "0";
const TLS_ONLY = process.env.BENCH_TLS_ONLY === "1";
const TLS_AGENTS = Number(process.env.BENCH_TLS_AGENTS ?? AGENTS);
const STORM_SECONDS = Number(process.env.BENCH_STORM_SECONDS ?? 300);
const URL_ = `http://127.0.0.1:${PORT}`;
const ADMIN_PASSWORD = "bench-admin-password";
/** Step 1 reads the server's memory again this long after its first reading (the ramp's garbage collected, or not). */
const SETTLE_SECONDS = Number(process.env.BENCH_SETTLE_SECONDS ?? 30);
/**
 * The simulators' nice value (0: as the server). They stand in for devices elsewhere: at equal
 * priority four simulator processes of 19,000 agents take four fifths of two cores from the one
 * server (Linux shares a core's time by process), which then accepts connections too slowly.
 */
const SIM_NICE = Number(process.env.BENCH_SIM_NICE ?? 0);
/** A folder: step 1's server writes a heap snapshot there after its last reading (SIGUSR2). */
const HEAP_SNAPSHOT_DIR = process.env.BENCH_HEAP_SNAPSHOT;
const { json, metric, metricsText } = client(URL_);
const log = logger("bench");

const { deadline: DEADLINE, children, dir, checkDeadline } = runScope("bench", Number(process.env.BENCH_DEADLINE_SECONDS ?? 3000));

const machine = () => `${os.cpus().length} cores, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, node ${process.version}`;

async function enroll(name: string, labels: Record<string, string> = {}): Promise<string> {
  const secret = randomBytes(32).toString("base64url");
  // The same name and secret again is the same request (AGENT_PROTOCOL.md): safe to retry.
  const e = await json<{ enrollmentId: string; token?: string }>("POST", "/api/agent/v1/enrollments", {
    deviceName: name, labels: { bench: "true", ...labels }, platform: "linux-amd64", role: "worker", agentVersion: "bench", secret,
  }, {}, true);
  if (e.status !== 201) throw new Error(`enroll ${name}: ${e.status} ${JSON.stringify(e.body)}`);
  // Approved at once (the bench's rule), the answer carries the token; an older server's decision does.
  const token = e.body.token ?? (await json<{ token?: string }>("GET", `/api/agent/v1/enrollments/${e.body.enrollmentId}?wait=10`, undefined, { "x-enrollment-secret": secret })).body.token;
  if (!token) throw new Error(`no token for ${name}`);
  const auth = { authorization: `Bearer ${token}` };
  // Its first heartbeat makes it Online (what actions are offered to). Refused for the server's
  // sake (429 past the heartbeats in flight, 503): sent again after a moment, as an agent would.
  for (;;) {
    const hb = await json("POST", "/api/agent/v1/status", { resources: { cpu: "Healthy", memory: "Healthy", disk: "Healthy" }, config: { renderedVersion: 0 } }, auth, true);
    if (hb.status === 200) break;
    if (hb.status !== 429 && hb.status !== 503) throw new Error(`first heartbeat of ${name}: ${hb.status} ${JSON.stringify(hb.body)}`);
    checkDeadline();
    await sleep(500);
  }
  return token;
}

/** Step 6 (bench/tls.ts) on ports PORT+2 and PORT+3 (PORT+1 is step 5b's second server). */
async function tlsStep(): Promise<TlsBenchReport> {
  log(`TLS's cost: ${TLS_AGENTS} agents on plain HTTP, then on TLS; a reconnect storm on each`);
  return benchTls({
    agents: TLS_AGENTS, agentsPerProcess: AGENTS_PER_PROCESS, rate: RAMP_RATE, port: PORT + 2, dir, adminPassword: ADMIN_PASSWORD, children,
    deadline: DEADLINE, stormSeconds: STORM_SECONDS, log, plain: process.env.BENCH_TLS_PLAIN !== "0",
  });
}

async function main() {
  if (process.env.BENCH_CONSOLE !== "0") execFileSync(process.execPath, [path.join(root, "scripts", "ensure-build.mjs")], { stdio: "inherit" });
  if (TLS_ONLY) {
    log(`machine load: ${os.loadavg().map((l) => l.toFixed(2)).join(" ")}`);
    const tls = await tlsStep();
    process.stdout.write(JSON.stringify({ database: benchDb, machine: machine(), loadAverage: os.loadavg().map((l) => Number(l.toFixed(2))), tls }, null, 2) + "\n");
    return;
  }
  // Steps 0 and 0b on a server of their own, stopped before step 1's starts: what they leave in a
  // server's memory (a 10,000-step workflow, the console's pages, their garbage) is not the held
  // polls' (issue 22 item 4: it read as ≈ 11 MB per 1,000 more than step 6's fresh server).
  // BENCH_HELD_ONLY runs step 1 alone unless they are asked for (BENCH_GRAPH=1, BENCH_AGENT_FOOTPRINT=1).
  // Step 0 renders the console in Chromium: without it (BENCH_CONSOLE=0) there is no page to sign in to.
  const CONSOLE = process.env.BENCH_CONSOLE !== "0";
  const stepOn = (name: string) => {
    if (name === "BENCH_GRAPH" && !CONSOLE) return false;
    return HELD_ONLY ? process.env[name] === "1" : process.env[name] !== "0";
  };
  let workflowGraph: GraphBenchReport | { skipped: string } = { skipped: CONSOLE ? "BENCH_GRAPH=0" : "BENCH_CONSOLE=0: no console to render it" };
  let agentFootprint: AgentFootprintReport | { skipped: string } = { skipped: "BENCH_AGENT_FOOTPRINT=0" };
  if (stepOn("BENCH_GRAPH") || stepOn("BENCH_AGENT_FOOTPRINT")) {
    const sidePort = PORT + 4;
    const sideUrl = `http://127.0.0.1:${sidePort}`;
    const sideDir = path.join(dir, "steps-0");
    fs.mkdirSync(sideDir, { recursive: true });
    const side = await startServerProcess({ port: sidePort, dir: sideDir, adminPassword: ADMIN_PASSWORD, deadline: DEADLINE, env: { DROVER_AUTO_APPROVE: "bench=true" } });
    children.push(side);
    // 0. The workflow run view in Chromium, before the agents load the machine (at most 5 minutes).
    if (stepOn("BENCH_GRAPH")) {
      log("workflow run view: 2,000 and 10,000 steps in Chromium");
      workflowGraph = await benchWorkflowGraph({
        url: sideUrl, adminPassword: ADMIN_PASSWORD, log, deadline: Math.min(DEADLINE, Date.now() + 300_000),
        steps: Number(process.env.BENCH_GRAPH_STEPS ?? 2000), bigSteps: Number(process.env.BENCH_GRAPH_BIG_STEPS ?? 10_000),
      });
    }
    // 0b. The agent as shipped (issue 12): bundle size and idle RSS.
    if (stepOn("BENCH_AGENT_FOOTPRINT")) {
      log("agent footprint: the built agent's size and idle memory");
      agentFootprint = await benchAgentFootprint({ url: sideUrl, dir: sideDir, idleSeconds: 20, log });
    }
    side.kill("SIGTERM");
    await new Promise((r) => (side.exitCode !== null || side.signalCode !== null ? r(undefined) : side.once("exit", r)));
  }

  log(`server on ${URL_}, data in ${dir}`);
  // The held agents, the bench's own wake and approve devices, the action agents of step 4.
  const snapshotFlags: Record<string, string> = HEAP_SNAPSHOT_DIR ? { NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ""} --heapsnapshot-signal=SIGUSR2 --diagnostic-dir=${HEAP_SNAPSHOT_DIR}` } : {};
  const server = await startServerProcess({
    port: PORT, dir, adminPassword: ADMIN_PASSWORD, deadline: DEADLINE,
    env: {
      DROVER_AUTO_APPROVE: "bench=true", DROVER_MAX_HELD_POLLS: String(Math.max(15_000, AGENTS + 2 * WAKE_SAMPLES + ACTION_AGENTS)), ...snapshotFlags,
      ...(SERVER_HEARTBEAT_SECONDS ? { DROVER_HEARTBEAT_SECONDS: SERVER_HEARTBEAT_SECONDS } : {}),
    },
  });
  children.push(server);
  const serverPid = server.pid!;
  const token = (await json<{ token: string }>("POST", "/api/v1/auth/token", { username: "admin", password: ADMIN_PASSWORD })).body.token;
  const op = { authorization: `Bearer ${token}` };
  await sleep(2000);
  const baselineMemory = await memoryReading(serverPid, metricsText);
  const baseline = baselineMemory.rssMb;
  log(`baseline RSS ${baseline.toFixed(0)} MB (pid ${serverPid})`);

  // 1. Held polls. The simulator split over processes of at most BENCH_AGENTS_PER_PROCESS agents,
  // so that none passes its own open-file limit (a held poll and an idle keep-alive socket each).
  const simProcesses = Math.ceil(AGENTS / AGENTS_PER_PROCESS);
  const simulators: ChildProcess[] = [];
  // Their kept-alive sockets between requests are files on the server too: together within what
  // the server holds before it sheds idle sockets (17,500 of its 19,500: server/front-door.ts).
  const idleSockets = Math.max(32, Math.min(2048, Math.floor((17_500 - AGENTS) / simProcesses)));
  log(`starting ${AGENTS} simulated agents in ${simProcesses} process(es), ${idleSockets} idle sockets each`);
  for (let p = 0; p < simProcesses; p++) {
    const n = Math.min(AGENTS_PER_PROCESS, AGENTS - p * AGENTS_PER_PROCESS);
    const [exe, args] = node(path.join(root, "agent", "simulate.ts"), "--server", URL_, "--agents", String(n), "--prefix", p === 0 ? "hold" : `hold${p}`, "--labels", "bench=true,group=hold",
      "--degraded", "0", "--error", "0", "--restarts", "0", "--flap", "0", "--silent", "0", "--rate", String(RAMP_RATE / simProcesses), "--summary-seconds", "10", "--idle-sockets", String(idleSockets), "--log-level", "error");
    const sim = spawn(exe, [...(process.env.BENCH_SIM_PROF ? ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_SIM_PROF}`] : []), ...args], {
      cwd: root, stdio: ["ignore", "ignore", "inherit"], env: { ...process.env, NODE_OPTIONS: "--max-old-space-size=4096" },
    });
    if (SIM_NICE) os.setPriority(sim.pid!, SIM_NICE);
    children.push(sim);
    simulators.push(sim);
  }
  const rampStart = Date.now();
  const rampCpu0 = cpuMs(serverPid);
  const holding = [...simulators];
  const simulatorsCpuMs = () => holding.reduce((sum, sim) => sum + (sim.exitCode === null ? cpuMs(sim.pid!) : 0), 0);
  let held = 0;
  for (;;) {
    checkDeadline();
    held = await metric("drover_held_polls");
    if (held >= AGENTS * 0.99) break;
    // 10 minutes, a minute more per 1,000 agents past 10,000.
    if (Date.now() - rampStart > Math.max(10, AGENTS / 1000) * 60_000) break;
    await sleep(2000);
  }
  const rampSeconds = Math.round((Date.now() - rampStart) / 1000);
  log(`${held} polls held after ${rampSeconds} s`);
  await sleep(3000);
  const heldMemory = await memoryReading(serverPid, metricsText);
  const heldCpu = cpuMs(serverPid);
  const heldSimCpu = simulatorsCpuMs();
  const heldRss = heldMemory.rssMb;
  held = await metric("drover_held_polls");
  // What else a slow database keeps in memory at that moment (issue 22 item 4): heartbeats inside the server and queued writes.
  const statusInFlight = await metric("drover_status_in_flight");
  const storeWritesQueued = await metric("drover_store_writes_queued");
  const openFiles = fs.readdirSync(`/proc/${serverPid}/fd`).length;
  const loadAverage = os.loadavg().map((l) => Number(l.toFixed(2)));
  // The same again once the ramp is over: the reading above still holds the enrollment ramp's
  // garbage and the young generation it grew (issue 22 item 4); both readings are reported.
  log(`RSS ${heldRss.toFixed(0)} MB with ${held} held; reading again in ${SETTLE_SECONDS} s`);
  // RSS every 5 s meanwhile: where the first reading fell in the collector's cycle.
  const rssSeriesMb: number[] = [];
  for (let t = 0; t < SETTLE_SECONDS; t += 5) {
    await sleep(Math.min(5, SETTLE_SECONDS - t) * 1000);
    rssSeriesMb.push(Math.round(rssMb(serverPid)));
  }
  const settledMemory = await memoryReading(serverPid, metricsText);
  const settledCpu = cpuMs(serverPid);
  const settledSimCpu = simulatorsCpuMs();
  const settledHeld = await metric("drover_held_polls");
  const settledLoad = os.loadavg().map((l) => Number(l.toFixed(2)));
  const heapReclaims = await metric("drover_heap_reclaims_total");
  const per1000 = (mb: number, polls: number) => Number((((mb - baseline) / polls) * 1000).toFixed(1));
  if (HEAP_SNAPSHOT_DIR) await heapSnapshot(serverPid, HEAP_SNAPSHOT_DIR);
  const heldPolls = {
    agentsRequested: AGENTS,
    simulatorNice: SIM_NICE,
    serverHeartbeatSeconds: Number(SERVER_HEARTBEAT_SECONDS ?? 30),
    simulatorProcesses: simProcesses,
    pollsHeld: held,
    rampSeconds,
    serverRssBaselineMb: Math.round(baseline),
    serverRssHeldMb: Math.round(heldRss),
    /** 3 s after 99 % were held, the ramp's last enrollments still arriving. */
    rssMbPer1000Held: per1000(heldRss, held),
    /** SETTLE_SECONDS later, the same polls held (each re-polled once its wait ended). */
    settled: {
      afterSeconds: SETTLE_SECONDS, pollsHeld: settledHeld, serverRssMb: Math.round(settledMemory.rssMb), rssMbPer1000Held: per1000(settledMemory.rssMb, settledHeld),
      loadAverage: settledLoad, rssEvery5sMb: rssSeriesMb,
      /** Low-memory collections the server ran by then (server/heap.ts). */
      heapReclaims,
    },
    heapWithHeldMb: { used: Math.round(heldMemory.heapUsedMb), total: Math.round(heldMemory.heapTotalMb) },
    memory: { baseline: baselineMemory, held: heldMemory, settled: settledMemory },
    /** The server's CPU seconds from the first simulator's start to the first reading, and from there to the settled one. */
    serverCpuSeconds: { ramp: Number(((heldCpu - rampCpu0) / 1000).toFixed(1)), settle: Number(((settledCpu - heldCpu) / 1000).toFixed(1)) },
    /** The same for the simulator processes together (what the devices cost this machine), and their idle sockets each. */
    simulatorCpuSeconds: { ramp: Number((heldSimCpu / 1000).toFixed(1)), settle: Number(((settledSimCpu - heldSimCpu) / 1000).toFixed(1)) },
    simulatorIdleSockets: idleSockets,
    serverOpenFiles: openFiles,
    statusInFlight,
    storeWritesQueued,
    loadAverage,
  };
  if (HELD_ONLY) {
    process.stdout.write(JSON.stringify({ database: benchDb, machine: machine(), ...heldPolls, rssMbPer1000HeldUnder: 15 }, null, 2) + "\n");
    // Profiled, they are stopped so that they write their profiles (the run's exit would SIGKILL them).
    if (process.env.BENCH_SIM_PROF) await Promise.all(holding.map((sim) => new Promise((r) => (sim.once("exit", r), sim.kill("SIGTERM"), setTimeout(r, 20_000)))));
    return;
  }

  // 1b. The devices list in Chromium with the 10,000 held agents (and 200 quiet ones to filter).
  let deviceList: DeviceListReport | { skipped: string } = { skipped: "BENCH_DEVICE_LIST=0" };
  if (process.env.BENCH_DEVICE_LIST !== "0") {
    log("devices list in Chromium");
    await enrollQuiet(URL_, 200, log);
    deviceList = await benchDeviceList({ url: URL_, adminPassword: ADMIN_PASSWORD, devices: held + 200, selector: "group=7", deadline: Math.min(DEADLINE, Date.now() + 180_000), log });
  }

  // 2. Wake latency: our own devices, each with a held poll, decommissioned one by one.
  log(`wake latency over ${WAKE_SAMPLES} devices`);
  const wakeTokens: string[] = [];
  for (let i = 0; i < WAKE_SAMPLES; i++) wakeTokens.push(await enroll(`bench-wake-${i}`));
  const latencies: number[] = [];
  for (let i = 0; i < WAKE_SAMPLES; i++) {
    checkDeadline();
    const poll = fetch(`${URL_}/api/agent/v1/work?wait=30`, { headers: { authorization: `Bearer ${wakeTokens[i]}` } });
    await sleep(20); // let the poll park
    const t0 = performance.now();
    const [res, dec] = await Promise.all([
      poll.then(async (r) => ({ body: (await r.json()) as { decommission?: boolean }, at: performance.now() })),
      json("POST", `/api/v1/devices/bench-wake-${i}/decommission`, {}, op),
    ]);
    if (dec.status !== 200 || !res.body.decommission) throw new Error(`wake ${i}: ${dec.status} ${JSON.stringify(res.body)}`);
    latencies.push(res.at - t0);
  }
  latencies.sort((a, b) => a - b);

  // 3. Approve latency: an exec action waits for approval; the device holds its poll.
  log(`approve latency over ${WAKE_SAMPLES} devices`);
  const approveTokens: string[] = [];
  for (let i = 0; i < WAKE_SAMPLES; i++) approveTokens.push(await enroll(`bench-approve-${i}`));
  const approveLatencies: number[] = [];
  for (let i = 0; i < WAKE_SAMPLES; i++) {
    checkDeadline();
    const created = await json<{ items: { id: string; state: string }[] }>("POST", "/api/v1/actions", { device: `bench-approve-${i}`, kind: "exec", args: { command: "true" } }, op);
    const id = created.body.items[0]?.id;
    if (created.status !== 201 || created.body.items[0]?.state !== "PENDING_APPROVE") throw new Error(`create ${i}: ${created.status} ${JSON.stringify(created.body)}`);
    const poll = fetch(`${URL_}/api/agent/v1/work?wait=30`, { headers: { authorization: `Bearer ${approveTokens[i]}` } });
    await sleep(20);
    const t0 = performance.now();
    const [res, ap] = await Promise.all([
      poll.then(async (r) => ({ body: (await r.json()) as { actions: { id: string }[] }, at: performance.now() })),
      json("POST", `/api/v1/actions/${id}/approve`, { reason: "bench" }, op),
    ]);
    if (ap.status !== 200 || res.body.actions[0]?.id !== id) throw new Error(`approve ${i}: ${ap.status} ${JSON.stringify(res.body)}`);
    approveLatencies.push(res.at - t0);
  }
  approveLatencies.sort((a, b) => a - b);

  // 3b. A template change on a fleet of the AGENTS held devices, no rollout policy: time from the
  // PUT until every held poll has answered with the new spec (the server counts the answers that
  // carry a spec), and until every member reports it applied (UpToDate).
  log(`fleet of ${AGENTS}: a template change without a rollout policy`);
  const fleet = (version: string) => ({
    metadata: { name: "bench-hold" },
    spec: { selector: { matchLabels: { group: "hold" } }, template: { spec: { version, config: { files: [{ path: "/etc/bench.conf", content: version }] } } } },
  });
  interface FleetView { status: { devices: { total: number; upToDate: number } } }
  const upToDate = async () => (await json<FleetView>("GET", "/api/v1/fleets/bench-hold", undefined, op)).body.status.devices;
  const createdFleet = await json("POST", "/api/v1/fleets", fleet("1.0.0"), op);
  if (createdFleet.status !== 201) throw new Error(`create fleet: ${createdFleet.status} ${JSON.stringify(createdFleet.body)}`);
  for (;;) {
    checkDeadline();
    const d = await upToDate();
    // Every member whose agent holds a poll: one that gave up (below) never reports the spec.
    if (d.total >= held && d.upToDate >= Math.min(d.total, await metric("drover_held_polls"))) break;
    await sleep(1000);
  }
  await sleep(3000);
  const members = (await upToDate()).total;
  // The polls to answer are the members' held polls: a member whose agent gave up (its enrollment
  // answer lost, its retry refused as "name taken") holds none, and counting members instead
  // waited for other agents' repeated answers to stand in for it (41 s once, for 10,000).
  const pollsToAnswer = Math.min(members, await metric("drover_held_polls"));
  const specsBefore = await metric("drover_specs_sent_total");
  const fleetT0 = performance.now();
  const changed = await json("PUT", "/api/v1/fleets/bench-hold", fleet("1.1.0"), op);
  const putMs = performance.now() - fleetT0;
  if (changed.status !== 200) throw new Error(`change fleet: ${changed.status} ${JSON.stringify(changed.body)}`);
  let allAnsweredMs = NaN;
  for (;;) {
    checkDeadline();
    if ((await metric("drover_specs_sent_total")) - specsBefore >= pollsToAnswer) {
      allAnsweredMs = performance.now() - fleetT0;
      break;
    }
    await sleep(100);
  }
  let allAppliedMs = NaN;
  for (;;) {
    checkDeadline();
    // Every member that holds a poll: one whose agent gave up never applies it (the wait was endless then).
    if ((await upToDate()).upToDate >= pollsToAnswer) {
      allAppliedMs = performance.now() - fleetT0;
      break;
    }
    await sleep(500);
  }
  log(`fleet change: PUT answered in ${Math.round(putMs)} ms, every held poll in ${Math.round(allAnsweredMs)} ms, every member up to date in ${Math.round(allAppliedMs)} ms`);
  const latencyReport = {
    wakeMs: { samples: latencies.length, p50: Number(percentile(latencies, 50).toFixed(1)), p99: Number(percentile(latencies, 99).toFixed(1)), max: Number((latencies.at(-1) ?? NaN).toFixed(1)) },
    approveToOfferMs: {
      samples: approveLatencies.length,
      p50: Number(percentile(approveLatencies, 50).toFixed(1)),
      p99: Number(percentile(approveLatencies, 99).toFixed(1)),
      max: Number((approveLatencies.at(-1) ?? NaN).toFixed(1)),
    },
    fleetTemplateChange: {
      members,
      pollsHeld: pollsToAnswer,
      putAnsweredMs: Math.round(putMs),
      everyHeldPollAnsweredMs: Math.round(allAnsweredMs),
      everyMemberUpToDateMs: Math.round(allAppliedMs),
    },
  };
  if (LATENCY_ONLY) {
    process.stdout.write(JSON.stringify({ database: benchDb, machine: machine(), ...heldPolls, ...latencyReport, deviceList }, null, 2) + "\n");
    return;
  }

  // 4. Actions completed per second across ACTION_AGENTS simulated agents.
  log(`actions: ${ACTION_AGENTS} more agents, ${ACTION_ROUNDS} rounds of noop`);
  const simAct = spawn(...node(path.join(root, "agent", "simulate.ts"), "--server", URL_, "--agents", String(ACTION_AGENTS), "--prefix", "act",
    "--labels", "bench=true,group=act", "--degraded", "0", "--error", "0", "--restarts", "0", "--flap", "0", "--silent", "0", "--rate", "400",
    "--action-seconds", "0-0", "--summary-seconds", "10", "--log-level", "error"), { cwd: root, stdio: ["ignore", "ignore", "inherit"] });
  if (SIM_NICE) os.setPriority(simAct.pid!, SIM_NICE);
  children.push(simAct);
  simulators.push(simAct);
  const onlineAct = async () =>
    (await json<{ total: number }>("GET", `/api/v1/devices?labelSelector=${encodeURIComponent("group=act")}&summary=Online&limit=1`, undefined, op)).body.total;
  while ((await onlineAct()) < ACTION_AGENTS) {
    checkDeadline();
    await sleep(1000);
  }
  await sleep(2000);
  // The server's own counter: cheap to read, so the probe does not slow what it measures.
  const doneBefore = await metric("drover_actions_finished_total");
  const doneCount = async () => (await metric("drover_actions_finished_total")) - doneBefore;
  const actionsStart = performance.now();
  for (let round = 1; round <= ACTION_ROUNDS; round++) {
    const created = await json("POST", "/api/v1/actions", { labelSelector: "group=act", kind: "noop", args: {} }, op);
    if (created.status !== 201) throw new Error(`create round ${round}: ${created.status} ${JSON.stringify(created.body)}`);
    while ((await doneCount()) < round * ACTION_AGENTS) {
      checkDeadline();
      await sleep(50);
    }
  }
  const actionsSeconds = (performance.now() - actionsStart) / 1000;
  const actionsDone = await doneCount();

  // 4c. A plan over the same agents: each node is signalled by one action, so the server's work
  // per node is compared with one bare action's (a round measured the same way just before).
  log(`plan: k0supdate over ${ACTION_AGENTS} workers, limits.concurrent ${PLAN_CONCURRENT}`);
  const rows = async () => {
    const events = await json<{ items: { id: number }[] }>("GET", "/api/v1/events?limit=1", undefined, op);
    return events.body.items[0]?.id ?? 0;
  };
  const bareCpu0 = cpuMs(serverPid);
  const bareRows0 = await rows();
  const bareBefore = await metric("drover_actions_finished_total");
  const bareStart = performance.now();
  const bare = await json("POST", "/api/v1/actions", { labelSelector: "group=act", kind: "noop", args: {} }, op);
  if (bare.status !== 201) throw new Error(`bare round: ${bare.status} ${JSON.stringify(bare.body)}`);
  while ((await metric("drover_actions_finished_total")) - bareBefore < ACTION_AGENTS) {
    checkDeadline();
    await sleep(50);
  }
  const bareMs = performance.now() - bareStart;
  const bareCpu = cpuMs(serverPid) - bareCpu0;
  const bareEvents = (await rows()) - bareRows0;
  await sleep(1000);
  const planYaml = [
    "apiVersion: autopilot.k0sproject.io/v1beta2",
    "kind: Plan",
    "metadata: {name: autopilot}",
    "spec:",
    "  id: bench",
    "  timestamp: now",
    "  commands:",
    "  - k0supdate:",
    "      version: v1.31.0+k0s.0",
    "      platforms:",
    "        linux-amd64: {url: 'https://example.com/k0s-v1.31.0+k0s.0-amd64'}",
    "      targets:",
    "        workers:",
    `          limits: {concurrent: ${PLAN_CONCURRENT}}`,
    "          discovery: {selector: {labels: group=act}}",
    "",
  ].join("\n");
  interface PlanView { metadata: { id: string }; status: { state: string; message: string; counts: { total: number; SignalCompleted: number } } }
  const planCpu0 = cpuMs(serverPid);
  const planRows0 = await rows();
  const planStart = performance.now();
  const planRes = await fetch(`${URL_}/api/v1/plans`, { method: "POST", headers: { ...op, "content-type": "application/yaml" }, body: planYaml });
  const planCreatedMs = performance.now() - planStart;
  const planBody = (await planRes.json()) as PlanView;
  if (planRes.status !== 201) throw new Error(`create plan: ${planRes.status} ${JSON.stringify(planBody)}`);
  // The plan's end from the server's own event log (cheap: the probe must not be the load it measures).
  let planEnd: { time: string; reason: string } | undefined;
  while (!planEnd) {
    checkDeadline();
    await sleep(100);
    const ev = await json<{ items: { time: string; reason: string }[] }>("GET", `/api/v1/events?kind=Plan&name=${planBody.metadata.id}&limit=1`, undefined, op);
    planEnd = ev.body.items.find((e) => e.reason !== "SchedulableWait" && ["Completed", "ApplyFailed", "Cancelled", "DeadlineExceeded", "IncompleteTargets", "InconsistentTargets", "MissingSignalNode", "MissingPlatform", "Restricted"].includes(e.reason));
  }
  const planMs = performance.now() - planStart;
  const planCpu = cpuMs(serverPid) - planCpu0;
  const planEvents = (await rows()) - planRows0;
  const planView = (await json<PlanView>("GET", `/api/v1/plans/${planBody.metadata.id}`, undefined, op)).body;
  if (planView.status.state !== "Completed") throw new Error(`plan ended ${planView.status.state}: ${planView.status.message}`);
  log(`plan: ${planView.status.counts.total} nodes Completed in ${Math.round(planMs)} ms; server CPU ${(planCpu / planView.status.counts.total).toFixed(2)} ms a node (bare action: ${(bareCpu / ACTION_AGENTS).toFixed(2)} ms)`);

  // 4b. The same rounds on ACTION_AGENTS lean protocol loops (bench/action-load.mjs): the server's
  // capacity, where the full simulator's own CPU is the limit on this machine.
  log(`actions, lean driver: ${ACTION_AGENTS} devices, ${ACTION_ROUNDS} rounds of noop`);
  const leanTokens: string[] = [];
  for (let i = 0; i < ACTION_AGENTS; i += 20) {
    checkDeadline();
    leanTokens.push(...(await Promise.all(Array.from({ length: Math.min(20, ACTION_AGENTS - i) }, (_, j) => enroll(`bench-lean-${i + j}`, { group: "lean" })))));
  }
  fs.writeFileSync(path.join(dir, "lean.json"), JSON.stringify({ url: URL_, tokens: leanTokens }));
  const lean = spawn(process.execPath, [path.join(root, "bench", "action-load.mjs"), path.join(dir, "lean.json")], { stdio: ["ignore", "pipe", "inherit"] });
  children.push(lean);
  let leanOut = "";
  lean.stdout!.on("data", (d: Buffer) => (leanOut += d.toString()));
  await sleep(2000);
  const leanBefore = await metric("drover_actions_finished_total");
  const leanStart = performance.now();
  for (let round = 1; round <= ACTION_ROUNDS; round++) {
    const created = await json("POST", "/api/v1/actions", { labelSelector: "group=lean", kind: "noop", args: {} }, op);
    if (created.status !== 201) throw new Error(`create lean round ${round}: ${created.status} ${JSON.stringify(created.body)}`);
    while ((await metric("drover_actions_finished_total")) - leanBefore < round * ACTION_AGENTS) {
      checkDeadline();
      await sleep(50);
    }
  }
  const leanSeconds = (performance.now() - leanStart) / 1000;
  const leanDone = (await metric("drover_actions_finished_total")) - leanBefore;
  lean.kill("SIGTERM");
  await new Promise((r) => lean.on("exit", r));
  const leanClient = JSON.parse(leanOut || "{}") as { done?: number; failed?: number };

  // 5. Heartbeat ingestion from a separate load process.
  log(`heartbeat ingestion for ${HEARTBEAT_WINDOW} s`);
  const hbTokens: string[] = [];
  for (let i = 0; i < 500; i++) hbTokens.push(await enroll(`bench-hb-${i}`));
  fs.writeFileSync(path.join(dir, "hb.json"), JSON.stringify({ url: URL_, tokens: hbTokens, seconds: HEARTBEAT_WINDOW }));
  const before = await metric("drover_heartbeats_total");
  const t0 = Date.now();
  const load = spawn(process.execPath, [path.join(root, "bench", "heartbeat-load.mjs"), path.join(dir, "hb.json")], { stdio: ["ignore", "pipe", "inherit"] });
  children.push(load);
  let loadOut = "";
  load.stdout!.on("data", (d: Buffer) => (loadOut += d.toString()));
  await new Promise((r) => load.on("exit", r));
  const after = await metric("drover_heartbeats_total");
  const seconds = (Date.now() - t0) / 1000;
  const client = JSON.parse(loadOut || "{}") as { ok?: number; failed?: number; p99Ms?: number };
  const twoServers = benchDb === "postgresql" ? await heartbeatsOnTwoServers(hbTokens) : undefined;

  // 6. TLS's cost, on servers of its own: the simulators above stopped first (their CPU and sockets).
  let tls: TlsBenchReport | { skipped: string } = { skipped: "BENCH_TLS=0" };
  if (TLS_STEP) {
    for (const sim of simulators) sim.kill("SIGTERM");
    await sleep(3000);
    tls = await tlsStep();
  }

  const report = {
    database: benchDb,
    machine: machine(),
    ...heldPolls,
    wakeMs: latencyReport.wakeMs,
    approveToOfferMs: latencyReport.approveToOfferMs,
    actions: { agents: ACTION_AGENTS, completed: actionsDone, seconds: Number(actionsSeconds.toFixed(2)), perSecond: Math.round(actionsDone / actionsSeconds) },
    plan: {
      nodes: planView.status.counts.total,
      completed: planView.status.counts.SignalCompleted,
      concurrent: PLAN_CONCURRENT,
      createAnsweredMs: Math.round(planCreatedMs),
      createToCompletedMs: Math.round(planMs),
      serverCpuMsPerNode: Number((planCpu / planView.status.counts.total).toFixed(2)),
      eventsPerNode: Number((planEvents / planView.status.counts.total).toFixed(2)),
      sameNodesAsBareActions: {
        allAtOnceMs: Math.round(bareMs),
        serverCpuMsPerAction: Number((bareCpu / ACTION_AGENTS).toFixed(2)),
        eventsPerAction: Number((bareEvents / ACTION_AGENTS).toFixed(2)),
      },
    },
    actionsLeanDriver: {
      devices: ACTION_AGENTS,
      completed: leanDone,
      seconds: Number(leanSeconds.toFixed(2)),
      perSecond: Math.round(leanDone / leanSeconds),
      failedReports: leanClient.failed ?? null,
    },
    probeRetries: probeRetries.count,
    connectionsDropped: await metric('drover_requests_refused_total{reason="max-connections"}'),
    fleetTemplateChange: latencyReport.fleetTemplateChange,
    heartbeatsPerSecond: Math.round((after - before) / seconds),
    ...(twoServers ? { twoServersOnePostgres: twoServers } : {}),
    tls,
    workflowGraph,
    agentFootprint,
    deviceList,
    heartbeatLoad: client,
    targets: { workflowGraph2000DrawnMsUnder: 1000, fleetEveryPollAnsweredMsUnder: 10_000, rssMbUnder: 500, rssMbPer1000HeldUnder: 15, wakeP99MsUnder: 100, heartbeatsPerSecondAtLeast: 2000, approveP99MsUnder: 100, actionsPerSecondAtLeast: 1000 },
  };
  process.stdout.write(JSON.stringify(report, null, 2) + "\n");
}

/** Has the server (started with --heapsnapshot-signal=SIGUSR2) write a heap snapshot into `folder`, and waits until it is written. */
async function heapSnapshot(pid: number, folder: string): Promise<void> {
  fs.mkdirSync(folder, { recursive: true });
  const before = new Set(fs.readdirSync(folder));
  process.kill(pid, "SIGUSR2");
  log(`heap snapshot of the server into ${folder}`);
  for (let size = -1; ; ) {
    await sleep(2000);
    const file = fs.readdirSync(folder).find((f) => f.endsWith(".heapsnapshot") && !before.has(f));
    const now = file ? fs.statSync(path.join(folder, file)).size : -1;
    // Written in one go by the server's main thread, which answers /metrics again only once it is done.
    if (file && now === size && (await metric("drover_held_polls").then(() => true, () => false))) return;
    size = now;
  }
}

/**
 * 5b (PostgreSQL only, issue 11): a second server on the same database, and the heartbeat load
 * split over both (half the devices each, one load process per server): the rate both servers
 * take together, from their own counters.
 */
async function heartbeatsOnTwoServers(tokens: string[]): Promise<{ heartbeatsPerSecond: number; perServer: number[] }> {
  const second = { port: PORT + 1, url: `http://127.0.0.1:${PORT + 1}` };
  log(`a second server on :${second.port}, same database; heartbeats on both for ${HEARTBEAT_WINDOW} s`);
  children.push(await startServerProcess({ port: second.port, dir, adminPassword: ADMIN_PASSWORD, env: { DROVER_AUTO_APPROVE: "bench=true" }, deadline: DEADLINE }));
  const servers = [URL_, second.url];
  const counters = servers.map((u) => client(u).metric);
  const before = await Promise.all(counters.map((m) => m("drover_heartbeats_total")));
  const t0 = Date.now();
  await Promise.all(
    servers.map((u, i) => {
      const file = path.join(dir, `hb-${i}.json`);
      fs.writeFileSync(file, JSON.stringify({ url: u, tokens: tokens.filter((_, k) => k % 2 === i), seconds: HEARTBEAT_WINDOW }));
      const load = spawn(process.execPath, [path.join(root, "bench", "heartbeat-load.mjs"), file], { stdio: ["ignore", "ignore", "inherit"] });
      children.push(load);
      return new Promise((r) => load.on("exit", r));
    }),
  );
  const seconds = (Date.now() - t0) / 1000;
  const after = await Promise.all(counters.map((m) => m("drover_heartbeats_total")));
  const perServer = after.map((a, i) => Math.round((a - before[i]!) / seconds));
  return { heartbeatsPerSecond: perServer.reduce((a, b) => a + b, 0), perServer };
}

main().then(
  async () => {
    await stopProfiledServers();
    process.exit(0);
  },
  (err: unknown) => {
    log(`failed: ${err instanceof Error ? err.stack : String(err)}`);
    process.exit(1);
  },
);
