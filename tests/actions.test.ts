/**
 * Node actions (seed 004, DESIGN.md §4) against a real server, the operator's side and the
 * agent's reports: create for a device or a selector, approval (one, bulk, concurrent),
 * agent reports (moves, output, conflicts, agent-created actions), cancel, nudge, roles,
 * and the events every transition writes. Scheduling and LOST are in
 * actions-scheduling.test.ts.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "./helpers/server";
import { enrollDevice, expectError, heartbeat, type EnrolledDevice } from "./helpers/devices";
import {
  actionEvents,
  createAction,
  enrollAs,
  getAction,
  offeredIds,
  onlineDevice,
  postActions,
  report,
  reportAll,
  setHealth,
  sleep,
  timed,
  tokenFor,
  work,
  type ActionView,
} from "./helpers/actions";

let s: TestServer;
/** DROVER_APPROVAL_KINDS set to a custom list. */
let custom: TestServer;
let viewer = "";
let operator = { token: "", username: "" };

beforeAll(async () => {
  // A long sweep: nothing but the requests a test sends changes the database.
  [s, custom] = await Promise.all([
    startTestServer({ DROVER_SWEEP_SECONDS: "60" }),
    startTestServer({ DROVER_SWEEP_SECONDS: "60", DROVER_APPROVAL_KINDS: "deploy, wipe" }),
  ]);
  viewer = (await tokenFor(s, "viewer")).token;
  operator = await tokenFor(s, "operator");
});
afterAll(async () => {
  await Promise.all([s?.close(), custom?.close()]);
});

const counts = async (server: TestServer = s) => ({ actions: await server.ctx.db.action.count(), events: await server.ctx.db.event.count() });
/** What an operator can see of an action, to compare before and after a refused request. */
const snapshot = async (id: string) => ({ action: await getAction(s, id), events: (await actionEvents(s, id)).length });

/** An Online device with one action, offered to it and moved by its agent up to `state`. */
async function actionIn(state: "PENDING_SCHEDULE" | "NEW" | "RUNNING" | "DONE", d?: EnrolledDevice): Promise<{ d: EnrolledDevice; a: ActionView }> {
  d ??= await onlineDevice(s);
  const a = await createAction(s, d.name, "noop");
  // Only an action offered to the device can be confirmed by it (action-ownership.test.ts).
  expect(await offeredIds(s, d)).toContain(a.id);
  const path = ["NEW", "RUNNING", "DONE"];
  await reportAll(s, d, a.id, ...path.slice(0, path.indexOf(state) + 1));
  return { d, a: await getAction(s, a.id) };
}

// ---------------------------------------------------------------------------------------

