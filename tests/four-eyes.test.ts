/**
 * Approval safety (issue 21, item 5): with DROVER_FOUR_EYES=1 nobody approves what they
 * requested (a single action, a request, a plan, a plan's or a workflow step's actions), on
 * REST and tRPC alike, with 403 in the protocol's error shape and nothing changed; another
 * operator can. Rejecting your own stays allowed. A plan's approval keeps its reason. Without
 * the setting (the default) the one admin of a fresh install approves their own, as before.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TRPCError } from "@trpc/server";
import { startTestServer, type TestServer } from "./helpers/server";
import { expectError } from "./helpers/devices";
import { getAction, onlineDevice, postActions, tokenFor, type ActionView } from "./helpers/actions";
import { createCallerFactory } from "../server/trpc/init";
import { appRouter } from "../server/trpc/router";
import { commandNodes, type PlanView } from "../lib/plan-status";

let s: TestServer;
let plain: TestServer;
let operator = { token: "", username: "" };

beforeAll(async () => {
  [s, plain] = await Promise.all([startTestServer({ DROVER_FOUR_EYES: "1", DROVER_SWEEP_SECONDS: "60" }), startTestServer({ DROVER_SWEEP_SECONDS: "60" })]);
  operator = await tokenFor(s, "operator");
});
afterAll(async () => {
  await Promise.all([s?.close(), plain?.close()]);
});

/** The console's tRPC procedures as the admin (the REST routes call the same ones). */
async function adminCaller(srv: TestServer) {
  const admin = await srv.ctx.db.user.findUniqueOrThrow({ where: { username: "admin" }, select: { id: true } });
  return createCallerFactory(appRouter)({ server: srv.ctx, auth: srv.auth, principal: { userId: admin.id, username: "admin", role: "admin", via: "token" } });
}

/** What an approval could have written: the actions' states and decisions, the plans' approvals, and the events. */
async function snapshot(srv: TestServer) {
  return {
    actions: await srv.ctx.db.action.findMany({ select: { id: true, state: true, decidedBy: true }, orderBy: { id: "asc" } }),
    requests: await srv.ctx.db.actionRequest.findMany({ select: { id: true, decidedBy: true }, orderBy: { id: "asc" } }),
    plans: await srv.ctx.db.plan.findMany({ select: { id: true, approvedBy: true, approvalReason: true, state: true }, orderBy: { id: "asc" } }),
    events: await srv.ctx.db.event.count(),
  };
}

async function execOn(srv: TestServer, device: string, token?: string): Promise<ActionView & { requestId: string }> {
  const res = await postActions(srv, { device, kind: "exec", args: { command: "true" } }, token);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  const action = (res.body.items as (ActionView & { requestId: string })[])[0]!;
  expect(action.state).toBe("PENDING_APPROVE");
  return action;
}

function waitingPlan(device: string) {
  return {
    apiVersion: "drover/v1",
    kind: "Plan",
    spec: { commands: [{ k0supdate: { version: "v1.30.0", platforms: { "linux-amd64": { url: "https://example.com/k0s-amd64" } }, targets: { workers: { discovery: { static: { nodes: [device] } } } } } }] },
  };
}

