/**
 * The plan engine against a real server, devices driven by hand over the agent protocol (each
 * report chosen, so orderings are exact): seed 000's plan imported verbatim and run in the
 * seed's sequence; every error state reached with its cause (IncompleteTargets, Restricted,
 * MissingPlatform at NewPlan; MissingSignalNode, InconsistentTargets, MissingPlatform at
 * Schedulable; ApplyFailed; Cancelled; DeadlineExceeded) and every node state; ordering and
 * concurrency; approval of the whole plan; two plans on one node; retry; bad input that writes
 * nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "./helpers/server";
import { eventually, expectError, newSecret, type EnrolledDevice } from "./helpers/devices";
import { report, setHealth, tokenFor, work } from "./helpers/actions";
import { runPlans } from "../server/plans/controller";
import { commandNodes, type PlanNodeView, type PlanView } from "../lib/plan-status";
import { SEED_000_PLAN_WITH_STATUS } from "./helpers/seed-plans";
import YAML from "yaml";

let s: TestServer;

beforeAll(async () => {
  // No tick: every move must come from the reactive paths (create, reports, approve, cancel) or an explicit runPlans.
  s = await startTestServer({ DROVER_SWEEP_SECONDS: "600" });
});
afterAll(async () => {
  await s?.close();
});

// ---------------------------------------------------------------------------------------
// Helpers

async function enroll(srv: TestServer, name: string, opts: { role?: "controller" | "worker"; platform?: string; labels?: Record<string, string>; online?: boolean } = {}): Promise<EnrolledDevice> {
  const secret = newSecret();
  const created = await srv.agent<{ enrollmentId: string }>("POST", "/enrollments", {
    deviceName: name,
    labels: opts.labels ?? {},
    platform: opts.platform ?? "linux-amd64",
    role: opts.role ?? "worker",
    agentVersion: "1.0.0",
    secret,
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const { enrollmentId } = created.body;
  expect((await srv.api("POST", `/enrollments/${enrollmentId}/approve`, {})).status).toBe(200);
  const decision = await srv.agent<{ token?: string }>("GET", `/enrollments/${enrollmentId}`, undefined, { "x-enrollment-secret": secret });
  const d = { name, enrollmentId, secret, token: decision.body.token!, auth: { authorization: `Bearer ${decision.body.token!}` } };
  if (opts.online !== false) await setHealth(srv, d, {});
  return d;
}

async function postYaml(srv: TestServer, yaml: string, query = "") {
  const res = await fetch(`${srv.url}/api/v1/plans${query}`, { method: "POST", headers: { authorization: `Bearer ${srv.adminToken}`, "content-type": "application/yaml" }, body: yaml });
  const text = await res.text();
  return { status: res.status, body: JSON.parse(text) as PlanView };
}

async function create(srv: TestServer, plan: unknown, query = ""): Promise<PlanView> {
  const res = await srv.api<PlanView>("POST", `/plans${query}`, plan);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

async function get(srv: TestServer, id: string): Promise<PlanView> {
  const res = await srv.api<PlanView>("GET", `/plans/${id}`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

function nodes(plan: PlanView, command: number, group: "controllers" | "workers"): PlanNodeView[] {
  return commandNodes(plan.status.commands[command]!)[group] ?? [];
}
const node = (plan: PlanView, command: number, group: "controllers" | "workers", name: string) => nodes(plan, command, group).find((n) => n.name === name)!;

/** The actions offered to a device now (an immediate poll). */
async function offered(srv: TestServer, d: EnrolledDevice) {
  const res = await work(srv, d, 0);
  expect(res.status).toBe(200);
  return res.body.actions;
}

/** The device takes its one offered action and reports it through to `end`. */
async function finish(srv: TestServer, d: EnrolledDevice, end: "DONE" | "FAILED" = "DONE", error?: string): Promise<string> {
  const actions = await offered(srv, d);
  expect(actions, `${d.name} should have exactly one action`).toHaveLength(1);
  const id = actions[0]!.id;
  for (const state of ["NEW", "RUNNING", end]) {
    const res = await report(srv, d, id, { state, ...(state === end && error ? { error } : {}) });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
  }
  return id;
}

async function planEvents(srv: TestServer, id: string) {
  const res = await srv.api<{ items: { id: number; type: string; reason: string; message: string }[] }>("GET", `/events?kind=Plan&name=${id}&limit=1000`);
  return [...res.body.items].sort((a, b) => a.id - b.id);
}

const untilState = (srv: TestServer, id: string, state: string) =>
  eventually(async () => {
    const p = await get(srv, id);
    return p.status.state === state ? p : undefined;
  });


function updatePlan(targets: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  return {
    apiVersion: "drover/v1",
    kind: "Plan",
    spec: {
      commands: [{ k0supdate: { version: "v1.30.0", platforms: { "linux-amd64": { url: "https://example.com/k0s-amd64" } }, targets } }],
      ...extra,
    },
  };
}
const staticNodes = (...names: string[]) => ({ discovery: { static: { nodes: names } } });

// ---------------------------------------------------------------------------------------