describe("create for one device", () => {
  it("a noop starts in PENDING_SCHEDULE, recorded with who created it and an ActionCreated event", async () => {
    const d = await onlineDevice(s);
    const res = await postActions(s, { device: d.name, kind: "noop", args: { note: "hi" } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.items).toHaveLength(1);
    const a = res.body.items[0]!;
    expect(a).toMatchObject({
      kind: "noop",
      args: { note: "hi" },
      origin: "user",
      state: "PENDING_SCHEDULE",
      requireApproval: false,
      createdBy: "user:admin",
      decision: null,
      device: d.name,
    });
    expect(a.id).toMatch(/^[0-9a-f-]{36}$/);
    // The answer is the action as stored, field for field (only the output is left out).
    const stored = await getAction(s, a.id);
    expect(stored).toEqual({ ...a, output: null });
    const events = await actionEvents(s, a.id);
    expect(events.map((e) => [e.type, e.reason, e.actor])).toEqual([["ActionCreated", "PENDING_SCHEDULE", "user:admin"]]);
  });

  it.each(["exec", "reboot", "update"])("%s waits for approval by default (PENDING_APPROVE)", async (kind) => {
    const d = await onlineDevice(s);
    const a = await createAction(s, d.name, kind, { args: { command: "true" } });
    expect(a).toMatchObject({ kind, state: "PENDING_APPROVE", requireApproval: true });
    // Not offered while it waits.
    expect(await offeredIds(s, d)).toEqual([]);
  });

  it("requireApproval: true makes any kind wait for approval; false does not lift a kind's rule", async () => {
    const d = await onlineDevice(s);
    expect(await createAction(s, d.name, "noop", { requireApproval: true })).toMatchObject({ state: "PENDING_APPROVE", requireApproval: true });
    expect(await createAction(s, d.name, "noop", { requireApproval: false })).toMatchObject({ state: "PENDING_SCHEDULE", requireApproval: false });
    expect(await createAction(s, d.name, "exec", { requireApproval: false })).toMatchObject({ state: "PENDING_APPROVE" });
  });

  it("DROVER_APPROVAL_KINDS replaces the default list", async () => {
    const d = await onlineDevice(custom);
    const kinds = { deploy: "PENDING_APPROVE", wipe: "PENDING_APPROVE", exec: "PENDING_SCHEDULE", reboot: "PENDING_SCHEDULE", noop: "PENDING_SCHEDULE" };
    for (const [kind, state] of Object.entries(kinds)) {
      const res = await postActions(custom, { device: d.name, kind, args: {} });
      expect(res.status).toBe(201);
      expect(res.body.items[0]!.state, kind).toBe(state);
    }
  });

  it("an unknown device → 404, a decommissioned one → 409, and nothing is written", async () => {
    const d = await onlineDevice(s);
    expect((await s.api("POST", `/devices/${d.name}/decommission`, {})).status).toBe(200);
    expect((await heartbeat(s, d, { decommissioning: { state: "Completed" } })).status).toBe(200);
    const before = await counts();
    expectError(await postActions(s, { device: "no-such-device", kind: "noop", args: {} }), 404, "NOT_FOUND", /no-such-device/);
    expectError(await postActions(s, { device: d.name, kind: "noop", args: {} }), 409, "CONFLICT", /Enrolled/);
    expect(await counts()).toEqual(before);
  });
});

describe("create by label selector", () => {
  it("one action per matching Enrolled device; others and decommissioned devices are left out", async () => {
    const tag = `sel${Date.now()}`;
    const [a, b, c, other] = await Promise.all([
      onlineDevice(s, { labels: { batch: tag, zone: "a" } }),
      onlineDevice(s, { labels: { batch: tag, zone: "b" } }),
      onlineDevice(s, { labels: { batch: tag, zone: "c" } }),
      onlineDevice(s, { labels: { batch: `${tag}x`, zone: "a" } }),
    ]);
    // c is decommissioning (not Enrolled any more), then decommissioned.
    expect((await s.api("POST", `/devices/${c!.name}/decommission`, {})).status).toBe(200);
    expect((await heartbeat(s, c!, { decommissioning: { state: "Completed" } })).status).toBe(200);
    const res = await postActions(s, { labelSelector: `batch=${tag}`, kind: "noop", args: { n: 1 } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.items.map((i) => i.device).sort()).toEqual([a!.name, b!.name].sort());
    expect(new Set(res.body.items.map((i) => i.id)).size).toBe(2);
    for (const item of res.body.items) {
      expect(item).toMatchObject({ kind: "noop", args: { n: 1 }, state: "PENDING_SCHEDULE", origin: "user" });
      expect((await actionEvents(s, item.id)).map((e) => e.type)).toEqual(["ActionCreated"]);
    }
    for (const d of [c!, other!]) {
      expect((await s.api<{ total: number }>("GET", `/actions?device=${d.name}`)).body.total).toBe(0);
    }
    // A set-based selector works too.
    const inRes = await postActions(s, { labelSelector: `batch=${tag},zone in (b,c)`, kind: "noop", args: {} });
    expect(inRes.status).toBe(201);
    expect(inRes.body.items.map((i) => i.device)).toEqual([b!.name]);
  });

  it("no match → 400 and nothing is written", async () => {
    const before = await counts();
    expectError(await postActions(s, { labelSelector: "batch=nobody-has-this", kind: "noop", args: {} }), 400, "INVALID_REQUEST", /labelSelector/);
    expect(await counts()).toEqual(before);
  });
});

describe("create: bad input → 400 naming the field, nothing written", () => {
  const cases: [string, (device: string) => Record<string, unknown>, RegExp][] = [
    ["no kind", (device) => ({ device, args: {} }), /kind/],
    ["kind not lowercase", (device) => ({ device, kind: "Exec", args: {} }), /kind/],
    ["kind with spaces", (device) => ({ device, kind: "rm -rf", args: {} }), /kind/],
    ["kind too long", (device) => ({ device, kind: "a".repeat(65), args: {} }), /kind/],
    ["args not an object", (device) => ({ device, kind: "noop", args: ["x"] }), /args/],
    ["args a string", (device) => ({ device, kind: "noop", args: "x" }), /args/],
    ["requireApproval not a boolean", (device) => ({ device, kind: "noop", args: {}, requireApproval: "yes" }), /requireApproval/],
    ["device empty", () => ({ device: "", kind: "noop", args: {} }), /device/],
    ["neither device nor labelSelector", () => ({ kind: "noop", args: {} }), /device|labelSelector/],
    ["both device and labelSelector", (device) => ({ device, labelSelector: "a=b", kind: "noop", args: {} }), /device|labelSelector/],
    ["labelSelector malformed", () => ({ labelSelector: "a in (", kind: "noop", args: {} }), /labelSelector/],
  ];
  let d: EnrolledDevice;
  beforeAll(async () => {
    d = await onlineDevice(s);
  });

  it.each(cases)("%s", async (_what, body, field) => {
    const before = await counts();
    expectError(await s.api("POST", "/actions", body(d.name)), 400, "INVALID_REQUEST", field);
    expect(await counts()).toEqual(before);
  });

  it("a body that is not JSON → 400", async () => {
    const before = await counts();
    expectError(await s.api("POST", "/actions", "{not json"), 400, "INVALID_REQUEST");
    expect(await counts()).toEqual(before);
  });
});

describe("roles: a viewer cannot act on actions", () => {
  it("create, approve, reject, cancel and bulk approve → 403, nothing changed; reads work", async () => {
    const d = await onlineDevice(s);
    const pending = await createAction(s, d.name, "exec");
    const scheduled = await createAction(s, d.name, "noop");
    const before = { counts: await counts(), pending: await snapshot(pending.id), scheduled: await snapshot(scheduled.id) };
    const writes: [string, string, unknown][] = [
      ["POST", "/actions", { device: d.name, kind: "noop", args: {} }],
      ["POST", `/actions/${pending.id}/approve`, {}],
      ["POST", `/actions/${pending.id}/reject`, {}],
      ["POST", `/actions/${pending.id}/cancel`, {}],
      ["POST", `/actions/${scheduled.id}/cancel`, {}],
      ["POST", "/actions/approve", { ids: [pending.id] }],
      ["POST", "/actions/reject", { ids: [pending.id] }],
    ];
    for (const [method, path, body] of writes) expectError(await s.api(method, path, body, viewer), 403, "FORBIDDEN");
    expect({ counts: await counts(), pending: await snapshot(pending.id), scheduled: await snapshot(scheduled.id) }).toEqual(before);
    expect((await s.api("GET", `/actions/${pending.id}`, undefined, viewer)).status).toBe(200);
    expect((await s.api("GET", `/actions?device=${d.name}`, undefined, viewer)).status).toBe(200);
  });

  it("an operator may act, and is recorded as the actor", async () => {
    const d = await onlineDevice(s);
    const res = await postActions(s, { device: d.name, kind: "exec", args: {} }, operator.token);
    expect(res.status).toBe(201);
    const a = res.body.items[0]!;
    expect(a.createdBy).toBe(`user:${operator.username}`);
    const approved = await s.api<ActionView>("POST", `/actions/${a.id}/approve`, {}, operator.token);
    expect(approved.status).toBe(200);
    expect(approved.body.decidedBy).toBe(`user:${operator.username}`);
  });
});

// ---------------------------------------------------------------------------------------

describe("approval", () => {
  it("approve moves PENDING_APPROVE → PENDING_SCHEDULE and records who, when and why", async () => {
    const d = await onlineDevice(s);
    const a = await createAction(s, d.name, "reboot");
    const t0 = Date.now();
    const res = await s.api<ActionView>("POST", `/actions/${a.id}/approve`, { reason: "maintenance window" });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ id: a.id, state: "PENDING_SCHEDULE", decision: "Approved", decidedBy: "user:admin", decisionReason: "maintenance window" });
    const decidedAt = Date.parse(res.body.decidedAt!);
    expect(decidedAt).toBeGreaterThanOrEqual(t0 - 1000);
    expect(decidedAt).toBeLessThanOrEqual(Date.now() + 1000);
    expect(await getAction(s, a.id)).toMatchObject({ state: "PENDING_SCHEDULE", decision: "Approved", decidedBy: "user:admin" });
    const last = (await actionEvents(s, a.id)).at(-1)!;
    expect(last).toMatchObject({ type: "ActionApproved", reason: "PENDING_SCHEDULE", actor: "user:admin", message: "maintenance window" });
    // Approved: now offered.
    expect(await offeredIds(s, d)).toEqual([a.id]);
  });

  it("reject moves PENDING_APPROVE → CANCELLED and records who, when and why; it is never offered", async () => {
    const d = await onlineDevice(s);
    const a = await createAction(s, d.name, "exec");
    const res = await s.api<ActionView>("POST", `/actions/${a.id}/reject`, { reason: "not today" });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ state: "CANCELLED", decision: "Rejected", decidedBy: "user:admin", decisionReason: "not today" });
    expect(res.body.decidedAt).not.toBeNull();
    expect(res.body.finishedAt).not.toBeNull();
    const last = (await actionEvents(s, a.id)).at(-1)!;
    expect(last).toMatchObject({ type: "ActionRejected", reason: "CANCELLED", actor: "user:admin", message: "not today" });
    expect(await offeredIds(s, d)).toEqual([]);
  });

  it("approve or reject of an action that is not PENDING_APPROVE → 409, nothing changed", async () => {
    const d = await onlineDevice(s);
    const scheduled = await createAction(s, d.name, "noop");
    const decided = await createAction(s, d.name, "exec");
    expect((await s.api("POST", `/actions/${decided.id}/approve`, {})).status).toBe(200);
    const rejected = await createAction(s, d.name, "exec");
    expect((await s.api("POST", `/actions/${rejected.id}/reject`, {})).status).toBe(200);
    const { a: running } = await actionIn("RUNNING", d);
    for (const a of [scheduled, decided, rejected, running]) {
      const before = await snapshot(a.id);
      for (const verb of ["approve", "reject"]) {
        expectError(await s.api("POST", `/actions/${a.id}/${verb}`, {}), 409, "CONFLICT", /PENDING_APPROVE/);
      }
      expect(await snapshot(a.id)).toEqual(before);
    }
    expectError(await s.api("POST", `/actions/${randomUUID()}/approve`, {}), 404, "NOT_FOUND");
  });

  it("10 concurrent approvals of one action: exactly one 200, the rest 409, one ActionApproved event", async () => {
    const d = await onlineDevice(s);
    const a = await createAction(s, d.name, "exec");
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => s.api("POST", `/actions/${a.id}/approve`, { reason: `click ${i}` })));
    const statuses = results.map((r) => r.status).sort();
    expect(statuses, JSON.stringify(results.map((r) => r.body))).toEqual([200, ...Array<number>(9).fill(409)]);
    for (const r of results.filter((x) => x.status !== 200)) expectError(r, 409, "CONFLICT");
    const events = await actionEvents(s, a.id);
    expect(events.filter((e) => e.type === "ActionApproved")).toHaveLength(1);
    const winner = results.find((r) => r.status === 200)!.body as ActionView;
    expect(await getAction(s, a.id)).toMatchObject({ state: "PENDING_SCHEDULE", decisionReason: winner.decisionReason });
  });

  it("concurrent approve and reject of one action: exactly one wins, with one event", async () => {
    const d = await onlineDevice(s);
    for (let round = 0; round < 3; round++) {
      const a = await createAction(s, d.name, "exec");
      const results = await Promise.all(
        Array.from({ length: 6 }, (_, i) => s.api<ActionView>("POST", `/actions/${a.id}/${i % 2 ? "reject" : "approve"}`, {})),
      );
      const ok = results.filter((r) => r.status === 200);
      expect(ok, JSON.stringify(results.map((r) => r.body))).toHaveLength(1);
      expect(results.filter((r) => r.status === 409)).toHaveLength(5);
      const final = await getAction(s, a.id);
      expect(final.state).toBe(ok[0]!.body.state);
      expect(final.state).toBe(final.decision === "Approved" ? "PENDING_SCHEDULE" : "CANCELLED");
      const decisions = (await actionEvents(s, a.id)).filter((e) => e.type === "ActionApproved" || e.type === "ActionRejected");
      expect(decisions.map((e) => e.type)).toEqual([final.decision === "Approved" ? "ActionApproved" : "ActionRejected"]);
    }
  });

  it("bulk approve is all or nothing", async () => {
    const d = await onlineDevice(s);
    const [a, b, c] = [await createAction(s, d.name, "exec"), await createAction(s, d.name, "exec"), await createAction(s, d.name, "exec")];
    expect((await s.api("POST", `/actions/${a.id}/approve`, {})).status).toBe(200);
    const before = await counts();
    // One of them was already decided: none moves.
    expectError(await s.api("POST", "/actions/approve", { ids: [b.id, a.id, c.id] }), 409, "CONFLICT", new RegExp(a.id));
    // An unknown id: none moves.
    expectError(await s.api("POST", "/actions/approve", { ids: [b.id, randomUUID(), c.id] }), 404, "NOT_FOUND");
    expectError(await s.api("POST", "/actions/approve", { ids: [] }), 400, "INVALID_REQUEST", /ids/);
    expect(await counts()).toEqual(before);
    expect((await getAction(s, b.id)).state).toBe("PENDING_APPROVE");
    expect((await getAction(s, c.id)).state).toBe("PENDING_APPROVE");

    const ok = await s.api<{ items: ActionView[] }>("POST", "/actions/approve", { ids: [b.id, c.id], reason: "batch" });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(ok.body.items.map((i) => [i.id, i.state, i.decidedBy, i.decisionReason])).toEqual([
      [b.id, "PENDING_SCHEDULE", "user:admin", "batch"],
      [c.id, "PENDING_SCHEDULE", "user:admin", "batch"],
    ]);
    for (const id of [b.id, c.id]) expect((await actionEvents(s, id)).filter((e) => e.type === "ActionApproved")).toHaveLength(1);
  });

  it("bulk reject of several moves them all to CANCELLED", async () => {
    const d = await onlineDevice(s);
    const ids = [(await createAction(s, d.name, "exec")).id, (await createAction(s, d.name, "update")).id];
    const res = await s.api<{ items: ActionView[] }>("POST", "/actions/reject", { ids, reason: "no" });
    expect(res.status).toBe(200);
    expect(res.body.items.map((i) => [i.state, i.decision])).toEqual([
      ["CANCELLED", "Rejected"],
      ["CANCELLED", "Rejected"],
    ]);
  });
});

