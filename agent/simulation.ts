/**
 * The fleet simulator's engine: N virtual devices in one process, each a real Agent (same
 * core, same protocol client) with an in-memory state store (or a directory each) and
 * synthetic health and applications.
 *
 * Knobs are shares of the fleet, assigned exactly (round(N × share) agents, chosen by a
 * seeded shuffle, so a run can be repeated):
 *   degraded  one resource reports Degraded
 *   error     one resource reports Error (memory) or Critical (disk)
 *   restarts  applications restart now and then: growing restart counts, Starting or Error
 *   flap      cpu toggles Healthy <-> Degraded now and then
 *   silent    stops polling and heartbeating for `silentSeconds`, then comes back, repeatedly
 *
 * Actions run through the simulated executors (executors/simulated.ts): the same kinds and
 * args checks, nothing touches the host; `actionFailure` of them fail, and exec, noop and
 * reboot take a random time in `actionSeconds`. A plan's k0supdate / airgapupdate takes
 * `planApplySeconds`, and fails on the devices named by `failDownloadNodes`,
 * `badSha256Nodes` and `failApplyNodes` (globs).
 *
 * Specs go through the same update states as on a real device (update.ts), with a simulated
 * runtime (runtime/simulated.ts) whose knobs pick template versions (the spec's `version`)
 * that crash-loop (`crashVersions`, a restart every `crashSeconds`), fail to apply
 * (`failVersions`: RollingBack → Error) or apply slowly (`slowApplySeconds` per state, for
 * `slowVersions` or every version).
 *
 * Connections: each agent holds one long-poll and briefly a second one for a heartbeat
 * or an action report. Both transports open as many connections per origin as are asked
 * for (undici's default pool is unbounded; the node:http agent is set to Infinity); the
 * node:http one keeps up to one idle socket per agent, at most 2048 (see
 * startSimulation). The limit is the open-files limit of the process (≈ 20,000 here: keep
 * one simulator process under ≈ 15,000 agents, and the server in another process).
 */
import path from "node:path";
import pino, { type Logger } from "pino";
import type { Resources } from "./health";
import { Agent, type AgentOutcome, type AgentTiming, type Applications } from "./agent";
import { ProtocolClient } from "./client";
import { DEFAULT_SIMULATED_ACTION_SECONDS, simulatedExecutors, type SimulatedPlanOptions } from "./executors";
import { createNodeHttpTransport } from "./http-transport";
import { ServerTrust, type ServerTrustOptions } from "./server-trust";
import { SimulatedRuntime, simulatedApplicationNames, type SimulatedUpdateOptions } from "./runtime/simulated";
import { FileStateStore, MemoryStateStore, type StateStore } from "./state";
import { AGENT_VERSION } from "./env";
import type { DeviceRole, RenderedSpec } from "../lib/protocol";
import type { StaticFacts, SystemFactsSource, Usage } from "./system-facts";