describe("seed 000's plan, verbatim (its status block included, and ignored)", () => {
  it("runs in the seed's sequence: airgapupdate on worker0, then k0supdate on controller0 before worker0", async () => {
    const controller0 = await enroll(s, "controller0", { role: "controller" });
    const worker0 = await enroll(s, "worker0");
    const created = await postYaml(s, SEED_000_PLAN_WITH_STATUS);
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const plan = created.body;
    expect(plan.metadata.id).toMatch(/^plan-/);
    expect(plan.spec.id).toBe("id123");
    // NewPlan built a status entry per command (same index) and discovered the nodes; the first is signalled at once.
    expect(plan.status.commands.map((c) => [c.id, c.kind, c.state])).toEqual([
      [0, "airgapupdate", "SchedulableWait"],
      [1, "k0supdate", "SchedulableWait"],
    ]);
    expect(plan.status.state).toBe("SchedulableWait");
    expect(node(plan, 0, "workers", "worker0").state).toBe("SignalSent");
    expect(node(plan, 1, "controllers", "controller0").state).toBe("SignalPending");
    expect(node(plan, 1, "workers", "worker0").message).toBe("waiting for command 0 to complete");
    expect(await offered(s, controller0)).toHaveLength(0);

    // GET answers in k0s's own status shape: at this point the seed's status block exactly
    // (k0s's fields of it: timestamps aside), the nodes under the command's key, no other list.
    const raw = (await s.api<{ status: { state: string; commands: Record<string, unknown>[] } }>("GET", `/plans/${plan.metadata.id}`)).body;
    const k0sFields = (c: Record<string, unknown>) => {
      const nodes = c[c.kind as string] as Record<string, { name: string; state: string; lastUpdatedTimestamp: string }[]>;
      const groups = Object.entries(nodes).map(([group, list]) => [group, list.map((n) => ({ name: n.name, state: n.state, lastUpdatedTimestamp: "" }))]);
      return { id: c.id, state: c.state, [c.kind as string]: Object.fromEntries(groups) };
    };
    const seedStatus = (YAML.parse(SEED_000_PLAN_WITH_STATUS) as { status: { state: string; commands: { k0supdate?: Record<string, { lastUpdatedTimestamp: string }[]>; airgapupdate?: Record<string, { lastUpdatedTimestamp: string }[]> }[] } }).status;
    for (const c of seedStatus.commands) for (const list of Object.values(c.k0supdate ?? c.airgapupdate ?? {})) for (const n of list) n.lastUpdatedTimestamp = "";
    expect({ state: raw.status.state, commands: raw.status.commands.map(k0sFields) }).toEqual(seedStatus);
    for (const c of raw.status.commands) expect(c).not.toHaveProperty("nodes");
    expect(raw.status.commands[0]).not.toHaveProperty("k0supdate");
    expect(raw.status.commands[1]).toMatchObject({ k0supdate: { controllers: [{ name: "controller0", lastUpdatedTimestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT.*Z$/) }] } });

    const [airgap] = await offered(s, worker0);
    expect(airgap).toMatchObject({ kind: "airgapupdate", args: { planId: plan.metadata.id, command: 0, version: "v1.24.12+k0s.0", platform: "linux-amd64" } });
    expect((airgap!.args as { url: string }).url).toContain("k0s-airgap-bundle");
    await finish(s, worker0);

    // Command 0 Completed; command 1 signals controller0 first, worker0 waits for it.
    let p = await eventually(async () => {
      const v = await get(s, plan.metadata.id);
      return node(v, 1, "controllers", "controller0").state === "SignalSent" ? v : undefined;
    });
    expect(p.status.commands[0]!.state).toBe("Completed");
    expect(node(p, 0, "workers", "worker0").state).toBe("SignalCompleted");
    expect(node(p, 1, "workers", "worker0")).toMatchObject({ state: "SignalPending", message: "waiting for every controller to complete first" });
    expect(await offered(s, worker0)).toHaveLength(0);
    const [k0s] = await offered(s, controller0);
    expect(k0s).toMatchObject({ kind: "k0supdate", args: { command: 1, version: "v1.24.12+k0s.0" } });
    await finish(s, controller0);

    p = await eventually(async () => {
      const v = await get(s, plan.metadata.id);
      return node(v, 1, "workers", "worker0").state === "SignalSent" ? v : undefined;
    });
    expect(node(p, 1, "controllers", "controller0").state).toBe("SignalCompleted");
    await finish(s, worker0);
    p = await untilState(s, plan.metadata.id, "Completed");
    expect(p.status.commands.map((c) => c.state)).toEqual(["Completed", "Completed"]);
    expect(p.status.counts).toMatchObject({ total: 3, SignalCompleted: 3 });
    expect(p.status.endedAt).not.toBeNull();

    // The events tell the seed's sequence.
    const seq = (await planEvents(s, plan.metadata.id)).filter((e) => e.type === "PlanNodesSignalled" || e.type === "PlanCommandStateChanged" || e.type === "PlanStateChanged").map((e) => `${e.type}:${e.reason}:${e.message.split(":")[0]}`);
    expect(seq).toEqual([
      "PlanCommandStateChanged:SchedulableWait:command 0 (airgapupdate)",
      "PlanCommandStateChanged:SchedulableWait:command 1 (k0supdate)",
      "PlanStateChanged:SchedulableWait:NewPlan → SchedulableWait",
      "PlanCommandStateChanged:Schedulable:command 0 (airgapupdate)",
      "PlanCommandStateChanged:SchedulableWait:command 0 (airgapupdate)",
      "PlanNodesSignalled:Schedulable:command 0 (airgapupdate)",
      "PlanCommandStateChanged:Completed:command 0 (airgapupdate)",
      "PlanCommandStateChanged:Schedulable:command 1 (k0supdate)",
      "PlanCommandStateChanged:SchedulableWait:command 1 (k0supdate)",
      "PlanNodesSignalled:Schedulable:command 1 (k0supdate)",
      "PlanCommandStateChanged:Schedulable:command 1 (k0supdate)",
      "PlanCommandStateChanged:SchedulableWait:command 1 (k0supdate)",
      "PlanNodesSignalled:Schedulable:command 1 (k0supdate)",
      "PlanCommandStateChanged:Completed:command 1 (k0supdate)",
      "PlanStateChanged:Completed:SchedulableWait → Completed",
    ]);

    // spec.id reused is just a label: the same YAML again is a new plan with its own id and its own run.
    const again = await postYaml(s, SEED_000_PLAN_WITH_STATUS);
    expect(again.status).toBe(201);
    expect(again.body.metadata.id).not.toBe(plan.metadata.id);
    expect(node(again.body, 0, "workers", "worker0").state).toBe("SignalSent");
    expect((await s.api("POST", `/plans/${again.body.metadata.id}/cancel`, {})).status).toBe(200);
  });
});

