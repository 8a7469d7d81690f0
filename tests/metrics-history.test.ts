/**
 * The overview's history (issue 10): the sampling controller against a real server with a
 * short interval (DROVER_METRICS_SAMPLE_SECONDS), retention, the REST and OpenAPI surface, and
 * the bucketing (pure, server/overview/buckets.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, testOnPostgres, type TestServer } from "./helpers/server";
import { enrollDevice, eventually, expectError, heartbeat, uniqueName } from "./helpers/devices";
import { createAction, onlineDevice, reportAll, offeredIds, setHealth } from "./helpers/actions";
import { bucketHistory, bucketSecondsFor, nextSampleAt, type SampleValues, type StoredSample } from "../server/overview/buckets";
import type { MetricsHistory } from "../server/overview/buckets";

const values = (patch: Partial<SampleValues> = {}): SampleValues => ({
  summary: {},
  lifecycle: {},
  heartbeats: 0,
  actionsCreated: 0,
  actionsFinished: {},
  rollouts: [],
  plans: [],
  plansRunning: 0,
  workflowsRunning: 0,
  ...patch,
});

describe("bucketing (pure)", () => {
  it("sizes buckets from the sample interval up to 720 a range", () => {
    expect(bucketSecondsFor("1h", 60)).toBe(60);
    expect(bucketSecondsFor("24h", 60)).toBe(120);
    expect(bucketSecondsFor("7d", 60)).toBe(840);
    expect(bucketSecondsFor("1h", 0.5)).toBe(5);
    expect(nextSampleAt(125, 60)).toBe(180);
    expect(nextSampleAt(120, 60)).toBe(180);
  });

  it("aligns samples on bucket ends: gauges the last sample, rates per minute over the seconds covered, gaps null", () => {
    const samples: StoredSample[] = [
      // Bucket ending at 120 (24h range: 120 s buckets): two samples.
      { at: 60, seconds: 60, values: values({ summary: { Online: 3 }, heartbeats: 30, actionsCreated: 2, actionsFinished: { DONE: 1 } }) },
      { at: 120, seconds: 60, values: values({ summary: { Online: 4, Offline: 1 }, heartbeats: 90, actionsFinished: { DONE: 3, FAILED: 2 } }) },
      // Nothing in the bucket ending at 240; one sample in the one ending at 360.
      { at: 300, seconds: 180, values: values({ summary: { Online: 5 }, heartbeats: 30 }) },
    ];
    const h = bucketHistory(samples, { range: "24h", nowSeconds: 350, sampleSeconds: 60 });
    expect(h.bucketSeconds).toBe(120);
    expect(h.times).toHaveLength(720);
    expect(h.times.at(-1)).toBe(360);
    expect(h.times.at(-4)).toBe(0);
    expect(h.samples).toBe(3);
    const tail = <T>(xs: T[]) => xs.slice(-3);
    expect(tail(h.devices.summary.Online!)).toEqual([4, null, 5]);
    expect(tail(h.devices.summary.Offline!)).toEqual([1, null, 0]);
    expect(tail(h.heartbeatsPerMinute)).toEqual([60, null, 10]);
    expect(tail(h.actions.createdPerMinute)).toEqual([1, null, 0]);
    expect(tail(h.actions.finishedPerMinute.DONE!)).toEqual([2, null, 0]);
    expect(tail(h.actions.finishedPerMinute.FAILED!)).toEqual([1, null, 0]);
    expect(h.heartbeatsPerMinute[0]).toBeNull();
    expect(h.nextSampleAt).toBe(360);
  });

  it("draws rollouts and plans as progress in percent, the most recent first, samples outside the range ignored", () => {
    const rollout = (updated: number) => ({ id: "r1", fleet: "web", version: "3", phase: "RollingOut", updated, total: 4 });
    const samples: StoredSample[] = [
      { at: 3_600 * 2 - 3_600, seconds: 60, values: values({ heartbeats: 1_000 }) }, // exactly at the range's open start: out
      { at: 3_660, seconds: 60, values: values({ rollouts: [rollout(1)], plans: [{ id: "p1", name: "k0s", state: "SchedulableWait", done: 1, failed: 0, total: 2 }], plansRunning: 1 }) },
      { at: 3_720, seconds: 60, values: values({ rollouts: [{ ...rollout(4), phase: "Completed" }], plansRunning: 0 }) },
    ];
    const h = bucketHistory(samples, { range: "1h", nowSeconds: 7_200, sampleSeconds: 60 });
    expect(h.times).toHaveLength(60);
    expect(h.samples).toBe(2);
    expect(h.rollouts).toHaveLength(1);
    expect(h.rollouts[0]!.phase).toBe("Completed");
    expect(h.times[0]).toBe(3_660);
    expect(h.rollouts[0]!.percent.slice(0, 3)).toEqual([25, 100, null]);
    expect(h.plans[0]!.percent.slice(0, 3)).toEqual([50, null, null]);
    expect(h.plansRunning.slice(0, 3)).toEqual([1, 0, null]);
    expect(h.heartbeatsPerMinute.every((v) => v === null || v === 0)).toBe(true);
  });

  it("a rollout that failed, was aborted or superseded stops where it ended: the fleet's counts after it are another version's", () => {
    const rollout = (phase: string, updated: number) => ({ id: "r1", fleet: "web", version: "3", phase, updated, total: 4 });
    const samples: StoredSample[] = [
      { at: 3_660, seconds: 60, values: values({ rollouts: [rollout("CanaryPaused", 1)] }) },
      // Reverted to version 2: every member is up to date again, on version 2.
      { at: 3_720, seconds: 60, values: values({ rollouts: [rollout("CanaryFailed", 4)] }) },
    ];
    const h = bucketHistory(samples, { range: "1h", nowSeconds: 7_200, sampleSeconds: 60 });
    expect(h.rollouts[0]!.phase).toBe("CanaryFailed");
    expect(h.rollouts[0]!.percent.slice(0, 2)).toEqual([25, null]);
  });
});

describe("sampling against a real server", () => {
  let s: TestServer;

  beforeAll(async () => {
    s = await startTestServer({ DROVER_METRICS_SAMPLE_SECONDS: "0.2" });
  });
  afterAll(async () => {
    await s?.close();
  });

  const history = async (range = "1h") => {
    const res = await s.api<MetricsHistory>("GET", `/metrics/history?range=${range}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body;
  };
  const stored = async () => (await s.ctx.db.metricSample.findMany({ orderBy: { at: "asc" } })).map((r) => ({ at: r.at, seconds: r.seconds, values: JSON.parse(r.values) as SampleValues }));

  it("samples devices per status, heartbeats and actions created and finished, and serves them bucketed", async () => {
    const d = await onlineDevice(s);
    const before = (await stored()).length;
    for (let i = 0; i < 5; i++) await setHealth(s, d, {});
    const a = await createAction(s, d.name, "noop");
    expect(await offeredIds(s, d)).toContain(a.id);
    await reportAll(s, d, a.id, "NEW", "RUNNING", "DONE");
    const b = await createAction(s, d.name, "noop");
    expect((await s.api("POST", `/actions/${b.id}/cancel`, {})).status).toBe(200);

    // Every count lands in some sample taken after it: wait until all are in.
    const rows = await eventually(async () => {
      const all = await stored();
      const sum = (f: (v: SampleValues) => number) => all.reduce((n, r) => n + f(r.values), 0);
      return all.length > before + 1 &&
        sum((v) => v.heartbeats) >= 6 &&
        sum((v) => v.actionsCreated) === 2 &&
        sum((v) => v.actionsFinished.DONE ?? 0) === 1 &&
        sum((v) => v.actionsFinished.CANCELLED ?? 0) === 1
        ? all
        : undefined;
    });
    const last = rows.at(-1)!;
    expect(last.values.summary.Online).toBe(1);
    expect(last.values.lifecycle.Enrolled).toBe(1);
    // Samples land on multiples of the interval, each covering the time since the one before.
    for (const r of rows.slice(1)) expect(r.at.getTime() % 200).toBe(0);
    // …so the last covers the gap since the one before: 0.2 s, or a multiple when a busy
    // machine let a slot pass (0.4 s seen in CI on PostgreSQL).
    const [prev, latest] = rows.slice(-2) as [(typeof rows)[number], (typeof rows)[number]];
    expect(latest.seconds).toBeCloseTo((latest.at.getTime() - prev.at.getTime()) / 1000, 3);
    expect(latest.seconds / 0.2).toBeCloseTo(Math.round(latest.seconds / 0.2), 3);

    const h = await history("1h");
    expect(h.range).toBe("1h");
    expect(h.sampleSeconds).toBe(0.2);
    expect(h.bucketSeconds).toBe(5);
    expect(h.times).toHaveLength(720);
    expect(h.samples).toBeGreaterThan(1);
    expect(h.nextSampleAt).toBeGreaterThan(Date.now() / 1000 - 1);
    const lastOnline = h.devices.summary.Online!.filter((v) => v !== null).at(-1);
    expect(lastOnline).toBe(1);
    expect(h.heartbeatsPerMinute.some((v) => (v ?? 0) > 0)).toBe(true);
    expect(h.actions.createdPerMinute.some((v) => (v ?? 0) > 0)).toBe(true);
    expect(h.actions.finishedPerMinute.DONE?.some((v) => (v ?? 0) > 0)).toBe(true);
    for (const series of [h.heartbeatsPerMinute, h.devices.summary.Online!, h.plansRunning, h.workflowsRunning]) expect(series).toHaveLength(720);

    // Downsampled ranges: fewer, wider buckets over the same samples.
    const week = await history("7d");
    expect(week.bucketSeconds).toBe(840);
    expect(week.times).toHaveLength(720);
    expect(week.devices.summary.Online!.filter((v) => v !== null).at(-1)).toBe(1);

    // A heartbeat that changes the status shows in the next samples.
    expect((await heartbeat(s, d, { resources: { cpu: "Critical" } })).status).toBe(200);
    await eventually(async () => ((await stored()).at(-1)!.values.summary.Error === 1 ? true : undefined));
  });

  // Several servers share a bus only on PostgreSQL (LISTEN/NOTIFY); on SQLite each process is its own.
  it.runIf(testOnPostgres)("heartbeats another server on the database ingested count in the leader's samples (issue 22)", async () => {
    const second = await startTestServer({}, { sameDatabaseAs: s });
    try {
      const d = await onlineDevice(s);
      const sum = async () => (await stored()).reduce((n, r) => n + r.values.heartbeats, 0);
      // The leader's own heartbeats are reported within a second: let them land first.
      await new Promise((r) => setTimeout(r, 1500));
      const before = await sum();
      for (let i = 0; i < 8; i++) expect((await heartbeat(second, d, {})).status).toBe(200);
      await eventually(async () => ((await sum()) >= before + 8 ? true : undefined));
    } finally {
      await second.close();
    }
  });

  it("samples an open rollout with its fleet's members up to date", async () => {
    const name = uniqueName("hist");
    const suite = uniqueName("suite");
    const devices = [await enrollDevice(s, `${name}-a`, { suite }), await enrollDevice(s, `${name}-b`, { suite })];
    const template = (version: string) => ({ spec: { version, applications: [{ name: "web", command: ["/usr/bin/web"] }] } });
    const body = (version: string) => ({ metadata: { name }, spec: { selector: { matchLabels: { suite } }, template: template(version), rolloutPolicy: { canary: { replicas: 1, duration: "1h" } } } });
    expect((await s.api("POST", "/fleets", body("1.0.0"))).status).toBe(201);
    // The first version goes to every member at once; then a change opens a rollout (a canary of one that lasts an hour).
    for (const d of devices) {
      const view = (await s.api<{ renderedVersion: number }>("GET", `/devices/${d.name}`)).body;
      expect((await heartbeat(s, d, { renderedVersion: view.renderedVersion, applications: [{ name: "web", status: "Running", restarts: 0 }] })).status).toBe(200);
    }
    expect((await s.api("PUT", `/fleets/${name}`, body("2.0.0"))).status).toBe(200);
    const h = await eventually(async () => {
      const got = await history("1h");
      const r = got.rollouts.find((x) => x.fleet === name);
      return r && r.total.some((v) => v === 2) ? { got, r } : undefined;
    });
    expect(h.r.version).toBe("2");
    expect(h.r.phase).toBe("Canary");
    expect(h.r.percent.some((v) => v !== null && v >= 0 && v <= 100)).toBe(true);
    expect(h.r.percent).toHaveLength(h.got.times.length);
  });

  it("prunes samples past the retention (7 days) at each sample", async () => {
    const now = Date.now();
    const old = new Date(now - 8 * 86_400_000);
    const kept = new Date(now - 6 * 86_400_000);
    for (const at of [old, kept]) await s.ctx.db.metricSample.create({ data: { at, seconds: 60, values: JSON.stringify(values()) } });
    await eventually(async () => ((await s.ctx.db.metricSample.count({ where: { at: old } })) === 0 ? true : undefined));
    expect(await s.ctx.db.metricSample.count({ where: { at: kept } })).toBe(1);
    // The 7-day view shows the kept one as a sample in its range.
    const week = await history("7d");
    expect(week.devices.summary.Online).toBeDefined();
  });

  it("refuses a range it does not know with 400 and the error shape", async () => {
    expectError(await s.api("GET", "/metrics/history?range=2d"), 400, "INVALID_REQUEST", /range/);
    expectError(await s.api("GET", "/metrics/history?range="), 400, "INVALID_REQUEST", /range/);
    expect((await s.api<MetricsHistory>("GET", "/metrics/history")).body.range).toBe("1h");
  });

  it("needs a signed-in caller and is in the OpenAPI document", async () => {
    expect((await fetch(`${s.url}/api/v1/metrics/history`)).status).toBe(401);
    const doc = (await (await fetch(`${s.url}/api/v1/openapi.json`)).json()) as { paths: Record<string, { get?: { parameters?: { name: string }[] } }> };
    expect(doc.paths["/metrics/history"]?.get?.parameters?.map((p) => p.name)).toContain("range");
  });
});
