/**
 * The operator REST API (../shared/OPERATOR_API.md) against a real server: tokens and roles,
 * enrollment decisions (bulk, concurrent), device lists with selectors, status filters and
 * pages, the event log, the OpenAPI document and /metrics.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TRPCError } from "@trpc/server";
import { startTestServer, ADMIN_PASSWORD, type TestServer } from "./helpers/server";
import { enrollDevice, enrollmentBody, eventually, expectError, heartbeat, newSecret, uniqueName, type EnrolledDevice } from "./helpers/devices";
import { createCallerFactory } from "../server/trpc/init";
import { appRouter } from "../server/trpc/router";
import { matchesSelector, parseSelector } from "../lib/label-selector";
import type { Role } from "../server/auth/roles";

let s: TestServer;
const tokens: Record<Role, string> = { admin: "", operator: "", viewer: "" };
const PASSWORDS = { viewer: "viewer-password-1", operator: "operator-password-1" };

function callerAs(role: Role, userId: string, username: string) {
  return createCallerFactory(appRouter)({ server: s.ctx, auth: s.auth, principal: { userId, username, role, via: "token" } });
}

beforeAll(async () => {
  // No sweep by its timer: the gauges test runs one pass (tick) when it reads the device gauges.
  s = await startTestServer({ DROVER_SWEEP_SECONDS: "600" });
  tokens.admin = s.adminToken;
  const admin = await s.ctx.db.user.findUniqueOrThrow({ where: { username: "admin" }, select: { id: true } });
  const asAdmin = callerAs("admin", admin.id, "admin");
  await asAdmin.auth.createUser({ username: "vera", password: PASSWORDS.viewer, role: "viewer" });
  await asAdmin.auth.createUser({ username: "otto", password: PASSWORDS.operator, role: "operator" });
  for (const [role, username] of [
    ["viewer", "vera"],
    ["operator", "otto"],
  ] as const) {
    const res = await s.api<{ token: string; role: string }>("POST", "/auth/token", { username, password: PASSWORDS[role] });
    expect(res.status).toBe(201);
    expect(res.body.role).toBe(role);
    tokens[role] = res.body.token;
  }
});
afterAll(async () => {
  await s?.close();
});

interface EnrollmentView {
  id: string;
  deviceName: string;
  status: string;
  decidedBy: string | null;
}
interface DeviceItem {
  name: string;
  summary: string;
  lifecycle: string;
  labels: Record<string, string>;
}
interface DevicePage {
  items: DeviceItem[];
  total: number;
  nextCursor: string | null;
}
interface EventView {
  id: number;
  objectKind: string;
  objectName: string;
  type: string;
  actor: string;
}

async function pendingEnrollment(name = uniqueName("pend"), labels: Record<string, string> = {}): Promise<{ id: string; name: string; secret: string }> {
  const secret = newSecret();
  const res = await s.agent<{ enrollmentId: string; status: string }>("POST", "/enrollments", enrollmentBody(name, secret, labels));
  expect(res.status).toBe(201);
  expect(res.body.status).toBe("Pending");
  return { id: res.body.enrollmentId, name, secret };
}
const enrollmentRow = (id: string) => s.ctx.db.enrollmentRequest.findUniqueOrThrow({ where: { id }, select: { status: true, decidedBy: true } });
const eventCount = () => s.ctx.db.event.count();

// ---------------------------------------------------------------------------------------

describe("tokens", () => {
  it("POST /auth/token issues a token for the user's role", async () => {
    for (const role of ["admin", "operator", "viewer"] as const) {
      const me = await s.api<{ username: string; role: string }>("GET", "/me", undefined, tokens[role]);
      expect(me.status).toBe(200);
      expect(me.body.role).toBe(role);
    }
  });

  it.each([
    ["a wrong password", { username: "vera", password: "not-her-password" }],
    ["an unknown user", { username: "nobody", password: ADMIN_PASSWORD }],
  ])("%s → 401 and no token", async (_what, body) => {
    const before = await s.ctx.db.apiToken.count();
    expectError(await s.api("POST", "/auth/token", body, ""), 401, "UNAUTHENTICATED");
    expect(await s.ctx.db.apiToken.count()).toBe(before);
  });

  it("a malformed token request is 400 naming the field", async () => {
    expectError(await s.api("POST", "/auth/token", { username: "vera" }, ""), 400, "INVALID_REQUEST", /password/);
  });

  it.each([
    ["no token", undefined],
    ["an unknown token", "drvo_unknown"],
  ])("a request with %s → 401", async (_what, token) => {
    const res = await fetch(`${s.url}/api/v1/devices`, { headers: token ? { authorization: `Bearer ${token}` } : {} });
    expectError({ status: res.status, body: await res.json() }, 401, "UNAUTHENTICATED");
  });

  it("only an admin creates users", async () => {
    const viewer = await s.ctx.db.user.findUniqueOrThrow({ where: { username: "vera" }, select: { id: true } });
    const operator = await s.ctx.db.user.findUniqueOrThrow({ where: { username: "otto" }, select: { id: true } });
    for (const caller of [callerAs("viewer", viewer.id, "vera"), callerAs("operator", operator.id, "otto")]) {
      const err = await caller.auth.createUser({ username: "mallory", password: "mallory-pass-1", role: "admin" }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(TRPCError);
      expect((err as TRPCError).code).toBe("FORBIDDEN");
    }
    expect(await s.ctx.db.user.count({ where: { username: "mallory" } })).toBe(0);
  });
});

// ---------------------------------------------------------------------------------------

describe("roles: a viewer reads, and its writes get 403 and change nothing", () => {
  let pending: { id: string; name: string };
  let enrolled: EnrolledDevice;
  let paused: EnrolledDevice;

  beforeAll(async () => {
    pending = await pendingEnrollment();
    enrolled = await enrollDevice(s);
    paused = await enrollDevice(s);
    expect((await heartbeat(s, paused, { renderedVersion: 3 })).status).toBe(200);
    expect((await s.api<{ summary: string }>("GET", `/devices/${paused.name}`)).body.summary).toBe("ConflictPaused");
  });

  it("reads work for a viewer", async () => {
    for (const path of ["/devices", `/devices/${enrolled.name}`, "/enrollments?status=Pending", "/events?limit=5", "/me"]) {
      const res = await s.api("GET", path, undefined, tokens.viewer);
      expect(res.status, path).toBe(200);
    }
  });

  it.each([
    ["approve", () => `/enrollments/${pending.id}/approve`, () => ({})],
    ["deny", () => `/enrollments/${pending.id}/deny`, () => ({})],
    ["bulk approve", () => "/enrollments/approve", () => ({ ids: [pending.id] })],
    ["bulk deny", () => "/enrollments/deny", () => ({ ids: [pending.id] })],
    ["decommission", () => `/devices/${enrolled.name}/decommission`, () => ({})],
    ["resume", () => `/devices/${paused.name}/resume`, () => ({})],
  ])("%s → 403", async (_what, path, body) => {
    const events = await eventCount();
    expectError(await s.api("POST", path(), body(), tokens.viewer), 403, "FORBIDDEN", /operator/);
    expect(await eventCount()).toBe(events);
    expect(await enrollmentRow(pending.id)).toEqual({ status: "Pending", decidedBy: null });
    expect(await s.ctx.db.device.count({ where: { name: pending.name } })).toBe(0);
    const [e, p] = await Promise.all([
      s.ctx.db.device.findUniqueOrThrow({ where: { name: enrolled.name } }),
      s.ctx.db.device.findUniqueOrThrow({ where: { name: paused.name } }),
    ]);
    expect(e).toMatchObject({ lifecycle: "Enrolled", decommissionRequestedAt: null });
    expect(p).toMatchObject({ conflictPaused: true, summary: "ConflictPaused" });
  });

  it("the same writes work for an operator", async () => {
    const approved = await s.api<EnrollmentView>("POST", `/enrollments/${pending.id}/approve`, {}, tokens.operator);
    expect(approved.status).toBe(200);
    expect(approved.body).toMatchObject({ id: pending.id, status: "Approved", decidedBy: "user:otto" });
    const decommissioned = await s.api<DeviceItem>("POST", `/devices/${enrolled.name}/decommission`, {}, tokens.operator);
    expect(decommissioned.status).toBe(200);
    expect(decommissioned.body.lifecycle).toBe("Decommissioning");
    const resumed = await s.api<{ conflictPaused: boolean }>("POST", `/devices/${paused.name}/resume`, {}, tokens.operator);
    expect(resumed.status).toBe(200);
    expect(resumed.body.conflictPaused).toBe(false);
  });
});

// ---------------------------------------------------------------------------------------

describe("enrollment decisions", () => {
  it("bulk approve of [pending, already approved] is 409 and neither changes", async () => {
    const a = await pendingEnrollment();
    const b = await pendingEnrollment();
    expect((await s.api("POST", `/enrollments/${b.id}/approve`, {})).status).toBe(200);
    const events = await eventCount();
    const devices = await s.ctx.db.device.count();

    expectError(await s.api("POST", "/enrollments/approve", { ids: [a.id, b.id] }, tokens.operator), 409, "CONFLICT", /already Approved/);
    expect(await enrollmentRow(a.id)).toEqual({ status: "Pending", decidedBy: null });
    expect((await enrollmentRow(b.id)).status).toBe("Approved");
    expect(await s.ctx.db.device.count()).toBe(devices);
    expect(await s.ctx.db.device.count({ where: { name: a.name } })).toBe(0);
    expect(await eventCount()).toBe(events);
  });

  it("bulk approve with an unknown id is 404 and changes nothing; of pending ones approves all", async () => {
    const a = await pendingEnrollment();
    const b = await pendingEnrollment();
    expectError(await s.api("POST", "/enrollments/approve", { ids: [a.id, "00000000-0000-4000-8000-000000000000"] }), 404, "NOT_FOUND");
    expect((await enrollmentRow(a.id)).status).toBe("Pending");
    expectError(await s.api("POST", "/enrollments/approve", { ids: [] }), 400, "INVALID_REQUEST", /ids/);

    const both = await s.api<{ items: EnrollmentView[] }>("POST", "/enrollments/approve", { ids: [a.id, b.id], reason: "rack 4" });
    expect(both.status).toBe(200);
    expect(both.body.items.map((e) => [e.deviceName, e.status]).sort()).toEqual([
      [a.name, "Approved"],
      [b.name, "Approved"],
    ].sort());
    expect(await s.ctx.db.device.count({ where: { name: { in: [a.name, b.name] } } })).toBe(2);
  });

  it("concurrent approvals of one request: exactly one 200, the rest 409, one device", async () => {
    const p = await pendingEnrollment();
    const answers = await Promise.all(Array.from({ length: 5 }, () => s.api("POST", `/enrollments/${p.id}/approve`, {}, tokens.operator)));
    expect(answers.filter((a) => a.status === 200)).toHaveLength(1);
    for (const a of answers.filter((x) => x.status !== 200)) expectError(a, 409, "CONFLICT");
    expect(await s.ctx.db.device.count({ where: { name: p.name } })).toBe(1);
    expect(await s.ctx.db.event.count({ where: { objectName: p.name, type: "EnrollmentApproved" } })).toBe(1);
  });

  it("deciding an already decided request is 409", async () => {
    const p = await pendingEnrollment();
    expect((await s.api("POST", `/enrollments/${p.id}/deny`, {})).status).toBe(200);
    expectError(await s.api("POST", `/enrollments/${p.id}/approve`, {}), 409, "CONFLICT");
    expectError(await s.api("POST", `/enrollments/${p.id}/deny`, {}), 409, "CONFLICT");
    expect((await enrollmentRow(p.id)).status).toBe("Denied");
  });

  it("GET /enrollments filters by status", async () => {
    const p = await pendingEnrollment();
    const pendingList = await s.api<{ items: EnrollmentView[] }>("GET", "/enrollments?status=Pending&limit=1000", undefined, tokens.viewer);
    expect(pendingList.status).toBe(200);
    expect(pendingList.body.items.map((e) => e.id)).toContain(p.id);
    expect(pendingList.body.items.every((e) => e.status === "Pending")).toBe(true);
    const approvedList = await s.api<{ items: EnrollmentView[] }>("GET", "/enrollments?status=Approved&limit=1000");
    expect(approvedList.body.items.length).toBeGreaterThan(0);
    expect(approvedList.body.items.every((e) => e.status === "Approved")).toBe(true);
    expectError(await s.api("GET", "/enrollments?status=Maybe"), 400, "INVALID_REQUEST", /status/);
  });
});

// ---------------------------------------------------------------------------------------

describe("GET /devices", () => {
  // Every selector below is scoped to this suite's devices by its own label.
  const suite = `s${process.pid}`;
  const fleet: Record<string, Record<string, string>> = {
    "f-1": { site: "lab", env: "dev", gpu: "true" },
    "f-2": { site: "lab", env: "prod" },
    "f-3": { site: "hq", env: "dev" },
    "f-4": { env: "test" },
    "f-5": {},
  };
  const names = (items: DeviceItem[]) => items.map((d) => d.name.replace(`${suite}-`, "")).sort();

  beforeAll(async () => {
    const devices: Record<string, EnrolledDevice> = {};
    for (const [short, labels] of Object.entries(fleet)) devices[short] = await enrollDevice(s, `${suite}-${short}`, { suite, ...labels });
    const beat = async (short: string, patch: Parameters<typeof heartbeat>[2]) => expect((await heartbeat(s, devices[short] as EnrolledDevice, patch)).status).toBe(200);
    await beat("f-1", {});
    await beat("f-2", { resources: { disk: "Degraded" } });
    await beat("f-3", { resources: { cpu: "Critical" } });
    // f-4 and f-5 never report: Offline.
  });

  const selectors: [string, string[]][] = [
    ["site=lab", ["f-1", "f-2"]],
    ["site==lab", ["f-1", "f-2"]],
    ["site!=lab", ["f-3", "f-4", "f-5"]],
    ["env in (dev,test)", ["f-1", "f-3", "f-4"]],
    ["env notin (dev)", ["f-2", "f-4", "f-5"]],
    ["gpu", ["f-1"]],
    ["!gpu", ["f-2", "f-3", "f-4", "f-5"]],
    ["!site", ["f-4", "f-5"]],
    ["site=lab,env!=prod", ["f-1"]],
    ["site in (lab,hq),env notin (prod,test)", ["f-1", "f-3"]],
    ["env in (staging)", []],
  ];
  it.each(selectors)("labelSelector %j → %j (the same as the in-memory matcher)", async (selector, expected) => {
    const full = `suite=${suite},${selector}`;
    const res = await s.api<DevicePage>("GET", `/devices?labelSelector=${encodeURIComponent(full)}&limit=100`, undefined, tokens.viewer);
    expect(res.status).toBe(200);
    expect(names(res.body.items)).toEqual(expected);
    expect(res.body.total).toBe(expected.length);
    // The database query and lib/label-selector (used by auto-approve) agree.
    const inMemory = Object.entries(fleet).filter(([, labels]) => matchesSelector(parseSelector(full), { suite, ...labels }));
    expect(inMemory.map(([n]) => n).sort()).toEqual(expected);
    for (const item of res.body.items) expect(item.labels).toEqual({ suite, ...fleet[item.name.replace(`${suite}-`, "")] });
  });

  it("an invalid labelSelector is 400 naming it", async () => {
    expectError(await s.api("GET", `/devices?labelSelector=${encodeURIComponent("env in ()")}`), 400, "INVALID_REQUEST", /labelSelector/);
    expectError(await s.api("GET", `/devices?labelSelector=${encodeURIComponent("site===lab")}`), 400, "INVALID_REQUEST", /labelSelector/);
  });

  it.each([
    ["Online", ["f-1"]],
    ["Online,Degraded", ["f-1", "f-2"]],
    ["Error", ["f-3"]],
    ["Offline", ["f-4", "f-5"]],
    ["Degraded,Error,Offline", ["f-2", "f-3", "f-4", "f-5"]],
    ["Rebooting", []],
  ])("summary=%s → %j", async (summary, expected) => {
    const res = await s.api<DevicePage>("GET", `/devices?labelSelector=suite%3D${suite}&summary=${summary}&limit=100`);
    expect(res.status).toBe(200);
    expect(names(res.body.items)).toEqual(expected);
    expect(res.body.total).toBe(expected.length);
  });

  it("an unknown summary or a bad limit is 400 naming the parameter", async () => {
    expectError(await s.api("GET", "/devices?summary=Online,Sleepy"), 400, "INVALID_REQUEST", /summary/);
    expectError(await s.api("GET", "/devices?limit=0"), 400, "INVALID_REQUEST", /limit/);
    expectError(await s.api("GET", "/devices?limit=many"), 400, "INVALID_REQUEST", /limit/);
  });

  it.each([1, 2, 3, 5, 6])("limit=%i with cursors covers every device exactly once, total on every page", async (limit) => {
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    const total = await s.ctx.db.device.count();
    do {
      const q: string = `/devices?limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`;
      const res = await s.api<DevicePage>("GET", q, undefined, tokens.viewer);
      expect(res.status).toBe(200);
      expect(res.body.total).toBe(total);
      expect(res.body.items.length).toBeLessThanOrEqual(limit);
      seen.push(...res.body.items.map((d) => d.name));
      cursor = res.body.nextCursor;
      if (cursor !== null) expect(res.body.items).toHaveLength(limit);
      pages++;
      expect(pages).toBeLessThanOrEqual(total + 1);
    } while (cursor !== null);
    expect(seen).toHaveLength(total);
    expect(new Set(seen).size).toBe(total);
    expect(seen).toEqual([...seen].sort());
    expect(pages).toBe(Math.max(1, Math.ceil(total / limit)));
  });

  it("pages with a selector: the five suite devices in pages of 2", async () => {
    const pageOf = async (cursor?: string) =>
      (await s.api<DevicePage>("GET", `/devices?labelSelector=suite%3D${suite}&limit=2${cursor ? `&cursor=${cursor}` : ""}`)).body;
    const p1 = await pageOf();
    const p2 = await pageOf(p1.nextCursor ?? undefined);
    const p3 = await pageOf(p2.nextCursor ?? undefined);
    expect([p1, p2, p3].map((p) => names(p.items))).toEqual([["f-1", "f-2"], ["f-3", "f-4"], ["f-5"]]);
    expect([p1.total, p2.total, p3.total]).toEqual([5, 5, 5]);
    expect(p3.nextCursor).toBeNull();
  });
});

// ---------------------------------------------------------------------------------------

describe("GET /events", () => {
  it("filters by kind and name, newest first", async () => {
    const d = await enrollDevice(s);
    expect((await heartbeat(s, d)).status).toBe(200);
    const deviceEvents = await s.api<{ items: EventView[] }>("GET", `/events?kind=Device&name=${d.name}`, undefined, tokens.viewer);
    expect(deviceEvents.status).toBe(200);
    expect(deviceEvents.body.items.length).toBeGreaterThanOrEqual(2);
    expect(deviceEvents.body.items.every((e) => e.objectKind === "Device" && e.objectName === d.name)).toBe(true);
    expect(deviceEvents.body.items.map((e) => e.type)).toEqual(expect.arrayContaining(["DeviceEnrolled", "SummaryChanged"]));
    const ids = deviceEvents.body.items.map((e) => e.id);
    expect(ids).toEqual([...ids].sort((a, b) => b - a));

    const enrollmentEvents = await s.api<{ items: EventView[] }>("GET", `/events?kind=EnrollmentRequest&name=${d.name}`);
    expect(enrollmentEvents.body.items.map((e) => e.type)).toEqual(["EnrollmentApproved", "EnrollmentRequested"]);

    const byName = await s.api<{ items: EventView[] }>("GET", `/events?name=${d.name}&limit=1000`);
    expect(byName.body.items).toHaveLength(deviceEvents.body.items.length + 2);

    const limited = await s.api<{ items: EventView[] }>("GET", "/events?limit=1");
    expect(limited.body.items).toHaveLength(1);
    expectError(await s.api("GET", "/events?kind=Spaceship"), 400, "INVALID_REQUEST", /kind/);
  });

  it("since filters by time", async () => {
    const future = new Date(Date.now() + 60_000).toISOString();
    const res = await s.api<{ items: EventView[] }>("GET", `/events?since=${encodeURIComponent(future)}`);
    expect(res.status).toBe(200);
    expect(res.body.items).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------

describe("the contract and metrics", () => {
  it("GET /api/v1/openapi.json lists the routes", async () => {
    const res = await s.api<{ openapi: string; paths: Record<string, Record<string, { parameters?: { name: string; in: string }[] }>> }>("GET", "/openapi.json", undefined, "");
    expect(res.status).toBe(200);
    expect(res.body.openapi).toMatch(/^3\.1\./);
    const routes = Object.entries(res.body.paths).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`));
    expect(routes).toEqual(
      expect.arrayContaining([
        "POST /auth/token",
        "GET /devices",
        "GET /devices/{name}",
        "POST /devices/{name}/decommission",
        "POST /devices/{name}/resume",
        "GET /enrollments",
        "POST /enrollments/{id}/approve",
        "POST /enrollments/{id}/deny",
        "POST /enrollments/approve",
        "GET /events",
      ]),
    );
    const listParams = (res.body.paths["/devices"]?.get?.parameters ?? []).filter((p) => p.in === "query").map((p) => p.name);
    expect(listParams).toEqual(expect.arrayContaining(["labelSelector", "summary", "limit", "cursor"]));
  });

  it("unknown routes are 404 and non-object bodies 400, in the protocol's error shape", async () => {
    expectError(await s.api("GET", "/nothing-here"), 404, "NOT_FOUND");
    expectError(await s.api("GET", "/enrollments/approve"), 404, "NOT_FOUND");
    expectError(await s.api("DELETE", "/devices"), 404, "NOT_FOUND");
    expectError(await s.api("POST", "/enrollments/approve", "[1,2]"), 400, "INVALID_REQUEST", /body/);
    expectError(await s.api("POST", "/enrollments/approve", "{oops"), 400, "INVALID_REQUEST", /body/);
  });

  it("/metrics exposes held polls, heartbeats and devices per status", async () => {
    const metrics = async () => {
      const res = await fetch(`${s.url}/metrics`);
      expect(res.status).toBe(200);
      return res.text();
    };
    const value = (text: string, series: string) => {
      const line = text.split("\n").find((l) => l.startsWith(series + " "));
      return line === undefined ? undefined : Number(line.slice(series.length + 1));
    };
    const d = await enrollDevice(s);
    const beatsBefore = value(await metrics(), "drover_heartbeats_total") ?? 0;
    expect((await heartbeat(s, d)).status).toBe(200);
    expect((await heartbeat(s, d)).status).toBe(200);
    expect(value(await metrics(), "drover_heartbeats_total")).toBe(beatsBefore + 2);

    // A held poll counts while it is parked and stops counting when the agent hangs up.
    expect(value(await metrics(), "drover_held_polls")).toBe(0);
    const hangUp = new AbortController();
    const poll = fetch(`${s.url}/api/agent/v1/work?wait=30`, { headers: d.auth, signal: hangUp.signal }).catch(() => "aborted");
    await eventually(async () => ((value(await metrics(), "drover_held_polls") ?? 0) === 1 ? true : undefined));
    hangUp.abort();
    expect(await poll).toBe("aborted");
    await eventually(async () => (value(await metrics(), "drover_held_polls") === 0 ? true : undefined));

    // The device gauges follow the sweep's counts.
    const online = await s.ctx.db.device.count({ where: { summary: "Online" } });
    expect(await s.tick()).toBe(true);
    const text = await metrics();
    expect(value(text, 'drover_devices{axis="summary",status="Online"}')).toBe(online);
    expect(text).toMatch(/^drover_devices\{axis="lifecycle",status="Enrolled"\} \d+$/m);
    // The process metrics come along (rendered at most once a second), each series once.
    expect(value(text, "process_resident_memory_bytes")).toBeGreaterThan(0);
    expect(value(text, "nodejs_heap_size_used_bytes")).toBeGreaterThan(0);
    // Open files counted off the event loop; the array of every handle is not built at all.
    if (process.platform === "linux") expect(value(text, "process_open_fds")).toBeGreaterThan(10);
    expect(text).not.toMatch(/^nodejs_active_(handles|resources)/m);
    const names = text.split("\n").filter((l) => l.startsWith("# TYPE ")).map((l) => l.split(" ")[2]);
    expect(new Set(names).size).toBe(names.length);
  });
});
