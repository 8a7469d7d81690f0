/**
 * Prometheus metrics (/metrics) with prom-client: held polls, heartbeats, devices per status.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";

export function createMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return {
    registry,
    heldPolls: new Gauge({ name: "drover_held_polls", help: "Device long-polls parked in memory", registers: [registry] }),
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
    devicesByStatus: new Gauge({
      name: "drover_devices",
      help: "Devices per status axis and value",
      labelNames: ["axis", "status"] as const,
      registers: [registry],
    }),
  };
}
export type Metrics = ReturnType<typeof createMetrics>;
