/**
 * The console's plan pages, their pure parts: which controls show (from lib/plan-status's
 * table), which command is drawn, a command's nodes as rows (controllers first, filtered and
 * paged for 1,000-node commands), and which queries plan and action events refresh.
 */
import { describe, expect, it } from "vitest";
import { PLAN_STATES, type PlanCommandNodes, type PlanCommandStatusView, type PlanCounts, type PlanNodeState, type PlanNodeView, type PlanView } from "@/lib/plan-status";
import { awaitsApproval, planActivity, planApprovalSubject, canCancel, canRetry, commandNotRun, commandTitle, countSegments, defaultCommand, focusNode, nodeRows, planTitle, visibleRows } from "@/components/plans/plan-view";
import { PLAN_ACTIONS_SETTLE_MS, settleDelayMs, targetId, targetsFor } from "@/components/live/invalidation";

const node = (name: string, state: PlanNodeState, role = "worker"): PlanNodeView => ({
  name,
  state,
  message: "",
  lastUpdatedTimestamp: "2025-01-01T00:00:00Z",
  role,
  platform: "linux-amd64",
  actionId: null,
  actionState: null,
  deviceSummary: "Online",
});

const counts = (over: Partial<PlanCounts> = {}): PlanCounts => ({
  SignalPending: 0,
  SignalSent: 0,
  SignalSkipped: 0,
  SignalCompleted: 0,
  SignalMissingNode: 0,
  SignalMissingPlatform: 0,
  SignalApplyFailed: 0,
  total: 0,
  ...over,
});

const command = (id: number, state: PlanCommandStatusView["state"], nodes: PlanCommandNodes = {}): PlanCommandStatusView => ({
  id,
  kind: "k0supdate",
  state,
  description: "",
  actionKind: "k0supdate",
  version: "v1.31.2+k0s.0",
  concurrent: 1,
  k0supdate: nodes,
  counts: counts(),
  startedAt: null,
  endedAt: null,
});

const plan = (state: PlanView["status"]["state"], commands: PlanCommandStatusView[], activeCommand: number | null): PlanView => ({
  apiVersion: "drover/v1",
  kind: "Plan",
  metadata: { id: "p1", name: null, createdBy: "user:admin", creationTimestamp: "2025-01-01T00:00:00Z", retryOf: null, retriedBy: [] },
  spec: {},
  status: {
    state,
    message: "",
    activeCommand,
    approval: { required: false, approvedBy: null, approvedAt: null, reason: null },
    deadline: null,
    deadlineAt: null,
    cancelRequestedBy: null,
    startedAt: null,
    endedAt: null,
    counts: counts(),
    commands,
  },
});

describe("plan controls follow the state table", () => {
  it("cancel only where the table has a move to Cancelled; retry after any error end, Cancelled included", () => {
    const cancellable = PLAN_STATES.filter(canCancel);
    expect(cancellable).toEqual(["NewPlan", "SchedulableWait"]);
    expect(PLAN_STATES.filter(canRetry)).toEqual([
      "IncompleteTargets",
      "InconsistentTargets",
      "Restricted",
      "MissingPlatform",
      "MissingSignalNode",
      "ApplyFailed",
      "Cancelled",
      "DeadlineExceeded",
    ]);
    expect(canRetry("Completed")).toBe(false);
  });

  it("approval is awaited while required, not given and the plan not ended", () => {
    const required = { required: true, approvedBy: null, approvedAt: null, reason: null };
    expect(awaitsApproval("NewPlan", required)).toBe(true);
    expect(awaitsApproval("Cancelled", required)).toBe(false);
    expect(awaitsApproval("NewPlan", { ...required, approvedBy: "user:admin", approvedAt: "2025-01-01T00:00:00Z", reason: null })).toBe(false);
    expect(awaitsApproval("NewPlan", { ...required, required: false })).toBe(false);
  });

  it("the approval dialog names the plan's commands and counts each device once", () => {
    const k0s = { kind: "k0supdate", actionKind: "k0supdate", version: "v1.30.0", k0supdate: { controllers: [node("c1", "SignalPending")], workers: [node("w1", "SignalPending"), node("w2", "SignalPending")] } };
    const exec = { kind: "action", actionKind: "exec", version: null, action: { workers: [node("w2", "SignalPending"), node("w3", "SignalPending")] } };
    const status = { commands: [k0s, exec] } as unknown as PlanView["status"];
    expect(planApprovalSubject({ status })).toEqual({ kind: "plan", work: "k0supdate v1.30.0, action exec", devices: 4 });
  });

  it("a command left unfinished by a plan that ended reads as not run", () => {
    expect(commandNotRun("ApplyFailed", "SchedulableWait")).toBe(true);
    expect(commandNotRun("ApplyFailed", "ApplyFailed")).toBe(false);
    expect(commandNotRun("ApplyFailed", "Completed")).toBe(false);
    expect(commandNotRun("SchedulableWait", "SchedulableWait")).toBe(false);
  });

  it("names a plan by metadata.name, else spec.id, else its id", () => {
    expect(planTitle({ name: "k0s", specId: "id123", id: "p1" })).toBe("k0s");
    expect(planTitle({ name: null, specId: "id123", id: "p1" })).toBe("id123");
    expect(planTitle({ name: null, specId: null, id: "p1" })).toBe("p1");
    expect(commandTitle({ kind: "action", actionKind: "exec", version: null })).toBe("action exec");
    expect(commandTitle({ kind: "airgapupdate", actionKind: "airgapupdate", version: "v1" })).toBe("airgapupdate v1");
  });
});