export interface SimulationOptions {
  server: string;
  agents: number;
  prefix?: string;
  labels?: Record<string, string>;
  /** An enrollment token every agent enrolls with (issue 12). */
  enrollmentToken?: string | undefined;
  platform?: string;
  role?: DeviceRole;
  degraded?: number;
  error?: number;
  restarts?: number;
  flap?: number;
  silent?: number;
  /** Length of a silent spell. */
  silentSeconds?: number;
  /** An agent of the silent share is active for a random time in this range between spells. */
  activeSeconds?: [number, number];
  /**
   * Spread each heartbeat interval by ±20%. The agents' default since the heartbeat-herd fix
   * (agent/timing.ts HEARTBEAT_JITTER), so false leaves it on; `timing: { heartbeatJitter: 0 }`
   * makes intervals exact.
   */
  heartbeatJitter?: boolean;
  /** Share of actions that fail (default 0). */
  actionFailure?: number;
  /** Simulated duration of exec, noop and reboot actions, seconds (default 0.05-0.5). */
  actionSeconds?: readonly [number, number];
  /** The commands simulated exec runs (others fail, as on a real agent); unset: any. */
  allowExec?: readonly string[];
  /** Agents started per second. */
  rate?: number;
  /** Keep each agent's state in DIR/NAME instead of memory. */
  stateDir?: string;
  seed?: number;
  /** Logger of the agents (each gets a child with its device name). Silent by default. */
  logger?: Logger;
  /** Timing overrides for every agent (tests). */
  timing?: Partial<AgentTiming>;
  /**
   * "node-http" (default): node:http with a keep-alive agent, ≈ 4× cheaper per request than
   * global fetch (see http-transport.ts). "fetch": Node's global fetch, as the real agent.
   */
  transport?: "node-http" | "fetch";
  /**
   * Keep-alive sockets kept open between requests, shared by the agents (node-http transport;
   * default one per agent, at most 2048). Each is a file on the server too: the bench keeps the
   * sum over its simulator processes within the server's socket budget.
   */
  idleSockets?: number;
  /**
   * How an https server is trusted (server-trust.ts: a CA file, or a pin found in its chain), for
   * the node-http transport; unset, Node's trust store. The agents share one transport, and so
   * one keep-alive pool and one TLS session to resume after a restart (http-transport.ts).
   */
  trust?: ServerTrustOptions;
  /** A fetch of your own (tests); wins over `transport`. */
  fetch?: typeof fetch;
  /** Template versions whose applications restart every `crashSeconds` once applied. */
  crashVersions?: readonly string[];
  crashSeconds?: number;
  /** Template versions that fail to apply (RollingBack → Error). */
  failVersions?: readonly string[];
  /** Seconds spent in each reported update state (default 0), for `slowVersions` or every version. */
  slowApplySeconds?: number;
  slowVersions?: readonly string[];
  /** How long a plan's k0supdate / airgapupdate takes (default 0.2 s). */
  planApplySeconds?: number;
  /** Device-name globs (`sim-0001*`) whose plan downloads fail, fail the sha256 check, or whose update command fails. */
  failDownloadNodes?: readonly string[];
  badSha256Nodes?: readonly string[];
  failApplyNodes?: readonly string[];
}

export interface SimulationStats {
  agents: number;
  started: number;
  /** Asked to join (an enrollment request went out), or already had a credential. */
  enrolled: number;
  pending: number;
  /** Holds a credential. */
  approved: number;
  polling: number;
  silent: number;
  heartbeats: number;
  specsApplied: number;
  /** Updates that ended in Error (rolled back). */
  specsFailed: number;
  /** Agents with an update under way. */
  updating: number;
  errors: number;
  actionsDone: number;
  actionsFailed: number;
  actionsCancelled: number;
  decommissioned: number;
  revoked: number;
  /** Ended for another reason (name taken, state error...). */
  failed: number;
}

export interface SimulatedAgent {
  name: string;
  agent: Agent;
  profile: Profile;
  outcome: AgentOutcome | null;
}

export interface SimulationHandle {
  readonly agents: readonly SimulatedAgent[];
  /** Resolves when every agent has been started. */
  readonly rampedUp: Promise<void>;
  stats(): SimulationStats;
  stop(): Promise<SimulationStats>;
}

export interface Profile {
  resources: "healthy" | "degraded" | "error";
  /** The resource that is not Healthy, for degraded and error profiles. */
  resource: keyof Resources;
  restarts: boolean;
  flap: boolean;
  silent: boolean;
}

