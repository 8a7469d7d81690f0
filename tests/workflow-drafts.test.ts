/**
 * Drafts (issue 9, "save as draft, then run") against a real server: `POST /workflows?start=false`
 * and tRPC `workflows.create({start: false})` save a workflow without starting it (Pending, run 0,
 * no action); PUT may change anything in a draft; `start` (or `rerun`) starts it and its actions
 * appear; a bad `start` is 400 and writes nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "./helpers/server";
import { expectError } from "./helpers/devices";
import { onlineDevice, work } from "./helpers/actions";
import { createCallerFactory } from "../server/trpc/init";
import { appRouter } from "../server/trpc/router";
import type { WorkflowObject, WorkflowSummary } from "../server/workflows/workflows";

let s: TestServer;

beforeAll(async () => {
  // No tick: nothing may start a draft by itself.
  s = await startTestServer({ DROVER_SWEEP_SECONDS: "600" });
});
afterAll(async () => {
  await s?.close();
});

const job = (devices: string[], extra: Record<string, unknown> = {}) => ({ jobTemplate: { kind: "noop", args: {}, targets: { devices } }, ...extra });

async function events(name: string) {
  const res = await s.api<{ items: { id: number; type: string; reason: string; message: string; actor: string }[] }>("GET", `/events?kind=Workflow&name=${name}&limit=1000`);
  return [...res.body.items].sort((a, b) => a.id - b.id);
}

const actionCount = (name: string) => s.ctx.db.action.count({ where: { createdBy: `workflow:${name}` } });

describe("drafts", () => {
  it("?start=false saves a Pending draft (run 0, no action); PUT edits it freely; start runs it and its actions appear", async () => {
    const d = await onlineDevice(s);
    const created = await s.api<WorkflowObject>("POST", "/workflows?start=false", { metadata: { name: "draft-one" }, spec: { steps: { A: job([d.name]) } } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.status.phase).toBe("Pending");
    expect(created.body.status.run).toBe(0);
    expect(created.body.status.startTime).toBeNull();
    expect(created.body.status.message).toMatch(/draft: not started/);
    expect(created.body.status.statuses.A!.phase).toBe("Pending");
    expect(created.body.status.runs).toEqual([]);
    expect(await actionCount("draft-one")).toBe(0);
    expect((await work(s, d, 0)).body.actions).toHaveLength(0);

    const list = await s.api<{ items: WorkflowSummary[] }>("GET", "/workflows?phase=Pending");
    const row = list.body.items.find((w) => w.name === "draft-one");
    expect(row).toMatchObject({ phase: "Pending", run: 0, steps: 1, counts: { Pending: 1 } });

    // A draft has no started step: anything may change (a step replaced, another added).
    const put = await s.api<WorkflowObject>("PUT", "/workflows/draft-one", { metadata: { name: "draft-one" }, spec: { steps: { B: job([d.name]), C: job([d.name], { dependencies: ["B"] }) } } });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect(put.body.status.phase).toBe("Pending");
    expect(put.body.status.run).toBe(0);
    expect(put.body.metadata.generation).toBe(2);
    expect(Object.keys(put.body.status.statuses)).toEqual(["B", "C"]);
    expect(await actionCount("draft-one")).toBe(0);

    const started = await s.api<WorkflowObject>("POST", "/workflows/draft-one/start", {});
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    expect(started.body.status.phase).toBe("Running");
    expect(started.body.status.run).toBe(1);
    expect(started.body.status.statuses.B!.phase).toBe("Running");
    expect(started.body.status.statuses.C!.phase).toBe("Pending");
    expect(started.body.status.runs).toMatchObject([{ run: 1, startedBy: "user:admin", phase: "Running" }]);
    expect(await actionCount("draft-one")).toBe(1);
    expect((await work(s, d, 0)).body.actions).toHaveLength(1);

    // Running now: neither start nor rerun starts it twice.
    expectError(await s.api("POST", "/workflows/draft-one/start", {}), 409, "CONFLICT", /is Running/);
    expectError(await s.api("POST", "/workflows/draft-one/rerun", {}), 409, "CONFLICT", /is Running/);

    expect((await events("draft-one")).map((e) => [e.type, e.actor])).toEqual([
      ["WorkflowCreated", "user:admin"],
      ["WorkflowUpdated", "user:admin"],
      ["WorkflowStarted", "user:admin"],
      ["WorkflowStepChanged", "workflow-controller"],
    ]);
    expect((await events("draft-one"))[0]!.message).toMatch(/draft/);
  });

  it("rerun starts a draft too (drover workflow rerun)", async () => {
    const d = await onlineDevice(s);
    expect((await s.api("POST", "/workflows?start=false", { metadata: { name: "draft-rerun" }, spec: { steps: { A: job([d.name]) } } })).status).toBe(201);
    const res = await s.api<WorkflowObject>("POST", "/workflows/draft-rerun/rerun", {});
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.status).toMatchObject({ phase: "Running", run: 1 });
    expect(await actionCount("draft-rerun")).toBe(1);
  });

  it("?start=true and no start both start at once", async () => {
    const d = await onlineDevice(s);
    for (const [name, q] of [["start-true", "?start=true"], ["start-default", ""]] as const) {
      const res = await s.api<WorkflowObject>("POST", `/workflows${q}`, { metadata: { name }, spec: { steps: { A: job([d.name]) } } });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      expect(res.body.status).toMatchObject({ phase: "Running", run: 1 });
    }
  });

  it("a start that is not true or false is 400 naming start, and nothing is written", async () => {
    for (const q of ["yes", "0", ""]) {
      expectError(await s.api("POST", `/workflows?start=${q}`, { metadata: { name: "bad-start" }, spec: { steps: { A: job(["x"]) } } }), 400, "INVALID_REQUEST", /^start/i);
    }
    expect((await s.api("GET", "/workflows/bad-start")).status).toBe(404);
    expect(await events("bad-start")).toEqual([]);
  });

  it("tRPC workflows.create({start: false}) saves a draft and workflows.start starts it", async () => {
    const admin = await s.ctx.db.user.findUniqueOrThrow({ where: { username: "admin" }, select: { id: true } });
    const caller = createCallerFactory(appRouter)({ server: s.ctx, auth: s.auth, principal: { userId: admin.id, username: "admin", role: "admin", via: "token" } });
    const d = await onlineDevice(s);
    const draft = await caller.workflows.create({ workflow: { metadata: { name: "trpc-draft" }, spec: { steps: { A: job([d.name]) } } }, start: false });
    expect(draft.status).toMatchObject({ phase: "Pending", run: 0 });
    expect(await actionCount("trpc-draft")).toBe(0);
    const started = await caller.workflows.start({ name: "trpc-draft" });
    expect(started.status).toMatchObject({ phase: "Running", run: 1 });
    expect(await actionCount("trpc-draft")).toBe(1);
  });

  it("the OpenAPI document shows ?start on POST /workflows and the /start route", async () => {
    const res = await s.api<{ paths: Record<string, Record<string, { parameters: { name: string; in: string }[] }>> }>("GET", "/openapi.json");
    expect(res.status).toBe(200);
    expect(res.body.paths["/workflows"]!.post!.parameters).toContainEqual(expect.objectContaining({ name: "start", in: "query" }));
    expect(res.body.paths["/workflows/{name}/start"]!.post).toBeDefined();
  });
});
