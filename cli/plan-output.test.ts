/**
 * Plans as text on hand-built PlanViews (the server's shape, lib/plan-status.ts): the list's
 * columns, describe's page, and how apply cuts one plan out of a file of several documents.
 */
import { describe, expect, it } from "vitest";
import YAML from "yaml";
import type { PlanCounts, PlanNodeView, PlanView } from "../lib/plan-status";
import { formatTable } from "./output";
import { approvalCell, describePlan, formatCommands, formatCounts, planColumns, planWideColumns, summaryOf } from "./plan-output";
import { documentText, parseObjects } from "./commands/apply";
import { normalizeStates } from "./commands/plans";

const now = new Date("2025-06-01T12:00:00.000Z");
const ago = (ms: number) => new Date(now.getTime() - ms).toISOString();
const S = 1000;
const M = 60 * S;

function counts(partial: Partial<PlanCounts>): PlanCounts {
  const c: PlanCounts = { SignalPending: 0, SignalSent: 0, SignalCompleted: 0, SignalMissingNode: 0, SignalMissingPlatform: 0, SignalApplyFailed: 0, SignalSkipped: 0, total: 0, ...partial };
  if (partial.total === undefined) c.total = c.SignalPending + c.SignalSent + c.SignalCompleted + c.SignalMissingNode + c.SignalMissingPlatform + c.SignalApplyFailed;
  return c;
}

function node(name: string, role: string, state: PlanNodeView["state"], message: string, actionId: string | null, updated: number): PlanNodeView {
  return { name, state, message, lastUpdatedTimestamp: ago(updated), role, platform: "linux-amd64", actionId, actionState: actionId ? "DONE" : null, deviceSummary: "Online" };
}

/** Two commands: an airgap update done on one worker, then k0s updating a controller and two workers. */
function plan(over: Partial<PlanView["status"]> = {}): PlanView {
  return {
    apiVersion: "autopilot.k0sproject.io/v1beta2",
    kind: "Plan",
    metadata: { id: "p-7f3a", name: null, createdBy: "admin", creationTimestamp: ago(5 * M), retryOf: null, retriedBy: [] },
    spec: { id: "id123", timestamp: "now", commands: [] },
    status: {
      state: "SchedulableWait",
      message: "command 1 (k0supdate): signalling workers",
      activeCommand: 1,
      approval: { required: false, approvedBy: null, approvedAt: null, reason: null },
      deadline: null,
      deadlineAt: null,
      cancelRequestedBy: null,
      startedAt: ago(5 * M),
      endedAt: null,
      counts: counts({ SignalCompleted: 2, SignalSent: 1, SignalPending: 1 }),
      commands: [
        {
          id: 0,
          kind: "airgapupdate",
          state: "Completed",
          description: "every node SignalCompleted",
          actionKind: "airgapupdate",
          version: "v1.30.1+k0s.0",
          concurrent: 1,
          airgapupdate: { workers: [node("worker-1", "worker", "SignalCompleted", "applied v1.30.1+k0s.0", "a-0001", 4 * M)] },
          counts: counts({ SignalCompleted: 1 }),
          startedAt: ago(5 * M),
          endedAt: ago(4 * M),
        },
        {
          id: 1,
          kind: "k0supdate",
          state: "SchedulableWait",
          description: "signalling workers, 1 at a time",
          actionKind: "k0supdate",
          version: "v1.30.1+k0s.0",
          concurrent: 1,
          // Workers first in the object: describe still lists controllers first.
          k0supdate: {
            workers: [node("worker-1", "worker", "SignalSent", "waiting for action a-0003 (RUNNING)", "a-0003", 30 * S), node("worker-2", "worker", "SignalPending", "waiting for worker-1\nto finish", null, 4 * M)],
            controllers: [node("ctrl-1", "controller", "SignalCompleted", "applied", "a-0002", 2 * M)],
          },
          counts: counts({ SignalCompleted: 1, SignalSent: 1, SignalPending: 1 }),
          startedAt: ago(4 * M),
          endedAt: null,
        },
      ],
      ...over,
    },
  };
}