describe("NewPlan errors", () => {
  it("IncompleteTargets: a static node that is not an Enrolled device of that role; later commands are not processed", async () => {
    await enroll(s, "inc-w1");
    await enroll(s, "inc-c1", { role: "controller" });
    const plan = await create(s, {
      apiVersion: "drover/v1",
      kind: "Plan",
      spec: {
        commands: [
          { k0supdate: { version: "v2", platforms: { "linux-amd64": { url: "https://example.com/k" } }, targets: { controllers: staticNodes("inc-w1", "inc-c1"), workers: staticNodes("inc-w1", "inc-nope") } } },
          { action: { kind: "noop", targets: { workers: staticNodes("inc-w1") } } },
        ],
      },
    });
    expect(plan.status.state).toBe("IncompleteTargets");
    expect(plan.status.message).toContain("inc-w1 is a worker, not a controller");
    expect(plan.status.message).toContain("no device named inc-nope");
    expect(plan.status.commands[0]!.state).toBe("IncompleteTargets");
    expect(node(plan, 0, "controllers", "inc-w1")).toMatchObject({ state: "SignalMissingNode", message: "inc-w1 is a worker, not a controller" });
    expect(node(plan, 0, "workers", "inc-nope")).toMatchObject({ state: "SignalMissingNode", message: "no device named inc-nope", role: null });
    expect(node(plan, 0, "controllers", "inc-c1")).toMatchObject({ state: "SignalPending", message: "never signalled: the plan ended IncompleteTargets" });
    expect(plan.status.commands[1]).toMatchObject({ state: "NewPlan", description: "not processed: command 0 ended IncompleteTargets" });
    expect(plan.status.endedAt).not.toBeNull();
    // Nothing was signalled.
    expect((await s.api<{ items: unknown[] }>("GET", "/actions?device=inc-c1")).body.items).toHaveLength(0);
  });

  it("IncompleteTargets for a device asked to decommission", async () => {
    await enroll(s, "inc-dec");
    expect((await s.api("POST", "/devices/inc-dec/decommission", {})).status).toBe(200);
    const plan = await create(s, updatePlan({ workers: staticNodes("inc-dec") }));
    expect(plan.status.state).toBe("IncompleteTargets");
    expect(node(plan, 0, "workers", "inc-dec").message).toBe("inc-dec is Decommissioning, not Enrolled");
  });

  it("MissingPlatform: a node whose platform has no file", async () => {
    await enroll(s, "mp-arm", { platform: "linux-arm64" });
    const plan = await create(s, updatePlan({ workers: staticNodes("mp-arm") }));
    expect(plan.status.state).toBe("MissingPlatform");
    expect(node(plan, 0, "workers", "mp-arm")).toMatchObject({ state: "SignalMissingPlatform", message: "mp-arm is linux-arm64; the command has files for linux-amd64" });
  });

  it("Restricted: a node type excluded by DROVER_EXCLUDE_FROM_PLANS, nothing signalled", async () => {
    const r = await startTestServer({ DROVER_SWEEP_SECONDS: "600", DROVER_EXCLUDE_FROM_PLANS: "controller" });
    try {
      await enroll(r, "rc1", { role: "controller" });
      const w = await enroll(r, "rw1");
      const restricted = await create(r, updatePlan({ controllers: staticNodes("rc1"), workers: staticNodes("rw1") }));
      expect(restricted.status.state).toBe("Restricted");
      expect(restricted.status.message).toContain("targets controllers, excluded from plans on this server (DROVER_EXCLUDE_FROM_PLANS): rc1");
      // Workers only are allowed.
      const fine = await create(r, updatePlan({ workers: staticNodes("rw1") }));
      expect(fine.status.state).toBe("SchedulableWait");
      expect(await offered(r, w)).toHaveLength(1);
    } finally {
      await r.close();
    }
  });

  it("a selector finds Enrolled devices of the group's role; fields narrow by name", async () => {
    for (const n of ["sel-a", "sel-b", "sel-c"]) await enroll(s, n, { labels: { env: "staging" } });
    await enroll(s, "sel-ctl", { role: "controller", labels: { env: "staging" } });
    const plan = await create(
      s,
      updatePlan({
        controllers: { discovery: { selector: { labels: "env=staging" } } },
        workers: { discovery: { selector: { labels: "env=staging", fields: "metadata.name!=sel-b" } }, limits: { concurrent: 5 } },
      }),
    );
    expect(nodes(plan, 0, "controllers").map((n) => n.name)).toEqual(["sel-ctl"]);
    expect(nodes(plan, 0, "workers").map((n) => n.name)).toEqual(["sel-a", "sel-c"]);
    expect((await s.api("POST", `/plans/${plan.metadata.id}/cancel`, {})).status).toBe(200);
  });
});

