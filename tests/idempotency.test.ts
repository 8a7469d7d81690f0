/**
 * Idempotency keys on the creating routes (issue 22, server/idempotency/): the same key and
 * request within 24 h answers the first answer and creates nothing more; another request under
 * the key, or one while the first runs, is 409; keys are per caller; a refused request keeps
 * nothing; a bad key is 400; keys are pruned after 24 h. One server for the file.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "./helpers/server";
import { enrollDevice, expectError, uniqueName } from "./helpers/devices";
import { tokenFor } from "./helpers/actions";
import { restRoutes } from "../server/rest/routes";
import { operatorOpenApi } from "../server/rest/openapi";
import { createCallerFactory } from "../server/trpc/init";
import { appRouter } from "../server/trpc/router";
import { idempotent, IDEMPOTENCY_TTL_MS } from "../server/idempotency/idempotency";
import { createActions } from "../server/actions/actions";

let s: TestServer;
beforeAll(async () => {
  // The sweep only when a test ticks it.
  s = await startTestServer({ DROVER_SWEEP_SECONDS: "600" });
});
afterAll(async () => {
  await s?.close();
});

let keys = 0;
const newKey = () => `key-${process.pid}-${++keys}`;

/** A POST with an Idempotency-Key (JSON body). */
async function post<T = unknown>(path: string, body: unknown, key: string | undefined, token = s.adminToken): Promise<{ status: number; body: T }> {
  const res = await fetch(`${s.url}/api/v1${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${token}`, ...(key !== undefined ? { "idempotency-key": key } : {}) },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : undefined) as T };
}

interface Case {
  path: string;
  body: unknown;
  /** Another request under the same key (another body, or another path). */
  other: { path: string; body: unknown };
  count: () => Promise<number>;
}

const noopPlan = (device: string, kind = "noop") => ({
  apiVersion: "drover/v1",
  kind: "Plan",
  spec: { commands: [{ action: { kind, targets: { workers: { discovery: { static: { nodes: [device] } } } } } }] },
});

/** An ended action to rerun: created waiting for approval, then cancelled. */
async function endedAction(device: string): Promise<string> {
  const created = await post<{ items: { id: string }[] }>("/actions", { device, kind: "noop", requireApproval: true }, undefined);
  const id = created.body.items[0]!.id;
  expect((await post(`/actions/${id}/cancel`, {}, undefined)).status).toBe(200);
  return id;
}

/** An ended plan to retry: created waiting for approval, then cancelled. */
async function endedPlan(device: string): Promise<string> {
  const created = await post<{ metadata: { id: string } }>("/plans?requireApproval=true", noopPlan(device), undefined);
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  expect((await post(`/plans/${created.body.metadata.id}/cancel`, {}, undefined)).status).toBe(200);
  return created.body.metadata.id;
}

const cases: Record<string, () => Promise<Case>> = {
  "POST /actions": async () => {
    const d = await enrollDevice(s);
    const device = await s.ctx.db.device.findUniqueOrThrow({ where: { name: d.name }, select: { id: true } });
    return {
      path: "/actions",
      body: { device: d.name, kind: "noop", args: { a: 1, b: 2 } },
      other: { path: "/actions", body: { device: d.name, kind: "noop", args: { a: 1, b: 3 } } },
      count: () => s.ctx.db.action.count({ where: { deviceId: device.id } }),
    };
  },
  "POST /actions/{id}/rerun": async () => {
    const d = await enrollDevice(s);
    const [first, second] = [await endedAction(d.name), await endedAction(d.name)];
    return {
      path: `/actions/${first}/rerun`,
      body: {},
      other: { path: `/actions/${second}/rerun`, body: {} },
      count: () => s.ctx.db.action.count({ where: { rerunOf: { in: [first, second] } } }),
    };
  },
  "POST /plans": async () => {
    const d = await enrollDevice(s);
    return {
      path: "/plans?requireApproval=true",
      body: noopPlan(d.name),
      other: { path: "/plans?requireApproval=false", body: noopPlan(d.name) },
      count: () => s.ctx.db.planNode.count({ where: { name: d.name } }),
    };
  },
  "POST /plans/{id}/retry": async () => {
    const d = await enrollDevice(s);
    const [first, second] = [await endedPlan(d.name), await endedPlan(d.name)];
    return {
      path: `/plans/${first}/retry`,
      body: {},
      other: { path: `/plans/${second}/retry`, body: {} },
      count: () => s.ctx.db.plan.count({ where: { retryOf: { in: [first, second] } } }),
    };
  },
  "POST /workflows": async () => {
    const d = await enrollDevice(s);
    const name = uniqueName("wf");
    const body = (kind: string) => ({ metadata: { name }, spec: { steps: { A: { jobTemplate: { kind, args: {}, targets: { devices: [d.name] } } } } } });
    return {
      path: "/workflows?start=false",
      body: body("noop"),
      other: { path: "/workflows?start=false", body: body("ping") },
      count: () => s.ctx.db.workflow.count({ where: { name } }),
    };
  },
  "POST /fleets": async () => {
    const name = uniqueName("fleet");
    const body = (version: string) => ({ metadata: { name }, spec: { selector: { matchLabels: { fleet: name } }, template: { spec: { version } } } });
    return {
      path: "/fleets",
      body: body("1.0.0"),
      other: { path: "/fleets", body: body("2.0.0") },
      count: () => s.ctx.db.fleet.count({ where: { name } }),
    };
  },
};

