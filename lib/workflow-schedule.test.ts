/**
 * The schedule helpers (lib/workflow-schedule.ts, croner underneath) and the spec's schedule
 * schema: next times in UTC and in a time zone across a DST change, seconds, nicknames, and the
 * expressions and zones refused with why.
 */
import { describe, expect, it } from "vitest";
import { cronProblem, nextScheduleTime, nextScheduleTimes, timezoneProblem } from "./workflow-schedule";
import { WorkflowSpec } from "./workflow-spec";

const at = (iso: string) => new Date(iso);
const isos = (ds: Date[]) => ds.map((d) => d.toISOString());

describe("nextScheduleTime", () => {
  it("is the first time strictly after the reference, in UTC by default", () => {
    expect(nextScheduleTime({ cron: "0 3 * * *" }, at("2026-03-10T02:59:59Z"))?.toISOString()).toBe("2026-03-10T03:00:00.000Z");
    // Exactly on a tick: the next one, so a tick that just ran is not found again.
    expect(nextScheduleTime({ cron: "0 3 * * *" }, at("2026-03-10T03:00:00Z"))?.toISOString()).toBe("2026-03-11T03:00:00.000Z");
    expect(nextScheduleTime({ cron: "*/15 * * * *" }, at("2026-03-10T10:07:00Z"))?.toISOString()).toBe("2026-03-10T10:15:00.000Z");
    expect(nextScheduleTime({ cron: "0 4 * * MON" }, at("2026-03-10T00:00:00Z"))?.toISOString()).toBe("2026-03-16T04:00:00.000Z");
  });

  it("counts in the time zone, across the spring DST change (Paris: 03:00 is 02:00Z, then 01:00Z)", () => {
    expect(isos(nextScheduleTimes({ cron: "0 3 * * *", timezone: "Europe/Paris" }, at("2026-03-27T12:00:00Z"), 3))).toEqual([
      "2026-03-28T02:00:00.000Z",
      "2026-03-29T01:00:00.000Z",
      "2026-03-30T01:00:00.000Z",
    ]);
    expect(nextScheduleTime({ cron: "0 9 * * *", timezone: "America/New_York" }, at("2026-07-01T00:00:00Z"))?.toISOString()).toBe("2026-07-01T13:00:00.000Z");
  });

  it("takes six fields (seconds first) and nicknames", () => {
    expect(nextScheduleTime({ cron: "* * * * * *" }, at("2026-03-10T10:00:00.400Z"))?.toISOString()).toBe("2026-03-10T10:00:01.000Z");
    expect(nextScheduleTime({ cron: "30 0 12 * * *" }, at("2026-03-10T10:00:00Z"))?.toISOString()).toBe("2026-03-10T12:00:30.000Z");
    expect(nextScheduleTime({ cron: "@daily" }, at("2026-03-10T10:00:00Z"))?.toISOString()).toBe("2026-03-11T00:00:00.000Z");
    expect(nextScheduleTime({ cron: "@hourly" }, at("2026-03-10T10:00:00Z"))?.toISOString()).toBe("2026-03-10T11:00:00.000Z");
  });

  it("is null for an expression or zone it cannot use (the schema refuses them first)", () => {
    expect(nextScheduleTime({ cron: "61 * * * *" }, at("2026-03-10T10:00:00Z"))).toBeNull();
    expect(nextScheduleTime({ cron: "0 3 * * *", timezone: "Mars/Olympus" }, at("2026-03-10T10:00:00Z"))).toBeNull();
    expect(nextScheduleTimes({ cron: "nope" }, at("2026-03-10T10:00:00Z"), 3)).toEqual([]);
  });
});

describe("cronProblem and timezoneProblem", () => {
  it("accept the usual expressions and IANA zones", () => {
    for (const c of ["0 3 * * *", "*/5 * * * *", "0 0 1 1 *", "0 22 * * 1-5", "0 3 * * MON-FRI", "0 0 L * *", "* * * * * *", "@weekly", "@yearly"]) expect(cronProblem(c), c).toBeNull();
    for (const z of ["UTC", "Europe/Paris", "America/Los_Angeles", "Asia/Kolkata"]) expect(timezoneProblem(z), z).toBeNull();
  });

  it("refuse with why: wrong field count, a one-off date, out of range, never falls, unknown zone", () => {
    expect(cronProblem("0 3 * *")).toMatch(/not a cron expression: give 5 fields/);
    expect(cronProblem("* * * * * * *")).toMatch(/not a cron expression/);
    expect(cronProblem("2026-01-01T00:00:00")).toMatch(/not a cron expression/);
    expect(cronProblem("@sometimes")).toMatch(/not a cron expression/);
    expect(cronProblem("61 * * * *")).toMatch(/minute/);
    expect(cronProblem("0 0 30 2 *")).toMatch(/never falls/);
    expect(timezoneProblem("Mars/Olympus")).toMatch(/not an IANA time zone/);
  });
});

describe("spec.schedule", () => {
  const steps = { A: { jobTemplate: { kind: "noop", targets: { devices: ["d"] } } } };
  it("is optional, strict, and names the field that is wrong", () => {
    expect(WorkflowSpec.parse({ steps }).schedule).toBeUndefined();
    expect(WorkflowSpec.parse({ steps, schedule: { cron: " 0 3 * * * ", timezone: "Europe/Paris", suspend: true } }).schedule).toEqual({ cron: "0 3 * * *", timezone: "Europe/Paris", suspend: true });
    const issue = (schedule: unknown) => WorkflowSpec.safeParse({ steps, schedule }).error?.issues[0];
    expect(issue({ cron: "0 25 * * *" })).toMatchObject({ path: ["schedule", "cron"], message: expect.stringMatching(/hour/) });
    expect(issue({ cron: "0 3 * * *", timezone: "Nowhere" })).toMatchObject({ path: ["schedule", "timezone"] });
    expect(issue({ cron: "0 3 * * *", concurrencyPolicy: "Allow" })?.code).toBe("unrecognized_keys");
    expect(issue({})).toMatchObject({ path: ["schedule", "cron"] });
  });
});
