/**
 * The outputs of many actions, together (issue 21, item 4): a request's actions, and a workflow
 * step attempt's, grouped by identical (state, error, output) after trimming trailing
 * whitespace, largest group first, a page at a time, each naming its first devices. Against a
 * real server on both databases: the grouping and its normalisation, search, paging, the cuts
 * (devices per group, a long output's head and tail), 2,000 actions, the step's targets after a
 * retry, roles and refusals.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "./helpers/server";
import { expectError } from "./helpers/devices";
import { onlineGroup as onlineGroupOn, postActions, reportAll, tokenFor, work, type ActionView } from "./helpers/actions";
import type { OutputGroupsView } from "../server/actions/output-groups";
import { insertDevices } from "./helpers/fleets";
import type { EnrolledDevice } from "./helpers/devices";

let s: TestServer;
let viewer = "";
const onlineGroup = (n: number) => onlineGroupOn(s, n);

type Outputs = OutputGroupsView;

beforeAll(async () => {
  s = await startTestServer({ DROVER_SWEEP_SECONDS: "60" });
  viewer = (await tokenFor(s, "viewer")).token;
});
afterAll(async () => {
  await s?.close();
});

async function outputs(path: string, token?: string): Promise<Outputs> {
  const res = await s.api<Outputs>("GET", path, undefined, token);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

/** Offers the device its work, then reports the action through RUNNING to its end. */
async function finish(d: EnrolledDevice, id: string, end: { state: "DONE" | "FAILED"; output?: string; error?: string }) {
  const w = await work(s, d);
  expect(w.body.actions.map((a) => a.id), JSON.stringify(w.body)).toContain(id);
  await reportAll(s, d, id, "NEW", "RUNNING", end);
}

