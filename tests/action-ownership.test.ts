/**
 * What a device may do to actions (issue 6, finding 8; seed 004 "Conflicting actions"),
 * against a real server. The agent wins only over what it holds: an action it created
 * itself may be overwritten by its report, but one created on the server side (origin user,
 * plan, workflow, rollout) keeps its kind, args and approval record, and an action never
 * offered to the device cannot be moved by it. Such attempts are 409 and recorded as an
 * ActionReportRefused event. And what a device's token may still do while it is being
 * decommissioned (from the operator's request until the agent reports Completed or Error).
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "./helpers/server";
import { expectError, heartbeat, type EnrolledDevice } from "./helpers/devices";
import { actionEvents, createAction, getAction, offeredIds, onlineDevice, report, reportAll, work, type ActionView } from "./helpers/actions";

let s: TestServer;

beforeAll(async () => {
  // A long sweep: nothing but the requests a test sends changes the database.
  s = await startTestServer({ DROVER_SWEEP_SECONDS: "60" });
});
afterAll(async () => {
  await s?.close();
});

/** The action as an operator sees it, and its events. */
const snapshot = async (id: string) => ({ action: await getAction(s, id), events: await actionEvents(s, id) });

/** Expects exactly one new event after `before`: the recorded refusal. */
async function expectRefusalRecorded(id: string, before: { events: unknown[] }, d: EnrolledDevice, reason: string, message: RegExp) {
  const after = await actionEvents(s, id);
  expect(after.slice(0, before.events.length)).toEqual(before.events);
  expect(after.slice(before.events.length)).toEqual([
    expect.objectContaining({ objectKind: "Action", objectName: id, type: "ActionReportRefused", reason, actor: `device:${d.name}`, message: expect.stringMatching(message) as unknown }),
  ]);
}

// ---------------------------------------------------------------------------------------