/** mulberry32: a small seeded PRNG, good enough to pick profiles repeatably. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function pickShare(count: number, share: number, random: () => number): Set<number> {
  const indices = Array.from({ length: count }, (_, i) => i);
  for (let i = indices.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [indices[i], indices[j]] = [indices[j] as number, indices[i] as number];
  }
  return new Set(indices.slice(0, Math.round(count * share)));
}

/** Assigns every agent its profile: exact shares, seeded. */
export function assignProfiles(
  count: number,
  shares: { degraded: number; error: number; restarts: number; flap: number; silent: number },
  random: () => number,
): Profile[] {
  // One shuffle for the resource profiles so that error and degraded never overlap.
  const order = [...pickShare(count, 1, random)];
  const errorCount = Math.round(count * shares.error);
  const degradedCount = Math.min(count - errorCount, Math.round(count * shares.degraded));
  const error = new Set(order.slice(0, errorCount));
  const degraded = new Set(order.slice(errorCount, errorCount + degradedCount));
  const restarts = pickShare(count, shares.restarts, random);
  const flap = pickShare(count, shares.flap, random);
  const silent = pickShare(count, shares.silent, random);
  const resources: (keyof Resources)[] = ["cpu", "memory", "disk"];
  return Array.from({ length: count }, (_, i) => ({
    resources: error.has(i) ? "error" : degraded.has(i) ? "degraded" : "healthy",
    resource: error.has(i) ? (random() < 0.5 ? "memory" : "disk") : (resources[Math.floor(random() * 3)] ?? "cpu"),
    restarts: restarts.has(i),
    flap: flap.has(i),
    silent: silent.has(i),
  }));
}

/** Synthetic resources for one profile; flapping agents toggle cpu on about a third of reports. */
export function simulatedHealth(profile: Profile, random: () => number) {
  let flapped = false;
  return {
    async resources(): Promise<Resources> {
      const resources: Resources = { cpu: "Healthy", memory: "Healthy", disk: "Healthy" };
      if (profile.resources === "degraded") resources[profile.resource] = "Degraded";
      if (profile.resources === "error") resources[profile.resource] = profile.resource === "disk" ? "Critical" : "Error";
      if (profile.flap) {
        if (random() < 0.35) flapped = !flapped;
        if (flapped && resources.cpu === "Healthy") resources.cpu = "Degraded";
      }
      return resources;
    },
  };
}

/**
 * Synthetic applications: those of the running spec, or two defaults. For agents of the
 * restarts share, on about half the reports one application restarts: its count grows and
 * it reports Starting (one time in five: Error) until the next report. Counts start from 0
 * with each spec, as a real agent's do.
 */
export function simulatedApplications(profile: Profile, random: () => number) {
  const restarts = new Map<string, number>();
  let counting: number | null = null;
  return (running: RenderedSpec | null): Applications => {
    const version = running?.renderedVersion ?? 0;
    if (counting !== version) {
      restarts.clear();
      counting = version;
    }
    const names = simulatedApplicationNames(running);
    let restarted: string | undefined;
    if (profile.restarts && random() < 0.5) {
      restarted = names[Math.floor(random() * names.length)];
      if (restarted !== undefined) restarts.set(restarted, (restarts.get(restarted) ?? 0) + 1);
    }
    const failed = restarted !== undefined && random() < 0.2;
    return names.map((name) => ({
      name,
      status: name === restarted ? (failed ? "Error" : "Starting") : "Running",
      restarts: restarts.get(name) ?? 0,
    }));
  };
}

const SIMULATED_OS = [
  { os: { name: "Debian GNU/Linux", version: "12 (bookworm)" }, kernel: "6.1.0-28-amd64" },
  { os: { name: "Ubuntu", version: "22.04.5 LTS (Jammy Jellyfish)" }, kernel: "5.15.0-126-generic" },
  { os: { name: "Ubuntu", version: "24.04.1 LTS (Noble Numbat)" }, kernel: "6.8.0-49-generic" },
  { os: { name: "Rocky Linux", version: "9.5 (Blue Onyx)" }, kernel: "5.14.0-503.14.1.el9_5.x86_64" },
  { os: { name: "Alpine Linux", version: "3.20.3" }, kernel: "6.6.58-0-lts" },
] as const;
const UNAME_ARCH: Record<string, string> = { amd64: "x86_64", arm64: "aarch64", arm: "armv7l", riscv64: "riscv64" };
const GIB = 1024 ** 3;
/**
 * TLS handshakes one simulator process has in progress at most (http-transport.ts): the server's
 * handshake deadline is 10 s from the connect, and a thread that opened 5,000 at once sent their
 * ClientHellos too late. 256 are ≈ 0.3 s of this thread's work (≈ 1 ms of client CPU each).
 */
