/**
 * The agent protocol (../shared/AGENT_PROTOCOL.md) against a real server: enrollment, the
 * work long-poll, heartbeats and derived statuses, conflicts, decommissioning, the sweep,
 * errors, limits and the OpenAPI document.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, testOnPostgres, type TestServer } from "./helpers/server";
import {
  enrollDevice,
  enrollmentBody,
  eventually,
  expectError,
  heartbeat,
  heartbeatBody,
  newSecret,
  uniqueName,
  type EnrolledDevice,
} from "./helpers/devices";
import { topics } from "../server/bus";
import { awaitDecision } from "../server/enrollments/enrollments";

const AUTO_APPROVE = "site=lab,env in (dev,test)";

let s: TestServer;
/** DROVER_AUTO_APPROVE set. */
let auto: TestServer;
/** A 1 s disconnection timeout; its sweep run by the test (advanceClock, tick), not by a timer. */
let fast: TestServer;

beforeAll(async () => {
  [s, auto, fast] = await Promise.all([
    startTestServer(),
    startTestServer({ DROVER_AUTO_APPROVE: AUTO_APPROVE }),
    startTestServer({ DROVER_DISCONNECTION_TIMEOUT_SECONDS: "1", DROVER_SWEEP_SECONDS: "600" }),
  ]);
});
afterAll(async () => {
  await Promise.all([s?.close(), auto?.close(), fast?.close()]);
});

interface DeviceView {
  name: string;
  summary: string;
  updatedStatus: string;
  updatingReason: string | null;
  applicationSummary: string;
  lifecycle: string;
  decommissioning: string | null;
  lastSeen: string | null;
  conflictPaused: boolean;
  renderedVersion: number;
  credentialRevokedAt: string | null;
  conditions: { type: string; status: string; reason: string }[];
}
interface EventView {
  id: number;
  objectKind: string;
  objectName: string;
  type: string;
  reason: string;
  actor: string;
}
interface EnrollmentView {
  id: string;
  deviceName: string;
  status: string;
  decidedBy: string | null;
}