describe("actions created on the server side", () => {
  it("a PENDING_APPROVE exec reported DONE as noop → 409; the row and its approval record unchanged; the attempt recorded", async () => {
    const d = await onlineDevice(s);
    const a = await createAction(s, d.name, "exec", { args: { command: "rm -rf /srv" } });
    expect(a.state).toBe("PENDING_APPROVE");
    const before = await snapshot(a.id);
    expectError(await report(s, d, a.id, { state: "DONE", kind: "noop", args: {}, output: "nothing to see" }), 409, "CONFLICT", /kind \(exec → noop\)/);
    expect(await getAction(s, a.id)).toEqual(before.action);
    await expectRefusalRecorded(a.id, before, d, "KindChanged", /DONE as noop.*exec PENDING_APPROVE.*never offered/);
    // Still the operator's to decide: approving it works and it is offered as it was made.
    expect((await s.api("POST", `/actions/${a.id}/approve`, { reason: "checked" })).status).toBe(200);
    const offered = await work(s, d, 0);
    expect(offered.body.actions).toEqual([{ id: a.id, kind: "exec", args: { command: "rm -rf /srv" }, createdAt: a.createdAt }]);
  });

  it("a PENDING_APPROVE exec reported with its own kind is still refused (never offered) and recorded", async () => {
    const d = await onlineDevice(s);
    const a = await createAction(s, d.name, "exec");
    const before = await snapshot(a.id);
    for (const state of ["NEW", "RUNNING", "DONE"]) expectError(await report(s, d, a.id, { state, kind: "exec" }), 409, "CONFLICT", /never offered/);
    expect(await getAction(s, a.id)).toEqual(before.action);
    const added = (await actionEvents(s, a.id)).slice(before.events.length);
    expect(added.map((e) => [e.type, e.reason, e.actor])).toEqual(Array(3).fill(["ActionReportRefused", "NotOffered", `device:${d.name}`]));
  });

  it("a rejected reboot reported DONE → 409, with or without another kind; still CANCELLED and Rejected", async () => {
    const d = await onlineDevice(s);
    const a = await createAction(s, d.name, "reboot");
    expect((await s.api("POST", `/actions/${a.id}/reject`, { reason: "not in business hours" })).status).toBe(200);
    const before = await snapshot(a.id);
    expect(before.action).toMatchObject({ state: "CANCELLED", decision: "Rejected", decidedBy: "user:admin", decisionReason: "not in business hours" });
    expectError(await report(s, d, a.id, { state: "DONE", kind: "noop" }), 409, "CONFLICT");
    await expectRefusalRecorded(a.id, before, d, "KindChanged", /DONE as noop.*reboot CANCELLED/);
    const middle = await snapshot(a.id);
    expectError(await report(s, d, a.id, { state: "DONE" }), 409, "CONFLICT", /never offered/);
    await expectRefusalRecorded(a.id, middle, d, "NotOffered", /reported DONE for reboot CANCELLED/);
    expect(await getAction(s, a.id)).toEqual(before.action);
  });

  it("an approved, offered action keeps its kind and approval record", async () => {
    const d = await onlineDevice(s);
    const a = await createAction(s, d.name, "exec", { args: { command: "uptime" } });
    expect((await s.api("POST", `/actions/${a.id}/approve`, { reason: "ok" })).status).toBe(200);
    expect(await offeredIds(s, d)).toEqual([a.id]);
    await reportAll(s, d, a.id, "NEW");
    const before = await snapshot(a.id);
    expectError(await report(s, d, a.id, { state: "RUNNING", kind: "sleep", args: { seconds: 1 } }), 409, "CONFLICT", /kind \(exec → sleep\)/);
    expect(await getAction(s, a.id)).toEqual(before.action);
    expect(before.action).toMatchObject({ kind: "exec", origin: "user", decision: "Approved", decidedBy: "user:admin", decisionReason: "ok" });
    await expectRefusalRecorded(a.id, before, d, "KindChanged", /RUNNING as sleep with args \{"seconds":1\} for exec NEW, origin user/);
    // The agent then reports what it was given, and all is well.
    await reportAll(s, d, a.id, "RUNNING", { state: "DONE", kind: "exec", args: { command: "uptime" }, output: "up 3 days" });
    expect(await getAction(s, a.id)).toMatchObject({ state: "DONE", kind: "exec", args: { command: "uptime" }, output: "up 3 days", decision: "Approved" });
  });

  it("an operator action reported with other args → 409 and recorded; equal args (any key order) are an ordinary report", async () => {
    const d = await onlineDevice(s);
    const a = await createAction(s, d.name, "sleep", { args: { seconds: 1, note: { a: 1, b: [1, 2] } } });
    expect(await offeredIds(s, d)).toEqual([a.id]);
    const before = await snapshot(a.id);
    for (const args of [{ seconds: 3600, note: { a: 1, b: [1, 2] } }, { seconds: 1 }, { seconds: 1, note: { a: 1, b: [2, 1] } }, {}]) {
      const at = await snapshot(a.id);
      expectError(await report(s, d, a.id, { state: "NEW", kind: "sleep", args }), 409, "CONFLICT", /args/);
      await expectRefusalRecorded(a.id, at, d, "ArgsChanged", /reported NEW as sleep with args/);
    }
    expect(await getAction(s, a.id)).toEqual(before.action);
    // The same args, keys in another order: accepted as the move it is.
    const ok = await report(s, d, a.id, { state: "NEW", kind: "sleep", args: { note: { b: [1, 2], a: 1 }, seconds: 1 } });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(ok.body).toMatchObject({ state: "NEW", kind: "sleep", args: { seconds: 1, note: { a: 1, b: [1, 2] } }, origin: "user" });
  });

  it("a PENDING_SCHEDULE action never offered cannot be confirmed (NotOffered); once offered, it can", async () => {
    const d = await onlineDevice(s);
    const a = await createAction(s, d.name, "noop");
    expect(a.offeredAt).toBeNull();
    const before = await snapshot(a.id);
    expectError(await report(s, d, a.id, { state: "NEW" }), 409, "CONFLICT", /never offered/);
    expect(await getAction(s, a.id)).toEqual(before.action);
    await expectRefusalRecorded(a.id, before, d, "NotOffered", /reported NEW for noop PENDING_SCHEDULE, origin user/);
    expect(await offeredIds(s, d)).toEqual([a.id]);
    await reportAll(s, d, a.id, "NEW", "RUNNING", "DONE");
    expect((await getAction(s, a.id)).state).toBe("DONE");
  });

  it("an offered action goes PENDING_SCHEDULE → NEW → RUNNING → DONE as before, kind and args repeated or not", async () => {
    const d = await onlineDevice(s);
    const a = await createAction(s, d.name, "sleep", { args: { seconds: 0 } });
    const b = await createAction(s, d.name, "noop");
    expect(await offeredIds(s, d)).toEqual([a.id, b.id]);
    await reportAll(s, d, a.id, { state: "NEW", kind: "sleep", args: { seconds: 0 } }, { state: "RUNNING", kind: "sleep" }, { state: "DONE", output: "slept" });
    await reportAll(s, d, b.id, "NEW", "RUNNING", { state: "FAILED", error: "boom" });
    expect(await getAction(s, a.id)).toMatchObject({ state: "DONE", kind: "sleep", args: { seconds: 0 }, origin: "user", output: "slept" });
    expect(await getAction(s, b.id)).toMatchObject({ state: "FAILED", error: "boom" });
    for (const id of [a.id, b.id]) expect((await actionEvents(s, id)).some((e) => e.type === "ActionReportRefused")).toBe(false);
    // A retried final report stays a no-op 200.
    expect((await report(s, d, a.id, { state: "DONE", kind: "sleep", args: { seconds: 0 } })).status).toBe(200);
  });

  it("refusals in the same group commit as other writes: each refusal's event is committed, the other writes too", async () => {
    const d = await onlineDevice(s);
    const fast = s.ctx.fast!;
    const pendingApprove = await createAction(s, d.name, "exec");
    const offered = await createAction(s, d.name, "noop");
    expect(await offeredIds(s, d)).toEqual([offered.id]);
    const device = { id: (await s.ctx.db.device.findUniqueOrThrow({ where: { name: d.name } })).id, name: d.name };
    const eventsBefore = await s.ctx.db.event.count();
    // Not awaited in between: all four land in one group commit, each in its own savepoint.
    const outcomes = await Promise.allSettled([
      fast.reportAction(device, pendingApprove.id, { state: "DONE", kind: "noop" }, new Date()),
      fast.reportAction(device, offered.id, { state: "NEW" }, new Date()),
      fast.reportAction(device, offered.id, { state: "DONE" }, new Date()), // NEW → DONE: an ordinary 409, rolled back alone
      fast.reportAction(device, pendingApprove.id, { state: "RUNNING", kind: "sleep" }, new Date()),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "fulfilled", "rejected", "fulfilled"]);
    const [first, second, , fourth] = outcomes as PromiseFulfilledResult<{ events: { type: string }[]; refused?: { code: string } }>[];
    expect(first!.value.refused?.code).toBe("CONFLICT");
    expect(fourth!.value.refused?.code).toBe("CONFLICT");
    expect(second!.value.refused).toBeUndefined();
    expect(await s.ctx.db.event.count()).toBe(eventsBefore + 3);
    expect((await actionEvents(s, pendingApprove.id)).filter((e) => e.type === "ActionReportRefused")).toHaveLength(2);
    expect(await getAction(s, pendingApprove.id)).toMatchObject({ state: "PENDING_APPROVE", kind: "exec" });
    expect((await getAction(s, offered.id)).state).toBe("NEW");
  });

  it("concurrent refused reports over HTTP: every one is 409 and every one is recorded", async () => {
    const d = await onlineDevice(s);
    const a = await createAction(s, d.name, "exec");
    const before = await snapshot(a.id);
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => report(s, d, a.id, { state: "DONE", kind: `noop-${i}` })));
    for (const r of results) expectError(r, 409, "CONFLICT");
    expect(await getAction(s, a.id)).toEqual(before.action);
    expect((await actionEvents(s, a.id)).filter((e) => e.type === "ActionReportRefused")).toHaveLength(8);
  });
});