describe("ordering and concurrency", () => {
  it("controllers one at a time, no worker before every controller, at most limits.concurrent workers", async () => {
    const ctls = [await enroll(s, "oc-1", { role: "controller" }), await enroll(s, "oc-2", { role: "controller" })];
    const workers: EnrolledDevice[] = [];
    for (let i = 1; i <= 5; i++) workers.push(await enroll(s, `ow-${i}`));
    const plan = await create(s, updatePlan({ controllers: staticNodes("oc-1", "oc-2"), workers: { ...staticNodes(...workers.map((w) => w.name)), limits: { concurrent: 2 } } }));
    const id = plan.metadata.id;
    const sent = (p: PlanView, g: "controllers" | "workers") => nodes(p, 0, g).filter((n) => n.state === "SignalSent").map((n) => n.name);
    expect(sent(plan, "controllers")).toEqual(["oc-1"]);
    expect(sent(plan, "workers")).toEqual([]);
    expect(node(plan, 0, "controllers", "oc-2").message).toBe("waiting: one controller at a time, oc-1 is updating");
    await finish(s, ctls[0]!);
    let p = await eventually(async () => {
      const v = await get(s, id);
      return sent(v, "controllers").length === 1 && node(v, 0, "controllers", "oc-2").state === "SignalSent" ? v : undefined;
    });
    expect(sent(p, "workers")).toEqual([]);
    await finish(s, ctls[1]!);
    p = await eventually(async () => {
      const v = await get(s, id);
      return sent(v, "workers").length === 2 ? v : undefined;
    });
    expect(sent(p, "workers")).toEqual(["ow-1", "ow-2"]);
    expect(node(p, 0, "workers", "ow-3").message).toBe("waiting for a slot: 2 of 2 workers updating");
    // Finishing one frees one slot; never more than 2 at once.
    let max = 0;
    for (let done = 0; done < 5; done++) {
      const v = await get(s, id);
      max = Math.max(max, sent(v, "workers").length);
      const name = sent(v, "workers")[0]!;
      await finish(s, workers.find((w) => w.name === name)!);
      await eventually(async () => {
        const after = await get(s, id);
        return node(after, 0, "workers", name).state === "SignalCompleted" ? after : undefined;
      });
    }
    expect(max).toBe(2);
    await untilState(s, id, "Completed");
  });

  it("a Degraded node is updated by default; a command with healthPolicy Online waits for it to be Online, and says so", async () => {
    const deg = await enroll(s, "hp-1");
    await setHealth(s, deg, { resources: { memory: "Degraded" } });
    // The default: a Degraded node still works, so the plan does not hang on it (issue 21).
    const plan = await create(s, updatePlan({ workers: staticNodes("hp-1") }));
    await finish(s, deg);
    await untilState(s, plan.metadata.id, "Completed");

    const strict = { ...updatePlan({ workers: staticNodes("hp-1") }) };
    strict.spec.commands[0] = { ...strict.spec.commands[0]!, healthPolicy: "Online" } as (typeof strict.spec.commands)[0];
    const second = await create(s, strict);
    const p = await eventually(async () => {
      const v = await get(s, second.metadata.id);
      return node(v, 0, "workers", "hp-1").state === "SignalSent" ? v : undefined;
    });
    expect(node(p, 0, "workers", "hp-1").message).toMatch(/^action queued: it is offered when the device is Online; the device is Degraded/);
    expect(await offered(s, deg)).toEqual([]);
    await setHealth(s, deg, {});
    await finish(s, deg);
    await untilState(s, second.metadata.id, "Completed");
  });

  it("skip: a node stuck on a device in Error is skipped with a reason, its action cancelled, and the plan completes without it", async () => {
    const [stuck, ok] = [await enroll(s, "skip-1"), await enroll(s, "skip-2")];
    await setHealth(s, stuck, { resources: { disk: "Error" } });
    const plan = await create(s, updatePlan({ workers: { ...staticNodes("skip-1", "skip-2"), limits: { concurrent: 2 } } }));
    const id = plan.metadata.id;
    await finish(s, ok);
    const waiting = await eventually(async () => {
      const v = await get(s, id);
      return node(v, 0, "workers", "skip-2").state === "SignalCompleted" ? v : undefined;
    });
    const actionId = node(waiting, 0, "workers", "skip-1").actionId!;
    expect(node(waiting, 0, "workers", "skip-1")).toMatchObject({ state: "SignalSent", actionState: "PENDING_SCHEDULE" });

    // Bad asks change nothing: no reason, an unknown node, a viewer.
    expectError(await s.api("POST", `/plans/${id}/nodes/skip-1/skip`, {}), 400, "INVALID_REQUEST", /reason/);
    expectError(await s.api("POST", `/plans/${id}/nodes/nobody/skip`, { reason: "x" }), 404, "NOT_FOUND");
    const viewer = (await tokenFor(s, "viewer")).token;
    expectError(await s.api("POST", `/plans/${id}/nodes/skip-1/skip`, { reason: "x" }, viewer), 403, "FORBIDDEN");
    expect(node(await get(s, id), 0, "workers", "skip-1").state).toBe("SignalSent");

    const skipped = await s.api<PlanView>("POST", `/plans/${id}/nodes/skip-1/skip`, { reason: "disk replaced next week" });
    expect(skipped.status, JSON.stringify(skipped.body)).toBe(200);
    expect(node(skipped.body, 0, "workers", "skip-1")).toMatchObject({ state: "SignalSkipped", message: "skipped by user:admin: disk replaced next week", actionState: "CANCELLED" });
    expect(skipped.body.status.state).toBe("Completed");
    expect(skipped.body.status.commands[0]!.description).toBe("2 node(s) SignalCompleted or SignalSkipped (1 skipped)");
    const events = await planEvents(s, id);
    expect(events.find((e) => e.type === "PlanNodeSkipped")).toMatchObject({ reason: "SignalSent", message: "skip-1 (command 0, workers) skipped: disk replaced next week" });
    expect((await s.api<{ error: string }>("GET", `/actions/${actionId}`)).body.error).toBe(`node skip-1 skipped in plan ${id}: disk replaced next week`);
    // An ended plan: nothing more to skip.
    expectError(await s.api("POST", `/plans/${id}/nodes/skip-2/skip`, { reason: "x" }), 409, "CONFLICT", /Completed: it has already ended/);
  });

  it("an Offline node is not failed: it waits, says why, and Online nodes go first", async () => {
    const off = await enroll(s, "off-1", { online: false });
    const on = await enroll(s, "off-2");
    const plan = await create(s, updatePlan({ workers: staticNodes("off-1", "off-2") }));
    // off-1 is listed first but Offline: off-2 goes first.
    expect(node(plan, 0, "workers", "off-2").state).toBe("SignalSent");
    expect(node(plan, 0, "workers", "off-1").message).toMatch(/^waiting for a slot: 1 of 1 workers updating \(the device is Offline, never seen; Online nodes go first\)$/);
    await finish(s, on);
    // Only an Offline node left: it is signalled, and its action waits for it to come Online.
    const p = await eventually(async () => {
      const v = await get(s, plan.metadata.id);
      return node(v, 0, "workers", "off-1").state === "SignalSent" ? v : undefined;
    });
    expect(node(p, 0, "workers", "off-1")).toMatchObject({ actionState: "PENDING_SCHEDULE" });
    expect(node(p, 0, "workers", "off-1").message).toMatch(/^action queued: it is offered when the device is Online or Degraded; the device is Offline/);
    expect(p.status.state).toBe("SchedulableWait");
    await setHealth(s, off, {});
    await finish(s, off);
    await untilState(s, plan.metadata.id, "Completed");
  });
});