async function device(server: TestServer, name: string): Promise<DeviceView> {
  const res = await server.api<DeviceView>("GET", `/devices/${name}`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}
async function events(server: TestServer, kind: string, name: string): Promise<EventView[]> {
  const res = await server.api<{ items: EventView[] }>("GET", `/events?kind=${kind}&name=${encodeURIComponent(name)}&limit=1000`);
  expect(res.status).toBe(200);
  return res.body.items;
}
async function enrollments(server: TestServer, name: string): Promise<EnrollmentView[]> {
  const res = await server.api<{ items: EnrollmentView[] }>("GET", "/enrollments?limit=1000");
  expect(res.status).toBe(200);
  return res.body.items.filter((e) => e.deviceName === name);
}
const decisionOf = (server: TestServer, id: string, secret: string, wait = 0) =>
  server.agent<{ status: string; token?: string }>("GET", `/enrollments/${id}?wait=${wait}`, undefined, { "x-enrollment-secret": secret });

// ---------------------------------------------------------------------------------------

describe("enrollment", () => {
  it("is idempotent: the same name and secret get the same request, recorded once", async () => {
    const name = uniqueName("idem");
    const secret = newSecret();
    const first = await s.agent<{ enrollmentId: string; status: string }>("POST", "/enrollments", enrollmentBody(name, secret, { site: "a" }));
    const second = await s.agent<{ enrollmentId: string; status: string }>("POST", "/enrollments", enrollmentBody(name, secret, { site: "a" }));
    expect(first.status).toBe(201);
    expect(first.body).toEqual({ enrollmentId: expect.any(String), status: "Pending" });
    expect(second.status).toBe(201);
    expect(second.body).toEqual(first.body);
    expect(await enrollments(s, name)).toHaveLength(1);
    expect((await events(s, "EnrollmentRequest", name)).map((e) => e.type)).toEqual(["EnrollmentRequested"]);
  });

  it("refuses the same name with another secret while Pending (409) and changes nothing", async () => {
    const name = uniqueName("dup");
    const secret = newSecret();
    const first = await s.agent<{ enrollmentId: string }>("POST", "/enrollments", enrollmentBody(name, secret));
    const other = await s.agent("POST", "/enrollments", enrollmentBody(name, newSecret()));
    expectError(other, 409, "CONFLICT", /pending/);
    // The original secret still owns the request.
    expect((await decisionOf(s, first.body.enrollmentId, secret)).body).toEqual({ status: "Pending" });
    expect(await enrollments(s, name)).toHaveLength(1);
    expect(await events(s, "EnrollmentRequest", name)).toHaveLength(1);
  });

  it("refuses a name that is already enrolled (409), except the same secret asking again", async () => {
    const d = await enrollDevice(s);
    expectError(await s.agent("POST", "/enrollments", enrollmentBody(d.name, newSecret())), 409, "CONFLICT", /already enrolled/);
    const again = await s.agent("POST", "/enrollments", enrollmentBody(d.name, d.secret));
    expect(again.status).toBe(201);
    // Asking again neither issues another token nor revokes the one the device has: before the
    // device is seen it is that token again (the request's answer and the decision), after, none.
    expect(again.body).toEqual({ enrollmentId: d.enrollmentId, status: "Approved", token: d.token });
    expect((await decisionOf(s, d.enrollmentId, d.secret)).body).toEqual({ status: "Approved", token: d.token });
    expect((await heartbeat(s, d)).status).toBe(200);
    expect((await s.agent("POST", "/enrollments", enrollmentBody(d.name, d.secret))).body).toEqual({ enrollmentId: d.enrollmentId, status: "Approved" });
    expect((await decisionOf(s, d.enrollmentId, d.secret)).body).toEqual({ status: "Approved" });
  });

  it("a Denied name may ask again with a new secret: back to Pending, and the old secret stops working", async () => {
    const name = uniqueName("denied");
    const oldSecret = newSecret();
    const created = await s.agent<{ enrollmentId: string }>("POST", "/enrollments", enrollmentBody(name, oldSecret));
    const id = created.body.enrollmentId;
    const denied = await s.api<EnrollmentView>("POST", `/enrollments/${id}/deny`, { reason: "unknown box" });
    expect(denied.status).toBe(200);
    expect(denied.body.status).toBe("Denied");
    expect((await decisionOf(s, id, oldSecret)).body).toEqual({ status: "Denied" });
    // The same secret again is idempotent: still Denied.
    expect((await s.agent("POST", "/enrollments", enrollmentBody(name, oldSecret))).body).toEqual({ enrollmentId: id, status: "Denied" });

    const newSecretValue = newSecret();
    const again = await s.agent<{ enrollmentId: string; status: string }>("POST", "/enrollments", enrollmentBody(name, newSecretValue));
    expect(again.status).toBe(201);
    expect(again.body.status).toBe("Pending");
    expect((await decisionOf(s, again.body.enrollmentId, newSecretValue)).body).toEqual({ status: "Pending" });
    expectError(await decisionOf(s, again.body.enrollmentId, oldSecret), 401, "UNAUTHENTICATED");
    expect((await events(s, "EnrollmentRequest", name)).map((e) => e.type)).toEqual(["EnrollmentRequested", "EnrollmentDenied", "EnrollmentRequested"]);

    // …and can then be approved normally.
    expect((await s.api("POST", `/enrollments/${again.body.enrollmentId}/approve`, {})).status).toBe(200);
    const decision = await decisionOf(s, again.body.enrollmentId, newSecretValue);
    expect(decision.body.status).toBe("Approved");
    expect(decision.body.token).toEqual(expect.any(String));
  });

  it("GET with a wrong or missing secret is 401; an unknown id is 404", async () => {
    const name = uniqueName("secret");
    const secret = newSecret();
    const { body } = await s.agent<{ enrollmentId: string }>("POST", "/enrollments", enrollmentBody(name, secret));
    expectError(await decisionOf(s, body.enrollmentId, newSecret()), 401, "UNAUTHENTICATED", /secret/);
    expectError(await s.agent("GET", `/enrollments/${body.enrollmentId}`), 401, "UNAUTHENTICATED", /X-Enrollment-Secret/);
    expectError(await decisionOf(s, "00000000-0000-4000-8000-000000000000", secret), 404, "NOT_FOUND");
  });

  it("after approval every answer carries the same token until the device is first seen, then none; it works", async () => {
    const name = uniqueName("token");
    const secret = newSecret();
    const { body } = await s.agent<{ enrollmentId: string }>("POST", "/enrollments", enrollmentBody(name, secret));
    expect((await decisionOf(s, body.enrollmentId, secret)).body).toEqual({ status: "Pending" });
    expect((await s.api("POST", `/enrollments/${body.enrollmentId}/approve`, {})).status).toBe(200);

    const first = await decisionOf(s, body.enrollmentId, secret);
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ status: "Approved", token: expect.stringMatching(/^drvd/) });
    // Its answer lost on the way (the agent's own timeout under load): asked again, the same token.
    expect((await decisionOf(s, body.enrollmentId, secret)).body).toEqual({ status: "Approved", token: first.body.token });
    expect((await decisionOf(s, body.enrollmentId, secret, 1)).body).toEqual({ status: "Approved", token: first.body.token });
    // A wrong secret still gets nothing, and the row keeps no token in the clear.
    expectError(await decisionOf(s, body.enrollmentId, newSecret()), 401, "UNAUTHENTICATED", /secret/);
    const row = await s.ctx.db.enrollmentRequest.findUniqueOrThrow({ where: { id: body.enrollmentId } });
    expect(JSON.stringify(row)).not.toContain(first.body.token!);

    const res = await s.agent("POST", "/status", heartbeatBody(), { authorization: `Bearer ${first.body.token}` });
    expect(res.status).toBe(200);
    // Seen: the credential arrived, and the secret opens nothing any more.
    expect((await decisionOf(s, body.enrollmentId, secret)).body).toEqual({ status: "Approved" });
  });

  it("concurrent first asks after approval: all of them get the one token the device has", async () => {
    const name = uniqueName("race");
    const secret = newSecret();
    const { body } = await s.agent<{ enrollmentId: string }>("POST", "/enrollments", enrollmentBody(name, secret));
    await s.api("POST", `/enrollments/${body.enrollmentId}/approve`, {});
    const answers = await Promise.all(Array.from({ length: 5 }, () => decisionOf(s, body.enrollmentId, secret)));
    expect(answers.every((a) => a.status === 200 && a.body.status === "Approved")).toBe(true);
    const tokens = new Set(answers.map((a) => a.body.token));
    expect(tokens.size).toBe(1);
    const [token] = [...tokens];
    expect(token).toMatch(/^drvd/);
    expect((await s.agent("POST", "/status", heartbeatBody(), { authorization: `Bearer ${token}` })).status).toBe(200);
  });

  it("an ask whose client has gone is answered with nothing and issues nothing: the next ask gets the token", async () => {
    const name = uniqueName("gone");
    const secret = newSecret();
    const { body } = await s.agent<{ enrollmentId: string }>("POST", "/enrollments", enrollmentBody(name, secret));
    await s.api("POST", `/enrollments/${body.enrollmentId}/approve`, {});
    // Hung up before the answer was read (a held wait its agent gave up on): nothing given out.
    const gone = new AbortController();
    gone.abort();
    expect(await awaitDecision(s.ctx, body.enrollmentId, secret, 0, gone.signal)).toEqual({ status: "Approved" });
    expect((await s.ctx.db.enrollmentRequest.findUniqueOrThrow({ where: { id: body.enrollmentId } })).tokenIssuedAt).toBeNull();
    const next = await decisionOf(s, body.enrollmentId, secret);
    expect(next.body).toEqual({ status: "Approved", token: expect.stringMatching(/^drvd/) });
    expect((await s.agent("POST", "/status", heartbeatBody(), { authorization: `Bearer ${next.body.token}` })).status).toBe(200);
    expect((await decisionOf(s, body.enrollmentId, secret)).body).toEqual({ status: "Approved" });
  });

  it("wait parks the request and answers within a second of an approval made meanwhile", async () => {
    const name = uniqueName("wait");
    const secret = newSecret();
    const { body } = await s.agent<{ enrollmentId: string }>("POST", "/enrollments", enrollmentBody(name, secret));
    const started = Date.now();
    const waiting = decisionOf(s, body.enrollmentId, secret, 20).then((r) => ({ ...r, at: Date.now() }));
    await eventually(async () => (s.ctx.bus.listenerCount(topics.enrollment(body.enrollmentId)) > 0 ? true : undefined));
    const approved = await s.api("POST", `/enrollments/${body.enrollmentId}/approve`, {});
    const approvedAt = Date.now();
    expect(approved.status).toBe(200);
    const answer = await waiting;
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ status: "Approved", token: expect.any(String) });
    expect(answer.at - approvedAt).toBeLessThan(1_000);
    expect(answer.at - started).toBeLessThan(10_000);
  });

  it("wait without a decision holds for about `wait` seconds and answers Pending", async () => {
    const name = uniqueName("wait-timeout");
    const secret = newSecret();
    const { body } = await s.agent<{ enrollmentId: string }>("POST", "/enrollments", enrollmentBody(name, secret));
    const started = Date.now();
    const answer = await decisionOf(s, body.enrollmentId, secret, 1);
    expect(answer.body).toEqual({ status: "Pending" });
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
  });
});