async function createPlan(srv: TestServer, device: string, token?: string): Promise<PlanView> {
  const res = await srv.api<PlanView>("POST", "/plans?requireApproval=true", waitingPlan(device), token);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

describe("DROVER_FOUR_EYES=1", () => {
  it("a single action: its creator is refused (403, nothing changes) on REST and tRPC; another operator approves it", async () => {
    const d = await onlineDevice(s);
    const action = await execOn(s, d.name);
    const before = await snapshot(s);
    const refused = expectError(await s.api("POST", `/actions/${action.id}/approve`, { reason: "mine" }), 403, "FORBIDDEN");
    expect(refused.error.message).toBe(`four eyes (DROVER_FOUR_EYES=1): user:admin requested action ${action.id}, so another operator must approve it`);
    expectError(await s.api("POST", "/actions/approve", { ids: [action.id] }), 403, "FORBIDDEN", /four eyes/);
    await expect((await adminCaller(s)).actions.approve({ ids: [action.id] })).rejects.toMatchObject({ code: "FORBIDDEN", message: expect.stringMatching(/another operator must approve it/) });
    expect(await snapshot(s)).toEqual(before);

    const approved = await s.api<{ items: ActionView[] }>("POST", `/actions/${action.id}/approve`, { reason: "checked" }, operator.token);
    expect(approved.status, JSON.stringify(approved.body)).toBe(200);
    expect(await getAction(s, action.id)).toMatchObject({ state: "PENDING_SCHEDULE", decidedBy: `user:${operator.username}` });
  });

  it("several actions at once: one of them the caller's refuses all of them", async () => {
    const [a, b] = await Promise.all([onlineDevice(s), onlineDevice(s)]);
    const theirs = await execOn(s, a.name, operator.token);
    const mine = await execOn(s, b.name);
    const before = await snapshot(s);
    expectError(await s.api("POST", "/actions/approve", { ids: [theirs.id, mine.id] }), 403, "FORBIDDEN", new RegExp(`action ${mine.id}`));
    expect(await snapshot(s)).toEqual(before);
    expect((await s.api("POST", "/actions/approve", { ids: [theirs.id] })).status).toBe(200);
  });

  it("rejecting your own request stays allowed: it lets nothing run", async () => {
    const d = await onlineDevice(s);
    const action = await execOn(s, d.name);
    const res = await s.api("POST", `/actions/${action.id}/reject`, { reason: "changed my mind" });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect((await getAction(s, action.id)).state).toBe("CANCELLED");
  });

  it("a request: its creator is refused on REST and tRPC; another operator approves it as a unit", async () => {
    const d = await onlineDevice(s);
    const action = await execOn(s, d.name);
    const before = await snapshot(s);
    expectError(await s.api("POST", `/requests/${action.requestId}/approve`, {}), 403, "FORBIDDEN", `four eyes (DROVER_FOUR_EYES=1): user:admin requested request ${action.requestId}, so another operator must approve it`);
    await expect((await adminCaller(s)).requests.approve({ id: action.requestId })).rejects.toBeInstanceOf(TRPCError);
    expect(await snapshot(s)).toEqual(before);
    const res = await s.api<{ moved: number }>("POST", `/requests/${action.requestId}/approve`, { reason: "ticket 7" }, operator.token);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.moved).toBe(1);
  });

  it("a plan: its submitter is refused; another operator approves it with a reason, kept on the plan and its actions", async () => {
    const d = await onlineDevice(s);
    const plan = await createPlan(s, d.name);
    const before = await snapshot(s);
    expectError(await s.api("POST", `/plans/${plan.metadata.id}/approve`, { reason: "mine" }), 403, "FORBIDDEN", `four eyes (DROVER_FOUR_EYES=1): user:admin requested plan ${plan.metadata.id}, so another operator must approve it`);
    await expect((await adminCaller(s)).plans.approve({ id: plan.metadata.id })).rejects.toMatchObject({ code: "FORBIDDEN" });
    expect(await snapshot(s)).toEqual(before);

    const res = await s.api<PlanView>("POST", `/plans/${plan.metadata.id}/approve`, { reason: "CHG-53 k0s 1.30" }, operator.token);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.status.approval).toMatchObject({ required: true, approvedBy: `user:${operator.username}`, reason: "CHG-53 k0s 1.30" });
    const actionId = commandNodes(res.body.status.commands[0]!).workers![0]!.actionId!;
    const action = await s.api<{ decisionReason: string }>("GET", `/actions/${actionId}`);
    expect(action.body.decisionReason).toBe(`approved with plan ${plan.metadata.id}: CHG-53 k0s 1.30`);
    const event = await s.ctx.db.event.findFirst({ where: { objectKind: "Plan", objectName: plan.metadata.id, type: "PlanApproved" }, select: { message: true, actor: true } });
    expect(event).toEqual({ message: "its nodes are signalled from now on: CHG-53 k0s 1.30", actor: `user:${operator.username}` });
  });

  it("a plan's own action (an exec command, not approved as a plan) counts as the plan's submitter's", async () => {
    const d = await onlineDevice(s);
    const res = await s.api<PlanView>("POST", "/plans", { apiVersion: "drover/v1", kind: "Plan", spec: { commands: [{ action: { kind: "exec", args: { command: "true" }, targets: { workers: { discovery: { static: { nodes: [d.name] } } } } } }] } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const actionId = commandNodes(res.body.status.commands[0]!).workers![0]!.actionId!;
    expectError(await s.api("POST", `/actions/${actionId}/approve`, {}), 403, "FORBIDDEN", new RegExp(`user:admin requested action ${actionId} \\(through plan:${res.body.metadata.id}\\)`));
    expect((await getAction(s, actionId)).state).toBe("PENDING_APPROVE");
    expect((await s.api("POST", `/actions/${actionId}/approve`, {}, operator.token)).status).toBe(200);
  });

  it("a workflow step's actions count as the workflow's author's and its run's starter's", async () => {
    const d = await onlineDevice(s);
    const wf = await s.api("POST", "/workflows", { metadata: { name: `fe-${process.pid}` }, spec: { steps: { A: { jobTemplate: { kind: "noop", requireApproval: true, targets: { devices: [d.name] } } } } } });
    expect(wf.status, JSON.stringify(wf.body)).toBe(201);
    const pending = await s.ctx.db.action.findFirstOrThrow({ where: { device: { name: d.name }, createdBy: `workflow:fe-${process.pid}` }, select: { id: true, state: true } });
    expect(pending.state).toBe("PENDING_APPROVE");
    expectError(await s.api("POST", `/actions/${pending.id}/approve`, {}), 403, "FORBIDDEN", /through workflow:/);
    expect((await s.api("POST", `/actions/${pending.id}/approve`, {}, operator.token)).status).toBe(200);
  });

  it("the console learns the setting from system.settings", async () => {
    expect((await (await adminCaller(s)).system.settings()).fourEyes).toBe(true);
    expect((await (await adminCaller(plain)).system.settings()).fourEyes).toBe(false);
  });
});

describe("without DROVER_FOUR_EYES (the default)", () => {
  it("the only admin approves their own action, request and plan; a plan approved without a reason has none", async () => {
    const d = await onlineDevice(plain);
    const action = await execOn(plain, d.name);
    expect((await plain.api("POST", `/actions/${action.id}/approve`, {})).status).toBe(200);
    const other = await execOn(plain, d.name);
    expect((await plain.api("POST", `/requests/${other.requestId}/approve`, {})).status).toBe(200);
    const plan = await createPlan(plain, d.name);
    const res = await plain.api<PlanView>("POST", `/plans/${plan.metadata.id}/approve`, {});
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.status.approval).toMatchObject({ approvedBy: "user:admin", reason: null });
  });

  it("a plan approval's reason is checked: blank or too long is 400 and changes nothing", async () => {
    const d = await onlineDevice(plain);
    const plan = await createPlan(plain, d.name);
    const before = await snapshot(plain);
    expectError(await plain.api("POST", `/plans/${plan.metadata.id}/approve`, { reason: "   " }), 400, "INVALID_REQUEST");
    expectError(await plain.api("POST", `/plans/${plan.metadata.id}/approve`, { reason: "x".repeat(501) }), 400, "INVALID_REQUEST");
    expect(await snapshot(plain)).toEqual(before);
  });
});
