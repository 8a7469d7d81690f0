/**
 * Prometheus metrics (/metrics) with prom-client: held polls, heartbeats, devices per status.
 *
 * The process metrics (prom-client's defaults) live in a registry of their own, rendered at
 * most once a second: a tight scraper (the benchmark's probe) must not turn them into the load
 * it measures. Drover's own metrics are always current.
 *
 * Two of the defaults cost time on the event loop in proportion to the open sockets, which held
 * polls make many: `process_open_fds` lists /proc/self/fd synchronously (≈ 20 ms with 18,000
 * open), and `nodejs_active_handles` builds an array of every handle (≈ 6 ms with 10,000 held),
 * as does `nodejs_active_resources` (87 ms in a profile with 13,000 sockets open). Every poll
 * waits that long at each scrape. The first is read here off the event loop (libuv's thread
 * pool); the others are left out (`drover_held_polls` and the connections say as much).
 */
import type { MaybePromise } from "./devices/agent-store";
import fs from "node:fs";
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";

/** Defaults whose collection stops the event loop for a time that grows with the open sockets. */
const BLOCKING_DEFAULTS = ["process_open_fds", "nodejs_active_handles", "nodejs_active_handles_total", "nodejs_active_resources", "nodejs_active_resources_total"];

function processMetrics(): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  for (const name of BLOCKING_DEFAULTS) registry.removeSingleMetric(name);
  if (process.platform === "linux") {
    new Gauge({
      name: "process_open_fds",
      help: "Number of open file descriptors.",
      registers: [registry],
      async collect() {
        // Less the one the listing itself held open.
        const fds = await fs.promises.readdir("/proc/self/fd").catch(() => null);
        if (fds) this.set(fds.length - 1);
      },
    });
  }
  return registry;
}

/** How long a rendering of the process metrics is served again. */
const PROCESS_METRICS_TTL_MS = 1_000;

export function createMetrics() {
  const registry = new Registry();
  const processRegistry = processMetrics();
  let processText: { at: number; text: Promise<string> } | null = null;
  // What three gauges read at each scrape, set by their owners once they exist (`watch`).
  const sources = { statusInFlight: () => 0, enrollmentsInFlight: () => 0, storeWritesQueued: () => 0 };
  /** Devices per status axis and value, counted when scraped; null where they are not counted (a follower). */
  let deviceCounts: (() => MaybePromise<{ axis: string; value: string; n: number }[]>) | null = null;
  return {
    registry,
    contentType: registry.contentType,
    /** The exposition text of both registries. */
    async render(): Promise<string> {
      const now = Date.now();
      if (!processText || now - processText.at >= PROCESS_METRICS_TTL_MS) processText = { at: now, text: processRegistry.metrics() };
      const [own, proc] = await Promise.all([registry.metrics(), processText.text]);
      return `${own}\n${proc}`;
    },
    heldPolls: new Gauge({ name: "drover_held_polls", help: "Device long-polls parked in memory", registers: [registry] }),
    /** Issue 22 item 4: what a slow database holds in memory besides the polls. */
    statusInFlight: new Gauge({
      name: "drover_status_in_flight",
      help: "POST /status requests inside the server (admitted, not yet answered)",
      registers: [registry],
      collect() {
        this.set(sources.statusInFlight());
      },
    }),
    enrollmentsInFlight: new Gauge({
      name: "drover_enrollments_in_flight",
      help: "POST /enrollments requests inside the server (admitted, not yet answered)",
      registers: [registry],
      collect() {
        this.set(sources.enrollmentsInFlight());
      },
    }),
    storeWritesQueued: new Gauge({
      name: "drover_store_writes_queued",
      help: "Agent-store writes (heartbeats among them) waiting for their group commit, the one in flight not counted",
      registers: [registry],
      collect() {
        this.set(sources.storeWritesQueued());
      },
    }),
    /** Where a gauge read at scrape time reads from: the agent API's count, the agent store's queue. */
    watch(gauge: keyof typeof sources, source: () => number): void {
      sources[gauge] = source;
    },
    pollsRefused: new Counter({
      name: "drover_polls_refused_total",
      help: "Long-polls refused past the server's budget (429) or answered early for a newer poll of the same device",
      labelNames: ["reason"] as const,
      registers: [registry],
    }),
    requestsRefused: new Counter({
      name: "drover_requests_refused_total",
      help: "Requests refused at the front door, by reason (body too large, wrong media type, bad URL, …)",
      labelNames: ["reason"] as const,
      registers: [registry],
    }),
    tlsHandshakes: new Counter({
      name: "drover_tls_handshakes_total",
      help: "TLS handshakes completed, by session: new (certificates exchanged) or resumed (a session ticket, issue 23)",
      labelNames: ["session"] as const,
      registers: [registry],
    }),
    tlsHandshakeFailures: new Counter({
      name: "drover_tls_handshake_failures_total",
      help: "TLS handshakes that did not complete, by reason: timeout (the handshake deadline), reset (the client went away), tls (a protocol or certificate error)",
      labelNames: ["reason"] as const,
      registers: [registry],
    }),
    heapReclaims: new Counter({
      name: "drover_heap_reclaims_total",
      help: "Low-memory collections the server asked V8 for once a burst left more than half its heap unused (server/heap.ts)",
      registers: [registry],
    }),
    specsSent: new Counter({ name: "drover_specs_sent_total", help: "Work answers that carried a rendered spec", registers: [registry] }),
    heartbeats: new Counter({ name: "drover_heartbeats_total", help: "Status reports ingested", registers: [registry] }),
    agentRequests: new Counter({
      name: "drover_agent_requests_total",
      help: "Agent API requests by route and status code",
      labelNames: ["route", "status"] as const,
      registers: [registry],
    }),
    wakeSeconds: new Histogram({
      name: "drover_poll_wake_seconds",
      help: "Time from a work-making change to the held poll answering",
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
      registers: [registry],
    }),
    actionsFinished: new Counter({
      name: "drover_actions_finished_total",
      help: "Actions that reached a final state, by state",
      labelNames: ["state"] as const,
      registers: [registry],
    }),
    /** 1 on the server that runs the controllers (always, on SQLite; the elected one on PostgreSQL: server/leader.ts). */
    controllerLeader: new Gauge({
      name: "drover_controller_leader",
      help: "1 when this server holds the controller leadership (runs the sweep, rollouts, plans, workflows, schedules), else 0",
      registers: [registry],
    }),
    devicesByStatus: new Gauge({
      name: "drover_devices",
      help: "Devices per status axis and value",
      labelNames: ["axis", "status"] as const,
      registers: [registry],
      // Counted when scraped, by the controllers' leader alone (`countDevicesWith`): one pass over
      // Device's status columns a scrape (every 15–60 s), not one every 2 s tick (issue 22).
      async collect() {
        if (!deviceCounts) return void this.reset();
        let rows: { axis: string; value: string; n: number }[];
        try {
          rows = await deviceCounts();
        } catch {
          // The database unreachable (its health says so elsewhere): the last counts stay.
          return;
        }
        this.reset();
        for (const r of rows) this.set({ axis: r.axis, status: r.value }, r.n);
      },
    }),
    /** What the device gauges count with (the leader's controllers), or null: none here. */
    countDevicesWith(count: typeof deviceCounts): void {
      deviceCounts = count;
    },
  };
}
export type Metrics = ReturnType<typeof createMetrics>;
