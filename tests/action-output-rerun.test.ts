/**
 * Issue 10, actions: output streamed while an action runs (a RUNNING report with output on a
 * RUNNING action replaces the stored output, published live; nothing on an ended one), rerun
 * of an ended action (a new action made as any new one is, with rerunOf), and the list's
 * created-at range filters. Against a real server.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "./helpers/server";
import { expectError, type EnrolledDevice } from "./helpers/devices";
import { actionEvents, createAction, getAction, offeredIds, onlineDevice, report, reportAll, tokenFor, type ActionView } from "./helpers/actions";
import { actionOutputTopic, type ActionOutputUpdate } from "../server/actions/agent-reports";
import { MAX_OUTPUT } from "../server/actions/report";
import { createCallerFactory } from "../server/trpc/init";
import { appRouter } from "../server/trpc/router";

let s: TestServer;
let viewer = "";
let operator = { token: "", username: "" };

beforeAll(async () => {
  s = await startTestServer({ DROVER_SWEEP_SECONDS: "60" });
  viewer = (await tokenFor(s, "viewer")).token;
  operator = await tokenFor(s, "operator");
});
afterAll(async () => {
  await s?.close();
});

/** The console's tRPC procedures, as the admin (the reruns list has no REST route). */
const adminCaller = () => createCallerFactory(appRouter)({ server: s.ctx, auth: s.auth, principal: { userId: "admin", username: "admin", role: "admin", via: "token" } });

interface Detail extends ActionView {
  rerunOf: string | null;
}

/** An Online device with one action offered to it and moved by its agent through `states`. */
async function actionThrough(states: string[], kind = "noop", extra: Record<string, unknown> = {}): Promise<{ d: EnrolledDevice; a: ActionView }> {
  const d = await onlineDevice(s);
  const a = await createAction(s, d.name, kind, extra);
  expect(await offeredIds(s, d)).toContain(a.id);
  await reportAll(s, d, a.id, ...states);
  return { d, a };
}

describe("output while running", () => {
  it("a RUNNING report with output replaces the stored output, writes no event and is published on the action's topic", async () => {
    const { d, a } = await actionThrough(["NEW", "RUNNING"]);
    const events = (await actionEvents(s, a.id)).length;
    const seen: string[] = [];
    const off = s.ctx.bus.subscribe<ActionOutputUpdate>(actionOutputTopic(a.id), (u) => seen.push(u.output));
    try {
      const first = await report(s, d, a.id, { state: "RUNNING", output: "line 1\n" });
      expect(first.status, JSON.stringify(first.body)).toBe(200);
      expect(first.body).toMatchObject({ state: "RUNNING", output: "line 1\n" });
      expect((await getAction(s, a.id)).output).toBe("line 1\n");
      // The whole output so far, again: it replaces (never appends), so a retry is harmless.
      await reportAll(s, d, a.id, { state: "RUNNING", output: "line 1\nline 2\n" }, { state: "RUNNING", output: "line 1\nline 2\n" });
      expect((await getAction(s, a.id)).output).toBe("line 1\nline 2\n");
      expect(seen).toEqual(["line 1\n", "line 1\nline 2\n", "line 1\nline 2\n"]);
      expect((await actionEvents(s, a.id)).length).toBe(events);
      // A RUNNING report without output is still the no-op it was: the output stays.
      await reportAll(s, d, a.id, "RUNNING");
      expect((await getAction(s, a.id)).output).toBe("line 1\nline 2\n");
      expect(seen).toHaveLength(3);
    } finally {
      off();
    }
    // The final report carries the whole output, as before.
    await reportAll(s, d, a.id, { state: "DONE", output: "line 1\nline 2\nline 3\n" });
    expect(await getAction(s, a.id)).toMatchObject({ state: "DONE", output: "line 1\nline 2\nline 3\n" });
  });

  it("an ended action changes no more: the same state with other output is a no-op, a late RUNNING report 409", async () => {
    const { d, a } = await actionThrough(["NEW", "RUNNING", { state: "DONE", output: "final\n" } as never]);
    const before = await getAction(s, a.id);
    const events = (await actionEvents(s, a.id)).length;
    const seen: string[] = [];
    const off = s.ctx.bus.subscribe<ActionOutputUpdate>(actionOutputTopic(a.id), (u) => seen.push(u.output));
    try {
      const same = await report(s, d, a.id, { state: "DONE", output: "other\n" });
      expect(same.status).toBe(200);
      const late = await report(s, d, a.id, { state: "RUNNING", output: "partial\n" });
      expectError(late, 409, "CONFLICT", /DONE/);
    } finally {
      off();
    }
    expect(await getAction(s, a.id)).toEqual(before);
    expect((await actionEvents(s, a.id)).length).toBe(events);
    expect(seen).toEqual([]);
  });

  it("keeps at most 64 KiB of partial output, head and tail", async () => {
    const { d, a } = await actionThrough(["NEW", "RUNNING"]);
    const big = `START${"x".repeat(MAX_OUTPUT + 10_000)}END`;
    const res = await report(s, d, a.id, { state: "RUNNING", output: big });
    expect(res.status).toBe(200);
    const stored = (await getAction(s, a.id)).output ?? "";
    expect(stored.length).toBeLessThan(MAX_OUTPUT + 100);
    expect(stored.startsWith("START")).toBe(true);
    expect(stored.endsWith("END")).toBe(true);
    expect(stored).toContain("truncated");
    // Past the protocol's own body limit the report is refused and the output kept.
    const huge = await report(s, d, a.id, { state: "RUNNING", output: "y".repeat(1100 * 1024) });
    expect(huge.status).toBe(413);
    expect((await getAction(s, a.id)).output).toBe(stored);
  });

  it("a partial report for another device's action is 403 and changes nothing", async () => {
    const { a } = await actionThrough(["NEW", "RUNNING"]);
    const other = await onlineDevice(s);
    expectError(await report(s, other, a.id, { state: "RUNNING", output: "not mine" }), 403, "FORBIDDEN");
    expect((await getAction(s, a.id)).output).toBeNull();
  });
});