describe("a request's outputs", () => {
  let requestId = "";
  let devices: EnrolledDevice[] = [];
  let byDevice = new Map<string, ActionView>();

  beforeAll(async () => {
    const g = await onlineGroup(7);
    devices = g.devices;
    const res = await postActions(s, { labelSelector: g.selector, kind: "noop", args: {} });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const items = res.body.items as (ActionView & { requestId: string; device: string })[];
    requestId = items[0]!.requestId;
    byDevice = new Map(items.map((a) => [a.device, a]));
    const id = (d: EnrolledDevice) => byDevice.get(d.name)!.id;
    const [d0, d1, d2, d3, d4, d5] = devices as [EnrolledDevice, EnrolledDevice, EnrolledDevice, EnrolledDevice, EnrolledDevice, EnrolledDevice, EnrolledDevice];
    // "ok", "ok\n", "ok \r\n" and a CRLF-ended one are one output; the last device never polls.
    await finish(d0, id(d0), { state: "DONE", output: "ok" });
    await finish(d1, id(d1), { state: "DONE", output: "ok\n" });
    await finish(d2, id(d2), { state: "DONE", output: "ok \r\n" });
    await finish(d3, id(d3), { state: "DONE", output: "ok\t\n\n" });
    await finish(d4, id(d4), { state: "FAILED", output: "No space left on device\n", error: "exit status 1" });
    await finish(d5, id(d5), { state: "FAILED", output: "No space left on device", error: "exit status 1\n" });
  });

  it("groups by (state, error, output) with trailing whitespace trimmed, largest first, devices by name with their actions", async () => {
    const o = await outputs(`/requests/${requestId}/outputs`);
    expect(o).toMatchObject({ actions: 7, groups: 3, offset: 0, nextOffset: null });
    const names = devices.map((d) => d.name);
    expect(o.items).toEqual([
      { state: "DONE", output: "ok", outputChars: 2, error: null, count: 4, devices: names.slice(0, 4).sort(), actionIds: names.slice(0, 4).sort().map((n) => byDevice.get(n)!.id) },
      {
        state: "FAILED",
        output: "No space left on device",
        outputChars: 23,
        error: "exit status 1",
        count: 2,
        devices: names.slice(4, 6).sort(),
        actionIds: names.slice(4, 6).sort().map((n) => byDevice.get(n)!.id),
      },
      { state: "PENDING_SCHEDULE", output: "", outputChars: 0, error: null, count: 1, devices: [names[6]], actionIds: [byDevice.get(names[6]!)!.id] },
    ]);
  });

  it("the same through tRPC's caller as a viewer; a page at a time; devices per group capped", async () => {
    const o = await outputs(`/requests/${requestId}/outputs?limit=1&devices=2`, viewer);
    expect(o.items).toHaveLength(1);
    expect(o.items[0]).toMatchObject({ state: "DONE", count: 4 });
    expect(o.items[0]!.devices).toHaveLength(2);
    expect(o.nextOffset).toBe(1);
    const second = await outputs(`/requests/${requestId}/outputs?limit=1&offset=1`);
    expect(second.items.map((g) => g.state)).toEqual(["FAILED"]);
    expect(second.nextOffset).toBe(2);
    const last = await outputs(`/requests/${requestId}/outputs?limit=1&offset=2`);
    expect(last).toMatchObject({ nextOffset: null, groups: 3 });
    expect(await outputs(`/requests/${requestId}/outputs?offset=9`)).toMatchObject({ items: [], groups: 3, actions: 7, nextOffset: null });
  });

  it("search keeps the actions whose output, error or device name contains the text, case-insensitive, before grouping", async () => {
    const bySpace = await outputs(`/requests/${requestId}/outputs?search=${encodeURIComponent("NO SPACE")}`);
    expect(bySpace).toMatchObject({ actions: 2, groups: 1 });
    expect(bySpace.items[0]!.count).toBe(2);
    expect((await outputs(`/requests/${requestId}/outputs?search=STATUS`)).actions).toBe(2);
    const one = devices[1]!.name;
    const byName = await outputs(`/requests/${requestId}/outputs?search=${one.toUpperCase()}`);
    expect(byName.items).toEqual([expect.objectContaining({ state: "DONE", count: 1, devices: [one] })]);
    // LIKE's wildcards are the operator's text, not patterns.
    expect(await outputs(`/requests/${requestId}/outputs?search=${encodeURIComponent("o_")}`)).toMatchObject({ actions: 0, groups: 0, items: [] });
    expect((await outputs(`/requests/${requestId}/outputs?search=%25`)).actions).toBe(0);
  });

  it("bad input is 400 in the error shape, an unknown request 404, no token 401", async () => {
    for (const q of ["limit=0", "limit=201", "devices=0", "offset=-1", "limit=x", `search=${"x".repeat(201)}`]) {
      expectError(await s.api("GET", `/requests/${requestId}/outputs?${q}`), 400, "INVALID_REQUEST");
    }
    expectError(await s.api("GET", `/requests/${randomUUID()}/outputs`), 404, "NOT_FOUND", /request/);
    expect((await s.api("GET", `/requests/${requestId}/outputs`, undefined, "")).status).toBe(401);
  });
});

describe("cuts and size", () => {
  it("a long output is shown as its head and tail with its length; the group still holds every device", async () => {
    const { selector, devices } = await onlineGroup(2);
    const res = await postActions(s, { labelSelector: selector, kind: "noop", args: {} });
    const items = res.body.items as (ActionView & { requestId: string })[];
    const long = `${"a".repeat(10_000)}${"b".repeat(10_000)}\n`;
    for (const d of devices) await finish(d, items.find((a) => a.device === d.name)!.id, { state: "DONE", output: long });
    const o = await outputs(`/requests/${items[0]!.requestId}/outputs`);
    expect(o.groups).toBe(1);
    const [g] = o.items;
    expect(g).toMatchObject({ count: 2, outputChars: 20_000 });
    expect(g!.output.startsWith("a".repeat(4096) + "\n… 11808 characters left out …\n")).toBe(true);
    expect(g!.output.endsWith("\n" + "b".repeat(4096))).toBe(true);
  });

  it("2,000 actions in one request: three groups, each naming its first 20 devices", async () => {
    const prefix = `big${process.pid}`;
    const devices = await insertDevices(s.ctx, prefix, 2_000, {});
    const requestId = randomUUID();
    const now = new Date();
    await s.ctx.db.actionRequest.create({
      data: { id: requestId, kind: "exec", args: "{}", origin: "user", ref: null, targetKind: "selector", target: "", createdBy: "test", requireApproval: false, createdAt: now },
    });
    const result = (i: number) => (i % 100 === 0 ? { state: "FAILED", output: "disk full", error: "exit status 2" } : i % 10 === 0 ? { state: "DONE", output: "ok\nwarning: slow\n" } : { state: "DONE", output: "ok\n" });
    for (let i = 0; i < devices.length; i += 500) {
      await s.ctx.db.action.createMany({
        data: devices.slice(i, i + 500).map((d, j) => ({ id: randomUUID(), deviceId: d.id, kind: "exec", origin: "user", requestId, ...result(i + j) })),
      });
    }
    const o = await outputs(`/requests/${requestId}/outputs`);
    expect(o).toMatchObject({ actions: 2_000, groups: 3, nextOffset: null });
    expect(o.items.map((g) => [g.state, g.output, g.count, g.devices.length, g.actionIds.length])).toEqual([
      ["DONE", "ok", 1_800, 20, 20],
      ["DONE", "ok\nwarning: slow", 180, 20, 20],
      ["FAILED", "disk full", 20, 20, 20],
    ]);
    const failed = o.items[2]!;
    expect(failed.error).toBe("exit status 2");
    // By name: "big-0", "big-100", "big-1000", … as text sorts.
    expect(failed.devices).toEqual([...failed.devices].sort());
    expect(failed.devices[0]).toBe(`${prefix}-0`);
  }, 60_000);
});