describe("the same key twice creates once and answers the first answer", () => {
  it.each(Object.keys(cases))("%s", async (route) => {
    const c = await cases[route]!();
    const key = newKey();
    const before = await c.count();
    const first = await post(c.path, c.body, key);
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    expect(await c.count()).toBe(before + 1);

    const again = await post(c.path, c.body, key);
    expect(again).toEqual(first);
    expect(await c.count()).toBe(before + 1);

    // The same key with another request: refused, nothing created.
    expectError(await post(c.other.path, c.other.body, key), 409, "CONFLICT", /Idempotency-Key ".*" was used for a different request/);
    expect(await c.count()).toBe(before + 1);
  });

  it("POST /enrollment-tokens: the secret is never kept, so a repeat is 409 naming the token, and creates nothing", async () => {
    const key = newKey();
    const name = uniqueName("tok");
    const first = await post<{ id: string; token: string }>("/enrollment-tokens", { name }, key);
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    expect(first.body.token).toMatch(/\S{20,}/);
    expectError(await post("/enrollment-tokens", { name }, key), 409, "CONFLICT", new RegExp(`already created enrollment token EnrollmentToken/${first.body.id}; its secret is shown once`));
    expect(await s.ctx.db.enrollmentToken.count({ where: { name } })).toBe(1);
    const row = await s.ctx.db.idempotencyKey.findUniqueOrThrow({ where: { scope_key: { scope: "user:admin", key } } });
    expect(row.response).toBeNull();
    expect(JSON.stringify(row)).not.toContain(first.body.token);
  });

  it("the body's key order and defaults do not matter: {b, a} repeats {a, b}", async () => {
    const d = await enrollDevice(s);
    const key = newKey();
    const first = await post("/actions", { kind: "noop", device: d.name }, key);
    const again = await post("/actions", { device: d.name, args: {}, kind: "noop" }, key);
    expect(first.status).toBe(201);
    expect(again).toEqual(first);
  });

  it("the console's key (tRPC input idempotencyKey) is the same key as the header's, for the same caller", async () => {
    const d = await enrollDevice(s);
    const admin = await s.ctx.db.user.findUniqueOrThrow({ where: { username: "admin" }, select: { id: true } });
    const caller = createCallerFactory(appRouter)({ server: s.ctx, auth: s.auth, principal: { userId: admin.id, username: "admin", role: "admin", via: "session" } });
    const key = newKey();
    const first = await caller.actions.create({ device: d.name, kind: "noop", idempotencyKey: key });
    const again = await caller.actions.create({ device: d.name, kind: "noop", idempotencyKey: key });
    expect(again.map((a) => a.id)).toEqual(first.map((a) => a.id));
    const rest = await post<{ items: { id: string }[] }>("/actions", { device: d.name, kind: "noop" }, key);
    expect(rest.status).toBe(201);
    expect(rest.body.items.map((a) => a.id)).toEqual(first.map((a) => a.id));
    // A bad key in the input is refused like the header's.
    await expect(caller.actions.create({ device: d.name, kind: "noop", idempotencyKey: "a b" })).rejects.toThrow(/idempotencyKey/);

    // A Fleet is its own input: the console's key rides beside its fields and is taken out before the strict parse.
    const name = uniqueName("fleet");
    const fleet = { metadata: { name }, spec: { selector: { matchLabels: { fleet: name } }, template: { spec: { version: "1.0.0" } } } };
    const fleetKey = newKey();
    const created = await caller.fleets.create({ ...fleet, idempotencyKey: fleetKey });
    expect(await caller.fleets.create({ ...fleet, idempotencyKey: fleetKey })).toEqual(JSON.parse(JSON.stringify(created)));
    expect(await s.ctx.db.fleet.count({ where: { name } })).toBe(1);
    await expect(caller.fleets.create({ ...fleet, idempotencyKey: "" })).rejects.toThrow(/idempotencyKey/);
  });
});

