/**
 * The overview's history, shaped from stored samples (pure: no I/O, no clock; tested in
 * tests/metrics-history.test.ts). Samples are aligned on time buckets: every bucket of the
 * range is present (null where nothing was sampled, e.g. while the server was down), so the
 * console's charts draw gaps rather than joining across them.
 */
import { isTerminalRolloutPhase, type RolloutPhase } from "../../lib/rollout-status";

export const HISTORY_RANGES = ["1h", "24h", "7d"] as const;
export type HistoryRange = (typeof HISTORY_RANGES)[number];

export const RANGE_SECONDS: Record<HistoryRange, number> = { "1h": 3_600, "24h": 86_400, "7d": 604_800 };

/** At most this many buckets a range: 1 h at a minute, 24 h at 2 minutes, 7 d at 14 minutes (with the default sample interval). */
export const MAX_POINTS = 720;

export interface RolloutSample {
  id: string;
  fleet: string;
  version: string;
  phase: string;
  /** Fleet members up to date (at the fleet's current template version) and all members. */
  updated: number;
  total: number;
}

export interface PlanSample {
  id: string;
  name: string | null;
  state: string;
  /** Nodes SignalCompleted, nodes ended otherwise (failed, missing), all nodes. */
  done: number;
  failed: number;
  total: number;
}

/** One sample as stored (MetricSample.values). Counters cover the sample's `seconds`. */
export interface SampleValues {
  /** Devices per summary status and per lifecycle, at the sample's time. */
  summary: Record<string, number>;
  lifecycle: Record<string, number>;
  /** Heartbeats ingested during the sample. */
  heartbeats: number;
  actionsCreated: number;
  /** Actions that reached a final state during the sample, by that state. */
  actionsFinished: Record<string, number>;
  /** Open rollouts, and those that ended during the sample (their last progress). */
  rollouts: RolloutSample[];
  /** Plans not ended, and those that ended during the sample. */
  plans: PlanSample[];
  plansRunning: number;
  workflowsRunning: number;
}

export interface StoredSample {
  /** Unix seconds. */
  at: number;
  seconds: number;
  values: SampleValues;
}

type Points = (number | null)[];

export interface MetricsHistory {
  range: HistoryRange;
  /** The buckets' size and the controller's sample interval, in seconds. */
  bucketSeconds: number;
  sampleSeconds: number;
  /** The next sample is due then (unix seconds): the console's "first sample in N s". */
  nextSampleAt: number;
  /** Samples found in the range (0: nothing collected yet). */
  samples: number;
  /** Each bucket's end (unix seconds), oldest first; every series below has one value per bucket. */
  times: number[];
  /** Devices per status (the last sample of each bucket). */
  devices: { summary: Record<string, Points>; lifecycle: Record<string, Points> };
  /** Rates per minute, averaged over each bucket. */
  heartbeatsPerMinute: Points;
  actions: { createdPerMinute: Points; finishedPerMinute: Record<string, Points> };
  /** Per rollout seen in the range (the 8 most recent): progress in percent and its counts. */
  rollouts: { id: string; fleet: string; version: string; phase: string; percent: Points; updated: Points; total: Points }[];
  /** Per plan seen in the range (the 8 most recent): nodes completed in percent. */
  plans: { id: string; name: string | null; state: string; percent: Points; done: Points; total: Points }[];
  plansRunning: Points;
  workflowsRunning: Points;
}

/** A bucket: at least one sample interval, and at most MAX_POINTS of them in the range. */
export function bucketSecondsFor(range: HistoryRange, sampleSeconds: number): number {
  const wanted = RANGE_SECONDS[range] / MAX_POINTS;
  if (wanted <= sampleSeconds) return sampleSeconds;
  // A whole number of samples per bucket, so every bucket holds as many.
  return Math.ceil(wanted / sampleSeconds - 1e-9) * sampleSeconds;
}

/** When the controller samples next: on multiples of the interval (unix seconds). */
export function nextSampleAt(nowSeconds: number, sampleSeconds: number): number {
  return (Math.floor(nowSeconds / sampleSeconds + 1e-9) + 1) * sampleSeconds;
}

const MAX_OBJECTS = 8;
const round = (v: number) => Math.round(v * 100) / 100;

/**
 * Buckets end at multiples of the bucket size; the last one holds now. A sample belongs to the
 * bucket its time falls in (a sample taken exactly at a bucket's end belongs to it). Gauges
 * take the last sample of a bucket; rates are the bucket's counts over the seconds its samples
 * cover, per minute.
 */
