/**
 * The fleet's metrics over time (issue 10: the overview's charts). A controller takes one
 * sample every DROVER_METRICS_SAMPLE_SECONDS (a minute), on multiples of the interval, into
 * one MetricSample row, and prunes rows older than DROVER_METRICS_RETENTION_DAYS (7).
 *
 * What a sample costs: the device counts (one statement, as the controllers' tick already
 * runs every 2 s), the open rollouts and plans (few rows), one count of running workflows,
 * one insert and one indexed delete. Nothing on the hot paths: heartbeats are read off the
 * Prometheus counter the heartbeat already increments, and actions created and finished are
 * counted in memory from the event bus, which carries every action's events anyway.
 *
 * Started from server/controllers.ts, so with several servers the one leader that runs the
 * controllers samples. Its counts are the cluster's (issue 22): the events come over the bus
 * (LISTEN/NOTIFY on PostgreSQL), and every server tells the bus how many heartbeats it
 * ingested, about once a second (`reportHeartbeats`, started by every server).
 */
import type { ServerContext } from "../context";
import { topics } from "../bus";
import type { EventRow } from "../events/events";
import { deviceCounts } from "../devices/queries";
import { FINAL_ACTION_STATES } from "../../lib/action-status";
import { PLAN_STATES, isTerminalPlanState, type PlanState } from "../../lib/plan-status";
import { parseFleetStatus } from "../fleets/controller";
import { bucketHistory, nextSampleAt, RANGE_SECONDS, type HistoryRange, type MetricsHistory, type SampleValues, type StoredSample } from "./buckets";

const FINAL = new Set<string>(FINAL_ACTION_STATES);
/** Events that move an action into the state named by their reason. */
const MOVES = new Set(["ActionStateChanged", "ActionOverwritten", "ActionRejected", "ActionRecorded"]);
const CREATES = new Set(["ActionCreated", "ActionRecorded"]);
const OPEN_PLAN_STATES = PLAN_STATES.filter((s) => !isTerminalPlanState(s));

/** What happened since the last sample, counted as it happens (in memory). */
class Tally {
  created = 0;
  heartbeats = 0;
  finished: Record<string, number> = {};

  onHeartbeats(report: { n?: unknown } | undefined): void {
    if (typeof report?.n === "number" && report.n > 0) this.heartbeats += report.n;
  }

  onEvent(row: EventRow): void {
    if (row.objectKind !== "Action") return;
    if (CREATES.has(row.type)) this.created++;
    if (MOVES.has(row.type) && FINAL.has(row.reason)) this.finished[row.reason] = (this.finished[row.reason] ?? 0) + 1;
  }

  take(): { created: number; heartbeats: number; finished: Record<string, number> } {
    const out = { created: this.created, heartbeats: this.heartbeats, finished: this.finished };
    this.created = 0;
    this.heartbeats = 0;
    this.finished = {};
    return out;
  }
}

async function heartbeatTotal(ctx: ServerContext): Promise<number> {
  return (await ctx.metrics.heartbeats.get()).values[0]?.value ?? 0;
}

/** How often a server tells the bus how many heartbeats it ingested. */
export const HEARTBEAT_REPORT_MS = 1000;

/**
 * Every server, leader or not: the heartbeats its Prometheus counter counted since the last
 * report, published on the bus (nothing when none). One small message a second a server; a
 * report lost while the bus reconnects undercounts that second on the chart, nothing else.
 */
export function reportHeartbeats(ctx: ServerContext, everyMs = HEARTBEAT_REPORT_MS): { stop(): Promise<void> } {
  // From here: what the counter counted before (a restart of the reporter) is not reported again.
  let reported: Promise<number> = heartbeatTotal(ctx);
  const report = async () => {
    const total = await heartbeatTotal(ctx);
    const n = total - (await reported);
    reported = Promise.resolve(total);
    if (n > 0) ctx.bus.publish(topics.heartbeats, { n });
  };
  const timer = setInterval(() => void report().catch((err: unknown) => ctx.log.error({ err }, "heartbeat report failed")), everyMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await report().catch(() => undefined);
    },
  };
}

/** Open rollouts and those ended since `since`, with their fleet's members up to date (the fleet controller's counts). */
async function rolloutSamples(ctx: ServerContext, since: Date): Promise<SampleValues["rollouts"]> {
  const rows = await ctx.db.rollout.findMany({
    where: { OR: [{ endedAt: null }, { endedAt: { gte: since } }] },
    select: { id: true, templateVersion: true, phase: true, fleet: { select: { name: true, status: true } } },
    orderBy: { createdAt: "desc" },
    take: 50,
  });
  return rows.map((r) => {
    const { devices } = parseFleetStatus(r.fleet.status);
    return { id: r.id, fleet: r.fleet.name, version: r.templateVersion, phase: r.phase, updated: devices.upToDate, total: devices.total };
  });
}