// ---------------------------------------------------------------------------------------

describe("agent reports", () => {
  it("PENDING_SCHEDULE → NEW → RUNNING → DONE, output kept, times recorded", async () => {
    const d = await onlineDevice(s);
    const a = await createAction(s, d.name, "noop");
    expect(await offeredIds(s, d)).toEqual([a.id]);
    const n = await report(s, d, a.id, { state: "NEW" });
    expect(n.status, JSON.stringify(n.body)).toBe(200);
    expect(n.body).toMatchObject({ id: a.id, state: "NEW", kind: "noop", origin: "user" });
    const r = await report(s, d, a.id, { state: "RUNNING" });
    expect(r.body.state).toBe("RUNNING");
    expect((await getAction(s, a.id)).startedAt).not.toBeNull();
    const done = await report(s, d, a.id, { state: "DONE", output: "hello\nworld" });
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({ state: "DONE", output: "hello\nworld" });
    const stored = await getAction(s, a.id);
    expect(stored).toMatchObject({ state: "DONE", output: "hello\nworld", error: null });
    expect(stored.finishedAt).not.toBeNull();
    expect(Date.parse(stored.finishedAt!)).toBeGreaterThanOrEqual(Date.parse(stored.startedAt!));
  });

  it("FAILED keeps the error and the output", async () => {
    const { d, a } = await actionIn("RUNNING");
    await reportAll(s, d, a.id, { state: "FAILED", output: "partial", error: "exit status 3" });
    expect(await getAction(s, a.id)).toMatchObject({ state: "FAILED", output: "partial", error: "exit status 3" });
    const last = (await actionEvents(s, a.id)).at(-1)!;
    expect(last).toMatchObject({ type: "ActionStateChanged", reason: "FAILED", actor: `device:${d.name}` });
    expect(last.message).toContain("exit status 3");
  });

  it("output over 64 KiB is kept truncated, head and tail, with a marker", async () => {
    const { d, a } = await actionIn("RUNNING");
    const head = "H".repeat(40 * 1024);
    const tail = "T".repeat(40 * 1024);
    const res = await report(s, d, a.id, { state: "DONE", output: head + tail });
    expect(res.status).toBe(200);
    const out = (await getAction(s, a.id)).output!;
    expect(out.length).toBeLessThanOrEqual(64 * 1024 + 200);
    expect(out.length).toBeGreaterThan(64 * 1024);
    expect(out).toMatch(/truncated/);
    expect(out.startsWith("H".repeat(32 * 1024))).toBe(true);
    expect(out.endsWith("T".repeat(32 * 1024))).toBe(true);
    // Exactly 64 KiB is kept as it is.
    const { d: d2, a: a2 } = await actionIn("RUNNING");
    const exact = "x".repeat(64 * 1024);
    await reportAll(s, d2, a2.id, { state: "DONE", output: exact });
    expect((await getAction(s, a2.id)).output).toBe(exact);
  });

  it("output over the protocol's 256 KiB → 400 naming output, nothing changed", async () => {
    const { d, a } = await actionIn("RUNNING");
    const before = await snapshot(a.id);
    expectError(await report(s, d, a.id, { state: "DONE", output: "x".repeat(256 * 1024 + 1) }), 400, "INVALID_REQUEST", /output/);
    expect(await snapshot(a.id)).toEqual(before);
  });

  it("reporting the state it already has is a no-op 200, with no event", async () => {
    const { d, a } = await actionIn("RUNNING");
    const before = await snapshot(a.id);
    for (let i = 0; i < 3; i++) {
      const res = await report(s, d, a.id, { state: "RUNNING" });
      expect(res.status).toBe(200);
      expect(res.body.state).toBe("RUNNING");
    }
    expect(await snapshot(a.id)).toEqual(before);
    // Also for a final state: a retried DONE report.
    await reportAll(s, d, a.id, { state: "DONE", output: "ok" });
    const done = await snapshot(a.id);
    expect((await report(s, d, a.id, { state: "DONE", output: "ok" })).status).toBe(200);
    expect(await snapshot(a.id)).toEqual(done);
  });

  it.each([
    ["PENDING_SCHEDULE", "RUNNING"],
    ["PENDING_SCHEDULE", "DONE"],
    ["PENDING_SCHEDULE", "CANCELLED"],
    ["NEW", "DONE"],
    ["NEW", "FAILED"],
    ["RUNNING", "NEW"],
    ["DONE", "RUNNING"],
    ["DONE", "FAILED"],
    ["DONE", "CANCELLED"],
  ] as const)("an illegal move %s → %s is 409 and changes nothing", async (from, to) => {
    const { d, a } = await actionIn(from);
    const before = await snapshot(a.id);
    expectError(await report(s, d, a.id, { state: to }), 409, "CONFLICT", new RegExp(`${from}.*${to}`));
    expect(await snapshot(a.id)).toEqual(before);
  });

  it("a move out of PENDING_APPROVE (not yet approved, never offered) is 409, changes nothing and is recorded", async () => {
    const d = await onlineDevice(s);
    const a = await createAction(s, d.name, "exec");
    const before = await snapshot(a.id);
    for (const state of ["NEW", "RUNNING", "DONE"]) expectError(await report(s, d, a.id, { state }), 409, "CONFLICT", /never offered/);
    expect(await getAction(s, a.id)).toEqual(before.action);
    const refused = (await actionEvents(s, a.id)).slice(before.events);
    expect(refused.map((e) => [e.type, e.reason])).toEqual(Array(3).fill(["ActionReportRefused", "NotOffered"]));
  });

  it("another device's action → 403 and nothing changed, even with a kind", async () => {
    const { a } = await actionIn("NEW");
    const intruder = await onlineDevice(s);
    const before = await snapshot(a.id);
    expectError(await report(s, intruder, a.id, { state: "RUNNING" }), 403, "FORBIDDEN");
    expectError(await report(s, intruder, a.id, { state: "RUNNING", kind: "sleep", args: {} }), 403, "FORBIDDEN");
    expect(await snapshot(a.id)).toEqual(before);
  });

  it("an unknown id without a kind → 404; a malformed id or state → 400; no token → 401; nothing written", async () => {
    const d = await onlineDevice(s);
    const before = await counts();
    expectError(await report(s, d, randomUUID(), { state: "RUNNING" }), 404, "NOT_FOUND", /kind/);
    expectError(await report(s, d, "not-a-uuid", { state: "RUNNING", kind: "noop" }), 400, "INVALID_REQUEST", /id/);
    expectError(await report(s, d, randomUUID(), { state: "PENDING_SCHEDULE", kind: "noop" }), 400, "INVALID_REQUEST", /state/);
    expectError(await report(s, d, randomUUID(), { state: "LOST", kind: "noop" }), 400, "INVALID_REQUEST", /state/);
    expectError(await report(s, d, randomUUID(), { state: "RUNNING", kind: "Bad Kind" }), 400, "INVALID_REQUEST", /kind/);
    expectError(await s.agent("PUT", `/actions/${randomUUID()}`, { state: "RUNNING", kind: "noop" }), 401, "UNAUTHENTICATED");
    expect(await counts()).toEqual(before);
  });

  it("an unknown id with a kind is recorded as the agent's own action (origin agent, ActionRecorded)", async () => {
    const d = await onlineDevice(s);
    const id = randomUUID();
    const res = await report(s, d, id, { state: "RUNNING", kind: "sleep", args: { seconds: 5 } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ id, kind: "sleep", args: { seconds: 5 }, origin: "agent", state: "RUNNING" });
    const recorded = await getAction(s, id);
    expect(recorded).toMatchObject({ id, device: d.name, kind: "sleep", origin: "agent", state: "RUNNING", finishedAt: null });
    expect(recorded.startedAt).not.toBeNull();
    expect((await actionEvents(s, id)).map((e) => [e.type, e.reason, e.actor])).toEqual([["ActionRecorded", "RUNNING", `device:${d.name}`]]);
    // From then on it moves like any other.
    await reportAll(s, d, id, { state: "DONE", output: "slept" });
    expect(await getAction(s, id)).toMatchObject({ state: "DONE", output: "slept", origin: "agent" });
    expect((await s.api<{ items: ActionView[] }>("GET", `/actions?device=${d.name}&origin=agent`)).body.items.map((i) => i.id)).toEqual([id]);
  });

  it("an agent's own action first heard of when it is already final is recorded with its finish time", async () => {
    const d = await onlineDevice(s);
    const id = randomUUID();
    await reportAll(s, d, id, { state: "FAILED", kind: "exec", args: { command: "false" }, error: "exit status 1" });
    const a = await getAction(s, id);
    expect(a).toMatchObject({ state: "FAILED", origin: "agent", error: "exit status 1" });
    expect(a.finishedAt).not.toBeNull();
    // It was never PENDING_APPROVE: the agent ran it on its own.
    expect((await actionEvents(s, id)).map((e) => e.type)).toEqual(["ActionRecorded"]);
  });

  it("an id the agent created, reported with another kind: the agent wins (ActionOverwritten)", async () => {
    const d = await onlineDevice(s);
    const id = randomUUID();
    await reportAll(s, d, id, { state: "NEW", kind: "noop" });
    const res = await report(s, d, id, { state: "RUNNING", kind: "sleep", args: { seconds: 1 } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const after = await getAction(s, id);
    expect(after).toMatchObject({ id, device: d.name, kind: "sleep", args: { seconds: 1 }, origin: "agent", state: "RUNNING" });
    expect(after.startedAt).not.toBeNull();
    const last = (await actionEvents(s, id)).at(-1)!;
    expect(last).toMatchObject({ type: "ActionOverwritten", reason: "RUNNING", actor: `device:${d.name}` });
    expect(last.message).toMatch(/noop/);
    // The same kind again is an ordinary report, not another overwrite.
    await reportAll(s, d, id, { state: "DONE", kind: "sleep" });
    expect((await actionEvents(s, id)).filter((e) => e.type === "ActionOverwritten")).toHaveLength(1);
    const done = await getAction(s, id);
    expect(done.state).toBe("DONE");
    expect(done.finishedAt).not.toBeNull();
  });

  it("an id the server created, reported with another kind: 409, nothing changed, the attempt recorded", async () => {
    const { d, a } = await actionIn("NEW");
    const before = await snapshot(a.id);
    expectError(await report(s, d, a.id, { state: "RUNNING", kind: "sleep", args: { seconds: 1 } }), 409, "CONFLICT", /kind \(noop → sleep\)/);
    expect(await getAction(s, a.id)).toEqual(before.action);
    expect((await actionEvents(s, a.id)).at(-1)).toMatchObject({ type: "ActionReportRefused", reason: "KindChanged", actor: `device:${d.name}` });
  });
});

// ---------------------------------------------------------------------------------------

describe("cancel", () => {
  it.each(["exec", "noop"])("a pending %s action is CANCELLED at once, recorded with who and why", async (kind) => {
    const d = await onlineDevice(s);
    const a = await createAction(s, d.name, kind);
    expect(a.state).toBe(kind === "exec" ? "PENDING_APPROVE" : "PENDING_SCHEDULE");
    const res = await s.api<ActionView>("POST", `/actions/${a.id}/cancel`, { reason: "changed my mind" });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ state: "CANCELLED", cancelRequestedBy: "user:admin" });
    expect(res.body.finishedAt).not.toBeNull();
    const last = (await actionEvents(s, a.id)).at(-1)!;
    expect(last).toMatchObject({ type: "ActionStateChanged", reason: "CANCELLED", actor: "user:admin" });
    expect(last.message).toContain("changed my mind");
    expect(await offeredIds(s, d)).toEqual([]);
    // The agent cannot bring it back.
    expectError(await report(s, d, a.id, { state: "NEW" }), 409, "CONFLICT");
  });

  it.each(["NEW", "RUNNING"] as const)("a %s action stays as it is; the agent is told in /work and its CANCELLED report is accepted", async (state) => {
    const { d, a } = await actionIn(state);
    const res = await s.api<ActionView>("POST", `/actions/${a.id}/cancel`, { reason: "stop it" });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ state, cancelRequestedBy: "user:admin" });
    expect(res.body.cancelRequestedAt).not.toBeNull();
    expect((await actionEvents(s, a.id)).at(-1)).toMatchObject({ type: "CancelRequested", reason: state, actor: "user:admin" });
    const w = await work(s, d, 0);
    expect(w.body).toEqual({ actions: [], cancel: [a.id] });
    // Told again on each poll until the agent reports.
    expect((await work(s, d, 0)).body.cancel).toEqual([a.id]);
    // Asking twice changes nothing more.
    const events = (await actionEvents(s, a.id)).length;
    expect((await s.api("POST", `/actions/${a.id}/cancel`, {})).status).toBe(200);
    expect(await actionEvents(s, a.id)).toHaveLength(events);

    await reportAll(s, d, a.id, { state: "CANCELLED", output: "interrupted" });
    expect(await getAction(s, a.id)).toMatchObject({ state: "CANCELLED", output: "interrupted" });
    expect((await actionEvents(s, a.id)).at(-1)).toMatchObject({ type: "ActionStateChanged", reason: "CANCELLED", actor: `device:${d.name}` });
    expect((await work(s, d, 0)).body).toEqual({ actions: [] });
  });

  it("a held poll is woken by a cancel request", async () => {
    const { d, a } = await actionIn("RUNNING");
    const poll = timed(work(s, d, 10));
    await sleep(200);
    expect(poll.settled()).toBe(false);
    const t0 = performance.now();
    expect((await s.api("POST", `/actions/${a.id}/cancel`, {})).status).toBe(200);
    const answer = await poll.done;
    expect(answer.body).toEqual({ actions: [], cancel: [a.id] });
    expect(answer.at - t0).toBeLessThan(1000);
  });

  it.each(["DONE", "FAILED", "CANCELLED", "LOST"])("cancel of a %s action → 409, nothing changed", async (final) => {
    const { d, a } = await actionIn("RUNNING");
    if (final === "LOST") {
      // LOST is the server's own move; write it directly for this check.
      await s.ctx.db.action.update({ where: { id: a.id }, data: { state: "LOST" } });
    } else {
      await reportAll(s, d, a.id, final);
    }
    const before = await snapshot(a.id);
    expectError(await s.api("POST", `/actions/${a.id}/cancel`, {}), 409, "CONFLICT", new RegExp(final));
    expect(await snapshot(a.id)).toEqual(before);
  });

  it("cancel of an unknown action → 404", async () => {
    expectError(await s.api("POST", `/actions/${randomUUID()}/cancel`, {}), 404, "NOT_FOUND");
  });
});