describe("auto-approve (DROVER_AUTO_APPROVE)", () => {
  it.each([
    [{ site: "lab", env: "dev" }, "Approved"],
    [{ site: "lab", env: "test", extra: "x" }, "Approved"],
    [{ site: "lab", env: "prod" }, "Pending"],
    [{ site: "hq", env: "dev" }, "Pending"],
    [{ env: "dev" }, "Pending"],
    [{}, "Pending"],
  ])("labels %j → %s", async (labels, expected) => {
    const name = uniqueName("auto");
    const secret = newSecret();
    const created = await auto.agent<{ enrollmentId: string; status: string; token?: string }>("POST", "/enrollments", enrollmentBody(name, secret, labels));
    expect(created.status).toBe(201);
    expect(created.body.status).toBe(expected);
    const decision = await decisionOf(auto, created.body.enrollmentId, secret);
    expect(decision.body.status).toBe(expected);
    const devices = await auto.api("GET", `/devices/${name}`);
    if (expected === "Approved") {
      // Approved at once: the answer to the request carries the token; the decision gives the same one.
      expect(created.body.token).toMatch(/^drvd/);
      expect(decision.body.token).toBe(created.body.token);
      expect(devices.status).toBe(200);
      const approvedEvent = (await events(auto, "EnrollmentRequest", name)).find((e) => e.type === "EnrollmentApproved");
      expect(approvedEvent?.actor).toBe(`auto-approve:${AUTO_APPROVE}`);
    } else {
      expect(created.body.token).toBeUndefined();
      expect(decision.body.token).toBeUndefined();
      expectError(devices, 404, "NOT_FOUND");
    }
  });

  it("approved at once, the request's answer carries a working token, the same again until the device is first seen", async () => {
    const name = uniqueName("auto-token");
    const secret = newSecret();
    const ask = () => auto.agent<{ enrollmentId: string; status: string; token?: string }>("POST", "/enrollments", enrollmentBody(name, secret, { site: "lab", env: "dev" }));
    const created = await ask();
    expect(created.body).toEqual({ enrollmentId: expect.any(String), status: "Approved", token: expect.stringMatching(/^drvd/) });
    // The row keeps it sealed, never in the clear.
    const row = await auto.ctx.db.enrollmentRequest.findUniqueOrThrow({ where: { id: created.body.enrollmentId } });
    expect(row.tokenIssuedAt).not.toBeNull();
    expect(JSON.stringify(row)).not.toContain(created.body.token!);
    // Its answer lost on the way: the same request again answers the same token.
    expect((await ask()).body).toEqual(created.body);
    expect((await auto.agent("POST", "/status", heartbeatBody(), { authorization: `Bearer ${created.body.token}` })).status).toBe(200);
    // Seen: neither the request again nor the decision carries it any more.
    expect((await ask()).body).toEqual({ enrollmentId: created.body.enrollmentId, status: "Approved" });
    expect((await decisionOf(auto, created.body.enrollmentId, secret)).body).toEqual({ status: "Approved" });
  });
});

