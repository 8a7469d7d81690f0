import { describe, expect, it } from "vitest";
import type { CanaryWatch } from "@/lib/rollout";
import { deviceOutlook, headroom, pausedOutlook } from "./canary-watch";

const watch = (over: Partial<CanaryWatch> = {}): CanaryWatch => ({
  devices: [
    { name: "a01", restarts: 4, status: "successful" },
    { name: "a02", restarts: 0, status: "successful" },
  ],
  total: 2,
  restarting: 1,
  pauseAbove: 2,
  failAbove: 5,
  timeoutAt: null,
  endsAt: null,
  ...over,
});

describe("how far a canary device is from the thresholds", () => {
  const rows: [restarts: number, toPause: number | null, toFail: number | null][] = [
    [0, 3, 6],
    [2, 1, 4],
    [3, 0, 3],
    [5, 0, 1],
    [6, 0, 0],
    [9, 0, 0],
  ];
  it.each(rows)("%i restarts: %s more pause, %s more fail (pause above 2, fail above 5)", (restarts, toPause, toFail) => {
    expect(headroom({ restarts }, { pauseAbove: 2, failAbove: 5 })).toEqual({ toPause, toFail });
  });
  it("a check that is off has no headroom", () => {
    expect(headroom({ restarts: 1 }, { pauseAbove: null, failAbove: null })).toEqual({ toPause: null, toFail: null });
  });
});

describe("in words", () => {
  it("a running canary's device: both thresholds ahead", () => {
    expect(deviceOutlook({ name: "a02", restarts: 1, status: "successful" }, watch(), false)).toBe("2 more restarts pause the canary; 5 more restarts fail it and revert the fleet");
  });
  it("one away from each", () => {
    expect(deviceOutlook({ name: "a01", restarts: 2, status: "successful" }, watch({ failAbove: 2 }), false)).toBe("1 more restart pauses the canary; 1 more restart fails it and reverts the fleet");
  });
  it("paused: only auto-fail is ahead", () => {
    expect(deviceOutlook({ name: "a01", restarts: 4, status: "successful" }, watch(), true)).toBe("2 more restarts fail it and revert the fleet");
  });
  it("auto-fail off", () => {
    expect(deviceOutlook({ name: "a01", restarts: 4, status: "successful" }, watch({ failAbove: null }), true)).toBe("auto-fail is off");
  });
  it("a paused canary's banner says what happens if nobody acts", () => {
    expect(pausedOutlook(watch(), "1")).toBe("Auto-fail keeps watching while paused: a01 has restarted 4 times; 2 more restarts on one device fail the canary and revert the fleet to version 1.");
    expect(pausedOutlook(watch({ devices: [{ name: "a01", restarts: 5, status: "successful" }] }), null)).toBe(
      "Auto-fail keeps watching while paused: a01 has restarted 5 times; 1 more restart on one device fails the canary.",
    );
    expect(pausedOutlook(watch({ failAbove: null }), "1")).toBe("Auto-fail is off: the canary stays paused until an operator resumes, promotes or aborts it.");
  });
});