describe("drover get plans", () => {
  it("ID NAME STATE COMMANDS PROGRESS APPROVAL CREATED-BY AGE; NAME is spec.id without metadata.name", () => {
    const a = summaryOf(plan());
    const b = { ...summaryOf(plan({ state: "NewPlan", approval: { required: true, approvedBy: null, approvedAt: null, reason: null }, counts: counts({ SignalPending: 2 }) })), id: "p-2", name: "autopilot" };
    expect(formatTable(planColumns, [a, b], now)).toBe(
      [
        "ID       NAME        STATE             COMMANDS                                           PROGRESS   APPROVAL   CREATED-BY   AGE",
        "p-7f3a   id123       SchedulableWait   airgapupdate:Completed,k0supdate:SchedulableWait   2/4        -          admin        5m",
        "p-2      autopilot   NewPlan           airgapupdate:Completed,k0supdate:SchedulableWait   0/2        Pending    admin        5m",
        "",
      ].join("\n"),
    );
  });

  it("wide adds who approved, the apiVersion, what it retries and the message", () => {
    const row = { ...summaryOf(plan({ approval: { required: true, approvedBy: "ops", approvedAt: ago(M), reason: null } })), retryOf: "p-1" };
    const lines = formatTable(planWideColumns, [row], now).split("\n");
    const columns = (line: string) => line.split(/ {3,}/);
    expect(columns(lines[0]!).slice(6)).toEqual(["CREATED-BY", "AGE", "APPROVED-BY", "API-VERSION", "RETRY-OF", "MESSAGE"]);
    expect(columns(lines[1]!).slice(5)).toEqual(["Approved", "admin", "5m", "ops", "autopilot.k0sproject.io/v1beta2", "p-1", "command 1 (k0supdate): signalling workers"]);
  });

  it("approval: - when not required, Pending while it waits, NotApproved when it ended first", () => {
    const required = { required: true, approvedBy: null, approvedAt: null, reason: null };
    expect(approvalCell({ state: "NewPlan", approval: { required: false, approvedBy: null, approvedAt: null, reason: null } })).toBe("-");
    expect(approvalCell({ state: "NewPlan", approval: required })).toBe("Pending");
    expect(approvalCell({ state: "Cancelled", approval: required })).toBe("NotApproved");
    expect(approvalCell({ state: "Completed", approval: { required: true, approvedBy: "admin", approvedAt: ago(M), reason: null } })).toBe("Approved");
    expect(formatCommands([])).toBe("<none>");
  });

  it("--state names are matched whatever their case", () => {
    expect(normalizeStates("newplan, SCHEDULABLEWAIT,Completed,,nosuch")).toBe("NewPlan,SchedulableWait,Completed,nosuch");
  });
});