// ---------------------------------------------------------------------------------------

describe("validation: 400 names the field, and a rejected request writes nothing", () => {
  const valid = () => enrollmentBody(uniqueName("bad"), newSecret());
  const rows: [string, (b: ReturnType<typeof valid>) => unknown, RegExp][] = [
    ["deviceName with a space and capitals", (b) => ({ ...b, deviceName: `W ${b.deviceName}` }), /deviceName/],
    ["deviceName too long", (b) => ({ ...b, deviceName: "a".repeat(64) }), /deviceName/],
    ["secret missing", (b) => ({ ...b, secret: undefined }), /secret/],
    ["secret too short", (b) => ({ ...b, secret: "c2hvcnQ" }), /secret/],
    ["role unknown", (b) => ({ ...b, role: "boss" }), /role/],
    ["platform malformed", (b) => ({ ...b, platform: "linux" }), /platform/],
    ["label key invalid", (b) => ({ ...b, labels: { "-bad": "x" } }), /labels/],
    ["label value invalid", (b) => ({ ...b, labels: { site: "a b" } }), /labels/],
    ["agentVersion empty", (b) => ({ ...b, agentVersion: "" }), /agentVersion/],
  ];
  it.each(rows)("POST /enrollments: %s", async (_what, mutate, field) => {
    const base = valid();
    const body = mutate(base) as { deviceName?: string };
    const before = await s.ctx.db.event.count();
    expectError(await s.agent("POST", "/enrollments", body), 400, "INVALID_REQUEST", field);
    expect(await s.ctx.db.enrollmentRequest.count({ where: { deviceName: { in: [base.deviceName, body.deviceName ?? ""] } } })).toBe(0);
    expect(await s.ctx.db.event.count()).toBe(before);
  });

  it("POST /enrollments with a body that is not JSON, or none, is 400 and writes nothing", async () => {
    const before = await s.ctx.db.enrollmentRequest.count();
    expectError(await s.agent("POST", "/enrollments", "{not json"), 400, "INVALID_REQUEST", /body/);
    expectError(await s.agent("POST", "/enrollments"), 400, "INVALID_REQUEST");
    expectError(await s.agent("POST", "/enrollments", "[]"), 400, "INVALID_REQUEST");
    expect(await s.ctx.db.enrollmentRequest.count()).toBe(before);
  });

  it("bad query parameters on /work and /enrollments/{id} name the parameter", async () => {
    const d = await enrollDevice(s);
    expectError(await s.agent("GET", "/work?wait=soon", undefined, d.auth), 400, "INVALID_REQUEST", /wait/);
    expectError(await s.agent("GET", "/work?wait=-1", undefined, d.auth), 400, "INVALID_REQUEST", /wait/);
    expectError(await s.agent("GET", "/work?specVersion=-1", undefined, d.auth), 400, "INVALID_REQUEST", /specVersion/);
    expectError(await s.agent("GET", "/work?specVersion=1.5", undefined, d.auth), 400, "INVALID_REQUEST", /specVersion/);
    expectError(await decisionOf(s, d.enrollmentId, d.secret, "x" as unknown as number), 400, "INVALID_REQUEST", /wait/);
  });

  // Once (SQLite): the body is refused before any write; the reads around it are the operator API's.
  it.skipIf(testOnPostgres).each([
    ["resources.cpu unknown", { ...heartbeatBody(), resources: { cpu: "Fine", memory: "Healthy", disk: "Healthy" } }, /resources\.cpu/],
    ["resources missing", { ...heartbeatBody(), resources: undefined }, /resources/],
    ["config.renderedVersion negative", { ...heartbeatBody(), config: { renderedVersion: -1 } }, /config\.renderedVersion/],
    ["application status unknown", heartbeatBody({ applications: [{ name: "web", status: "Dancing", restarts: 0 }] }), /applications\.0\.status/],
    ["updating reason not reportable", heartbeatBody({ conditions: { updating: { status: true, reason: "ActivatingConfig" } } }), /conditions\.updating\.reason/],
    ["decommissioning state unknown", heartbeatBody({ decommissioning: { state: "Done" } }), /decommissioning\.state/],
    ["action id not a uuid", heartbeatBody({ actions: [{ id: "x", state: "RUNNING" }] }), /actions\.0\.id/],
  ])("POST /status: %s → 400, and neither lastSeen nor statuses change", async (_what, body, field) => {
    const d = await enrollDevice(s);
    const before = await device(s, d.name);
    const eventsBefore = await events(s, "Device", d.name);
    expectError(await s.agent("POST", "/status", body, d.auth), 400, "INVALID_REQUEST", field);
    const after = await device(s, d.name);
    expect(after.lastSeen).toBeNull();
    expect(after).toEqual(before);
    expect(await events(s, "Device", d.name)).toEqual(eventsBefore);
  });

  // Once (SQLite): refused while the body is read, before any query.
  it.skipIf(testOnPostgres)("a body over 1 MiB is 413 TOO_LARGE, with or without Content-Length, and writes nothing", async () => {
    const name = uniqueName("big");
    const body = JSON.stringify({ ...enrollmentBody(name, newSecret()), pad: "x".repeat(1024 * 1024) });
    const declared = await fetch(`${s.url}/api/agent/v1/enrollments`, { method: "POST", headers: { "content-type": "application/json" }, body });
    expectError({ status: declared.status, body: await declared.json() }, 413, "TOO_LARGE");

    const bytes = new TextEncoder().encode(body);
    const stream = new ReadableStream<Uint8Array>({
      start(c) {
        for (let i = 0; i < bytes.length; i += 64 * 1024) c.enqueue(bytes.slice(i, i + 64 * 1024));
        c.close();
      },
    });
    const chunked = await fetch(`${s.url}/api/agent/v1/enrollments`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: stream,
      duplex: "half",
    } as RequestInit);
    expectError({ status: chunked.status, body: await chunked.json() }, 413, "TOO_LARGE");
    expect(await s.ctx.db.enrollmentRequest.count({ where: { deviceName: name } })).toBe(0);

    const d = await enrollDevice(s);
    const status = await fetch(`${s.url}/api/agent/v1/status`, {
      method: "POST",
      headers: { "content-type": "application/json", ...d.auth },
      body: JSON.stringify({ ...heartbeatBody(), pad: "x".repeat(1024 * 1024) }),
    });
    expectError({ status: status.status, body: await status.json() }, 413, "TOO_LARGE");
    expect((await device(s, d.name)).lastSeen).toBeNull();
  });
});