const MAX_CONNECTING = 256;
const pick = <T>(list: readonly T[], random: () => number): T => list[Math.floor(random() * list.length)] as T;

/**
 * Synthetic host facts for one simulated device: static facts drawn once (one object, so the
 * agent sees no change without comparing), usage a small random walk per reading around the
 * device's own level, high on the resource its profile makes Degraded or Error. A few draws
 * a heartbeat: cheap at 10,000 devices.
 */
export function simulatedSystemFacts(
  device: { name: string; index: number; platform: string; agentVersion: string; startedAt: Date },
  profile: Profile,
  random: () => number,
): SystemFactsSource {
  const arch = UNAME_ARCH[device.platform.split("-")[1] ?? ""] ?? device.platform.split("-")[1] ?? "x86_64";
  const host = pick(SIMULATED_OS, random);
  const n = device.index + 1;
  const facts: StaticFacts = {
    hostname: device.name,
    os: { ...host.os },
    kernel: arch === "x86_64" ? host.kernel : host.kernel.replace("amd64", "arm64").replace("x86_64", arch),
    arch,
    ips: [`10.${100 + (Math.floor(n / 62_500) % 150)}.${Math.floor(n / 250) % 250}.${(n % 250) + 2}`],
    // Up between two hours and forty days before the simulation started.
    bootTime: new Date(device.startedAt.getTime() - (2 + random() * 958) * 3_600_000).toISOString(),
    cpus: pick([2, 4, 4, 8, 8, 16], random),
    agent: { version: device.agentVersion, startedAt: device.startedAt.toISOString() },
  };
  const memoryTotal = pick([2, 4, 8, 8, 16, 32], random) * GIB;
  const diskTotal = pick([16, 32, 64, 64, 128, 256], random) * 1e9;
  const hot = (resource: keyof Resources) => (profile.resource === resource ? profile.resources : "healthy");
  const level = (resource: keyof Resources, base: number) => ({ healthy: base, degraded: 0.88, error: 0.97 })[hot(resource)];
  let cpu = level("cpu", 0.05 + random() * 0.35);
  let memory = level("memory", 0.25 + random() * 0.45);
  let disk = level("disk", 0.15 + random() * 0.5);
  const cpuBase = cpu;
  const memoryBase = memory;
  const clamp = (v: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, v));
  return {
    facts: async () => facts,
    async usage(): Promise<Usage> {
      // Back toward its own level, plus noise; a flapping device spikes now and then.
      cpu = clamp(cpu + (cpuBase - cpu) * 0.3 + (random() - 0.5) * 0.16 + (profile.flap && random() < 0.3 ? 0.5 : 0), 0, 1);
      memory = clamp(memory + (memoryBase - memory) * 0.2 + (random() - 0.5) * 0.04, 0.05, 0.995);
      disk = clamp(disk + random() * 0.0004, 0, 0.995);
      return {
        cpuPercent: Math.round(cpu * 1000) / 10,
        memory: { usedBytes: Math.round(memory * memoryTotal), totalBytes: memoryTotal },
        disk: { usedBytes: Math.round(disk * diskTotal), totalBytes: diskTotal },
      };
    },
  };
}

export function deviceNames(prefix: string, count: number): string[] {
  const width = Math.max(5, String(count).length);
  return Array.from({ length: count }, (_, i) => `${prefix}-${String(i + 1).padStart(width, "0")}`);
}

