/**
 * The device list's sorting and hidden Decommissioned devices, and the bulk operations
 * (decommission, resume, label) by names and by filter, against a real server (issue 10).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "./helpers/server";
import { enrollDevice, expectError, heartbeat, type EnrolledDevice } from "./helpers/devices";
import { issueOperatorToken } from "../server/auth/auth";
import { createCallerFactory } from "../server/trpc/init";
import { appRouter } from "../server/trpc/router";

let s: TestServer;
const tokens = { operator: "", viewer: "" };

interface Item {
  name: string;
  summary: string;
  lifecycle: string;
  lastSeen: string | null;
  labels: Record<string, string>;
  fleet: string | null;
}
interface Page {
  items: Item[];
  total: number;
  nextCursor: string | null;
  hiddenDecommissioned: number;
}
interface Bulk {
  matched: number;
  changed: number;
  skipped: { reason: string; count: number; names: string[] }[];
}

const suite = `dl${process.pid}`;
const devices: Record<string, EnrolledDevice> = {};
const name = (short: string) => `${suite}-${short}`;
const list = (query: string, token?: string) => s.api<Page>("GET", `/devices?labelSelector=suite%3D${suite}&limit=100&${query}`, undefined, token);
const names = (p: Page) => p.items.map((d) => d.name);

/** Every page of a sorted list, following nextCursor. */
async function walk(query: string, limit: number): Promise<string[]> {
  const out: string[] = [];
  let cursor: string | null = null;
  do {
    const res: { status: number; body: Page } = await list(`${query}&limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    out.push(...names(res.body));
    cursor = res.body.nextCursor;
  } while (cursor);
  return out;
}

beforeAll(async () => {
  s = await startTestServer();
  const admin = await s.ctx.db.user.findUniqueOrThrow({ where: { username: "admin" }, select: { id: true } });
  const asAdmin = createCallerFactory(appRouter)({ server: s.ctx, auth: s.auth, principal: { userId: admin.id, username: "admin", role: "admin", via: "token" } });
  for (const role of ["operator", "viewer"] as const) {
    const user = await asAdmin.auth.createUser({ username: `${role}_dl`, password: `${role}-password-1`, role });
    // Issued as the token route does once the password is checked (a scrypt hash: tests/api-tokens tests the route).
    tokens[role] = (await issueOperatorToken(s.ctx.db, user.id, s.ctx.now())).token;
  }
  // a: never reported; b, c, d report in that order (c twice, so it is seen last); e is Decommissioned.
  for (const short of ["d", "a", "c", "b", "e"]) devices[short] = await enrollDevice(s, name(short), { suite, group: short < "c" ? "one" : "two" });
  for (const short of ["b", "c", "d", "e", "c"]) {
    await new Promise((r) => setTimeout(r, 5));
    expect((await heartbeat(s, devices[short] as EnrolledDevice)).status).toBe(200);
  }
  expect((await s.api("POST", `/devices/${name("e")}/decommission`, {})).status).toBe(200);
  expect((await heartbeat(s, devices.e as EnrolledDevice, { decommissioning: { state: "Completed" } })).status).toBe(200);
});
afterAll(async () => {
  await s?.close();
});

describe("sorting", () => {
  it("by name, both ways; Decommissioned hidden and counted", async () => {
    const asc = (await list("")).body;
    expect(names(asc)).toEqual(["a", "b", "c", "d"].map(name));
    expect(asc.total).toBe(4);
    expect(asc.hiddenDecommissioned).toBe(1);
    expect(names((await list("sort=name&order=desc")).body)).toEqual(["d", "c", "b", "a"].map(name));
  });

  it("by last seen: never seen is the smallest (first ascending, last descending)", async () => {
    expect(names((await list("sort=lastSeen&order=desc")).body)).toEqual(["c", "d", "b", "a"].map(name));
    expect(names((await list("sort=lastSeen&order=asc")).body)).toEqual(["a", "b", "d", "c"].map(name));
  });

  it("by status, ties by name in the same direction", async () => {
    // a never reported (Offline); the others Online.
    expect(names((await list("sort=status&order=asc")).body)).toEqual(["a", "b", "c", "d"].map(name));
    expect(names((await list("sort=status&order=desc")).body)).toEqual(["d", "c", "b", "a"].map(name));
  });

  it.each(["name", "status", "fleet", "updated", "applications", "lifecycle", "lastSeen", "created"])("pages sorted by %s walk every row once, in order", async (sort) => {
    for (const order of ["asc", "desc"]) {
      const whole = names((await list(`sort=${sort}&order=${order}`)).body);
      expect(await walk(`sort=${sort}&order=${order}&decommissioned=hide`, 1)).toEqual(whole);
      expect(await walk(`sort=${sort}&order=${order}`, 3)).toEqual(whole);
    }
  });

  it("bad sort, order or cursor → 400 naming it", async () => {
    expectError(await list("sort=colour"), 400, "INVALID_REQUEST", /sort/);
    expectError(await list("order=up"), 400, "INVALID_REQUEST", /order/);
    expectError(await list("sort=lastSeen&cursor=not-a-cursor"), 400, "INVALID_REQUEST", /cursor/);
    expectError(await list("decommissioned=maybe"), 400, "INVALID_REQUEST", /decommissioned/);
  });

  it("decommissioned=show, or a lifecycle filter naming Decommissioned, lists them", async () => {
    const shown = (await list("decommissioned=show")).body;
    expect(names(shown)).toEqual(["a", "b", "c", "d", "e"].map(name));
    expect(shown.hiddenDecommissioned).toBe(0);
    const only = (await list("lifecycle=Decommissioned")).body;
    expect(names(only)).toEqual([name("e")]);
  });

  it("search ignores case on both databases (SQLite's LIKE; PostgreSQL's ILIKE)", async () => {
    expect(names((await list(`search=${encodeURIComponent(name("B").toUpperCase())}`)).body)).toEqual([name("b")]);
    expect(names((await list(`search=${suite.toUpperCase()}`)).body)).toEqual(["a", "b", "c", "d"].map(name));
  });

  it("the OpenAPI document lists sort, order and decommissioned, and the bulk routes", async () => {
    const doc = (await s.api<{ paths: Record<string, Record<string, { parameters?: { name: string }[] }>> }>("GET", "/openapi.json")).body;
    const params = (doc.paths["/devices"]?.get?.parameters ?? []).map((p) => p.name);
    expect(params).toEqual(expect.arrayContaining(["sort", "order", "decommissioned", "cursor"]));
    for (const p of ["/devices/decommission", "/devices/resume", "/devices/labels"]) expect(doc.paths[p]?.post).toBeDefined();
  });
});

describe("bulk operations", () => {
  const labelOf = async (short: string) => (await s.api<Item>("GET", `/devices/${name(short)}`)).body.labels;

  it("a viewer gets 403 and nothing changes", async () => {
    const events = await s.ctx.db.event.count();
    for (const [path, body] of [
      ["/devices/decommission", { names: [name("a")] }],
      ["/devices/resume", { names: [name("a")] }],
      ["/devices/labels", { names: [name("a")], add: { x: "1" } }],
    ] as const) {
      expectError(await s.api("POST", path, body, tokens.viewer), 403, "FORBIDDEN");
    }
    expect(await s.ctx.db.event.count()).toBe(events);
    expect(await labelOf("a")).not.toHaveProperty("x");
  });

  it.each([
    ["neither names nor filter", "/devices/labels", { add: { x: "1" } }, /names/],
    ["both names and filter", "/devices/labels", { names: [name("a")], filter: {}, add: { x: "1" } }, /names/],
    ["no names", "/devices/resume", { names: [] }, /names/],
    ["too many names", "/devices/resume", { names: Array.from({ length: 10_001 }, (_, i) => `n${i}`) }, /names/],
    ["nothing to do", "/devices/labels", { names: [name("a")] }, /add/],
    ["a bad label key", "/devices/labels", { names: [name("a")], add: { "bad key": "1" } }, /label/],
    ["a bad label value", "/devices/labels", { names: [name("a")], add: { ok: "not ok!" } }, /label/],
    ["a bad key to remove", "/devices/labels", { names: [name("a")], remove: ["bad key"] }, /label key/],
    ["added and removed", "/devices/labels", { names: [name("a")], add: { x: "1" }, remove: ["x"] }, /both/],
    ["a bad selector", "/devices/decommission", { filter: { labelSelector: "site===x" } }, /labelSelector/],
    ["an unknown status", "/devices/decommission", { filter: { summary: ["Sleepy"] } }, /summary/],
    ["an unknown field", "/devices/decommission", { names: [name("a")], force: true }, /force/],
  ])("%s → 400, nothing changed", async (_what, path, body, message) => {
    const events = await s.ctx.db.event.count();
    expectError(await s.api("POST", path, body, tokens.operator), 400, "INVALID_REQUEST", message);
    expect(await s.ctx.db.event.count()).toBe(events);
    expect((await s.api<Item>("GET", `/devices/${name("a")}`)).body).toMatchObject({ lifecycle: "Enrolled" });
    expect(await labelOf("a")).not.toHaveProperty("x");
  });

  it("labels by names: added to the ones without, skipped where already so and where unknown", async () => {
    const first = await s.api<Bulk>("POST", "/devices/labels", { names: [name("a"), name("b")], add: { tier: "gold" } }, tokens.operator);
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body).toEqual({ matched: 2, changed: 2, skipped: [] });
    const again = await s.api<Bulk>("POST", "/devices/labels", { names: [name("a"), name("b"), name("c"), "no-such-device"], add: { tier: "gold" } }, tokens.operator);
    expect(again.body.matched).toBe(4);
    expect(again.body.changed).toBe(1);
    expect(again.body.skipped).toEqual(
      expect.arrayContaining([
        { reason: "no such device", count: 1, names: ["no-such-device"] },
        { reason: "labels already so", count: 2, names: [name("a"), name("b")] },
      ]),
    );
    expect(await labelOf("c")).toMatchObject({ tier: "gold", suite, group: "two" });
    // The list filters by the new label at once, and the change is an event.
    expect(names((await list("labelSelector=tier%3Dgold")).body).length).toBeGreaterThan(0);
    const events = await s.api<{ items: { type: string; message: string; actor: string }[] }>("GET", `/events?kind=Device&name=${name("c")}&limit=50`);
    expect(events.body.items.find((e) => e.type === "LabelsChanged")).toMatchObject({ actor: "user:operator_dl" });
  });

  it("labels by filter: removes a key from every device the filter matches", async () => {
    const res = await s.api<Bulk>("POST", "/devices/labels", { filter: { labelSelector: `suite=${suite},tier=gold`, search: "" }, remove: ["tier"] }, tokens.operator);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual({ matched: 3, changed: 3, skipped: [] });
    for (const short of ["a", "b", "c"]) expect(await labelOf(short)).not.toHaveProperty("tier");
  });

  it("resume by filter: the ConflictPaused one resumes, the others are skipped with why", async () => {
    expect((await heartbeat(s, devices.d as EnrolledDevice, { renderedVersion: 5 })).status).toBe(200);
    expect((await s.api<Item>("GET", `/devices/${name("d")}`)).body.summary).toBe("ConflictPaused");
    const res = await s.api<Bulk>("POST", "/devices/resume", { filter: { labelSelector: `suite=${suite}` } }, tokens.operator);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.matched).toBe(4);
    expect(res.body.changed).toBe(1);
    expect(res.body.skipped).toEqual([{ reason: "not ConflictPaused", count: 3, names: ["a", "b", "c"].map(name) }]);
    expect((await s.api<{ conflictPaused: boolean }>("GET", `/devices/${name("d")}`)).body.conflictPaused).toBe(false);
  });

  it("decommission by filter (status and selector): Enrolled ones only, with the reason in the event; the poll is told", async () => {
    // An action still waiting for approval would wait forever: cancelled with the request, as for one device.
    const waiting = await s.api<{ items: { id: string }[] }>("POST", "/actions", { device: name("c"), kind: "noop", args: {}, requireApproval: true }, tokens.operator);
    expect(waiting.status, JSON.stringify(waiting.body)).toBe(201);
    const res = await s.api<Bulk>("POST", "/devices/decommission", { filter: { labelSelector: `suite=${suite},group=two`, decommissioned: "show" }, reason: "retired rack 2" }, tokens.operator);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    // c and d are Enrolled; e is already Decommissioned.
    expect(res.body).toEqual({ matched: 3, changed: 2, skipped: [{ reason: "already Decommissioned: only an Enrolled device can be decommissioned", count: 1, names: [name("e")] }] });
    for (const short of ["c", "d"]) expect((await s.api<Item>("GET", `/devices/${name(short)}`)).body.lifecycle).toBe("Decommissioning");
    expect((await s.api<{ state: string }>("GET", `/actions/${waiting.body.items[0]?.id}`)).body.state).toBe("CANCELLED");
    const work = await s.agent<{ decommission?: boolean }>("GET", "/work?wait=5", undefined, (devices.c as EnrolledDevice).auth);
    expect(work.body.decommission).toBe(true);
    const events = await s.api<{ items: { type: string; message: string | null; actor: string }[] }>("GET", `/events?kind=Device&name=${name("c")}&limit=50`);
    expect(events.body.items.find((e) => e.type === "DecommissionRequested")).toMatchObject({ message: "retired rack 2", actor: "user:operator_dl" });
    // Decommissioning (not yet Decommissioned) devices stay in the list.
    expect(names((await list("")).body)).toEqual(["a", "b", "c", "d"].map(name));
  });

  it("decommission by names twice: the second time every one is skipped", async () => {
    const res = await s.api<Bulk>("POST", "/devices/decommission", { names: [name("c"), name("d")] }, tokens.operator);
    expect(res.body).toEqual({ matched: 2, changed: 0, skipped: [{ reason: "already Decommissioning: only an Enrolled device can be decommissioned", count: 2, names: [name("c"), name("d")] }] });
  });
});
