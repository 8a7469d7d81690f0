/**
 * The workflow engine against a real server (issue 9), devices driven by hand over the agent
 * protocol (each report chosen, so orderings are exact): the diamond's order, failFast, a retry
 * with its backoff, the deadline, editing while running, delete's cascade, a reference to
 * another workflow, bad input that writes nothing, and a viewer's 403.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "./helpers/server";
import { eventually, expectError, newSecret, type EnrolledDevice } from "./helpers/devices";
import { getAction, report, setHealth, tokenFor, work } from "./helpers/actions";
import type { WorkflowObject } from "../server/workflows/workflows";
import type { WorkflowTargetsView } from "../server/workflows/targets";

let s: TestServer;

beforeAll(async () => {
  // No tick: every move must come from the reactive paths (create, reports, PUT, cancel, timers) or a nudge.
  s = await startTestServer({ DROVER_SWEEP_SECONDS: "600" });
});
afterAll(async () => {
  await s?.close();
});

// ---------------------------------------------------------------------------------------
// Helpers

async function enroll(name: string, labels: Record<string, string> = {}): Promise<EnrolledDevice> {
  const secret = newSecret();
  const created = await s.agent<{ enrollmentId: string }>("POST", "/enrollments", { deviceName: name, labels, platform: "linux-amd64", role: "worker", agentVersion: "1.0.0", secret });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const { enrollmentId } = created.body;
  expect((await s.api("POST", `/enrollments/${enrollmentId}/approve`, {})).status).toBe(200);
  const decision = await s.agent<{ token?: string }>("GET", `/enrollments/${enrollmentId}`, undefined, { "x-enrollment-secret": secret });
  const d = { name, enrollmentId, secret, token: decision.body.token!, auth: { authorization: `Bearer ${decision.body.token!}` } };
  await setHealth(s, d, {});
  return d;
}

async function offered(d: EnrolledDevice) {
  const res = await work(s, d, 0);
  expect(res.status).toBe(200);
  return res.body.actions;
}

/** The device takes its one offered action and reports it through to `end` (or only to RUNNING). */
async function finish(d: EnrolledDevice, end: "DONE" | "FAILED" | "RUNNING" = "DONE", error?: string): Promise<string> {
  const actions = await offered(d);
  expect(actions, `${d.name} should have exactly one action`).toHaveLength(1);
  const id = actions[0]!.id;
  for (const state of end === "RUNNING" ? ["NEW", "RUNNING"] : ["NEW", "RUNNING", end]) {
    const res = await report(s, d, id, { state, ...(state === end && error ? { error } : {}) });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
  }
  return id;
}