describe("drover describe plan", () => {
  it("the plan's fields, then each command with its nodes, controllers before workers", () => {
    expect(describePlan(plan(), now)).toBe(
      [
        "Name:         id123",
        "ID:           p-7f3a",
        "API Version:  autopilot.k0sproject.io/v1beta2",
        "State:        SchedulableWait",
        "Message:      command 1 (k0supdate): signalling workers",
        "Approval:     not required",
        "Created:      2025-06-01T11:55:00Z (5m ago) by admin",
        "Started:      2025-06-01T11:55:00Z (5m ago)",
        "Nodes:        4 nodes: 1 SignalPending, 1 SignalSent, 2 SignalCompleted",
        "",
        "Command 0: airgapupdate v1.30.1+k0s.0 (Completed)",
        "  every node SignalCompleted",
        "  NODE       ROLE     STATE             ACTION   UPDATED   MESSAGE",
        "  worker-1   worker   SignalCompleted   a-0001   4m        applied v1.30.1+k0s.0",
        "",
        "Command 1: k0supdate v1.30.1+k0s.0 (SchedulableWait, active)",
        "  signalling workers, 1 at a time",
        "  NODE       ROLE         STATE             ACTION   UPDATED   MESSAGE",
        "  ctrl-1     controller   SignalCompleted   a-0002   2m        applied",
        "  worker-1   worker       SignalSent        a-0003   30s       waiting for action a-0003 (RUNNING)",
        "  worker-2   worker       SignalPending     -        4m        waiting for worker-1 to finish",
        "",
      ].join("\n"),
    );
  });

  it("an ended plan: approval, deadline, who cancelled, retries; an action command; a command without nodes", () => {
    const p = plan({
      state: "Cancelled",
      message: "cancelled by admin: wrong version",
      activeCommand: 1,
      approval: { required: true, approvedBy: null, approvedAt: null, reason: null },
      deadline: "30m",
      deadlineAt: ago(-25 * M),
      cancelRequestedBy: "admin",
      endedAt: ago(10 * S),
      counts: counts({}),
    });
    p.metadata = { ...p.metadata, name: "nightly", retryOf: "p-1", retriedBy: ["p-9"] };
    p.status.commands = [
      { ...p.status.commands[1]!, id: 0, kind: "action", actionKind: "exec", version: null, state: "Cancelled", description: "", action: {}, counts: counts({}) },
    ];
    const text = describePlan(p, now);
    expect(text).toContain("Name:          nightly\n");
    expect(text).toContain("Approval:      required, never given\n");
    expect(text).toContain("Ended:         2025-06-01T11:59:50Z (10s ago)\n");
    expect(text).toContain("Deadline:      30m, 2025-06-01T12:25:00Z (in 25m)\n");
    expect(text).toContain("Cancelled by:  admin\n");
    expect(text).toContain("Retry of:      p-1\nRetried by:    p-9\nNodes:         0 nodes\n");
    expect(text).toMatch(/\nCommand 0: action exec \(Cancelled\)\n {2}\(no nodes\)\n$/);

    const waiting = plan({ state: "NewPlan", approval: { required: true, approvedBy: null, approvedAt: null, reason: null } });
    expect(describePlan(waiting, now)).toContain("Approval:     waiting for an operator (drover plan approve p-7f3a)\n");
    const approved = plan({ approval: { required: true, approvedBy: "ops", approvedAt: ago(2 * M), reason: null } });
    expect(describePlan(approved, now)).toContain("Approval:     approved by ops at 2025-06-01T11:58:00Z (2m ago)\n");
    expect(formatCounts(counts({ SignalApplyFailed: 1 }))).toBe("1 node: 1 SignalApplyFailed");
  });
});

describe("drover apply: a plan's text", () => {
  const fleet = "kind: Fleet\nmetadata: {name: a}\n";
  const planText = "# the plan\napiVersion: autopilot.k0sproject.io/v1beta2\nkind: Plan\nspec:\n  commands: []\n";

  it("one document is sent as the file is", () => {
    const [only] = parseObjects(planText, "f");
    expect(only!.text).toBe(planText);
  });

  it("of several, each document's own text on the file's own lines", () => {
    const text = `${fleet}---\n${planText}--- {kind: Plan, spec: {}}\n---\n`;
    const objects = parseObjects(text, "f");
    expect(objects.map((o) => o.object.kind)).toEqual(["Fleet", "Plan", "Plan"]);
    const second = objects[1]!.text;
    expect(second).toBe(`\n\n---\n${planText}`);
    // The server reads it as one document; `commands` is on line 7 there as in the file.
    expect(YAML.parse(second)).toMatchObject({ kind: "Plan", spec: { commands: [] } });
    expect(second.split("\n").indexOf("  commands: []")).toBe(text.split("\n").indexOf("  commands: []"));
    expect(YAML.parseAllDocuments(objects[2]!.text)).toHaveLength(1);
    expect(documentText("a: 1\n", [0, 5, 5])).toBe("a: 1\n");
  });
});