// ---------------------------------------------------------------------------------------

describe("actions the agent created itself (origin agent)", () => {
  it("another kind under the same id still overwrites them: the agent wins", async () => {
    const d = await onlineDevice(s);
    const id = randomUUID();
    await reportAll(s, d, id, { state: "RUNNING", kind: "sleep", args: { seconds: 5 } });
    const res = await report(s, d, id, { state: "DONE", kind: "noop", args: { n: 1 }, output: "other" });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(await getAction(s, id)).toMatchObject({ kind: "noop", args: { n: 1 }, origin: "agent", state: "DONE", output: "other" });
    expect((await actionEvents(s, id)).map((e) => e.type)).toEqual(["ActionRecorded", "ActionOverwritten"]);
  });
});

// ---------------------------------------------------------------------------------------

describe("a decommissioning device's token", () => {
  it("may report status, poll (decommission and cancels, no offers) and finish or cancel what it holds; nothing new", async () => {
    const d = await onlineDevice(s);
    const offer = async (a: ActionView) => expect(await offeredIds(s, d)).toContain(a.id);
    const finishing = await createAction(s, d.name, "noop");
    const cancelling = await createAction(s, d.name, "noop");
    const running = await createAction(s, d.name, "noop");
    const offeredOnly = await createAction(s, d.name, "noop");
    await offer(offeredOnly);
    await reportAll(s, d, finishing.id, "NEW");
    await reportAll(s, d, cancelling.id, "NEW", "RUNNING");
    await reportAll(s, d, running.id, "NEW", "RUNNING");
    const own = randomUUID();
    await reportAll(s, d, own, { state: "DONE", kind: "sleep", args: { seconds: 1 } });
    const neverOffered = await createAction(s, d.name, "noop"); // created after the last poll
    expect((await s.api("POST", `/actions/${cancelling.id}/cancel`, {})).status).toBe(200);
    expect((await s.api("POST", `/devices/${d.name}/decommission`, {})).status).toBe(200);

    // GET /work answers at once: decommission, the cancels for what it holds, never an offer.
    const t0 = performance.now();
    const polled = await work(s, d, 30);
    expect(performance.now() - t0).toBeLessThan(2_000);
    expect(polled.body).toEqual({ actions: [], cancel: [cancelling.id], decommission: true });
    // What was still waiting to be offered (or confirmed) is cancelled with the request.
    for (const waiting of [neverOffered, offeredOnly]) {
      expect(await getAction(s, waiting.id)).toMatchObject({ state: "CANCELLED", cancelRequestedBy: "user:admin" });
      expect((await actionEvents(s, waiting.id)).at(-1)).toMatchObject({ type: "ActionStateChanged", reason: "CANCELLED", message: expect.stringMatching(/being decommissioned/) as unknown });
    }
    expect((await getAction(s, neverOffered.id)).offeredAt).toBeNull();

    // POST /status: decommissioning progress, with its queue.
    const queue = [{ id: finishing.id, state: "NEW" }, ...[cancelling, running].map((a) => ({ id: a.id, state: "RUNNING" }))];
    expect((await heartbeat(s, d, { decommissioning: { state: "Started" }, actions: queue })).status).toBe(200);
    expect((await s.api<{ decommissioning: string }>("GET", `/devices/${d.name}`)).body.decommissioning).toBe("Started");

    // PUT /actions/{id} for what it holds: finish it, cancel it.
    await reportAll(s, d, finishing.id, "RUNNING", { state: "DONE", output: "done before leaving" });
    await reportAll(s, d, cancelling.id, "CANCELLED");
    await reportAll(s, d, running.id, { state: "FAILED", error: "interrupted by decommissioning" });
    // A retry of a report already recorded is still a no-op 200.
    expect((await report(s, d, finishing.id, { state: "DONE" })).status).toBe(200);

    // Nothing new: no agent-created action, no overwrite, no confirming an offered action.
    const eventsBefore = await s.ctx.db.event.count();
    const actionsBefore = await s.ctx.db.action.count();
    const fresh = randomUUID();
    expectError(await report(s, d, fresh, { state: "RUNNING", kind: "sleep", args: {} }), 403, "FORBIDDEN", /device is being decommissioned/);
    expectError(await report(s, d, own, { state: "DONE", kind: "noop" }), 403, "FORBIDDEN", /device is being decommissioned/);
    expectError(await report(s, d, offeredOnly.id, { state: "NEW" }), 403, "FORBIDDEN", /device is being decommissioned/);
    expect(await s.ctx.db.action.count()).toBe(actionsBefore);
    expect(await s.ctx.db.event.count()).toBe(eventsBefore);
    expect((await getAction(s, offeredOnly.id)).state).toBe("CANCELLED");
    expect(await getAction(s, own)).toMatchObject({ kind: "sleep", state: "DONE" });
    // A server-created action is still guarded as ever: 409.
    expectError(await report(s, d, neverOffered.id, { state: "NEW" }), 409, "CONFLICT");

    // Completed: the credential is revoked; everything is 401 from then on.
    expect((await heartbeat(s, d, { decommissioning: { state: "Completed" } })).status).toBe(200);
    expectError(await heartbeat(s, d), 401, "UNAUTHENTICATED", /revoked/);
    expectError(await work(s, d, 0), 401, "UNAUTHENTICATED", /revoked/);
    expectError(await report(s, d, finishing.id, { state: "DONE" }), 401, "UNAUTHENTICATED", /revoked/);
  });

  it("an Error report ends it the same way", async () => {
    const d = await onlineDevice(s);
    const held = await createAction(s, d.name, "noop");
    expect(await offeredIds(s, d)).toEqual([held.id]);
    await reportAll(s, d, held.id, "NEW");
    expect((await s.api("POST", `/devices/${d.name}/decommission`, {})).status).toBe(200);
    await reportAll(s, d, held.id, "CANCELLED");
    expectError(await report(s, d, randomUUID(), { state: "DONE", kind: "noop" }), 403, "FORBIDDEN", /decommissioned/);
    expect((await heartbeat(s, d, { decommissioning: { state: "Error", info: "disk busy" } })).status).toBe(200);
    expectError(await report(s, d, randomUUID(), { state: "DONE", kind: "noop" }), 401, "UNAUTHENTICATED", /revoked/);
  });
});
