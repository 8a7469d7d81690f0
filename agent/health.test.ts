import { describe, expect, it } from "vitest";
import { DEFAULT_THRESHOLDS, levelStatus, readHostResources, resourceHealth, type ResourceReadings } from "./health";
import type { ResourceStatus } from "../lib/device-status";

const healthy: ResourceReadings = { cpuLoadPerCore: 0.2, memoryUsedRatio: 0.3, diskUsedRatio: 0.4 };

describe("resourceHealth with the default thresholds", () => {
  // One row per threshold edge: just below it, at it.
  const rows: [string, Partial<ResourceReadings>, "cpu" | "memory" | "disk", ResourceStatus][] = [
    ["cpu idle", { cpuLoadPerCore: 0 }, "cpu", "Healthy"],
    ["cpu just below busy", { cpuLoadPerCore: 0.899 }, "cpu", "Healthy"],
    ["cpu busy", { cpuLoadPerCore: 0.9 }, "cpu", "Degraded"],
    ["cpu just below queueing", { cpuLoadPerCore: 1.499 }, "cpu", "Degraded"],
    ["cpu queueing", { cpuLoadPerCore: 1.5 }, "cpu", "Error"],
    ["cpu just below swamped", { cpuLoadPerCore: 2.99 }, "cpu", "Error"],
    ["cpu swamped", { cpuLoadPerCore: 3 }, "cpu", "Critical"],
    ["cpu far gone", { cpuLoadPerCore: 40 }, "cpu", "Critical"],
    ["cpu unreadable", { cpuLoadPerCore: null }, "cpu", "Error"],
    ["cpu NaN", { cpuLoadPerCore: Number.NaN }, "cpu", "Error"],
    ["memory below 85%", { memoryUsedRatio: 0.849 }, "memory", "Healthy"],
    ["memory at 85%", { memoryUsedRatio: 0.85 }, "memory", "Degraded"],
    ["memory at 95%", { memoryUsedRatio: 0.95 }, "memory", "Error"],
    ["memory at 98%", { memoryUsedRatio: 0.98 }, "memory", "Critical"],
    ["memory unreadable", { memoryUsedRatio: null }, "memory", "Error"],
    ["disk empty", { diskUsedRatio: 0 }, "disk", "Healthy"],
    ["disk below 85%", { diskUsedRatio: 0.8499 }, "disk", "Healthy"],
    ["disk at 85%", { diskUsedRatio: 0.85 }, "disk", "Degraded"],
    ["disk at 94.9%", { diskUsedRatio: 0.949 }, "disk", "Degraded"],
    ["disk at 95%", { diskUsedRatio: 0.95 }, "disk", "Error"],
    ["disk at 97.9%", { diskUsedRatio: 0.979 }, "disk", "Error"],
    ["disk at 98%", { diskUsedRatio: 0.98 }, "disk", "Critical"],
    ["disk full", { diskUsedRatio: 1 }, "disk", "Critical"],
    ["disk unreadable", { diskUsedRatio: null }, "disk", "Error"],
  ];

  it.each(rows)("%s", (_name, change, resource, expected) => {
    const result = resourceHealth({ ...healthy, ...change });
    expect(result[resource]).toBe(expected);
    // The other two resources stay Healthy: each reading decides its own resource only.
    for (const other of ["cpu", "memory", "disk"] as const) {
      if (other !== resource) expect(result[other]).toBe("Healthy");
    }
  });

  it("thresholds are ordered degraded < error < critical for every resource", () => {
    for (const levels of Object.values(DEFAULT_THRESHOLDS)) {
      expect(levels.degraded).toBeLessThan(levels.error);
      expect(levels.error).toBeLessThan(levels.critical);
    }
  });

  it("takes custom thresholds", () => {
    const strict = { ...DEFAULT_THRESHOLDS, cpu: { degraded: 0.1, error: 0.2, critical: 0.3 } };
    expect(resourceHealth({ ...healthy, cpuLoadPerCore: 0.15 }, strict).cpu).toBe("Degraded");
    expect(levelStatus(0.25, strict.cpu)).toBe("Error");
  });
});

describe("readHostResources", () => {
  it("reads real, plausible numbers from this host", async () => {
    const readings = await readHostResources(process.cwd());
    expect(readings.cpuLoadPerCore).toBeGreaterThanOrEqual(0);
    expect(readings.memoryUsedRatio).toBeGreaterThan(0);
    expect(readings.memoryUsedRatio).toBeLessThan(1);
    expect(readings.diskUsedRatio).toBeGreaterThanOrEqual(0);
    expect(readings.diskUsedRatio).toBeLessThanOrEqual(1);
  });

  it("reports a disk it cannot read as null, which counts as Error", async () => {
    const readings = await readHostResources("/nonexistent/drover/state");
    expect(readings.diskUsedRatio).toBeNull();
    expect(resourceHealth(readings).disk).toBe("Error");
  });
});