// ---------------------------------------------------------------------------------------

describe("nudge", () => {
  it("a Device or an Action: 200 and a Nudged event by the caller", async () => {
    const { d, a } = await actionIn("PENDING_SCHEDULE");
    const na = await s.api<{ nudged: string }>("POST", "/nudge", { kind: "Action", name: a.id });
    expect(na.status, JSON.stringify(na.body)).toBe(200);
    expect(na.body).toEqual({ nudged: `Action/${a.id}` });
    expect((await actionEvents(s, a.id)).at(-1)).toMatchObject({ type: "Nudged", reason: "PENDING_SCHEDULE", actor: "user:admin" });

    const nd = await s.api<{ nudged: string }>("POST", "/nudge", { kind: "Device", name: d.name }, operator.token);
    expect(nd.status, JSON.stringify(nd.body)).toBe(200);
    expect(nd.body).toEqual({ nudged: `Device/${d.name}` });
    const dev = await s.api<{ items: { type: string; actor: string }[] }>("GET", `/events?kind=Device&name=${d.name}&limit=5`);
    expect(dev.body.items[0]).toMatchObject({ type: "Nudged", actor: `user:${operator.username}` });
  });

  it("an ended action: 409, and no event", async () => {
    const { a } = await actionIn("DONE");
    const before = (await actionEvents(s, a.id)).length;
    expectError(await s.api("POST", "/nudge", { kind: "Action", name: a.id }), 409, "CONFLICT", /DONE: an ended action has nothing to nudge/);
    expect(await actionEvents(s, a.id)).toHaveLength(before);
  });

  it.each(["Action", "Device"] as const)("a %s nudge wakes the device's held poll (the escape hatch when nothing else does)", async (kind) => {
    const d = await onlineDevice(s);
    await setHealth(s, d, { resources: { disk: "Degraded" } });
    // For Online devices only: it waits while the device is Degraded.
    const a = await createAction(s, d.name, "noop", { healthPolicy: "Online" });
    const poll = timed(work(s, d, 10));
    await sleep(200);
    expect(poll.settled()).toBe(false);
    // The database changes behind the server's back: no request, no bus event, and this
    // server's reconcile runs once a minute. Only the nudge can wake the poll now. A Device
    // nudge re-derives the statuses from the report; an Action nudge only wakes the poll.
    const row = await s.ctx.db.device.findUniqueOrThrow({ where: { name: d.name }, select: { reported: true } });
    expect(row.reported).toContain("Degraded");
    await s.ctx.db.device.update({
      where: { name: d.name },
      data: kind === "Device" ? { reported: row.reported!.replace("Degraded", "Healthy") } : { summary: "Online" },
    });
    await sleep(200);
    expect(poll.settled()).toBe(false);
    const t0 = performance.now();
    expect((await s.api("POST", "/nudge", { kind, name: kind === "Action" ? a.id : d.name })).status).toBe(200);
    const answer = await poll.done;
    expect(answer.body.actions.map((x) => x.id)).toEqual([a.id]);
    expect(answer.at - t0).toBeLessThan(1000);
  });

  it("unknown → 404, a viewer → 403, a bad kind → 400; nothing written", async () => {
    const before = await counts();
    expectError(await s.api("POST", "/nudge", { kind: "Action", name: randomUUID() }), 404, "NOT_FOUND");
    expectError(await s.api("POST", "/nudge", { kind: "Device", name: "no-such-device" }), 404, "NOT_FOUND");
    const d = await enrollAs(s);
    const after = await counts();
    expectError(await s.api("POST", "/nudge", { kind: "Device", name: d.name }, viewer), 403, "FORBIDDEN");
    expectError(await s.api("POST", "/nudge", { kind: "Fleet", name: d.name }), 400, "INVALID_REQUEST", /kind/);
    expect(await counts()).toEqual(after);
    expect(after.actions).toBe(before.actions);
  });
});

