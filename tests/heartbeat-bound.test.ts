/**
 * Heartbeats in flight (issue 22 item 4), against a real server over HTTP on both databases:
 * past DROVER_MAX_HEARTBEATS_IN_FLIGHT a status report is 429 with Retry-After, before its body
 * is read, and changes nothing (nor makes a device Offline: the sweep's grace); a report whose
 * client went away while it queued for its group commit is dropped unwritten. Likewise past
 * DROVER_MAX_ENROLLMENTS_IN_FLIGHT an enrollment is 429 before its body is read.
 */
import http from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, testOnPostgres, type TestServer } from "./helpers/server";
import { enrollDevice, enrollmentBody, eventually, expectError, heartbeat, heartbeatBody, newSecret, uniqueName, type EnrolledDevice } from "./helpers/devices";

let bounded: TestServer;
let s: TestServer;

beforeAll(async () => {
  [bounded, s] = await Promise.all([
    // One report at a time; no sweep of its own timer (the test says when it runs).
    startTestServer({ DROVER_MAX_HEARTBEATS_IN_FLIGHT: "1", DROVER_MAX_ENROLLMENTS_IN_FLIGHT: "1", DROVER_SWEEP_SECONDS: "600" }),
    startTestServer(),
  ]);
});
afterAll(async () => {
  await Promise.all([bounded?.close(), s?.close()]);
});

/** A metric's value for these labels (0 when never counted). */
async function value(metric: { get(): Promise<{ values: { labels: Record<string, unknown>; value: number }[] }> }, labels: Record<string, string> = {}) {
  const { values } = await metric.get();
  return values.find((v) => Object.entries(labels).every(([k, l]) => v.labels[k] === l))?.value ?? 0;
}

/** A POST /status on its own connection, its body sent as told: the request and its answer's status (0: none). */
function rawStatus(server: TestServer, d: EnrolledDevice) {
  const body = JSON.stringify(heartbeatBody());
  const req = http.request(`${server.url}/api/agent/v1/status`, {
    method: "POST",
    agent: false,
    headers: { ...d.auth, "content-type": "application/json", "content-length": Buffer.byteLength(body) },
  });
  const answered = new Promise<number>((resolve) => {
    req.on("response", (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
    });
    req.on("error", () => resolve(0));
  });
  return { req, body, answered };
}

const lastSeen = async (server: TestServer, d: EnrolledDevice) =>
  (await server.ctx.db.device.findUniqueOrThrow({ where: { name: d.name }, select: { lastSeen: true } })).lastSeen;