describe("authentication", () => {
  it.each([
    ["no Authorization header", undefined],
    ["an unknown token", "Bearer drvd_not-a-real-token"],
    ["a Basic scheme", "Basic YWRtaW46YWRtaW4="],
    ["an empty bearer", "Bearer "],
  ])("/work and /status with %s → 401", async (_what, authorization) => {
    const headers: Record<string, string> = authorization ? { authorization } : {};
    expectError(await s.agent("GET", "/work", undefined, headers), 401, "UNAUTHENTICATED");
    expectError(await s.agent("POST", "/status", heartbeatBody(), headers), 401, "UNAUTHENTICATED");
  });

  it("an operator token is not a device token", async () => {
    expectError(await s.agent("GET", "/work", undefined, { authorization: `Bearer ${s.adminToken}` }), 401, "UNAUTHENTICATED");
  });
});

// ---------------------------------------------------------------------------------------

describe("status: the heartbeat", () => {
  it("updates lastSeen and the derived statuses from resources, conditions and applications", async () => {
    const d = await enrollDevice(s);
    const fresh = await device(s, d.name);
    expect(fresh).toMatchObject({ summary: "Offline", applicationSummary: "Unknown", updatedStatus: "Unknown", lifecycle: "Enrolled", lastSeen: null });

    const steps: [string, Parameters<typeof heartbeat>[2], Partial<DeviceView>][] = [
      ["all healthy", {}, { summary: "Online", applicationSummary: "NoApplications", updatedStatus: "UpToDate", updatingReason: null }],
      ["disk degraded", { resources: { disk: "Degraded" } }, { summary: "Degraded" }],
      ["memory critical beside degraded disk", { resources: { disk: "Degraded", memory: "Critical" } }, { summary: "Error" }],
      ["cpu error", { resources: { cpu: "Error" } }, { summary: "Error" }],
      ["rebooting with an error", { resources: { cpu: "Error" }, conditions: { rebooting: true } }, { summary: "Rebooting" }],
      ["back online", {}, { summary: "Online" }],
      ["apps running and completed", { applications: [{ name: "web", status: "Running", restarts: 0 }, { name: "job", status: "Completed", restarts: 0 }] }, { applicationSummary: "Healthy" }],
      ["an app starting", { applications: [{ name: "web", status: "Running", restarts: 0 }, { name: "db", status: "Starting", restarts: 1 }] }, { applicationSummary: "Degraded" }],
      ["an app in error", { applications: [{ name: "web", status: "Error", restarts: 3 }, { name: "db", status: "Starting", restarts: 1 }] }, { applicationSummary: "Error" }],
      ["no apps", {}, { applicationSummary: "NoApplications" }],
      ["updating", { conditions: { updating: { status: true, reason: "ApplyingUpdate", info: "writing" } } }, { updatedStatus: "Updating", updatingReason: "ApplyingUpdate" }],
      ["updated", { conditions: { updating: { status: false, reason: "Updated" } } }, { updatedStatus: "UpToDate", updatingReason: "Updated" }],
    ];
    let lastSeen = 0;
    for (const [what, patch, expected] of steps) {
      const res = await heartbeat(s, d, patch);
      expect(res.status, what).toBe(200);
      expect(res.body, what).toEqual({ heartbeatSeconds: expect.any(Number) });
      expect(res.body.heartbeatSeconds, what).toBeGreaterThan(0);
      const view = await device(s, d.name);
      expect(view, what).toMatchObject(expected);
      const seen = Date.parse(view.lastSeen ?? "");
      expect(seen, what).toBeGreaterThanOrEqual(lastSeen);
      expect(Math.abs(Date.now() - seen), what).toBeLessThan(5_000);
      lastSeen = seen;
    }
    const view = await device(s, d.name);
    expect(view.conditions.find((c) => c.type === "Updating")).toMatchObject({ status: "False", reason: "Updated" });
    expect(view.conditions.find((c) => c.type === "Rebooting")).toMatchObject({ status: "False" });

    // Each change of an axis is one event, by the device.
    const summaryChanges = (await events(s, "Device", d.name))
      .filter((e) => e.type === "SummaryChanged")
      .reverse()
      .map((e) => [e.reason, e.actor]);
    expect(summaryChanges).toEqual(
      ["Online", "Degraded", "Error", "Rebooting", "Online"].map((r) => [r, `device:${d.name}`]),
    );
  });

  it("a renderedVersion newer than the service's pauses the device (ConflictPaused) until an operator resumes it", async () => {
    const d = await enrollDevice(s);
    expect((await heartbeat(s, d)).status).toBe(200);
    expect((await device(s, d.name)).summary).toBe("Online");

    expect((await heartbeat(s, d, { renderedVersion: 5 })).status).toBe(200);
    const paused = await device(s, d.name);
    expect(paused).toMatchObject({ summary: "ConflictPaused", conflictPaused: true });
    const conflictEvents = (await events(s, "Device", d.name)).filter((e) => e.type === "ConflictPaused");
    expect(conflictEvents).toHaveLength(1);
    expect(conflictEvents[0]).toMatchObject({ reason: "UnknownRenderedVersion", actor: `device:${d.name}` });
    // Heartbeats go on, the pause holds, and it is not recorded again.
    expect((await heartbeat(s, d, { renderedVersion: 5 })).status).toBe(200);
    expect((await device(s, d.name)).summary).toBe("ConflictPaused");
    expect((await events(s, "Device", d.name)).filter((e) => e.type === "ConflictPaused")).toHaveLength(1);

    const resumed = await s.api<DeviceView>("POST", `/devices/${d.name}/resume`, {});
    expect(resumed.status).toBe(200);
    expect(resumed.body).toMatchObject({ conflictPaused: false, summary: "Online" });
    expect((await device(s, d.name)).summary).toBe("Online");
    expect((await events(s, "Device", d.name)).find((e) => e.type === "Resumed")).toMatchObject({ actor: "user:admin" });
    // Resuming a device that is not paused is a conflict.
    expectError(await s.api("POST", `/devices/${d.name}/resume`, {}), 409, "CONFLICT");

    // The operator's resume sticks: the service now knows the device's version, so the same
    // report does not pause it again…
    expect((await heartbeat(s, d, { renderedVersion: 5 })).status).toBe(200);
    expect(await device(s, d.name)).toMatchObject({ summary: "Online", conflictPaused: false, renderedVersion: 5, updatedStatus: "UpToDate" });
    // …but a still newer one does.
    expect((await heartbeat(s, d, { renderedVersion: 7 })).status).toBe(200);
    expect((await device(s, d.name)).summary).toBe("ConflictPaused");
    expect((await events(s, "Device", d.name)).filter((e) => e.type === "ConflictPaused")).toHaveLength(2);
  });

  it("an unknown device in the operator API is 404", async () => {
    expectError(await s.api("POST", "/devices/no-such-device/resume", {}), 404, "NOT_FOUND");
    expectError(await s.api("POST", "/devices/no-such-device/decommission", {}), 404, "NOT_FOUND");
    expectError(await s.api("GET", "/devices/no-such-device"), 404, "NOT_FOUND");
  });
});