describe("what a plan is doing, in words (SchedulableWait read the same before approval and while running)", () => {
  type Approval = PlanView["status"]["approval"];
  const waiting: Approval = { required: true, approvedBy: null, approvedAt: null, reason: null };
  const approved: Approval = { required: true, approvedBy: "user:admin", approvedAt: "2026-11-28T00:00:00Z", reason: "CHG-1" };
  const rows: [what: string, state: PlanView["status"]["state"], approval: Approval, c: Partial<PlanCounts>, text: string][] = [
    ["before approval", "SchedulableWait", waiting, { SignalPending: 53, total: 53 }, "Waiting for approval"],
    ["approved, nodes running", "SchedulableWait", approved, { SignalPending: 50, SignalSent: 3, total: 53 }, "Running on 3 nodes"],
    ["approved, none can be signalled yet", "SchedulableWait", approved, { SignalPending: 1, SignalCompleted: 52, total: 53 }, "Waiting to signal 1 node"],
    ["just created", "NewPlan", approved, {}, "Discovering nodes"],
    ["ended: the state says it", "ApplyFailed", approved, { SignalApplyFailed: 1, total: 1 }, "ApplyFailed"],
    ["cancelled before approval: ended, not waiting", "Cancelled", waiting, { SignalPending: 2, total: 2 }, "Cancelled"],
  ];
  it.each(rows)("%s: %s", (_what, state, approval, c, text) => {
    expect(planActivity(state, approval, counts(c)).text).toBe(text);
  });
});

describe("which command the page draws", () => {
  it("the active one, else the one the plan ended on, else the last", () => {
    expect(defaultCommand(plan("SchedulableWait", [command(0, "Completed"), command(1, "SchedulableWait")], 1))).toBe(1);
    expect(defaultCommand(plan("ApplyFailed", [command(0, "Completed"), command(1, "ApplyFailed"), command(2, "SchedulableWait")], null))).toBe(1);
    expect(defaultCommand(plan("Completed", [command(0, "Completed"), command(1, "Completed")], null))).toBe(1);
    expect(defaultCommand(plan("NewPlan", [], null))).toBeNull();
  });
});

describe("a command's nodes as rows", () => {
  const c = command(0, "SchedulableWait", {
    workers: Array.from({ length: 1000 }, (_, i) => node(`w-${i}`, i < 600 ? "SignalCompleted" : i < 610 ? "SignalSent" : "SignalPending")),
    controllers: [node("c-0", "SignalCompleted", "controller"), node("c-1", "SignalCompleted", "controller")],
  });
  const rows = nodeRows(c);

  it("controllers first, then workers, whatever order the view lists the groups in", () => {
    expect(rows).toHaveLength(1002);
    expect(rows.slice(0, 3).map((r) => `${r.group}/${r.node.name}`)).toEqual(["controllers/c-0", "controllers/c-1", "workers/w-0"]);
  });

  it("filters by state and shows a page of them with how many matched", () => {
    const page = visibleRows(rows, [], 100);
    expect(page.rows).toHaveLength(100);
    expect(page.matched).toBe(1002);
    const sent = visibleRows(rows, ["SignalSent"], 100);
    expect(sent.matched).toBe(10);
    expect(sent.rows.map((r) => r.node.name)).toEqual(Array.from({ length: 10 }, (_, i) => `w-${600 + i}`));
  });

  it("the node diagram lights the chosen node, else the first still signalled, else the first failed, else the first pending", () => {
    expect(focusNode(rows, "workers/w-3")?.node.name).toBe("w-3");
    expect(focusNode(rows, "workers/gone")?.node.name).toBe("w-600");
    const notSent = rows.filter((r) => r.node.state !== "SignalSent");
    expect(focusNode(notSent, null)?.node.name).toBe("w-610");
    const failed = [...notSent, { group: "workers" as const, node: node("w-x", "SignalApplyFailed") }];
    expect(focusNode(failed, null)?.node.name).toBe("w-x");
    expect(focusNode(rows.filter((r) => r.node.state === "SignalCompleted"), null)?.node.name).toBe("c-0");
    expect(focusNode([], null)).toBeNull();
  });

  it("counts as bar segments in the node table's order", () => {
    expect(countSegments(counts({ SignalCompleted: 3, SignalSent: 1, total: 4 })).filter((s) => s.count > 0).map((s) => [s.key, s.count])).toEqual([
      ["SignalSent", 1],
      ["SignalCompleted", 3],
    ]);
  });
});

describe("live invalidation of plan pages", () => {
  it("a plan event refreshes the list and that plan's page; an action event refreshes open plan pages after the burst", () => {
    expect(targetsFor({ objectKind: "Plan", objectName: "p1", type: "PlanStateChanged" }).map(targetId)).toEqual(["events.list", "plans.list", "plan:p1"]);
    const action = targetsFor({ objectKind: "Action", objectName: "a1", type: "ActionStateChanged" });
    expect(action.map(targetId)).toContain("plans.actions");
    expect(action.filter((t) => settleDelayMs(t) > 0 && t.kind.startsWith("plans")).map((t) => [targetId(t), settleDelayMs(t)])).toEqual([["plans.actions", PLAN_ACTIONS_SETTLE_MS]]);
    expect(targetsFor({ objectKind: "Device", objectName: "d1" }).map(targetId)).not.toContain("plans.actions");
  });
});