describe("rerun", () => {
  it("makes a new action with the same device, kind and args, recording rerunOf, shown on both", async () => {
    const { d, a } = await actionThrough(["NEW", "RUNNING", "FAILED"], "sleep", { args: { seconds: 1 } });
    const res = await s.api<Detail>("POST", `/actions/${a.id}/rerun`, {}, operator.token);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const r = res.body;
    expect(r.id).not.toBe(a.id);
    expect(r).toMatchObject({ device: d.name, kind: "sleep", args: { seconds: 1 }, origin: "user", state: "PENDING_SCHEDULE", rerunOf: a.id, createdBy: `user:${operator.username}` });
    expect((await getAction(s, r.id)) as Detail).toMatchObject({ rerunOf: a.id });
    const reruns = await adminCaller().actions.reruns({ id: a.id });
    expect(reruns.map((x) => x.id)).toEqual([r.id]);
    // Created as any new action is: its own request, its creation event saying what it reruns.
    const created = (await actionEvents(s, r.id)).find((e) => e.type === "ActionCreated");
    expect(created?.message).toContain(`a rerun of ${a.id}`);
    expect((await s.ctx.db.action.findUniqueOrThrow({ where: { id: r.id } })).requestId).not.toBeNull();
    // It is offered to the device like any other.
    expect(await offeredIds(s, d)).toContain(r.id);
  });

  it("keeps the approval requirement, and works from CANCELLED (a rejected action)", async () => {
    const d = await onlineDevice(s);
    const a = await createAction(s, d.name, "noop", { requireApproval: true });
    expect((await s.api("POST", `/actions/${a.id}/reject`, { reason: "not now" })).status).toBe(200);
    const res = await s.api<Detail>("POST", `/actions/${a.id}/rerun`, {});
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toMatchObject({ state: "PENDING_APPROVE", requireApproval: true, rerunOf: a.id, decision: null });
  });

  it("is 409 for an action that has not ended, 404 for an unknown one, 403 for a viewer; nothing is created", async () => {
    const { a } = await actionThrough(["NEW", "RUNNING"]);
    const pending = await createAction(s, (await onlineDevice(s)).name, "noop");
    const before = await s.ctx.db.action.count();
    expectError(await s.api("POST", `/actions/${a.id}/rerun`, {}), 409, "CONFLICT", /RUNNING: only an ended action/);
    expectError(await s.api("POST", `/actions/${pending.id}/rerun`, {}), 409, "CONFLICT", /PENDING_SCHEDULE/);
    expectError(await s.api("POST", `/actions/00000000-0000-4000-8000-000000000000/rerun`, {}), 404, "NOT_FOUND");
    const done = await actionThrough(["NEW", "RUNNING", "DONE"]);
    expectError(await s.api("POST", `/actions/${done.a.id}/rerun`, {}, viewer), 403, "FORBIDDEN");
    expect(await s.ctx.db.action.count()).toBe(before + 1); // only `done`'s own action
  });

  it("follows the creation rules: a device no longer Enrolled is 409", async () => {
    const { d, a } = await actionThrough(["NEW", "RUNNING", "DONE"]);
    expect((await s.api("POST", `/devices/${d.name}/decommission`, {})).status).toBe(200);
    expectError(await s.api("POST", `/actions/${a.id}/rerun`, {}), 409, "CONFLICT", /Enrolled devices only/);
  });
});

describe("created-at range", () => {
  it("narrows the list: createdAfter inclusive, createdBefore exclusive", async () => {
    const d = await onlineDevice(s);
    const first = await createAction(s, d.name, "noop");
    await new Promise((r) => setTimeout(r, 20));
    const second = await createAction(s, d.name, "noop");
    const list = async (q: string) => {
      const res = await s.api<{ items: ActionView[]; total: number }>("GET", `/actions?device=${d.name}&${q}`);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return res.body.items.map((a) => a.id);
    };
    expect(await list(`createdAfter=${encodeURIComponent(second.createdAt)}`)).toEqual([second.id]);
    expect(await list(`createdBefore=${encodeURIComponent(second.createdAt)}`)).toEqual([first.id]);
    expect(await list(`createdAfter=${encodeURIComponent(first.createdAt)}&createdBefore=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`)).toEqual([second.id, first.id]);
    // An offset other than Z is the same moment.
    const t = new Date(second.createdAt);
    const plusOne = new Date(t.getTime() + 3_600_000).toISOString().replace("Z", "+01:00");
    expect(await list(`createdAfter=${encodeURIComponent(plusOne)}`)).toEqual([second.id]);
  });

  it("refuses a date that is not RFC 3339 with an offset, naming the field", async () => {
    for (const [q, field] of [
      ["createdAfter=yesterday", "createdAfter"],
      ["createdBefore=2026-11-23", "createdBefore"],
      ["createdAfter=2026-11-23T05:00:00", "createdAfter"],
      ["createdAfter=2026-13-40T05:00:00Z", "createdAfter"],
      ["createdAfter=2026-11-23T06:00:00Z&createdBefore=2026-11-23T05:00:00Z", "createdBefore"],
    ] as const) {
      expectError(await s.api("GET", `/actions?${q}`), 400, "INVALID_REQUEST", new RegExp(field));
    }
  });
});