// ---------------------------------------------------------------------------------------

describe("work: the long-poll", () => {
  it("with nothing to do, answers {actions: []} at once for wait=0 and after about `wait` seconds otherwise", async () => {
    const d = await enrollDevice(s);
    const now = await s.agent("GET", "/work?wait=0", undefined, d.auth);
    expect(now).toEqual({ status: 200, body: { actions: [] } });
    const started = Date.now();
    const held = await s.agent("GET", "/work?wait=1", undefined, d.auth);
    expect(held).toEqual({ status: 200, body: { actions: [] } });
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    expect(s.ctx.bus.listenerCount(topics.device(await deviceId(d)))).toBe(0);
  });

  // Several servers share a bus only on PostgreSQL (LISTEN/NOTIFY).
  it.runIf(testOnPostgres)("a poll on another server of the database answers the device's poll held here at once (issue 22: the cap is the cluster's)", async () => {
    const other = await startTestServer({}, { sameDatabaseAs: s });
    const controller = new AbortController();
    try {
      const d = await enrollDevice(s);
      const ghost = fetch(`${s.url}/api/agent/v1/work?wait=30`, { headers: d.auth }).then(async (r) => ({ status: r.status, body: (await r.json()) as unknown, at: Date.now() }));
      await expect.poll(async () => (await s.ctx.metrics.heldPolls.get()).values[0]?.value, { timeout: 5_000 }).toBe(1);
      const started = Date.now();
      const newer = fetch(`${other.url}/api/agent/v1/work?wait=30`, { headers: d.auth, signal: controller.signal }).catch(() => null);
      const answered = await ghost;
      expect(answered).toMatchObject({ status: 200, body: { actions: [] } });
      expect(answered.at - started).toBeLessThan(5_000);
      expect((await s.ctx.metrics.pollsRefused.get()).values.find((v) => v.labels.reason === "superseded")?.value).toBeGreaterThanOrEqual(1);
      controller.abort();
      await newer;
    } finally {
      controller.abort();
      await other.close();
    }
  });
});

async function deviceId(d: EnrolledDevice): Promise<string> {
  const row = await s.ctx.db.device.findUniqueOrThrow({ where: { name: d.name }, select: { id: true } });
  return row.id;
}