describe("what is not kept, and bad keys", () => {
  it("a refused request keeps nothing: the corrected retry with the same key creates", async () => {
    const d = await enrollDevice(s);
    const key = newKey();
    expectError(await post("/actions", { device: d.name, kind: "no such kind!" }, key), 400, "INVALID_REQUEST");
    expectError(await post("/actions", { device: "no-such-device", kind: "noop" }, key), 404, "NOT_FOUND");
    expect(await s.ctx.db.idempotencyKey.count({ where: { key } })).toBe(0);
    const created = await post("/actions", { device: d.name, kind: "noop" }, key);
    expect(created.status, JSON.stringify(created.body)).toBe(201);
  });

  it.each([
    ["too long", "k".repeat(256)],
    ["a space", "two words"],
    ["empty", ""],
  ])("a key %s is 400, nothing created", async (_, key) => {
    const d = await enrollDevice(s);
    const res = await post("/actions", { device: d.name, kind: "noop" }, key);
    expectError(res, 400, "INVALID_REQUEST", /Idempotency-Key/);
    expect(await s.ctx.db.action.count({ where: { device: { name: d.name } } })).toBe(0);
  });

  it("255 visible characters are a key", async () => {
    const d = await enrollDevice(s);
    expect((await post("/actions", { device: d.name, kind: "noop" }, "~".repeat(255))).status).toBe(201);
  });

  it("a key whose create committed but whose answer was not stored (its server stopped) is 409 naming what it created, never a second create", async () => {
    const d = await enrollDevice(s);
    const key = newKey();
    const first = await post<{ items: { requestId: string }[] }>("/actions", { device: d.name, kind: "noop" }, key);
    expect(first.status).toBe(201);
    await s.ctx.db.idempotencyKey.update({ where: { scope_key: { scope: "user:admin", key } }, data: { response: null } });
    expectError(await post("/actions", { device: d.name, kind: "noop" }, key), 409, "CONFLICT", new RegExp(`already created ActionRequest/${first.body.items[0]!.requestId} but its answer is not stored`));
    expect(await s.ctx.db.action.count({ where: { device: { name: d.name } } })).toBe(1);
  });
});