// ---------------------------------------------------------------------------------------

describe("events", () => {
  it("every transition of one action's life writes an event with its actor and reason", async () => {
    const d = await onlineDevice(s);
    const a = await createAction(s, d.name, "exec", { args: { command: "uptime" } });
    expect((await s.api("POST", `/actions/${a.id}/approve`, { reason: "ok by me" })).status).toBe(200);
    expect(await offeredIds(s, d)).toEqual([a.id]);
    await reportAll(s, d, a.id, "NEW", "RUNNING", { state: "DONE", output: "up 3 days" });
    const events = await actionEvents(s, a.id);
    const device = `device:${d.name}`;
    expect(events.map((e) => [e.type, e.reason, e.actor])).toEqual([
      ["ActionCreated", "PENDING_APPROVE", "user:admin"],
      ["ActionApproved", "PENDING_SCHEDULE", "user:admin"],
      ["ActionStateChanged", "NEW", device],
      ["ActionStateChanged", "RUNNING", device],
      ["ActionStateChanged", "DONE", device],
    ]);
    for (const e of events) {
      expect(e.objectKind).toBe("Action");
      expect(e.objectName).toBe(a.id);
      expect(Date.parse(e.time)).not.toBeNaN();
    }
    expect(events[1]!.message).toBe("ok by me");
    expect(events[3]!.message).toMatch(/NEW → RUNNING/);
    // Times never go backwards along the life.
    const times = events.map((e) => Date.parse(e.time));
    expect([...times].sort((x, y) => x - y)).toEqual(times);
  });
});

describe("long id lists", () => {
  it("bulk decisions over more ids than SQLite binds in one statement answer 404, not 500", async () => {
    const ids = Array.from({ length: 1200 }, () => randomUUID());
    const res = await s.api<{ error: { code: string } }>("POST", "/actions/approve", { ids });
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe("NOT_FOUND");
  });

  it("approves 1,200 actions in one request", async () => {
    const d = await enrollDevice(s);
    const device = await s.ctx.db.device.findUniqueOrThrow({ where: { name: d.name }, select: { id: true } });
    const ids = Array.from({ length: 1200 }, () => randomUUID());
    await s.ctx.db.action.createMany({
      data: ids.map((id, i) => ({ id, deviceId: device.id, kind: "exec", args: "{}", origin: "user", state: "PENDING_APPROVE", createdAt: new Date(Date.now() + i) })),
    });
    const res = await s.api<{ items: { state: string }[] }>("POST", "/actions/approve", { ids, reason: "bulk" });
    expect(res.status).toBe(200);
    expect(res.body.items).toHaveLength(1200);
    expect(res.body.items.every((a) => a.state === "PENDING_SCHEDULE")).toBe(true);
  });
});
