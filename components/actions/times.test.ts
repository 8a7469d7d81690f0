/**
 * The actions list's created-at range in the URL (validated as the server validates it, so a
 * bad link is said on the page and never sent) and how long an action ran, runs or waits
 * (issue 10). Pure functions of components/actions.
 */
import { describe, expect, it } from "vitest";
import { actionParamsToSearch, dateParamError, listInput, parseActionParams } from "@/components/actions/params";
import { actionTiming, formatDuration } from "@/components/actions/format";

describe("created-at range in the URL", () => {
  it("round-trips createdAfter / createdBefore and sends them to the list", () => {
    const q = "createdAfter=2026-11-23T05%3A00%3A00Z&createdBefore=2026-11-23T07%3A00%3A00%2B01%3A00";
    const p = parseActionParams(new URLSearchParams(q));
    expect(p).toMatchObject({ createdAfter: "2026-11-23T05:00:00Z", createdBefore: "2026-11-23T07:00:00+01:00" });
    expect(actionParamsToSearch(p)).toBe(`?${q}`);
    expect(listInput(p)).toMatchObject({ createdAfter: "2026-11-23T05:00:00Z", createdBefore: "2026-11-23T07:00:00+01:00" });
    expect(dateParamError(p)).toBeNull();
  });

  it.each([
    ["createdAfter=yesterday", /^createdAfter: /],
    ["createdBefore=2026-11-23", /^createdBefore: /],
    ["createdAfter=2026-11-23T05:00:00", /^createdAfter: /],
    ["createdAfter=2026-11-23T07:00:00Z&createdBefore=2026-11-23T06:00:00Z", /^createdBefore: must be later/],
  ])("%s is refused, naming the field", (q, message) => {
    expect(dateParamError(parseActionParams(new URLSearchParams(q)))).toMatch(message);
  });
});

describe("duration", () => {
  const t0 = Date.parse("2026-11-23T05:00:00Z");
  const at = (s: number) => new Date(t0 + s * 1000).toISOString();

  it("ended: finishedAt − startedAt; never started: none", () => {
    expect(actionTiming({ state: "DONE", createdAt: at(0), startedAt: at(10), finishedAt: at(75) }, t0 + 999_000)).toEqual({ kind: "ran", ms: 65_000 });
    expect(actionTiming({ state: "CANCELLED", createdAt: at(0), startedAt: null, finishedAt: at(5) }, t0)).toEqual({ kind: "none" });
  });

  it("running: since startedAt; pending or NEW: waiting since createdAt", () => {
    expect(actionTiming({ state: "RUNNING", createdAt: at(0), startedAt: at(10), finishedAt: null }, t0 + 42_000)).toEqual({ kind: "running", ms: 32_000 });
    for (const state of ["PENDING_APPROVE", "PENDING_SCHEDULE", "NEW"]) {
      expect(actionTiming({ state, createdAt: at(0), startedAt: null, finishedAt: null }, t0 + 90_000)).toEqual({ kind: "waiting", ms: 90_000 });
    }
  });

  it("reads short", () => {
    expect([850, 4_250, 42_000, 303_000, 7_440_000, 273_600_000].map((ms) => formatDuration(ms))).toEqual(["850 ms", "4.2 s", "42 s", "5m 03s", "2h 04m", "3d 4h"]);
    expect(formatDuration(4_250, { wholeSeconds: true })).toBe("4 s");
    expect(formatDuration(-5)).toBe("0 ms");
  });
});