export function bucketHistory(samples: StoredSample[], opts: { range: HistoryRange; nowSeconds: number; sampleSeconds: number }): MetricsHistory {
  const { range, nowSeconds, sampleSeconds } = opts;
  const b = bucketSecondsFor(range, sampleSeconds);
  const count = Math.max(1, Math.round(RANGE_SECONDS[range] / b));
  const end = Math.ceil(nowSeconds / b - 1e-9) * b;
  const times = Array.from({ length: count }, (_, i) => round(end - (count - 1 - i) * b));
  const first = end - count * b; // exclusive
  const inRange = samples.filter((s) => s.at > first && s.at <= end).sort((a, b) => a.at - b.at);
  const slot = (at: number) => Math.min(count - 1, Math.max(0, Math.ceil((at - first) / b - 1e-9) - 1));

  const empty = (): Points => new Array<number | null>(count).fill(null);
  const summary: Record<string, Points> = {};
  const lifecycle: Record<string, Points> = {};
  const finishedCounts: Record<string, number[]> = {};
  const heartbeats = new Array<number>(count).fill(0);
  const created = new Array<number>(count).fill(0);
  const seconds = new Array<number>(count).fill(0);
  const plansRunning = empty();
  const workflowsRunning = empty();
  const rolloutSeries = new Map<string, MetricsHistory["rollouts"][number] & { lastAt: number }>();
  const planSeries = new Map<string, MetricsHistory["plans"][number] & { lastAt: number }>();

  // Gauge keys seen anywhere in the range are zero (not null) in buckets that sampled without them.
  const summaryKeys = new Set<string>();
  const lifecycleKeys = new Set<string>();
  for (const s of inRange) {
    for (const k of Object.keys(s.values.summary)) summaryKeys.add(k);
    for (const k of Object.keys(s.values.lifecycle)) lifecycleKeys.add(k);
  }
  for (const k of summaryKeys) summary[k] = empty();
  for (const k of lifecycleKeys) lifecycle[k] = empty();

  for (const s of inRange) {
    const i = slot(s.at);
    const v = s.values;
    for (const k of summaryKeys) summary[k]![i] = v.summary[k] ?? 0;
    for (const k of lifecycleKeys) lifecycle[k]![i] = v.lifecycle[k] ?? 0;
    heartbeats[i]! += v.heartbeats;
    created[i]! += v.actionsCreated;
    seconds[i]! += s.seconds;
    for (const [state, n] of Object.entries(v.actionsFinished)) (finishedCounts[state] ??= new Array<number>(count).fill(0))[i]! += n;
    plansRunning[i] = v.plansRunning;
    workflowsRunning[i] = v.workflowsRunning;
    for (const r of v.rollouts) {
      let row = rolloutSeries.get(r.id);
      if (!row) rolloutSeries.set(r.id, (row = { id: r.id, fleet: r.fleet, version: r.version, phase: r.phase, percent: empty(), updated: empty(), total: empty(), lastAt: s.at }));
      row.phase = r.phase;
      row.lastAt = s.at;
      // Ended other than Completed, the fleet's "up to date" counts the version it went back to
      // (or the one that replaced it), not this rollout's: its line stops where it ended.
      if (isTerminalRolloutPhase(r.phase as RolloutPhase) && r.phase !== "Completed") continue;
      row.updated[i] = r.updated;
      row.total[i] = r.total;
      row.percent[i] = r.total > 0 ? round((r.updated / r.total) * 100) : null;
    }
    for (const p of v.plans) {
      let row = planSeries.get(p.id);
      if (!row) planSeries.set(p.id, (row = { id: p.id, name: p.name, state: p.state, percent: empty(), done: empty(), total: empty(), lastAt: s.at }));
      row.state = p.state;
      row.lastAt = s.at;
      row.done[i] = p.done;
      row.total[i] = p.total;
      row.percent[i] = p.total > 0 ? round((p.done / p.total) * 100) : null;
    }
  }

  const perMinute = (counts: number[]): Points => counts.map((n, i) => (seconds[i]! > 0 ? round((n * 60) / seconds[i]!) : null));
  const recent = <T extends { lastAt: number }>(m: Map<string, T>) =>
    [...m.values()]
      .sort((a, b) => b.lastAt - a.lastAt)
      .slice(0, MAX_OBJECTS)
      .map(({ lastAt: _lastAt, ...rest }) => rest);

  return {
    range,
    bucketSeconds: b,
    sampleSeconds,
    nextSampleAt: nextSampleAt(nowSeconds, sampleSeconds),
    samples: inRange.length,
    times,
    devices: { summary, lifecycle },
    heartbeatsPerMinute: perMinute(heartbeats),
    actions: {
      createdPerMinute: perMinute(created),
      finishedPerMinute: Object.fromEntries(Object.entries(finishedCounts).map(([state, counts]) => [state, perMinute(counts)])),
    },
    rollouts: recent(rolloutSeries),
    plans: recent(planSeries),
    plansRunning,
    workflowsRunning,
  };
}
