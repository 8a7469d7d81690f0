/**
 * Waiting actions say why (issue 10, finding 4), against a real server: approval, a device
 * that is not Online, a full concurrency policy, an earlier action the agent runs first; and
 * an action's optional expiry: not started in time, it is cancelled with the reason.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "./helpers/server";
import { expectError } from "./helpers/devices";
import { actionEvents, createAction, enrollAs, getAction, offeredIds, onlineDevice, postActions, reportAll, setHealth } from "./helpers/actions";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({
    DROVER_ACTION_CONCURRENCY: JSON.stringify([{ selector: "pool=wait-test", max: 1 }]),
    DROVER_SWEEP_SECONDS: "0.5",
  });
});
afterAll(async () => {
  await s?.close();
});

describe("why an action waits", () => {
  it("PENDING_APPROVE: an operator decides", async () => {
    const d = await onlineDevice(s);
    const a = await createAction(s, d.name, "noop", { requireApproval: true });
    expect(a.waiting).toMatchObject({ reason: "Approval" });
  });

  it("an action for Online devices only, on a Degraded device, says so and goes out once it is Online; by default it goes at once", async () => {
    const d = await onlineDevice(s);
    await setHealth(s, d, { resources: { disk: "Degraded" } });
    const a = await createAction(s, d.name, "sleep", { args: { seconds: 1 }, healthPolicy: "Online" });
    expect(a.waiting).toEqual({
      reason: "DeviceNotOnline",
      message: `device ${d.name} is Degraded: this action goes to devices that are Online (its health policy, Online); it goes out once the device is Online again`,
    });
    expect((await createAction(s, d.name, "noop")).waiting).toMatchObject({ reason: "NextPoll" });
    // The list says the same.
    const listed = await s.api<{ items: { id: string; waiting: unknown }[] }>("GET", `/actions?device=${d.name}`);
    expect(listed.body.items.find((i) => i.id === a.id)?.waiting).toEqual(a.waiting);

    await setHealth(s, d, {});
    expect((await getAction(s, a.id)).waiting).toMatchObject({ reason: "NextPoll" });
    expect(await offeredIds(s, d)).toContain(a.id);
    expect((await getAction(s, a.id)).waiting).toMatchObject({ reason: "Delivering" });
  });

  it("a full concurrency policy names the device holding it; a NEW action waits for the one the agent runs first", async () => {
    const busy = await onlineDevice(s, { labels: { pool: "wait-test" } });
    const waiting = await onlineDevice(s, { labels: { pool: "wait-test" } });
    const first = await createAction(s, busy.name, "sleep", { args: { seconds: 60 } });
    const second = await createAction(s, busy.name, "noop");
    expect(await offeredIds(s, busy)).toEqual([first.id, second.id]);
    await reportAll(s, busy, first.id, "NEW", "RUNNING");
    await reportAll(s, busy, second.id, "NEW");
    expect((await getAction(s, second.id)).waiting).toEqual({ reason: "EarlierAction", message: `the agent runs one action at a time: waits for sleep ${first.id.slice(0, 8)} (RUNNING)` });
    expect((await getAction(s, first.id)).waiting).toBeNull();

    const blocked = await createAction(s, waiting.name, "noop");
    expect(blocked.waiting).toEqual({ reason: "ConcurrencyPolicy", message: `concurrency policy "pool=wait-test" allows 1 device at once and is full: ${busy.name}` });
  });
});

describe("expiry", () => {
  it("not started in time: CANCELLED by the server with the reason, and never offered after", async () => {
    const d = await onlineDevice(s);
    await setHealth(s, d, { resources: { cpu: "Degraded" } });
    const a = await createAction(s, d.name, "sleep", { args: { seconds: 1 }, expiresInSeconds: 1, healthPolicy: "Online" });
    expect(a.expiresAt).toBe(new Date(new Date(a.createdAt).getTime() + 1000).toISOString());
    expect(a.waiting?.message).toMatch(new RegExp(`cancelled if not started by ${a.expiresAt!.replace(/\./g, "\\.")}$`));
    // Time passes its expiry; the controllers' next tick cancels it.
    s.advanceClock(1_100);
    await s.tick();
    expect((await getAction(s, a.id)).state).toBe("CANCELLED");
    const ended = await getAction(s, a.id);
    expect(ended).toMatchObject({ error: "expired: not started within 1s of its creation", cancelRequestedBy: "server:expiry", waiting: null });
    expect((await actionEvents(s, a.id)).at(-1)).toMatchObject({ type: "ActionStateChanged", reason: "CANCELLED", actor: "server:expiry" });
    await setHealth(s, d, {});
    expect(await offeredIds(s, d)).not.toContain(a.id);
  });

  it("an expired action is not offered even before the tick cancels it", async () => {
    const d = await onlineDevice(s);
    await setHealth(s, d, { resources: { cpu: "Degraded" } });
    const a = await createAction(s, d.name, "noop", { expiresInSeconds: 1 });
    // Move its expiry into the past behind the tick's back, then poll at once.
    await s.ctx.db.action.update({ where: { id: a.id }, data: { expiresAt: new Date(Date.now() - 60_000) } });
    await setHealth(s, d, {});
    expect(await offeredIds(s, d)).not.toContain(a.id);
  });

  it("a started action does not expire", async () => {
    const d = await onlineDevice(s);
    const a = await createAction(s, d.name, "sleep", { args: { seconds: 1 }, expiresInSeconds: 1 });
    expect(await offeredIds(s, d)).toContain(a.id);
    await reportAll(s, d, a.id, "NEW", "RUNNING");
    s.advanceClock(1_800);
    await s.tick();
    expect((await getAction(s, a.id)).state).toBe("RUNNING");
  });

  it.each([0, -5, 1.5, "60", 31 * 24 * 3600])("expiresInSeconds %s is 400 and nothing is written", async (value) => {
    const d = await enrollAs(s);
    const before = await s.ctx.db.action.count();
    // The field and the reason, not zod's JSON.
    expectError(await postActions(s, { device: d.name, kind: "noop", args: {}, expiresInSeconds: value }), 400, "INVALID_REQUEST", /^expiresInSeconds: [^{[]+$/);
    expect(await s.ctx.db.action.count()).toBe(before);
  });
});
