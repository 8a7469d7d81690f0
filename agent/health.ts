/**
 * Resource health of the host: cpu, memory and disk as Healthy / Degraded / Error /
 * Critical (seed 003), from real readings.
 *
 * Readings
 *   cpu     1-minute load average per core: os.loadavg()[0] / os.cpus().length
 *   memory  share of memory in use: 1 - os.freemem() / os.totalmem()
 *           (libuv's freemem is MemAvailable on Linux, so page cache counts as free)
 *   disk    share of the state directory's file system in use: 1 - bavail / blocks
 *           (fs.statfs; bavail is what an unprivileged process may still write)
 *
 * Default thresholds (a reading at or above the value takes that status):
 *
 *   resource | Degraded | Error | Critical
 *   cpu      |   0.9    |  1.5  |   3.0     load per core: 0.9 = busy, 1.5 = tasks queueing, 3 = swamped
 *   memory   |   0.85   |  0.95 |   0.98    used share
 *   disk     |   0.85   |  0.95 |   0.98    used share
 *
 * A reading that cannot be taken (null, NaN) is reported as Error: the agent cannot vouch
 * for that resource, and it must not report Healthy for what it did not see.
 * On Windows os.loadavg() is always [0, 0, 0], so cpu reads Healthy there.
 */
import os from "node:os";
import fs from "node:fs/promises";
import type { ResourceName, ResourceStatus } from "../lib/device-status";
import type { StatusReport } from "../lib/protocol";

export type Resources = StatusReport["resources"];

export interface ResourceReadings {
  /** 1-minute load average divided by the number of cores. */
  cpuLoadPerCore: number | null;
  /** Used share of memory, 0..1. */
  memoryUsedRatio: number | null;
  /** Used share of the state directory's file system, 0..1. */
  diskUsedRatio: number | null;
}

export interface Levels {
  degraded: number;
  error: number;
  critical: number;
}
export type Thresholds = Record<ResourceName, Levels>;

export const DEFAULT_THRESHOLDS: Thresholds = {
  cpu: { degraded: 0.9, error: 1.5, critical: 3.0 },
  memory: { degraded: 0.85, error: 0.95, critical: 0.98 },
  disk: { degraded: 0.85, error: 0.95, critical: 0.98 },
};

export function levelStatus(value: number | null, levels: Levels): ResourceStatus {
  if (value === null || !Number.isFinite(value)) return "Error";
  if (value >= levels.critical) return "Critical";
  if (value >= levels.error) return "Error";
  if (value >= levels.degraded) return "Degraded";
  return "Healthy";
}

/** Pure: readings and thresholds in, the three resource statuses out. */
export function resourceHealth(readings: ResourceReadings, thresholds: Thresholds = DEFAULT_THRESHOLDS): Resources {
  return {
    cpu: levelStatus(readings.cpuLoadPerCore, thresholds.cpu),
    memory: levelStatus(readings.memoryUsedRatio, thresholds.memory),
    disk: levelStatus(readings.diskUsedRatio, thresholds.disk),
  };
}

/** Where the agent gets the resources it reports. The simulator supplies its own. */
export interface HealthSource {
  resources(): Promise<Resources>;
}

/** Takes the readings of this host; `diskPath` is the state directory. */
export async function readHostResources(diskPath: string): Promise<ResourceReadings> {
  const cores = os.cpus().length || os.availableParallelism();
  const load = os.loadavg()[0];
  const total = os.totalmem();
  let diskUsedRatio: number | null = null;
  try {
    const stats = await fs.statfs(diskPath);
    diskUsedRatio = stats.blocks > 0 ? 1 - stats.bavail / stats.blocks : null;
  } catch {
    diskUsedRatio = null;
  }
  return {
    cpuLoadPerCore: load === undefined || cores === 0 ? null : load / cores,
    memoryUsedRatio: total > 0 ? 1 - os.freemem() / total : null,
    diskUsedRatio,
  };
}

export class HostHealthSource implements HealthSource {
  /** The readings behind the last report, for logs. */
  lastReadings: ResourceReadings | null = null;

  constructor(
    private readonly diskPath: string,
    private readonly thresholds: Thresholds = DEFAULT_THRESHOLDS,
  ) {}

  async resources(): Promise<Resources> {
    this.lastReadings = await readHostResources(this.diskPath);
    return resourceHealth(this.lastReadings, this.thresholds);
  }
}

/** Fixed statuses, for tests. */
export function staticHealth(resources: Resources): HealthSource {
  return { resources: async () => ({ ...resources }) };
}