describe("errors while running", () => {
  it("ApplyFailed with the action's error as the node's message; nodes signalled keep being followed; retry skips nodes already completed", async () => {
    const ws = [await enroll(s, "af-1"), await enroll(s, "af-2"), await enroll(s, "af-3")];
    const plan = await create(s, updatePlan({ workers: { ...staticNodes("af-1", "af-2", "af-3"), limits: { concurrent: 2 } } }));
    const id = plan.metadata.id;
    await finish(s, ws[0]!, "FAILED", "sha256 mismatch: expected aaa, got bbb");
    const failed = await untilState(s, id, "ApplyFailed");
    expect(node(failed, 0, "workers", "af-1")).toMatchObject({ state: "SignalApplyFailed" });
    expect(node(failed, 0, "workers", "af-1").message).toContain("FAILED: sha256 mismatch: expected aaa, got bbb");
    expect(failed.status.message).toContain("af-1: action");
    expect(failed.status.commands[0]!.state).toBe("ApplyFailed");
    // af-2 was already signalled: it finishes and the plan shows it; af-3 is never signalled.
    expect(node(failed, 0, "workers", "af-2").state).toBe("SignalSent");
    await finish(s, ws[1]!);
    const settled = await eventually(async () => {
      const v = await get(s, id);
      return node(v, 0, "workers", "af-2").state === "SignalCompleted" ? v : undefined;
    });
    expect(settled.status.state).toBe("ApplyFailed");
    expect(node(settled, 0, "workers", "af-3")).toMatchObject({ state: "SignalPending", message: "never signalled: the plan ended ApplyFailed" });
    expect(await offered(s, ws[2]!)).toHaveLength(0);

    // A running plan cannot be retried; a failed one can: a new plan that skips af-2.
    const retried = await s.api<PlanView>("POST", `/plans/${id}/retry`, {});
    expect(retried.status, JSON.stringify(retried.body)).toBe(201);
    const r = retried.body;
    expect(r.metadata.retryOf).toBe(id);
    expect(node(r, 0, "workers", "af-2")).toMatchObject({ state: "SignalCompleted", message: `completed in plan ${id}` });
    expect(nodes(r, 0, "workers").filter((n) => n.state === "SignalSent").map((n) => n.name)).toEqual(["af-1", "af-3"]);
    expect((await get(s, id)).metadata.retriedBy).toEqual([r.metadata.id]);
    expectError(await s.api("POST", `/plans/${r.metadata.id}/retry`, {}), 409, "CONFLICT", /only a plan that ended can be retried/);
    await finish(s, ws[0]!);
    await finish(s, ws[2]!);
    await untilState(s, r.metadata.id, "Completed");
    expectError(await s.api("POST", `/plans/${r.metadata.id}/retry`, {}), 409, "CONFLICT", /nothing to retry/);
  });

  it("MissingSignalNode: a node decommissioned before its turn", async () => {
    const w1 = await enroll(s, "ms-1");
    await enroll(s, "ms-2");
    const plan = await create(s, updatePlan({ workers: staticNodes("ms-1", "ms-2") }));
    expect((await s.api("POST", "/devices/ms-2/decommission", {})).status).toBe(200);
    await finish(s, w1);
    const p = await untilState(s, plan.metadata.id, "MissingSignalNode");
    expect(node(p, 0, "workers", "ms-2")).toMatchObject({ state: "SignalMissingNode", message: "ms-2 is Decommissioning, not Enrolled" });
    expect(p.status.message).toContain("ms-2 is Decommissioning, not Enrolled");
    const events = (await planEvents(s, plan.metadata.id)).filter((e) => e.type === "PlanCommandStateChanged").map((e) => e.reason);
    expect(events.slice(-2)).toEqual(["Schedulable", "MissingSignalNode"]);
  });

  it("InconsistentTargets: a node's labels no longer match the selector it was discovered by", async () => {
    const a = await enroll(s, "it-1", { labels: { ring: "b" } });
    await enroll(s, "it-2", { labels: { ring: "b" } });
    const plan = await create(s, updatePlan({ workers: { discovery: { selector: { labels: "ring=b" } } } }));
    expect(node(plan, 0, "workers", "it-1").state).toBe("SignalSent");
    expect((await s.api("PUT", "/devices/it-2/labels", { labels: { ring: "c" } })).status).toBe(200);
    await finish(s, a);
    const p = await untilState(s, plan.metadata.id, "InconsistentTargets");
    expect(node(p, 0, "workers", "it-2")).toMatchObject({ state: "SignalMissingNode", message: "it-2 no longer matches the selector it was discovered by (ring=b)" });
  });

  it("MissingPlatform at Schedulable, and a node's action LOST gives ApplyFailed", async () => {
    // The platform check again before signalling: simulated by a device whose platform changed in the database.
    const a = await enroll(s, "mps-1");
    await enroll(s, "mps-2");
    const plan = await create(s, updatePlan({ workers: staticNodes("mps-1", "mps-2") }));
    await s.ctx.db.device.update({ where: { name: "mps-2" }, data: { platform: "linux-riscv64" } });
    await finish(s, a);
    const p = await untilState(s, plan.metadata.id, "MissingPlatform");
    expect(node(p, 0, "workers", "mps-2")).toMatchObject({ state: "SignalMissingPlatform", message: "mps-2 is linux-riscv64; the command has files for linux-amd64" });

    const l = await enroll(s, "lost-1");
    const lp = await create(s, updatePlan({ workers: staticNodes("lost-1") }));
    const [action] = await offered(s, l);
    expect((await report(s, l, action!.id, { state: "NEW" })).status).toBe(200);
    // The agent's queue no longer has it: LOST after 5 s missing from heartbeats.
    await setHealth(s, l, { actions: [] });
    s.advanceClock(5_200);
    await setHealth(s, l, { actions: [] });
    const lost = await untilState(s, lp.metadata.id, "ApplyFailed");
    expect(node(lost, 0, "workers", "lost-1").message).toContain("LOST");
  }, 20_000);
});

