/**
 * The inventory (issue 10): the host facts an agent reports and a short usage history.
 *
 * Where they live: `DeviceInventory`, one row per device beside Device, not in it. The
 * heartbeat's write rewrites the whole Device row on every report; the static facts change
 * rarely (the agent sends them in full at its start, on a change and hourly, and `usage`
 * alone otherwise) and the history once a minute. So a report writes this row only when it
 * carries full facts or opens a new minute: a read and an upsert, in the same group commit as the
 * heartbeat's own write, and on most reports nothing at all. The latest usage rides in the
 * `reported` JSON, which every heartbeat writes anyway.
 *
 * History: one sample a minute (the first report that opens the minute; its cpu is already
 * the agent's average over its own interval), the newest last, at most USAGE_SAMPLES (two
 * hours): bounded in the row itself, so nothing needs pruning. Which devices already have
 * this minute's sample is kept in memory to skip the write; the write checks again against the
 * row it reads locked (`appendSample`), so a restart or a second server never doubles a minute.
 */
import type { Requester } from "./sql-driver";
import type { SystemFacts } from "../../lib/protocol";
import type { ServerContext } from "../context";

export const USAGE_SAMPLES = 120;

/** [unix seconds, cpu %, memory used %, disk used %] (null: not reported); compact, 120 of them a row. */
export type UsageSample = [number, number | null, number | null, number | null];
export type StaticFacts = Omit<SystemFacts, "usage">;
export type Usage = NonNullable<SystemFacts["usage"]>;

/** One sample of the history as the API shows it. */
export interface UsagePoint {
  at: string;
  cpuPercent: number | null;
  memoryPercent: number | null;
  diskPercent: number | null;
}

const round1 = (n: number) => Math.round(n * 10) / 10;
const share = (u: { usedBytes: number; totalBytes: number } | undefined) =>
  u && u.totalBytes > 0 ? round1(Math.min(100, (100 * u.usedBytes) / u.totalBytes)) : null;

/** The static facts of a report, or null when it carries `usage` alone (they are kept as they are). */
export function staticFactsOf(system: SystemFacts): StaticFacts | null {
  // Most reports carry `usage` alone: say so without copying anything (the hot path).
  for (const key in system) {
    if (key === "usage" || system[key as keyof SystemFacts] === undefined) continue;
    const { usage: _usage, ...facts } = system;
    return facts;
  }
  return null;
}

export function sampleOf(usage: Usage | undefined, now: Date): UsageSample | null {
  if (!usage) return null;
  const sample: UsageSample = [Math.floor(now.getTime() / 1000), usage.cpuPercent === undefined ? null : round1(usage.cpuPercent), share(usage.memory), share(usage.disk)];
  return sample[1] === null && sample[2] === null && sample[3] === null ? null : sample;
}

/** Appends `sample` unless the last one is of the same minute; keeps the newest `max`. */
export function appendSample(samples: UsageSample[], sample: UsageSample, max = USAGE_SAMPLES): UsageSample[] {
  const last = samples[samples.length - 1];
  if (last && last[0] >= minuteStart(sample[0])) return samples;
  return [...samples, sample].slice(-max);
}

const minuteStart = (unixSeconds: number) => unixSeconds - (unixSeconds % 60);

/** Per server context: the minute (unix seconds of its start) each device last got a sample in. */
const sampled = new WeakMap<ServerContext, Map<string, number>>();

/**
 * What a heartbeat's `system` adds to the inventory: nothing on most reports (null, decided
 * synchronously: no promise, no await on the hot path); the full facts when sent, a sample
 * when the report opens a minute. Called beside the heartbeat's own write (heartbeat.ts), so
 * both go in the same group commit of the agent store.
 */
export function recordInventory(ctx: ServerContext, deviceId: string, system: SystemFacts | undefined, now: Date, requester?: Requester): Promise<void> | null {
  if (!system) return null;
  const facts = staticFactsOf(system);
  let sample: UsageSample | null = null;
  if (system.usage) {
    let seen = sampled.get(ctx);
    if (!seen) sampled.set(ctx, (seen = new Map()));
    const minute = minuteStart(Math.floor(now.getTime() / 1000));
    if (seen.get(deviceId) !== minute) {
      sample = sampleOf(system.usage, now);
      if (sample) seen.set(deviceId, minute);
    }
  }
  if (!facts && !sample) return null;
  const factsJson = facts ? JSON.stringify(facts) : null;
  return ctx.fast.writeInventory(deviceId, factsJson, sample, USAGE_SAMPLES, now, requester);
}

/** The inventory as the device's read shows it. */
export function inventoryView(
  row: { system: string | null; systemAt: Date | null; samples: string } | null,
  usage: Usage | null,
  usageAt: Date | null,
) {
  const samples = row ? (JSON.parse(row.samples) as UsageSample[]) : [];
  return {
    /** Static facts as last sent in full (SystemFacts without usage), or null. */
    system: row?.system ? (JSON.parse(row.system) as StaticFacts) : null,
    systemAt: row?.systemAt ?? null,
    /** The last report's usage. */
    usage,
    usageAt: usage ? usageAt : null,
    /** One sample a minute at most, oldest first. */
    history: samples.map(([t, cpu, memory, disk]): UsagePoint => ({ at: new Date(t * 1000).toISOString(), cpuPercent: cpu, memoryPercent: memory, diskPercent: disk })),
  };
}
export type InventoryView = ReturnType<typeof inventoryView>;