async function planSamples(ctx: ServerContext, since: Date): Promise<SampleValues["plans"]> {
  const plans = await ctx.db.plan.findMany({
    where: { OR: [{ state: { in: OPEN_PLAN_STATES } }, { endedAt: { gte: since } }] },
    select: { id: true, name: true, state: true },
    orderBy: { createdAt: "desc" },
    take: 50,
  });
  if (plans.length === 0) return [];
  const nodes = await ctx.db.planNode.groupBy({ by: ["planId", "state"], where: { planId: { in: plans.map((p) => p.id) } }, _count: { _all: true } });
  return plans.map((p) => {
    let done = 0;
    let failed = 0;
    let total = 0;
    for (const n of nodes) {
      if (n.planId !== p.id) continue;
      total += n._count._all;
      if (n.state === "SignalCompleted") done += n._count._all;
      else if (n.state !== "SignalPending" && n.state !== "SignalSent") failed += n._count._all;
    }
    return { id: p.id, name: p.name, state: p.state, done, failed, total };
  });
}

export interface Sampler {
  /** Takes a sample now (the timer calls it; tests may too). */
  sample(): Promise<void>;
  stop(): void;
}

export function startMetricsHistory(ctx: ServerContext): Sampler {
  const intervalMs = ctx.env.DROVER_METRICS_SAMPLE_SECONDS * 1000;
  const retentionMs = ctx.env.DROVER_METRICS_RETENTION_DAYS * 86_400_000;
  const tally = new Tally();
  const offEvents = ctx.bus.subscribe<EventRow>(topics.events, (row) => tally.onEvent(row));
  const offHeartbeats = ctx.bus.subscribe<{ n?: unknown }>(topics.heartbeats, (report) => tally.onHeartbeats(report));
  let lastAt = ctx.now();
  let timer: NodeJS.Timeout | null = null;
  let stopped = false;
  let running: Promise<void> | null = null;

  /** `at`: the moment the sample was due (a timer fires a little late), so samples line up on the interval. */
  const sample = async (at: Date = ctx.now()) => {
    const seconds = Math.max(0.001, (at.getTime() - lastAt.getTime()) / 1000);
    const since = lastAt;
    const { created, heartbeats, finished } = tally.take();
    lastAt = at;
    const [counts, rollouts, plans, workflowsRunning] = await Promise.all([
      deviceCounts(ctx),
      rolloutSamples(ctx, since),
      planSamples(ctx, since),
      ctx.db.workflow.count({ where: { phase: "Running" } }),
    ]);
    const values: SampleValues = {
      summary: counts.summary,
      lifecycle: counts.lifecycle,
      heartbeats,
      actionsCreated: created,
      actionsFinished: finished,
      rollouts,
      plans,
      plansRunning: plans.filter((p) => OPEN_PLAN_STATES.includes(p.state as PlanState)).length,
      workflowsRunning,
    };
    const json = JSON.stringify(values);
    await ctx.db.metricSample.upsert({ where: { at }, create: { at, seconds, values: json }, update: { seconds, values: json } });
    await ctx.db.metricSample.deleteMany({ where: { at: { lt: new Date(at.getTime() - retentionMs) } } });
  };

  const tick = async (due: number) => {
    timer = null;
    if (stopped) return;
    running = sample(new Date(due))
      .catch((err: unknown) => {
        if (!stopped) ctx.log.error({ err }, "metrics sample failed");
      })
      .finally(() => {
        running = null;
      });
    await running;
    schedule();
  };

  const schedule = () => {
    if (stopped) return;
    const now = ctx.now().getTime();
    const next = nextSampleAt(now / 1000, intervalMs / 1000) * 1000;
    timer = setTimeout(() => void tick(next), Math.max(1, next - now));
    timer.unref();
  };
  schedule();

  return {
    sample: async () => {
      if (running) await running;
      await sample();
    },
    stop() {
      stopped = true;
      offEvents();
      offHeartbeats();
      if (timer) clearTimeout(timer);
    },
  };
}

/** The overview's history for a range: samples read by the primary key's range, then bucketed (buckets.ts). */
export async function metricsHistory(ctx: ServerContext, range: HistoryRange): Promise<MetricsHistory> {
  const now = ctx.now();
  const from = new Date(now.getTime() - RANGE_SECONDS[range] * 1000 - ctx.env.DROVER_METRICS_SAMPLE_SECONDS * 2000);
  const rows = await ctx.db.metricSample.findMany({ where: { at: { gt: from } }, orderBy: { at: "asc" } });
  const samples: StoredSample[] = [];
  for (const r of rows) {
    try {
      samples.push({ at: r.at.getTime() / 1000, seconds: r.seconds, values: JSON.parse(r.values) as SampleValues });
    } catch {
      // A row that does not parse (a hand edit) is left out rather than failing the overview.
    }
  }
  return bucketHistory(samples, { range, nowSeconds: now.getTime() / 1000, sampleSeconds: ctx.env.DROVER_METRICS_SAMPLE_SECONDS });
}