describe("approval, cancel, deadline, two plans", () => {
  it("one approval for the whole plan: nothing is signalled before it; the actions are created approved by the approver", async () => {
    const w = await enroll(s, "ap-1");
    const viewer = await tokenFor(s, "viewer");
    const plan = await create(s, updatePlan({ workers: staticNodes("ap-1") }), "?requireApproval=true");
    expect(plan.status.approval).toEqual({ required: true, approvedBy: null, approvedAt: null, reason: null });
    expect(plan.status.message).toBe("waiting for an operator to approve the plan");
    expect(node(plan, 0, "workers", "ap-1")).toMatchObject({ state: "SignalPending", message: "waiting for an operator to approve the plan" });
    await runPlans(s.ctx);
    expect(await offered(s, w)).toHaveLength(0);
    expectError(await s.api("POST", `/plans/${plan.metadata.id}/approve`, {}, viewer.token), 403, "FORBIDDEN");
    const approved = await s.api<PlanView>("POST", `/plans/${plan.metadata.id}/approve`, {});
    expect(approved.status).toBe(200);
    expect(approved.body.status.approval.approvedBy).toBe("user:admin");
    expect(node(approved.body, 0, "workers", "ap-1").state).toBe("SignalSent");
    const action = await s.api<{ state: string; decision: string; decidedBy: string; origin: string }>("GET", `/actions/${node(approved.body, 0, "workers", "ap-1").actionId}`);
    expect(action.body).toMatchObject({ state: "PENDING_SCHEDULE", decision: "Approved", decidedBy: "user:admin", origin: "plan" });
    expectError(await s.api("POST", `/plans/${plan.metadata.id}/approve`, {}), 409, "CONFLICT", /already approved by user:admin/);
    await finish(s, w);
    await untilState(s, plan.metadata.id, "Completed");
  });

  it("without the plan's approval, an action kind in DROVER_APPROVAL_KINDS waits for its own", async () => {
    const w = await enroll(s, "apk-1");
    const plan = await create(s, { apiVersion: "drover/v1", kind: "Plan", spec: { commands: [{ action: { kind: "exec", args: { command: "true" }, targets: { workers: staticNodes("apk-1") } } }] } });
    expect(node(plan, 0, "workers", "apk-1")).toMatchObject({ state: "SignalSent", actionState: "PENDING_APPROVE", message: "action waiting for an operator's approval" });
    expect(await offered(s, w)).toHaveLength(0);
    expect((await s.api("POST", `/actions/${node(plan, 0, "workers", "apk-1").actionId}/approve`, {})).status).toBe(200);
    await finish(s, w);
    await untilState(s, plan.metadata.id, "Completed");
  });

  it("cancel: Cancelled at once, pending actions cancelled, a running one through its agent", async () => {
    const a = await enroll(s, "cx-1");
    const b = await enroll(s, "cx-2");
    await enroll(s, "cx-3");
    const plan = await create(s, {
      ...updatePlan({ workers: { ...staticNodes("cx-1", "cx-2", "cx-3"), limits: { concurrent: 2 } } }),
      spec: { commands: [...updatePlan({ workers: { ...staticNodes("cx-1", "cx-2", "cx-3"), limits: { concurrent: 2 } } }).spec.commands, { action: { kind: "noop", targets: { workers: staticNodes("cx-1") } } }] },
    });
    const [running] = await offered(s, a);
    await report(s, a, running!.id, { state: "NEW" });
    await report(s, a, running!.id, { state: "RUNNING" });
    const res = await s.api<PlanView>("POST", `/plans/${plan.metadata.id}/cancel`, { reason: "wrong version" });
    expect(res.status).toBe(200);
    expect(res.body.status.state).toBe("Cancelled");
    expect(res.body.status.message).toBe("cancelled by user:admin: wrong version");
    expect(res.body.status.cancelRequestedBy).toBe("user:admin");
    expect(res.body.status.commands[1]).toMatchObject({ state: "SchedulableWait", description: "not run: command 0 ended Cancelled" });
    // cx-2's action had not started: CANCELLED now, and the node is SignalApplyFailed saying so.
    const p = await eventually(async () => {
      const v = await get(s, plan.metadata.id);
      return node(v, 0, "workers", "cx-2").state === "SignalApplyFailed" ? v : undefined;
    });
    expect(node(p, 0, "workers", "cx-2").message).toContain(`CANCELLED: cancelled by user:admin: plan ${plan.metadata.id} cancelled`);
    expect(await offered(s, b)).toHaveLength(0);
    // cx-1 is told in its long-poll and reports CANCELLED.
    const told = await work(s, a, 0);
    expect(told.body.cancel).toEqual([running!.id]);
    expect((await report(s, a, running!.id, { state: "CANCELLED" })).status).toBe(200);
    await eventually(async () => {
      const v = await get(s, plan.metadata.id);
      return node(v, 0, "workers", "cx-1").state === "SignalApplyFailed" ? v : undefined;
    });
    expect(node(await get(s, plan.metadata.id), 0, "workers", "cx-3").message).toBe("never signalled: the plan ended Cancelled");
    expectError(await s.api("POST", `/plans/${plan.metadata.id}/cancel`, {}), 409, "CONFLICT", /already ended/);
  });

  it("DeadlineExceeded: a node that stays Offline fails the plan visibly at its deadline", async () => {
    await enroll(s, "dl-1", { online: false });
    const plan = await create(s, { ...updatePlan({ workers: staticNodes("dl-1") }), spec: { ...updatePlan({ workers: staticNodes("dl-1") }).spec, deadline: "1s" } });
    expect(plan.status.deadline).toBe("1s");
    expect(node(plan, 0, "workers", "dl-1").actionState).toBe("PENDING_SCHEDULE");
    await new Promise((r) => setTimeout(r, 1_100));
    // No tick runs in these tests: an operator's nudge reconciles the plan now.
    expect((await s.api("POST", "/nudge", { kind: "Plan", name: plan.metadata.id })).body).toEqual({ nudged: `Plan/${plan.metadata.id}` });
    const p = await get(s, plan.metadata.id);
    expect(p.status.state).toBe("DeadlineExceeded");
    expect(p.status.message).toMatch(/^the deadline of 1s passed at .* with 1 node\(s\) of command 0 unfinished: dl-1 \(action queued: it is offered when the device is Online or Degraded; the device is Offline/);
    expect(node(p, 0, "workers", "dl-1")).toMatchObject({ state: "SignalApplyFailed", actionState: "CANCELLED" });
  });

  it("two plans never signal one device at once: the second waits and says for which plan", async () => {
    const w = await enroll(s, "tp-1");
    const first = await create(s, updatePlan({ workers: staticNodes("tp-1") }));
    const second = await create(s, { apiVersion: "drover/v1", kind: "Plan", spec: { commands: [{ action: { kind: "noop", targets: { workers: staticNodes("tp-1") } } }] } });
    expect(node(second, 0, "workers", "tp-1")).toMatchObject({ state: "SignalPending", message: `waiting: plan ${first.metadata.id} is updating this device` });
    await finish(s, w);
    await untilState(s, first.metadata.id, "Completed");
    await runPlans(s.ctx);
    const p = await get(s, second.metadata.id);
    expect(node(p, 0, "workers", "tp-1").state).toBe("SignalSent");
    await finish(s, w);
    await untilState(s, second.metadata.id, "Completed");
  });
});

describe("bad input changes nothing", () => {
  it("answers 400 naming the field, for JSON and YAML; 403 for a viewer", async () => {
    const before = await s.ctx.db.plan.count();
    expectError(await s.api("POST", "/plans", updatePlan({ workers: staticNodes("x") }, { bogus: 1 })), 400, "INVALID_REQUEST", /spec: Unrecognized key: "bogus"/);
    expectError(await s.api("POST", "/plans", { ...updatePlan({ workers: { discovery: {} } }) }), 400, "INVALID_REQUEST", /give exactly one of static or selector/);
    const k0sAction = await postYaml(s, SEED_000_PLAN_WITH_STATUS.replace("  - airgapupdate:", "  - action: {kind: noop, targets: {}}\n  - airgapupdate:"));
    expectError(k0sAction, 400, "INVALID_REQUEST", /the action command is Drover's/);
    expectError(await postYaml(s, SEED_000_PLAN_WITH_STATUS.replace("version: v1.24.12+k0s.0", "version: ''")), 400, "INVALID_REQUEST", /spec\.commands\.0\.airgapupdate\.version/);
    expectError(await postYaml(s, "kind: Plan\n  bad: [indent"), 400, "INVALID_REQUEST", /not valid YAML/);
    expectError(await s.api("POST", "/plans?deadline=soon", updatePlan({ workers: staticNodes("x") })), 400, "INVALID_REQUEST", /deadline/);
    expectError(await s.api("POST", "/plans?requireApproval=yes", updatePlan({ workers: staticNodes("x") })), 400, "INVALID_REQUEST", /requireApproval/);
    const viewer = await tokenFor(s, "viewer");
    expectError(await s.api("POST", "/plans", updatePlan({ workers: staticNodes("x") }), viewer.token), 403, "FORBIDDEN");
    expect(await s.ctx.db.plan.count()).toBe(before);
    expectError(await s.api("GET", "/plans/plan-nothere"), 404, "NOT_FOUND");
    // The OpenAPI document lists the plan routes, YAML taken where a plan is posted.
    const doc = (await (await fetch(`${s.url}/api/v1/openapi.json`)).json()) as { paths: Record<string, Record<string, { requestBody?: { content: Record<string, unknown> } }>> };
    expect(Object.keys(doc.paths["/plans"]!).sort()).toEqual(["get", "post"]);
    expect(Object.keys(doc.paths["/plans"]!.post!.requestBody!.content).sort()).toEqual(["application/json", "application/yaml"]);
    expect(JSON.stringify(doc.paths["/plans"]!.post!.requestBody)).toContain("airgapupdate");
    for (const p of ["/plans/{id}/approve", "/plans/{id}/cancel", "/plans/{id}/retry"]) expect(doc.paths[p]?.post, p).toBeDefined();
    expect(doc.paths["/plans/{id}"]?.get).toBeDefined();
    const list = await s.api<{ items: { id: string; state: string }[]; total: number }>("GET", "/plans?state=Completed&limit=2");
    expect(list.status).toBe(200);
    expect(list.body.items.every((p) => p.state === "Completed")).toBe(true);
  });
});