describe("a workflow step's outputs", () => {
  it("the current attempt's targets' actions, a retried target by its newest action; 404 for no such step", async () => {
    const { devices: all } = await onlineGroup(4);
    // The fourth device's step never finishes, so the run is still Running when a target is retried.
    const devices = all.slice(0, 3);
    const held = all[3]!;
    const name = `outs-wf-${process.pid}`;
    const created = await s.api("POST", "/workflows", {
      metadata: { name },
      spec: {
        failFast: false,
        steps: {
          A: { jobTemplate: { kind: "noop", args: {}, targets: { devices: devices.map((d) => d.name) } } },
          hold: { jobTemplate: { kind: "noop", args: {}, targets: { devices: [held.name] } } },
        },
      },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const targets = async () => (await s.api<{ items: { target: string; actionId: string }[] }>("GET", `/workflows/${name}/steps/A/targets`)).body.items;
    const first = await targets();
    const action = (d: EnrolledDevice, list: { target: string; actionId: string }[]) => list.find((t) => t.target === d.name)!.actionId;
    const [a, b, c] = devices as [EnrolledDevice, EnrolledDevice, EnrolledDevice];
    await finish(a, action(a, first), { state: "DONE", output: "v2\n" });
    await finish(b, action(b, first), { state: "DONE", output: "v2" });
    await finish(c, action(c, first), { state: "FAILED", output: "v1", error: "mismatch" });

    let o = await outputs(`/workflows/${name}/steps/A/outputs`);
    expect(o.items.map((g) => [g.state, g.output, g.error, g.devices])).toEqual([
      ["DONE", "v2", null, [a.name, b.name].sort()],
      ["FAILED", "v1", "mismatch", [c.name]],
    ]);

    // Retried: the target's new action replaces the failed one in the step's outputs.
    const retried = await s.api("POST", `/workflows/${name}/steps/A/targets/${c.name}/retry`, { reason: "fixed" });
    expect(retried.status, JSON.stringify(retried.body)).toBe(200);
    const again = action(c, await targets());
    expect(again).not.toBe(action(c, first));
    await finish(c, again, { state: "DONE", output: "v2 \n" });
    o = await outputs(`/workflows/${name}/steps/A/outputs`, viewer);
    expect(o).toMatchObject({ actions: 3, groups: 1 });
    expect(o.items[0]).toMatchObject({ state: "DONE", output: "v2", count: 3, devices: devices.map((d) => d.name).sort() });
    expect(o.items[0]!.actionIds).toContain(again);

    expectError(await s.api("GET", `/workflows/${name}/steps/nope/outputs`), 404, "NOT_FOUND");
    expectError(await s.api("GET", `/workflows/${name}/steps/A/outputs?limit=0`), 400, "INVALID_REQUEST");
  });
});