describe("concurrency and callers", () => {
  it("five same-key requests at once: exactly one create; the others answer it or 409", async () => {
    const d = await enrollDevice(s);
    const key = newKey();
    const answers = await Promise.all(Array.from({ length: 5 }, () => post<{ items: { id: string }[] }>("/actions", { device: d.name, kind: "noop" }, key)));
    expect(await s.ctx.db.action.count({ where: { device: { name: d.name } } })).toBe(1);
    const created = answers.filter((a) => a.status === 201);
    expect(created.length).toBeGreaterThanOrEqual(1);
    for (const a of created) expect(a.body).toEqual(created[0]!.body);
    for (const a of answers.filter((x) => x.status !== 201)) expectError(a, 409, "CONFLICT", /Idempotency-Key/);
  });

  it("two servers on one database, the same key at once: the key's row refuses the loser's transaction, which creates nothing", async () => {
    const d = await enrollDevice(s);
    const key = newKey();
    const input = { device: d.name, kind: "noop", args: {}, idempotencyKey: key };
    // A copy of the context is another server as far as the in-process guard goes: only the database decides.
    const servers = [s.ctx, { ...s.ctx }, { ...s.ctx }];
    const results = await Promise.allSettled(servers.map((server) => idempotent({ server, actor: "user:admin" }, "actions.create", input, (claim) => createActions(server, input, "user:admin", claim))));
    expect(await s.ctx.db.action.count({ where: { device: { name: d.name } } })).toBe(1);
    expect(results.filter((r) => r.status === "fulfilled").length).toBeGreaterThanOrEqual(1);
    for (const r of results) if (r.status === "rejected") expect(String(r.reason)).toMatch(/Idempotency-Key/);
  });

  it("two callers' same key are two keys: each creates and replays its own", async () => {
    const d = await enrollDevice(s);
    const operator = await tokenFor(s, "operator");
    const key = newKey();
    const body = { device: d.name, kind: "noop" };
    const admin1 = await post<{ items: { id: string; createdBy: string }[] }>("/actions", body, key);
    const op1 = await post<{ items: { id: string; createdBy: string }[] }>("/actions", body, key, operator.token);
    expect([admin1.status, op1.status]).toEqual([201, 201]);
    expect(op1.body.items[0]!.id).not.toBe(admin1.body.items[0]!.id);
    expect(op1.body.items[0]!.createdBy).toBe(`user:${operator.username}`);
    expect(await post("/actions", body, key)).toEqual(admin1);
    expect(await post("/actions", body, key, operator.token)).toEqual(op1);
    expect(await s.ctx.db.action.count({ where: { device: { name: d.name } } })).toBe(2);
  });
});

describe("the route table and the document", () => {
  it("every creating POST (201) takes the key, /auth/token aside (a sign-in, no caller yet), and the document shows the header on each", () => {
    const creating = restRoutes.filter((r) => r.method === "POST" && r.status === 201 && r.path !== "/auth/token");
    expect(creating.map((r) => r.path).sort()).toEqual(["/actions", "/actions/{id}/rerun", "/enrollment-tokens", "/fleets", "/plans", "/plans/{id}/retry", "/workflows"]);
    expect(creating.filter((r) => !r.idempotent).map((r) => r.path)).toEqual([]);
    const paths = operatorOpenApi().paths as Record<string, Record<string, { parameters: { name: string; in: string }[]; requestBody?: { content: Record<string, { schema: { properties?: Record<string, unknown> } }> } }>>;
    for (const r of restRoutes.filter((x) => x.idempotent)) {
      const op = paths[r.path]!.post!;
      expect(op.parameters.filter((p) => p.in === "header").map((p) => p.name), r.path).toEqual(["Idempotency-Key"]);
      expect(Object.keys(op.requestBody?.content["application/json"]?.schema.properties ?? {}), r.path).not.toContain("idempotencyKey");
    }
  });
});

// Last: the clock moves a day.
describe("24 h", () => {
  it("a key past 24 h is a new key (the request creates again), and the sweep deletes it", async () => {
    const d = await enrollDevice(s);
    const key = newKey();
    const body = { device: d.name, kind: "noop" };
    const first = await post<{ items: { id: string }[] }>("/actions", body, key);
    expect(first.status).toBe(201);
    s.advanceClock(IDEMPOTENCY_TTL_MS - 60_000);
    expect(await post("/actions", body, key)).toEqual(first);
    s.advanceClock(61_000);
    // Past its 24 h, not yet pruned: no longer a repeat.
    const second = await post<{ items: { id: string }[] }>("/actions", body, key);
    expect(second.status).toBe(201);
    expect(second.body.items[0]!.id).not.toBe(first.body.items[0]!.id);
    const another = newKey();
    expect((await post("/actions", body, another)).status).toBe(201);
    expect(await s.ctx.db.idempotencyKey.count({ where: { key: { in: [key, another] } } })).toBe(2);
    s.advanceClock(IDEMPOTENCY_TTL_MS + 1_000);
    expect(await s.tick()).toBe(true);
    expect(await s.ctx.db.idempotencyKey.count({ where: { key: { in: [key, another] } } })).toBe(0);
  });
});