describe("decommissioning", () => {
  it("wakes a held poll within 100 ms, answers later polls at once, and ends with the credential revoked", async () => {
    const d = await enrollDevice(s);
    expect((await heartbeat(s, d)).status).toBe(200);
    const id = await deviceId(d);

    // A poll is parked…
    const held = s.agent<{ actions: unknown[]; decommission?: boolean }>("GET", "/work?wait=30", undefined, d.auth).then((r) => ({ ...r, at: performance.now() }));
    await eventually(async () => (s.ctx.bus.listenerCount(topics.device(id)) > 0 ? true : undefined));
    // …when the operator asks to decommission.
    const requestedAt = performance.now();
    const requested = await s.api<DeviceView>("POST", `/devices/${d.name}/decommission`, {});
    const committedAt = performance.now();
    expect(requested.status).toBe(200);
    expect(requested.body).toMatchObject({ lifecycle: "Decommissioning", decommissioning: "Requested" });
    const answer = await held;
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ actions: [], decommission: true });
    // Woken by the change, not answered by its wait running out (how fast is the bench's to measure).
    expect(answer.at - committedAt, `request took ${Math.round(committedAt - requestedAt)} ms`).toBeLessThan(5_000);

    // Every later poll answers at once while decommissioning.
    const started = performance.now();
    const again = await s.agent("GET", "/work?wait=30", undefined, d.auth);
    expect(again.body).toEqual({ actions: [], decommission: true });
    expect(performance.now() - started).toBeLessThan(1_000);

    // A second request is a conflict and changes nothing.
    expectError(await s.api("POST", `/devices/${d.name}/decommission`, {}), 409, "CONFLICT");
    expect((await events(s, "Device", d.name)).filter((e) => e.type === "DecommissionRequested")).toHaveLength(1);

    // The agent reports progress.
    expect((await heartbeat(s, d, { decommissioning: { state: "Started" } })).status).toBe(200);
    expect(await device(s, d.name)).toMatchObject({ lifecycle: "Decommissioning", decommissioning: "Started", credentialRevokedAt: null });
    expect((await heartbeat(s, d, { decommissioning: { state: "Completed", info: "wiped" } })).status).toBe(200);
    const done = await device(s, d.name);
    // Offline at once, not when the disconnection timeout passes: its credential is revoked (issue 10).
    expect(done).toMatchObject({ lifecycle: "Decommissioned", decommissioning: "Completed", summary: "Offline", applicationSummary: "Unknown" });
    expect(done.credentialRevokedAt).not.toBeNull();
    expect(done.conditions.find((c) => c.type === "DeviceDecommissioning")).toMatchObject({ status: "True", reason: "Completed" });
    const types = (await events(s, "Device", d.name)).map((e) => e.type);
    expect(types).toContain("CredentialRevoked");
    expect(types.filter((t) => t === "LifecycleChanged")).toHaveLength(2); // → Decommissioning, → Decommissioned

    // The token is dead.
    expectError(await heartbeat(s, d), 401, "UNAUTHENTICATED", /revoked/);
    expectError(await s.agent("GET", "/work", undefined, d.auth), 401, "UNAUTHENTICATED", /revoked/);
    expectError(await s.agent("PUT", `/actions/${randomUUID()}`, { state: "NEW", kind: "noop" }, d.auth), 401, "UNAUTHENTICATED", /revoked/);
    // Still visible, still not decommissionable again.
    expectError(await s.api("POST", `/devices/${d.name}/decommission`, {}), 409, "CONFLICT");
    expect((await device(s, d.name)).lifecycle).toBe("Decommissioned");
  });

  it("a decommissioning Error report also ends as Decommissioned", async () => {
    const d = await enrollDevice(s);
    expect((await s.api("POST", `/devices/${d.name}/decommission`, {})).status).toBe(200);
    const work = await s.agent("GET", "/work?wait=5", undefined, d.auth);
    expect(work.body).toEqual({ actions: [], decommission: true });
    expect((await heartbeat(s, d, { decommissioning: { state: "Error", info: "disk busy" } })).status).toBe(200);
    expect(await device(s, d.name)).toMatchObject({ lifecycle: "Decommissioned", decommissioning: "Error" });
    expectError(await heartbeat(s, d), 401, "UNAUTHENTICATED");
  });
});

// ---------------------------------------------------------------------------------------

describe("the sweep", () => {
  it("turns a device that stopped reporting Offline, its applications Unknown, and records it as the sweep", async () => {
    const d = await enrollDevice(fast);
    const res = await heartbeat(fast, d, { applications: [{ name: "web", status: "Running", restarts: 0 }] });
    expect(res.status).toBe(200);
    // The heartbeat interval is capped at a third of the disconnection timeout (at least 1 s).
    expect(res.body.heartbeatSeconds).toBe(1);
    expect(await device(fast, d.name)).toMatchObject({ summary: "Online", applicationSummary: "Healthy" });
    // A second, unchanged report only touches lastSeen (the fast path): the sweep must see that write too.
    expect((await heartbeat(fast, d, { applications: [{ name: "web", status: "Running", restarts: 0 }] })).status).toBe(200);
    const lastSeen = Date.parse((await device(fast, d.name)).lastSeen ?? "");

    fast.advanceClock(2_000);
    expect(await fast.tick()).toBe(true);
    const view = await device(fast, d.name);
    expect(view).toMatchObject({ summary: "Offline", applicationSummary: "Unknown", updatedStatus: "UpToDate" });
    expect(Date.parse(view.lastSeen ?? "")).toBe(lastSeen);
    const swept = (await events(fast, "Device", d.name)).filter((e) => e.actor === "sweep");
    expect(swept.map((e) => [e.type, e.reason]).sort()).toEqual([
      ["ApplicationSummaryChanged", "Unknown"],
      ["SummaryChanged", "Offline"],
    ]);

    // Reporting again brings it back.
    expect((await heartbeat(fast, d)).status).toBe(200);
    expect(await device(fast, d.name)).toMatchObject({ summary: "Online", applicationSummary: "NoApplications" });
  });

  it("a move or a render re-derives a device, but marking it Offline by the clock is the sweep's alone (issue 22)", async () => {
    // No sweep of its own timer: the test says when it runs.
    const quiet = await startTestServer({ DROVER_SWEEP_SECONDS: "600" });
    try {
      const d = await enrollDevice(quiet);
      expect((await heartbeat(quiet, d)).status).toBe(200);
      quiet.advanceClock(301_000);
      // A nudge re-derives the device (as a render or a bulk move does): past its timeout, yet
      // only the sweep knows whether its heartbeats could be heard (a database outage, a new leader).
      expect((await quiet.api("POST", "/nudge", { kind: "Device", name: d.name })).status).toBe(200);
      expect(await device(quiet, d.name)).toMatchObject({ summary: "Online" });
      expect(await quiet.tick()).toBe(true);
      expect(await device(quiet, d.name)).toMatchObject({ summary: "Offline" });
      const offline = (await events(quiet, "Device", d.name)).filter((e) => e.type === "SummaryChanged" && e.reason === "Offline");
      expect(offline.map((e) => e.actor)).toEqual(["sweep"]);
    } finally {
      await quiet.close();
    }
  });
});

