/**
 * Without the SQLite fast path: the Prisma code paths that PostgreSQL will take (heartbeat
 * writes, status derivation, action creation), run here on SQLite so they stay tested.
 * The agent side of actions (offers, reports, LOST) needs the fast path in this version.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "./helpers/server";
import { actionEvents, deviceSummary, getAction, onlineDevice, postActions, setHealth } from "./helpers/actions";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ DROVER_SWEEP_SECONDS: "60" }, { fastPath: false });
});
afterAll(async () => {
  await s?.close();
});

describe("Prisma paths (no fast path)", () => {
  it("runs without the fast path", () => {
    expect(s.ctx.fast).toBeNull();
  });

  it("heartbeats derive and write statuses with their events", async () => {
    const d = await onlineDevice(s);
    expect(await deviceSummary(s, d.name)).toBe("Online");
    await setHealth(s, d, { resources: { cpu: "Critical" } });
    expect(await deviceSummary(s, d.name)).toBe("Error");
    const events = await s.ctx.db.event.findMany({ where: { objectKind: "Device", objectName: d.name, reason: "Error" } });
    expect(events).toHaveLength(1);
  });

  it("creates actions for a selector with one event each; the answer is the action as stored", async () => {
    const label = `p${Date.now()}`;
    const devices = await Promise.all([1, 2, 3].map(() => onlineDevice(s, { labels: { batch: label } })));
    const res = await postActions(s, { labelSelector: `batch=${label}`, kind: "noop", args: { n: 1 } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.items.map((a) => a.device).sort()).toEqual(devices.map((d) => d.name).sort());
    for (const a of res.body.items) {
      expect(await getAction(s, a.id)).toEqual({ ...a, output: null });
      expect((await actionEvents(s, a.id)).map((e) => e.type)).toEqual(["ActionCreated"]);
    }
  });
  it("a request's approval and rejection move its waiting actions as a unit, with their times", async () => {
    const label = `r${Date.now()}`;
    await Promise.all([1, 2].map(() => onlineDevice(s, { labels: { req: label } })));
    const requestIds: string[] = [];
    for (let i = 0; i < 2; i++) {
      const res = await postActions(s, { labelSelector: `req=${label}`, kind: "noop", args: {}, requireApproval: true });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      requestIds.push(((await getAction(s, res.body.items[0]!.id)) as unknown as { requestId: string }).requestId);
    }
    const [rejectedId, approvedId] = requestIds as [string, string];
    const rejected = await s.api<{ moved: number }>("POST", `/requests/${rejectedId}/reject`, { reason: "not now" });
    expect(rejected.status, JSON.stringify(rejected.body)).toBe(200);
    expect(rejected.body.moved).toBe(2);
    const approved = await s.api<{ moved: number }>("POST", `/requests/${approvedId}/approve`, {});
    expect(approved.status, JSON.stringify(approved.body)).toBe(200);
    expect(approved.body.moved).toBe(2);
    expect((await s.api("POST", `/requests/${approvedId}/approve`, {})).status).toBe(409);
    const rows = await s.ctx.db.action.findMany({ where: { requestId: { in: requestIds } }, select: { requestId: true, state: true, decidedAt: true, finishedAt: true } });
    expect(rows).toHaveLength(4);
    for (const r of rows) {
      expect(r.decidedAt).toBeInstanceOf(Date);
      if (r.requestId === rejectedId) expect(r).toMatchObject({ state: "CANCELLED", finishedAt: expect.any(Date) as Date });
      else expect(r).toMatchObject({ state: "PENDING_SCHEDULE", finishedAt: null });
    }
  });
});