export function startSimulation(options: SimulationOptions): SimulationHandle {
  const seed = options.seed ?? Math.floor(Math.random() * 2 ** 31);
  const random = seededRandom(seed);
  const logger = options.logger ?? pino({ level: "silent" });
  // Idle sockets kept: one per agent, up to 2048. With the default 256, a thousand agents
  // whose polls and reports end together close the sockets beyond 256 only to connect
  // again a moment later (connect and close were high in a CPU profile of 1000 agents
  // doing noop actions). Not more: 10,000 agents already hold 10,000 long-poll sockets,
  // and the process may open ≈ 20,000 files.
  const transport =
    !options.fetch && options.transport !== "fetch"
      ? createNodeHttpTransport({ maxFreeSockets: options.idleSockets ?? Math.min(options.agents, 2048), maxConnecting: MAX_CONNECTING, ...(options.trust ? { trust: new ServerTrust(options.trust) } : {}) })
      : null;
  const fetchImpl = options.fetch ?? transport?.fetch;
  const client = new ProtocolClient({
    serverUrl: options.server,
    userAgent: `drover-simulator/${AGENT_VERSION}`,
    ...(fetchImpl ? { fetch: fetchImpl } : {}),
  });
  const names = deviceNames(options.prefix ?? "sim", options.agents);
  const profiles = assignProfiles(
    options.agents,
    {
      degraded: options.degraded ?? 0.1,
      error: options.error ?? 0.02,
      restarts: options.restarts ?? 0.05,
      flap: options.flap ?? 0.01,
      silent: options.silent ?? 0.01,
    },
    random,
  );
  const silentMs = (options.silentSeconds ?? 360) * 1000;
  const [activeMin, activeMax] = options.activeSeconds ?? [30, 120];
  // States are sent at once but not waited for: at 10,000 devices, a heartbeat round trip
  // per state would multiply the server's load for states nobody needs to see (slow-apply
  // makes them last when a demo wants them seen).
  const timing: Partial<AgentTiming> = { updateStateReportMs: 0, ...(options.heartbeatJitter ? { heartbeatJitter: 0.2 } : {}), ...options.timing };
  const updateKnobs: SimulatedUpdateOptions = {
    ...(options.crashVersions ? { crashVersions: options.crashVersions } : {}),
    ...(options.crashSeconds === undefined ? {} : { crashSeconds: options.crashSeconds }),
    ...(options.failVersions ? { failVersions: options.failVersions } : {}),
    ...(options.slowApplySeconds === undefined ? {} : { slowApplySeconds: options.slowApplySeconds }),
    ...(options.slowVersions ? { slowVersions: options.slowVersions } : {}),
  };
  const planKnobs: SimulatedPlanOptions = {
    ...(options.planApplySeconds === undefined ? {} : { applySeconds: options.planApplySeconds }),
    ...(options.failDownloadNodes ? { failDownloadNodes: options.failDownloadNodes } : {}),
    ...(options.badSha256Nodes ? { badSha256Nodes: options.badSha256Nodes } : {}),
    ...(options.failApplyNodes ? { failApplyNodes: options.failApplyNodes } : {}),
  };

  const agents: SimulatedAgent[] = [];
  const stores: StateStore[] = [];
  const timers = new Set<NodeJS.Timeout>();
  let stopping = false;

  const startOne = async (index: number) => {
    const name = names[index] as string;
    const profile = profiles[index] as Profile;
    const agentRandom = seededRandom(seed + index + 1);
    const store = options.stateDir ? await FileStateStore.open(path.join(options.stateDir, name)) : new MemoryStateStore();
    stores.push(store);
    if (stopping) return;
    const agent = new Agent({
      identity: {
        name,
        labels: options.labels ?? { simulated: "true" },
        platform: options.platform ?? "linux-amd64",
        role: options.role ?? "worker",
        agentVersion: AGENT_VERSION,
      },
      client,
      store,
      health: simulatedHealth(profile, agentRandom),
      // A stream of its own, so that the facts do not shift the health and application draws.
      system: simulatedSystemFacts(
        { name, index, platform: options.platform ?? "linux-amd64", agentVersion: AGENT_VERSION, startedAt: new Date() },
        profile,
        seededRandom(seed + index + 1 + 0x85ebca6b),
      ),
      runtime: new SimulatedRuntime(updateKnobs, simulatedApplications(profile, agentRandom)),
      enrollmentToken: options.enrollmentToken,
      logger: logger.child({ device: name }),
      timing,
      // The agent's own draws (heartbeat spread, backoff) on a stream of their own, seeded
      // like the others: they do not shift the health and application draws.
      random: seededRandom(seed + index + 1 + 0x3c6ef372),
      executors: simulatedExecutors({
        failure: options.actionFailure ?? 0,
        seconds: options.actionSeconds ?? DEFAULT_SIMULATED_ACTION_SECONDS,
        name,
        plan: planKnobs,
        ...(options.allowExec ? { allowExec: options.allowExec } : {}),
        // A stream of its own, so that actions do not shift the health and application draws.
        random: seededRandom(seed + index + 1 + 0x9e3779b9),
      }),
    });
    const entry: SimulatedAgent = { name, agent, profile, outcome: null };
    agents.push(entry);
    void agent.start().then((outcome) => {
      entry.outcome = outcome;
    });
    if (profile.silent) scheduleSilence(agent, agentRandom);
  };

  const later = (ms: number, run: () => void) => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      run();
    }, ms);
    timers.add(timer);
  };

  const scheduleSilence = (agent: Agent, agentRandom: () => number) => {
    const activeMs = (activeMin + agentRandom() * (activeMax - activeMin)) * 1000;
    later(activeMs, () => {
      if (stopping || agent.phase === "done") return;
      agent.silence(silentMs);
      later(silentMs, () => scheduleSilence(agent, agentRandom));
    });
  };

  // Ramp-up: `rate` agents a second, in slices every 50 ms.
  const rate = options.rate ?? 200;
  let next = 0;
  let endRamp = () => {};
  const rampedUp = new Promise<void>((resolve) => {
    endRamp = resolve;
    const began = Date.now();
    const tick = async () => {
      const due = Math.min(options.agents, Math.floor(((Date.now() - began) / 1000) * rate) + 1);
      const batch: Promise<void>[] = [];
      while (next < due && !stopping) batch.push(startOne(next++));
      await Promise.all(batch).catch((error: unknown) => logger.error({ event: "simulator.start-failed", err: String(error) }, "starting an agent failed"));
      if (next >= options.agents || stopping) resolve();
      else later(50, () => void tick());
    };
    void tick();
  });

  const stats = (): SimulationStats => {
    const s: SimulationStats = {
      agents: options.agents,
      started: agents.length,
      enrolled: 0,
      pending: 0,
      approved: 0,
      polling: 0,
      silent: 0,
      heartbeats: 0,
      specsApplied: 0,
      specsFailed: 0,
      updating: 0,
      errors: 0,
      actionsDone: 0,
      actionsFailed: 0,
      actionsCancelled: 0,
      decommissioned: 0,
      revoked: 0,
      failed: 0,
    };
    for (const { agent, outcome } of agents) {
      if (agent.stats.enrollmentsRequested > 0 || agent.hasToken || outcome?.kind === "decommissioned") s.enrolled++;
      if (agent.phase === "pending" || agent.phase === "denied") s.pending++;
      if (agent.hasToken) s.approved++;
      if (agent.phase === "polling") s.polling++;
      if (agent.isSilent && agent.phase === "polling") s.silent++;
      s.heartbeats += agent.stats.heartbeats;
      s.specsApplied += agent.stats.specsApplied;
      s.specsFailed += agent.stats.specsFailed;
      if (agent.updatingCondition?.status === true) s.updating++;
      s.errors += agent.stats.errors;
      s.actionsDone += agent.actionStats.done;
      s.actionsFailed += agent.actionStats.failed;
      s.actionsCancelled += agent.actionStats.cancelled;
      if (outcome?.kind === "decommissioned" || outcome?.kind === "already-decommissioned") s.decommissioned++;
      else if (outcome?.kind === "revoked") s.revoked++;
      else if (outcome && outcome.kind !== "stopped") s.failed++;
    }
    return s;
  };

  return {
    agents,
    rampedUp,
    stats,
    async stop() {
      stopping = true;
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      endRamp();
      await Promise.all(agents.map((a) => a.agent.stop()));
      await Promise.all(stores.map((s) => s.close()));
      transport?.close();
      return stats();
    },
  };
}