describe("the bound on heartbeats in flight", () => {
  it("past it a report is 429 with Retry-After and changes nothing, no device goes Offline for it; under it reports are taken", async () => {
    const [a, b] = [await enrollDevice(bounded), await enrollDevice(bounded)];
    expect((await heartbeat(bounded, b)).status).toBe(200);
    const seen = await lastSeen(bounded, b);
    // b's last report is now older than its disconnection timeout (300 s).
    bounded.advanceClock(301_000);

    // a's report inside the server, its body not all sent: the one place taken.
    const held = rawStatus(bounded, a);
    held.req.write(held.body.slice(0, 10));
    await eventually(async () => ((await value(bounded.ctx.metrics.statusInFlight)) === 1 ? true : undefined));

    const refused = await fetch(`${bounded.url}/api/agent/v1/status`, {
      method: "POST",
      headers: { ...b.auth, "content-type": "application/json" },
      body: JSON.stringify(heartbeatBody({ resources: { cpu: "Critical" } })),
    });
    expectError({ status: refused.status, body: await refused.json() }, 429, "RATE_LIMITED", /status reports in flight/);
    const retryAfter = Number(refused.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThanOrEqual(5);
    expect(retryAfter).toBeLessThanOrEqual(30);
    expect(await value(bounded.ctx.metrics.requestsRefused, { reason: "heartbeats-in-flight" })).toBe(1);
    // Nothing of it written.
    const after = await bounded.ctx.db.device.findUniqueOrThrow({ where: { name: b.name }, select: { lastSeen: true, reported: true } });
    expect(after.lastSeen).toEqual(seen);
    expect(after.reported).not.toContain("Critical");
    // The server could not hear b just now: the sweep does not count that against it (as after an outage).
    expect(await bounded.tick()).toBe(true);
    expect((await bounded.ctx.db.device.findUniqueOrThrow({ where: { name: b.name }, select: { summary: true } })).summary).toBe("Online");

    // a's report finished: taken, and the place is free again.
    held.req.end(held.body.slice(10));
    expect(await held.answered).toBe(200);
    expect(await value(bounded.ctx.metrics.statusInFlight)).toBe(0);
    expect((await heartbeat(bounded, b)).status).toBe(200);
    expect((await lastSeen(bounded, b))!.getTime()).toBeGreaterThan(seen!.getTime());

    // The grace is one timeout from the last refusal, no longer: a silent a is Offline after it.
    bounded.advanceClock(301_000);
    expect(await bounded.tick()).toBe(true);
    expect((await bounded.ctx.db.device.findUniqueOrThrow({ where: { name: a.name }, select: { summary: true } })).summary).toBe("Offline");
  });

  it("a report whose client went away while it queued for its group commit is dropped unwritten; the others of its batch are written", async () => {
    const [a, b, c] = [await enrollDevice(s), await enrollDevice(s), await enrollDevice(s)];
    const queued = () => value(s.ctx.metrics.storeWritesQueued);
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    let locked!: () => void;
    const isLocked = new Promise<void>((r) => (locked = r));
    // Group commits held back: on SQLite any Prisma transaction holds them (write-gate.ts); on
    // PostgreSQL a's row locked makes the batch with a's report wait, and the next one queue behind it.
    const holding = s.ctx.db.$transaction(
      async (tx) => {
        if (testOnPostgres) await tx.$queryRawUnsafe(`SELECT "id" FROM "Device" WHERE "name" = $1 FOR UPDATE`, a.name);
        else await tx.$queryRawUnsafe("SELECT 1");
        locked();
        await released;
      },
      { timeout: 30_000 },
    );
    await isLocked;
    const first = rawStatus(s, a);
    first.req.end(first.body);
    if (testOnPostgres) {
      // a's batch in flight, waiting for the row lock.
      await eventually(async () => {
        const rows = await s.ctx.db.$queryRawUnsafe<{ n: number }[]>(
          `SELECT count(*)::int AS "n" FROM pg_stat_activity WHERE "datname" = current_database() AND "wait_event_type" = 'Lock'`,
        );
        return rows[0]!.n > 0 ? true : undefined;
      });
    } else await eventually(async () => ((await queued()) === 1 ? true : undefined));
    const base = testOnPostgres ? 0 : 1;
    const gone = rawStatus(s, b);
    gone.req.end(gone.body);
    const kept = rawStatus(s, c);
    kept.req.end(kept.body);
    await eventually(async () => ((await queued()) === base + 2 ? true : undefined));
    gone.req.destroy();
    expect(await gone.answered).toBe(0);
    // One round trip on another connection: the server has seen b's connection close by then.
    expect((await fetch(`${s.url}/healthz`)).status).toBe(200);
    release();
    await holding;

    expect(await first.answered).toBe(200);
    expect(await kept.answered).toBe(200);
    await eventually(async () => ((await value(s.ctx.metrics.agentRequests, { route: "status", status: "499" })) === 1 ? true : undefined));
    expect(await lastSeen(s, b)).toBeNull();
    expect(await lastSeen(s, a)).not.toBeNull();
    expect(await lastSeen(s, c)).not.toBeNull();
    expect(await value(s.ctx.metrics.statusInFlight)).toBe(0);
    // b's next report is taken as any other.
    expect((await heartbeat(s, b)).status).toBe(200);
    expect(await lastSeen(s, b)).not.toBeNull();
  });
});

describe("the bound on enrollments in flight", () => {
  it("past it an enrollment is 429 with Retry-After before its body is read, and nothing is created; under it enrollments are taken", async () => {
    const [first, second] = [uniqueName("inflight"), uniqueName("inflight")];
    const body = JSON.stringify(enrollmentBody(first, newSecret()));
    // The first inside the server, its body not all sent: the one place taken.
    const held = http.request(`${bounded.url}/api/agent/v1/enrollments`, {
      method: "POST",
      agent: false,
      headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) },
    });
    const answered = new Promise<number>((resolve) => {
      held.on("response", (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode ?? 0));
      });
      held.on("error", () => resolve(0));
    });
    held.write(body.slice(0, 10));
    await eventually(async () => ((await value(bounded.ctx.metrics.enrollmentsInFlight)) === 1 ? true : undefined));

    const refused = await bounded.agent("POST", "/enrollments", enrollmentBody(second, newSecret()));
    expectError(refused, 429, "RATE_LIMITED", /enrollments in flight/);
    expect(await value(bounded.ctx.metrics.requestsRefused, { reason: "enrollments-in-flight" })).toBe(1);
    expect(await bounded.ctx.db.enrollmentRequest.count({ where: { deviceName: second } })).toBe(0);
    const raw = await fetch(`${bounded.url}/api/agent/v1/enrollments`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(enrollmentBody(second, newSecret())) });
    expect(raw.status).toBe(429);
    const retryAfter = Number(raw.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThanOrEqual(5);
    expect(retryAfter).toBeLessThanOrEqual(30);

    // The first finished: taken, and the place is free again.
    held.end(body.slice(10));
    expect(await answered).toBe(201);
    expect(await value(bounded.ctx.metrics.enrollmentsInFlight)).toBe(0);
    expect((await bounded.agent("POST", "/enrollments", enrollmentBody(second, newSecret()))).status).toBe(201);
  });
});