// ---------------------------------------------------------------------------------------

describe("errors, limits and the contract", () => {
  it("unknown paths and methods are 404 in the protocol's error shape", async () => {
    expectError(await s.agent("GET", "/nothing-here"), 404, "NOT_FOUND");
    expectError(await s.agent("DELETE", "/status"), 404, "NOT_FOUND");
    expectError(await s.agent("GET", ""), 404, "NOT_FOUND");
  });

  it("a device hammering /status gets 429 RATE_LIMITED with Retry-After; other devices do not", async () => {
    const d = await enrollDevice(s);
    const other = await enrollDevice(s);
    const send = () =>
      fetch(`${s.url}/api/agent/v1/status`, {
        method: "POST",
        headers: { "content-type": "application/json", ...d.auth },
        body: JSON.stringify(heartbeatBody()),
      }).then(async (r) => ({ status: r.status, retryAfter: r.headers.get("retry-after"), body: (await r.json()) as unknown }));
    // Enough that the 10/s refill cannot keep up however slowly a loaded machine serves them.
    const answers = await Promise.all(Array.from({ length: 200 }, send));
    const ok = answers.filter((a) => a.status === 200);
    const limited = answers.filter((a) => a.status === 429);
    expect(ok.length + limited.length).toBe(answers.length);
    // A burst of 40, plus what 10/s refills while the burst is served.
    expect(ok.length).toBeGreaterThanOrEqual(40);
    expect(limited.length).toBeGreaterThan(0);
    for (const a of limited) {
      expectError(a, 429, "RATE_LIMITED");
      expect(Number(a.retryAfter)).toBeGreaterThanOrEqual(1);
      expect(Number.isInteger(Number(a.retryAfter))).toBe(true);
    }
    expect((await heartbeat(s, other)).status).toBe(200);
  });

  it("GET /openapi.json is an OpenAPI 3.1 document with the protocol's paths", async () => {
    const res = await s.agent<{
      openapi: string;
      info: { title: string; version: string };
      paths: Record<string, Record<string, { responses: Record<string, unknown>; requestBody?: unknown }>>;
      components: { securitySchemes: Record<string, { type: string; scheme: string }> };
    }>("GET", "/openapi.json");
    expect(res.status).toBe(200);
    const doc = res.body;
    expect(doc.openapi).toMatch(/^3\.1\./);
    expect(doc.info.title).toEqual(expect.any(String));
    // Every route, each with every status it answers: tests/agent-protocol-doc.test.ts holds it to docs/agent-protocol.md.
    expect(Object.keys(doc.paths).sort()).toEqual(["/actions/{id}", "/certificate", "/download", "/download/manifest", "/enrollments", "/enrollments/{id}", "/openapi.json", "/status", "/work"]);
    expect(Object.keys(doc.paths["/certificate"] ?? {})).toEqual(["post"]);
    expect(Object.keys(doc.paths["/actions/{id}"] ?? {})).toEqual(["put"]);
    expect(Object.keys(doc.paths["/enrollments"] ?? {})).toEqual(["post"]);
    expect(Object.keys(doc.paths["/enrollments/{id}"] ?? {})).toEqual(["get"]);
    expect(Object.keys(doc.paths["/work"] ?? {})).toEqual(["get"]);
    expect(Object.keys(doc.paths["/status"] ?? {})).toEqual(["post"]);
    expect(doc.paths["/enrollments"]?.post?.responses).toHaveProperty("201");
    expect(doc.paths["/status"]?.post?.requestBody).toBeDefined();
    expect(doc.paths["/work"]?.get?.responses).toHaveProperty("200");
    expect(doc.paths["/status"]?.post?.responses).toHaveProperty("413");
    expect(Object.values(doc.components.securitySchemes)).toContainEqual(expect.objectContaining({ type: "http", scheme: "bearer" }));
    // Issue 23: the device's client certificate.
    expect(Object.values(doc.components.securitySchemes)).toContainEqual(expect.objectContaining({ type: "mutualTLS" }));
    // The request schema is the one the handler validates with.
    const schema = JSON.stringify(doc.paths["/status"]?.post?.requestBody);
    for (const field of ["resources", "applications", "conditions", "config", "decommissioning", "actions"]) expect(schema).toContain(`"${field}"`);
  });
});