async function create(wf: unknown): Promise<WorkflowObject> {
  const res = await s.api<WorkflowObject>("POST", "/workflows", wf);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

async function get(name: string): Promise<WorkflowObject> {
  const res = await s.api<WorkflowObject>("GET", `/workflows/${name}`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

const until = (name: string, check: (w: WorkflowObject) => boolean, timeoutMs = 5_000) =>
  eventually(async () => {
    const w = await get(name);
    return check(w) ? w : undefined;
  }, timeoutMs);

const phases = (w: WorkflowObject) => Object.fromEntries(Object.entries(w.status.statuses).map(([k, v]) => [k, v.phase]));

async function events(name: string) {
  const res = await s.api<{ items: { id: number; type: string; reason: string; message: string; actor: string }[] }>("GET", `/events?kind=Workflow&name=${name}&limit=1000`);
  return [...res.body.items].sort((a, b) => a.id - b.id);
}

const job = (devices: string[], extra: Record<string, unknown> = {}) => ({ jobTemplate: { kind: "noop", args: {}, targets: { devices } }, ...extra });

// ---------------------------------------------------------------------------------------

describe("the diamond (A; then B and C; D after both)", () => {
  it("runs in dependency order, each step's actions on its devices, and ends Succeeded with Complete", async () => {
    const [a, b, c, d] = await Promise.all(["dia-a", "dia-b", "dia-c", "dia-d"].map((n) => enroll(n)));
    const wf = await create({
      metadata: { name: "diamond" },
      spec: { steps: { A: job(["dia-a"]), B: job(["dia-b"], { dependencies: ["A"] }), C: job(["dia-c"], { dependencies: ["A"] }), D: job(["dia-d"], { dependencies: ["B", "C"] }) } },
    });
    expect(wf.status.phase).toBe("Running");
    expect(wf.status.run).toBe(1);
    expect(wf.status.startTime).not.toBeNull();
    expect(phases(wf)).toEqual({ A: "Running", B: "Pending", C: "Pending", D: "Pending" });
    expect(wf.status.statuses.A!.actions).toHaveLength(1);
    expect(wf.status.statuses.A!.attempts).toBe(1);
    expect(wf.status.statuses.B!.waitingFor).toEqual(["A"]);
    expect(wf.status.statuses.D!.waitingFor).toEqual(["B", "C"]);
    expect(wf.status.order).toEqual(["A", "B", "C", "D"]);
    expect(await offered(b!)).toHaveLength(0);
    expect(await offered(d!)).toHaveLength(0);

    const aId = await finish(a!);
    expect((await getAction(s, aId)).origin).toBe("workflow");
    expect((await getAction(s, aId)).createdBy).toBe("workflow:diamond");
    const mid = await until("diamond", (w) => w.status.statuses.B!.phase === "Running");
    expect(phases(mid)).toEqual({ A: "Succeeded", B: "Running", C: "Running", D: "Pending" });
    expect(await offered(b!)).toHaveLength(1);
    expect(await offered(c!)).toHaveLength(1);
    expect(await offered(d!)).toHaveLength(0);

    await finish(b!);
    const one = await until("diamond", (w) => w.status.statuses.B!.phase === "Succeeded");
    expect(one.status.statuses.D!.phase).toBe("Pending");
    expect(one.status.statuses.D!.waitingFor).toEqual(["C"]);
    expect(await offered(d!)).toHaveLength(0);

    await finish(c!);
    await until("diamond", (w) => w.status.statuses.D!.phase === "Running");
    await finish(d!);
    const done = await until("diamond", (w) => w.status.phase === "Succeeded");
    expect(done.status.completionTime).not.toBeNull();
    expect(done.status.conditions.find((x) => x.type === "Complete")).toMatchObject({ status: "True" });
    expect(done.status.conditions.find((x) => x.type === "Failed")).toMatchObject({ status: "False" });
    expect(Object.values(done.status.statuses).every((x) => x.complete)).toBe(true);

    const ev = await events("diamond");
    expect(ev[0]).toMatchObject({ type: "WorkflowCreated" });
    expect(ev[1]).toMatchObject({ type: "WorkflowStarted" });
    expect(ev.filter((e) => e.type === "WorkflowStepChanged")).toHaveLength(8); // 4 steps × (Running, Succeeded)
    expect(ev.at(-1)).toMatchObject({ type: "WorkflowEnded", reason: "Succeeded" });

    // Rerun: a new run from the saved spec; refused while it runs.
    const rerun = await s.api<WorkflowObject>("POST", "/workflows/diamond/rerun", {});
    expect(rerun.status, JSON.stringify(rerun.body)).toBe(200);
    expect(rerun.body.status.run).toBe(2);
    expect(phases(rerun.body)).toEqual({ A: "Running", B: "Pending", C: "Pending", D: "Pending" });
    expect(rerun.body.status.runs.map((r) => [r.run, r.phase])).toEqual([
      [2, "Running"],
      [1, "Succeeded"],
    ]);
    expectError(await s.api("POST", "/workflows/diamond/rerun", {}), 409, "CONFLICT", /only a draft or a finished workflow can be started/);
    // Cancel without deleting: Failed (Cancelled), A's pending action cancelled at once.
    const cancelled = await s.api<WorkflowObject>("POST", "/workflows/diamond/cancel", { reason: "enough" });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.status).toMatchObject({ phase: "Failed", reason: "Cancelled" });
    expect(phases(cancelled.body)).toEqual({ A: "Failed", B: "Omitted", C: "Omitted", D: "Omitted" });
    expect((await getAction(s, cancelled.body.status.statuses.A!.actions[0]!)).state).toBe("CANCELLED");
    // Counted as cancelled, not failed: the console says "0/1 targets, 1 cancelled" (it said "1 failed").
    expect(cancelled.body.status.statuses.A!.targets).toMatchObject({ total: 1, failed: 0, cancelled: 1 });
    expect(await offered(a!)).toHaveLength(0);
  });

  it("a step whose action waits for an operator says so in its target counts", async () => {
    await enroll("wait-1");
    const wf = await create({ metadata: { name: "waits-approval" }, spec: { steps: { A: { jobTemplate: { kind: "noop", targets: { devices: ["wait-1"] }, requireApproval: true } } } } });
    expect(wf.status.statuses.A).toMatchObject({ phase: "Running", targets: { total: 1, done: 0, failed: 0, waitingApproval: 1 } });
    // And in the list, what the running workflow waits for.
    const list = await s.api<{ items: { name: string; waitingApproval?: number }[] }>("GET", "/workflows?limit=200");
    expect(list.body.items.find((w) => w.name === "waits-approval")).toMatchObject({ waitingApproval: 1 });
  });
});

describe("failure", () => {
  it("failFast: the other running step finishes, nothing new starts, then Failed (StepFailed) with the pending rest Omitted", async () => {
    const [f1, f2, f3] = await Promise.all(["ff-1", "ff-2", "ff-3"].map((n) => enroll(n)));
    await create({ metadata: { name: "failfast" }, spec: { steps: { A: job(["ff-1"]), B: job(["ff-2"]), C: job(["ff-3"], { dependencies: ["B"] }) } } });
    await finish(f1!, "FAILED", "exit 3");
    const mid = await until("failfast", (w) => w.status.statuses.A!.phase === "Failed");
    expect(mid.status.phase).toBe("Running");
    expect(mid.status.statuses.A!.message).toContain("ff-1: FAILED: exit 3");
    expect(mid.status.statuses.B!.phase).toBe("Running");
    await finish(f2!);
    const end = await until("failfast", (w) => w.status.phase === "Failed");
    expect(phases(end)).toEqual({ A: "Failed", B: "Succeeded", C: "Omitted" });
    expect(end.status.reason).toBe("StepFailed");
    expect(end.status.conditions.find((x) => x.type === "Failed")).toMatchObject({ status: "True", reason: "StepFailed", message: "step A failed" });
    expect(await offered(f3!)).toHaveLength(0);
  });

  it("a job whose selector matches no Enrolled device fails at once (no target)", async () => {
    const wf = await create({ metadata: { name: "no-target" }, spec: { steps: { A: { jobTemplate: { kind: "noop", targets: { selector: { matchLabels: { nothing: "here" } } } } } } } });
    expect(wf.status.phase).toBe("Failed");
    expect(wf.status.statuses.A!.message).toContain("no target");
  });

  it("a job over 7 devices that do not exist: counted in the database, five failures named and the rest counted", async () => {
    const devices = Array.from({ length: 7 }, (_, i) => `ghost-${i + 1}`);
    await create({ metadata: { name: "ghosts" }, spec: { steps: { A: { jobTemplate: { kind: "noop", targets: { devices } } } } } });
    await expect.poll(async () => (await s.api<WorkflowObject>("GET", "/workflows/ghosts")).body.status.phase, { timeout: 5_000 }).toBe("Failed");
    const a = (await s.api<WorkflowObject>("GET", "/workflows/ghosts")).body.status.statuses.A!;
    expect(a.targets).toEqual({ total: 7, done: 0, failed: 7, skipped: 0, waitingApproval: 0, cancelled: 0 });
    expect(a.message).toMatch(/^failed: ghost-1: .*; ghost-5: [^;]*; and 2 more$/);
  });
});

describe("when", () => {
  it("failFast off: a failure handler (when A.Failed) runs after A failed; its opposite (when A.Succeeded) is Skipped; the run is Failed", async () => {
    const [w1, w2, w3] = await Promise.all(["wh-1", "wh-2", "wh-3"].map((n) => enroll(n)));
    await create({
      metadata: { name: "when-handler" },
      spec: {
        failFast: false,
        steps: {
          A: job(["wh-1"]),
          onFailure: job(["wh-2"], { dependencies: ["A"], when: "A.Failed" }),
          onSuccess: job(["wh-2"], { dependencies: ["A"], when: "A.Succeeded" }),
          after: job(["wh-3"], { dependencies: ["onSuccess"] }),
        },
      },
    });
    await finish(w1!, "FAILED", "exit 1");
    const mid = await until("when-handler", (w) => w.status.statuses.onFailure!.phase === "Running");
    expect(mid.status.statuses.onSuccess).toMatchObject({ phase: "Skipped", message: 'when "A.Succeeded" is false' });
    // A Skipped dependency satisfies its dependent like Succeeded (B-1): `after` runs too.
    expect(mid.status.statuses.after!.phase).toBe("Running");
    await finish(w2!);
    await finish(w3!);
    const end = await until("when-handler", (w) => w.status.phase !== "Running");
    expect(phases(end)).toEqual({ A: "Failed", onFailure: "Succeeded", onSuccess: "Skipped", after: "Succeeded" });
    expect(end.status.reason).toBe("StepFailed");
  });
});

describe("jobs go through the action engine", () => {
  it("requireApproval: the step's actions wait for an operator's approval before they are offered", async () => {
    const ap = await enroll("ap-1");
    const wf = await create({ metadata: { name: "approval" }, spec: { steps: { A: { jobTemplate: { kind: "noop", requireApproval: true, targets: { devices: ["ap-1"] } } } } } });
    const id = wf.status.statuses.A!.actions[0]!;
    expect((await getAction(s, id)).state).toBe("PENDING_APPROVE");
    expect(await offered(ap)).toHaveLength(0);
    expect((await s.api("POST", `/actions/${id}/approve`, {})).status).toBe(200);
    await finish(ap);
    await until("approval", (w) => w.status.phase === "Succeeded");
  });

  it("healthPolicy: a Degraded target runs the default step at once; a step for Online only waits until it is Online", async () => {
    const hp = await enroll("hp-1");
    await setHealth(s, hp, { resources: { cpu: "Degraded" } });
    const wf = await create({
      metadata: { name: "health" },
      spec: { steps: { A: { jobTemplate: { kind: "noop", targets: { devices: ["hp-1"] } } }, B: { dependencies: ["A"], jobTemplate: { kind: "noop", healthPolicy: "Online", targets: { devices: ["hp-1"] } } } } },
    });
    expect((await getAction(s, wf.status.statuses.A!.actions[0]!)).healthPolicy).toBe("Degraded");
    await finish(hp);
    const running = await until("health", (w) => (w.status.statuses.B?.actions.length ?? 0) > 0);
    const b = await getAction(s, running.status.statuses.B!.actions[0]!);
    expect(b).toMatchObject({ healthPolicy: "Online", waiting: { reason: "DeviceNotOnline" } });
    expect(await offered(hp)).toHaveLength(0);
    await setHealth(s, hp, {});
    await finish(hp);
    await until("health", (w) => w.status.phase === "Succeeded");
  });
});

describe("retries", () => {
  it("a failed attempt waits out its backoff (1s), then only the failed targets run again; the attempts are visible", async () => {
    const [r1, r2] = await Promise.all(["rt-1", "rt-2"].map((n) => enroll(n)));
    await create({ metadata: { name: "retry" }, spec: { steps: { A: job(["rt-1", "rt-2"], { retryStrategy: { limit: 2, backoff: { duration: "1s" } } }) } } });
    await finish(r2!);
    await finish(r1!, "FAILED", "flaky");
    const failedAt = Date.now();
    const retrying = await until("retry", (w) => w.status.statuses.A!.phase === "Retrying");
    expect(retrying.status.statuses.A!.attempts).toBe(1);
    expect(retrying.status.statuses.A!.maxAttempts).toBe(3);
    expect(retrying.status.statuses.A!.nextAttemptAt).not.toBeNull();
    expect(retrying.status.statuses.A!.message).toMatch(/attempt 1 of 3 failed \(rt-1: FAILED: flaky\)/);
    expect(await offered(r1!)).toHaveLength(0);
    // The timer starts the next attempt after the backoff, without a tick.
    const next = await eventually(async () => {
      const a = await offered(r1!);
      return a.length > 0 ? a : undefined;
    }, 5_000);
    expect(Date.now() - failedAt).toBeGreaterThanOrEqual(900);
    expect(next).toHaveLength(1);
    expect(await offered(r2!)).toHaveLength(0); // rt-2 succeeded: not run again
    const second = await get("retry");
    expect(second.status.statuses.A).toMatchObject({ phase: "Running", attempts: 2 });
    expect(second.status.statuses.A!.actions).toHaveLength(3);
    await finish(r1!);
    const done = await until("retry", (w) => w.status.phase === "Succeeded");
    expect(done.status.statuses.A!.attempts).toBe(2);
  });
});

describe("deadline", () => {
  it("activeDeadlineSeconds passed: Failed (DeadlineExceeded), the running action cancelled through its agent, pending steps Omitted", async () => {
    const dl = await enroll("dl-1");
    await create({ metadata: { name: "deadline" }, spec: { activeDeadlineSeconds: 1, steps: { A: job(["dl-1"]), B: job(["dl-1"], { dependencies: ["A"] }) } } });
    const id = await finish(dl, "RUNNING");
    await new Promise((r) => setTimeout(r, 1_100));
    expect((await s.api("POST", "/nudge", { kind: "Workflow", name: "deadline" })).status).toBe(200);
    const end = await until("deadline", (w) => w.status.phase === "Failed");
    expect(end.status.reason).toBe("DeadlineExceeded");
    expect(phases(end)).toEqual({ A: "Failed", B: "Omitted" });
    const action = await getAction(s, id);
    expect(action.cancelRequestedAt).not.toBeNull();
    const poll = await work(s, dl, 0);
    expect((poll.body as { cancel?: string[] }).cancel).toContain(id);
  });
});

describe("editing", () => {
  it("a started step cannot change or go (409, nothing changed); a pending step's edit and a new step apply", async () => {
    const [e1, e2, e3] = await Promise.all(["ed-1", "ed-2", "ed-3"].map((n) => enroll(n)));
    const spec = { steps: { A: job(["ed-1"]), B: job(["ed-2"], { dependencies: ["A"] }) } };
    await create({ metadata: { name: "edit" }, spec });
    const changedA = { steps: { ...spec.steps, A: { jobTemplate: { kind: "noop", args: { x: 1 }, targets: { devices: ["ed-1"] } } } } };
    expectError(await s.api("PUT", "/workflows/edit", { metadata: { name: "edit" }, spec: changedA }), 409, "CONFLICT", /step A has started/);
    expectError(await s.api("PUT", "/workflows/edit", { metadata: { name: "edit" }, spec: { steps: { B: job(["ed-2"]) } } }), 409, "CONFLICT", /step A has started.*cannot be removed/);
    const unchanged = await get("edit");
    expect(unchanged.metadata.generation).toBe(1);
    expect(unchanged.spec).toEqual({ failFast: true, steps: spec.steps });

    const edited = {
      steps: {
        A: job(["ed-1"]),
        B: { dependencies: ["A"], jobTemplate: { kind: "noop", args: { edited: true }, targets: { devices: ["ed-2"] } } },
        C: job(["ed-3"], { dependencies: ["A"] }),
      },
    };
    const put = await s.api<WorkflowObject>("PUT", "/workflows/edit", { metadata: { name: "edit" }, spec: edited });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect(put.body.metadata.generation).toBe(2);
    expect(phases(put.body)).toEqual({ A: "Running", B: "Pending", C: "Pending" });
    await finish(e1!);
    await until("edit", (w) => w.status.statuses.C!.phase === "Running");
    const [bAction] = await offered(e2!);
    expect(bAction!.args).toEqual({ edited: true });
    expect(await offered(e3!)).toHaveLength(1);
    expect((await events("edit")).some((e) => e.type === "WorkflowUpdated" && e.message.includes("added C") && e.message.includes("changed B"))).toBe(true);
  });
});

describe("references", () => {
  it("a step referencing another workflow starts a new run of it and Succeeds when that run does", async () => {
    const k = await enroll("ref-k");
    const p = await enroll("ref-p");
    await create({ metadata: { name: "child" }, spec: { steps: { work: job(["ref-k"]) } } });
    await finish(k);
    await until("child", (w) => w.status.phase === "Succeeded");

    const parent = await create({ metadata: { name: "parent" }, spec: { steps: { sub: { externalRef: { kind: "Workflow", name: "child" } }, after: job(["ref-p"], { dependencies: ["sub"] }) } } });
    expect(parent.status.statuses.sub).toMatchObject({ phase: "Running", workflow: { name: "child", run: 2 } });
    const child = await get("child");
    expect(child.status).toMatchObject({ phase: "Running", run: 2 });
    expect(child.status.runs[0]).toMatchObject({ run: 2, startedBy: "workflow:parent" });
    expect(await offered(p)).toHaveLength(0);

    await finish(k);
    const mid = await until("parent", (w) => w.status.statuses.after!.phase === "Running");
    expect(mid.status.statuses.sub!.phase).toBe("Succeeded");
    await finish(p);
    await until("parent", (w) => w.status.phase === "Succeeded");
  });

  it("delete cascades to the running actions, not to the referenced workflow, which keeps running", async () => {
    const c1 = await enroll("del-c");
    const p1 = await enroll("del-p");
    await create({ metadata: { name: "del-child" }, spec: { steps: { long: job(["del-c"]) } } });
    const parent = await create({ metadata: { name: "del-parent" }, spec: { steps: { sub: { externalRef: { kind: "Workflow", name: "del-child" } }, own: job(["del-p"]) } } });
    expect(parent.status.statuses.sub!.workflow).toEqual({ name: "del-child", run: 1 }); // already Running: followed, not restarted
    const own = await finish(p1, "RUNNING");
    const del = await s.api<{ deleted: string; actionsCancelled: number }>("DELETE", "/workflows/del-parent");
    expect(del.status, JSON.stringify(del.body)).toBe(200);
    expect(del.body).toEqual({ deleted: "del-parent", actionsCancelled: 1 });
    expect((await getAction(s, own)).cancelRequestedAt).not.toBeNull();
    expect((await s.api("GET", "/workflows/del-parent")).status).toBe(404);
    expect((await events("del-parent")).at(-1)).toMatchObject({ type: "WorkflowDeleted" });
    const child = await get("del-child");
    expect(child.status.phase).toBe("Running");
    await finish(c1);
    await until("del-child", (w) => w.status.phase === "Succeeded");
  });
});

describe("validation writes nothing", () => {
  const bad = async (wf: unknown, message: RegExp, name: string) => {
    expectError(await s.api("POST", "/workflows", wf), 400, "INVALID_REQUEST", message);
    expect((await s.api("GET", `/workflows/${name}`)).status).toBe(404);
  };

  it("refuses a cycle with its path, an unknown dependency, both job and reference, an unknown reference", async () => {
    await bad({ metadata: { name: "cyc" }, spec: { steps: { A: job(["x"], { dependencies: ["B"] }), B: job(["x"], { dependencies: ["A"] }) } } }, /dependency cycle: A->B->A/, "cyc");
    await bad({ metadata: { name: "unk" }, spec: { steps: { A: job(["x"], { dependencies: ["Z"] }) } } }, /dependency "Z" of step "A" is not defined/, "unk");
    await bad({ metadata: { name: "both" }, spec: { steps: { A: { ...job(["x"]), externalRef: { kind: "Workflow", name: "cyc" } } } } }, /spec\.steps\.A: a step is exactly one of jobTemplate or externalRef/, "both");
    await bad({ metadata: { name: "unkref" }, spec: { steps: { A: { externalRef: { kind: "Workflow", name: "nowhere" } } } } }, /workflow "nowhere" does not exist/, "unkref");
    await bad({ metadata: { name: "extra" }, spec: { steps: { A: job(["x"]) }, surprise: 1 } }, /spec/, "extra");
  });

  it("refuses bad names: a step name with a dot, a workflow name in capitals, the reserved name new", async () => {
    await bad({ metadata: { name: "dots" }, spec: { steps: { "a.b": job(["x"]) } } }, /step name "a\.b"/, "dots");
    expectError(await s.api("POST", "/workflows", { metadata: { name: "Caps" }, spec: { steps: { A: job(["x"]) } } }), 400, "INVALID_REQUEST", /metadata\.name: lowercase letters/);
    expectError(await s.api("POST", "/workflows", { metadata: { name: "new" }, spec: { steps: { A: job(["x"]) } } }), 400, "INVALID_REQUEST", /"new" is reserved/);
  });

  it("refuses a reference cycle across two saved workflows, naming the path", async () => {
    await enroll("rc-x");
    await create({ metadata: { name: "rc-one" }, spec: { steps: { A: job(["rc-x"]) } } });
    await create({ metadata: { name: "rc-two" }, spec: { steps: { B: { externalRef: { kind: "Workflow", name: "rc-one" } } } } });
    await s.api("POST", "/workflows/rc-one/cancel", {});
    const put = await s.api("PUT", "/workflows/rc-one", { metadata: { name: "rc-one" }, spec: { steps: { A: job(["rc-x"]), C: { externalRef: { kind: "Workflow", name: "rc-two" } } } } });
    expectError(put, 400, "INVALID_REQUEST", /reference cycle across workflows: rc-one->rc-two->rc-one/);
    expect((await get("rc-one")).metadata.generation).toBe(1);
    await bad({ metadata: { name: "rc-self" }, spec: { steps: { A: { externalRef: { kind: "Workflow", name: "rc-self" } } } } }, /rc-self/, "rc-self");
  });
});

describe("an operator skips or retries one target (issue 21)", () => {
  const targets = async (name: string, step: string) => {
    const res = await s.api<WorkflowTargetsView>("GET", `/workflows/${name}/steps/${step}/targets`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body;
  };
  const target = async (name: string, step: string, device: string) => (await targets(name, step)).items.find((t) => t.target === device)!;
  const move = (name: string, step: string, device: string, m: "skip" | "retry", body: unknown = { reason: "by hand" }, token?: string) =>
    s.api<WorkflowObject>("POST", `/workflows/${name}/steps/${step}/targets/${device}/${m}`, body, token);

  it("skip: a waiting target and a running one count as finished, their actions cancelled; the step Succeeds without them, the actor and reason recorded", async () => {
    const [k1, k2] = await Promise.all(["sk-1", "sk-2"].map((n) => enroll(n)));
    await enroll("sk-3"); // never polls: its action waits
    await create({ metadata: { name: "skips" }, spec: { steps: { A: job(["sk-1", "sk-2", "sk-3"]), B: job(["sk-1"], { dependencies: ["A"] }) } } });
    expect((await target("skips", "A", "sk-3")).moves).toEqual(["skip"]);
    await finish(k1!);
    const running = await finish(k2!, "RUNNING");

    const waiting = (await target("skips", "A", "sk-3")).actionId!;
    const afterOne = await move("skips", "A", "sk-3", "skip", { reason: "sk-3 is in the repair shop" });
    expect(afterOne.status, JSON.stringify(afterOne.body)).toBe(200);
    expect(afterOne.body.status.statuses.A).toMatchObject({ phase: "Running", targets: { total: 3, done: 1, failed: 0, skipped: 1 } });
    const waitingAction = await getAction(s, waiting);
    expect(waitingAction.state).toBe("CANCELLED");
    expect(waitingAction.cancelRequestedBy).toMatch(/admin/);
    expect(await target("skips", "A", "sk-3")).toMatchObject({ phase: "Skipped", skipReason: "sk-3 is in the repair shop", moves: [] });
    expect((await target("skips", "A", "sk-3")).skippedBy).toMatch(/admin/);

    // The running one: cancelled through its agent, and the step no longer waits for it.
    const afterTwo = await move("skips", "A", "sk-2", "skip", { reason: "taking too long" });
    expect(afterTwo.status, JSON.stringify(afterTwo.body)).toBe(200);
    expect(afterTwo.body.status.statuses.A).toMatchObject({ phase: "Succeeded", message: "1 of 3 target(s) DONE (2 skipped)" });
    expect(afterTwo.body.status.statuses.B!.phase).toBe("Running");
    expect((await getAction(s, running)).cancelRequestedBy).toMatch(/admin/);
    const poll = await work(s, k2!, 0);
    expect(poll.body.cancel ?? []).toContain(running);

    const skipped = (await events("skips")).filter((e) => e.type === "WorkflowTargetSkipped");
    expect(skipped.map((e) => [e.reason, e.message])).toEqual([
      ["Waiting", "A/sk-3 (Waiting → Skipped): sk-3 is in the repair shop"],
      ["Running", "A/sk-2 (Running → Skipped): taking too long"],
    ]);
    expect(skipped.every((e) => /admin/.test(e.actor))).toBe(true);
    // A finished target cannot be skipped: 409, nothing changed.
    expectError(await move("skips", "A", "sk-1", "skip"), 409, "CONFLICT", /sk-1 of step A is Done/);
    await finish(k1!);
    expect((await until("skips", (w) => w.status.phase !== "Running")).status.phase).toBe("Succeeded");
  });

  it("retry: a failed target gets a new action (a rerun, made as the step made the first); its Failed step runs again and the step omitted for it waits again", async () => {
    const [r1, r2, r3] = await Promise.all(["tr-1", "tr-2", "tr-3"].map((n) => enroll(n)));
    await create({ metadata: { name: "retarget" }, spec: { steps: { A: job(["tr-1"]), B: job(["tr-2"]), C: job(["tr-3"], { dependencies: ["A"] }) } } });
    const first = await finish(r1!, "FAILED", "disk full");
    const failed = await until("retarget", (w) => w.status.statuses.A!.phase === "Failed");
    expect(phases(failed)).toEqual({ A: "Failed", B: "Running", C: "Omitted" });
    expect(await target("retarget", "A", "tr-1")).toMatchObject({ phase: "Failed", actionId: first, actionState: "FAILED", error: "disk full", moves: ["skip", "retry"] });

    // Bad input first: each is refused and changes nothing.
    expectError(await move("retarget", "A", "tr-1", "retry", {}), 400, "INVALID_REQUEST");
    expectError(await move("retarget", "A", "tr-1", "retry", { reason: "   " }), 400, "INVALID_REQUEST");
    expectError(await move("retarget", "A", "nope", "retry"), 404, "NOT_FOUND");
    expectError(await move("retarget", "Z", "tr-1", "retry"), 404, "NOT_FOUND");
    expectError(await move("retarget", "B", "tr-2", "retry"), 409, "CONFLICT", /only a Failed target can be retried/);
    const { token } = await tokenFor(s, "viewer");
    expectError(await move("retarget", "A", "tr-1", "retry", { reason: "x" }, token), 403, "FORBIDDEN");
    expect(phases(await get("retarget"))).toEqual({ A: "Failed", B: "Running", C: "Omitted" });
    expect((await target("retarget", "A", "tr-1")).actionId).toBe(first);

    const res = await move("retarget", "A", "tr-1", "retry", { reason: "disk cleaned" });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(phases(res.body)).toEqual({ A: "Running", B: "Running", C: "Pending" });
    const again = await target("retarget", "A", "tr-1");
    expect(again).toMatchObject({ phase: "Waiting", actionState: "PENDING_SCHEDULE", error: null });
    const action = await getAction(s, again.actionId!);
    expect(action).toMatchObject({ origin: "workflow", createdBy: "workflow:retarget", kind: "noop", state: "PENDING_SCHEDULE" });
    expect((action as unknown as { rerunOf: string }).rerunOf).toBe(first);
    const retried = (await events("retarget")).find((e) => e.type === "WorkflowTargetRetried")!;
    expect(retried.message).toBe(`A/tr-1 (Failed → Waiting): new action ${again.actionId}, a rerun of ${first}: disk cleaned`);
    expect(retried.actor).toMatch(/admin/);

    expect(await finish(r1!)).toBe(again.actionId);
    await until("retarget", (w) => w.status.statuses.C!.phase === "Running");
    await finish(r3!);
    await finish(r2!);
    const end = await until("retarget", (w) => w.status.phase !== "Running");
    expect(phases(end)).toEqual({ A: "Succeeded", B: "Succeeded", C: "Succeeded" });
    expect(end.status.phase).toBe("Succeeded");
    // The run has ended: 409, nothing changes.
    expectError(await move("retarget", "A", "tr-1", "skip"), 409, "CONFLICT", /run has ended/);
  });

  it("skip of the one failed target of a Failed step: the step runs again and Succeeds at once; a retry in a Retrying step does not wait for the backoff", async () => {
    const [f1, f2, f3] = await Promise.all(["fs-1", "fs-2", "fs-3"].map((n) => enroll(n)));
    await create({
      metadata: { name: "reskip" },
      spec: { steps: { A: job(["fs-1", "fs-2"]), B: job(["fs-3"]), R: job(["fs-3"], { dependencies: ["B"], retryStrategy: { limit: 1, backoff: { duration: "1h" } } }) } },
    });
    await finish(f2!);
    await finish(f1!, "FAILED", "boom");
    await until("reskip", (w) => w.status.statuses.A!.phase === "Failed");
    const res = await move("reskip", "A", "fs-1", "skip", { reason: "known bad" });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.status.statuses.A).toMatchObject({ phase: "Succeeded", targets: { total: 2, done: 1, failed: 0, skipped: 1 } });
    expect((await events("reskip")).filter((e) => e.type === "WorkflowStepChanged" && e.message.startsWith("A: Failed → Running")).map((e) => e.actor)).toEqual([
      expect.stringMatching(/admin/),
    ]);

    await finish(f3!);
    await until("reskip", (w) => w.status.statuses.R!.phase === "Running");
    await finish(f3!, "FAILED", "once");
    await until("reskip", (w) => w.status.statuses.R!.phase === "Retrying");
    const retried = await move("reskip", "R", "fs-3", "retry", { reason: "no need to wait an hour" });
    expect(retried.status, JSON.stringify(retried.body)).toBe(200);
    expect(retried.body.status.statuses.R).toMatchObject({ phase: "Running", attempts: 1 });
    await finish(f3!);
    const end = await until("reskip", (w) => w.status.phase !== "Running");
    expect(phases(end)).toEqual({ A: "Succeeded", B: "Succeeded", R: "Succeeded" });
  });
});

describe("roles", () => {
  it("a viewer reads workflows but gets 403 for every write, and nothing changes", async () => {
    const { token } = await tokenFor(s, "viewer");
    expect((await s.api("GET", "/workflows", undefined, token)).status).toBe(200);
    expect((await s.api("GET", "/workflows/diamond", undefined, token)).status).toBe(200);
    expectError(await s.api("POST", "/workflows", { metadata: { name: "viewer-wf" }, spec: { steps: { A: job(["x"]) } } }, token), 403, "FORBIDDEN");
    expectError(await s.api("DELETE", "/workflows/diamond", undefined, token), 403, "FORBIDDEN");
    expectError(await s.api("POST", "/workflows/diamond/rerun", {}, token), 403, "FORBIDDEN");
    expect((await s.api("GET", "/workflows/viewer-wf")).status).toBe(404);
    const list = await s.api<{ items: { name: string }[] }>("GET", "/workflows");
    expect(list.body.items.map((w) => w.name)).toContain("diamond");
  });

  it("YAML bodies are accepted, and the workflow is in the OpenAPI document", async () => {
    await enroll("yaml-1");
    const yaml = "metadata: {name: from-yaml}\nspec:\n  steps:\n    A: {jobTemplate: {kind: noop, targets: {devices: [yaml-1]}}}\n";
    const res = await fetch(`${s.url}/api/v1/workflows`, { method: "POST", headers: { authorization: `Bearer ${s.adminToken}`, "content-type": "application/yaml" }, body: yaml });
    expect(res.status).toBe(201);
    const doc = await s.api<{ paths: Record<string, unknown> }>("GET", "/openapi.json");
    expect(Object.keys(doc.body.paths)).toEqual(expect.arrayContaining(["/workflows", "/workflows/{name}", "/workflows/{name}/rerun", "/workflows/{name}/cancel"]));
  });
});
