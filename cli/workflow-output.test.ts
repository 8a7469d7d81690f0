/**
 * Workflows as text on hand-built workflow objects (the server's shape, server/workflows/
 * workflows.ts): the list's columns, and describe's page with the steps in dependency order,
 * each dependency with its phase and whether the step still waits for it.
 */
import { describe, expect, it } from "vitest";
import { formatTable } from "./output";
import { describeWorkflow, formatDependencies, formatStepCounts, stepWork, summaryOfWorkflow, workflowColumns, workflowWideColumns, type WorkflowObject, type WorkflowStepView } from "./workflow-output";
import { normalizePhases } from "./commands/workflows";

const now = new Date("2025-06-01T12:00:00.000Z");
const ago = (ms: number) => new Date(now.getTime() - ms).toISOString();
const S = 1000;
const M = 60 * S;

function step(over: Partial<WorkflowStepView>): WorkflowStepView {
  return { phase: "Pending", complete: false, attempts: 0, maxAttempts: 1, actions: [], targets: { total: 0, done: 0, failed: 0 }, workflow: null, waitingFor: [], message: "", startedAt: null, finishedAt: null, nextAttemptAt: null, ...over };
}

/** The diamond (A; B and C after A; D after B and C), A running on one device. */
function diamond(statuses: Record<string, WorkflowStepView>, over: Partial<WorkflowObject["status"]> = {}): WorkflowObject {
  const job = (devices: string[]) => ({ kind: "noop" as const, args: {}, targets: { devices } });
  return {
    apiVersion: "drover/v1",
    kind: "Workflow",
    metadata: { name: "diamond", generation: 1, run: 1, creationTimestamp: ago(5 * M), createdBy: "user:admin", updatedBy: "user:admin" },
    spec: {
      failFast: true,
      steps: {
        // Not in topological order: describe follows status.order.
        D: { dependencies: ["B", "C"], jobTemplate: job(["dev-1"]) },
        B: { dependencies: ["A"], jobTemplate: { kind: "noop", args: {}, targets: { selector: { matchLabels: { site: "lab" } } } } },
        A: { jobTemplate: job(["dev-1"]) },
        C: { dependencies: ["A"], externalRef: { kind: "Workflow", name: "other" } },
      },
    },
    status: {
      phase: "Running",
      reason: null,
      message: "",
      run: 1,
      conditions: [],
      startTime: ago(4 * M),
      completionTime: null,
      cancelRequestedBy: null,
      order: ["A", "B", "C", "D"],
      statuses,
      runs: [{ run: 1, phase: "Running", reason: null, startedBy: "user:admin", startTime: ago(4 * M), completionTime: null }],
      ...over,
    },
  } as WorkflowObject;
}

const running = () =>
  diamond({
    A: step({ phase: "Running", attempts: 1, maxAttempts: 3, actions: ["act-1"], targets: { total: 1, done: 0, failed: 0 }, startedAt: ago(4 * M) }),
    B: step({ waitingFor: ["A"] }),
    C: step({ waitingFor: ["A"], targets: null, workflow: { name: "other", run: null } }),
    D: step({ waitingFor: ["B", "C"] }),
  });

describe("get workflows", () => {
  it("the row: phase, steps done (Succeeded or Skipped) of all, failed, run, started, age", () => {
    const failed = diamond(
      {
        A: step({ phase: "Succeeded", attempts: 1, complete: true }),
        B: step({ phase: "Skipped", complete: true }),
        C: step({ phase: "Failed", attempts: 2, complete: true, message: "target dev-1: FAILED" }),
        D: step({ phase: "Omitted", complete: true }),
      },
      { phase: "Failed", reason: "StepFailed", message: "step C failed", completionTime: ago(1 * M) },
    );
    const lines = formatTable(workflowColumns, [summaryOfWorkflow(failed)], now).trimEnd().split("\n");
    expect(lines[0]).toMatch(/^NAME +PHASE +STEPS +FAILED +RUN +STARTED +AGE$/);
    expect(lines[1]).toMatch(/^diamond +Failed \(StepFailed\) +2\/4 +1 +1 +4m +5m$/);
    const wide = formatTable(workflowWideColumns, [summaryOfWorkflow(failed)], now).trimEnd().split("\n");
    expect(wide[0]).toMatch(/ +COMPLETED +STEP-PHASES +CREATED-BY +GENERATION +MESSAGE$/);
    expect(wide[1]).toMatch(/ +60s +1 Succeeded, 1 Failed, 1 Skipped, 1 Omitted +user:admin +1 +step C failed$/);
  });

  it("a workflow not started yet, and a list row from an older server without createdAt", () => {
    const row = { ...summaryOfWorkflow(diamond({ A: step({}) }, { phase: "Pending", startTime: null, run: 0 })), createdAt: undefined as unknown as string };
    expect(formatTable(workflowColumns, [row], now).split("\n")[1]).toMatch(/^diamond +Pending +0\/1 +0 +0 +- +-$/);
    expect(formatStepCounts({})).toBe("");
    expect(normalizePhases("running, FAILED,nope")).toBe("Running,Failed,nope");
  });
});

describe("describe workflow", () => {
  it("the run, then each step in topological order: phase, what it runs, each dependency with its phase and whether it is waited for, attempts, actions", () => {
    const text = describeWorkflow(running(), now);
    expect(text).toMatch(/^Name: +diamond\nPhase: +Running\nRun: +1\nStarted: +2025-06-01T11:56:00Z \(4m ago\)\n/);
    expect(text).toMatch(/^Steps: +4: 3 Pending, 1 Running$/m);
    expect(text).toMatch(/^Fail fast: +yes$/m);
    const order = ["A", "B", "C", "D"].map((n) => text.indexOf(`\n${n}: `));
    expect(order).toEqual([...order].sort((a, b) => a - b));
    expect(order.every((i) => i > 0)).toBe(true);
    expect(text).toContain(
      [
        "A: Running",
        "  Runs:          job noop on dev-1",
        "  Dependencies:  -",
        "  Attempts:      1 of 3",
        "  Targets:       0 of 1 done",
        "  Started:       2025-06-01T11:56:00Z (4m ago)",
        "  Actions:       act-1",
      ].join("\n"),
    );
    expect(text).toContain(["B: Pending", "  Runs:          job noop on selector site=lab", "  Dependencies:  A (Running, waiting)", "  Attempts:      0 of 1", "  Actions:       -"].join("\n"));
    expect(text).toContain(["C: Pending", "  Runs:          workflow other", "  Dependencies:  A (Running, waiting)"].join("\n"));
    expect(text).toMatch(/^ {2}Dependencies: +B \(Pending, waiting\), C \(Pending, waiting\)$/m);
    expect(text).toMatch(/^Runs \(newest first\):\n {2}RUN +PHASE +STARTED-BY +STARTED +ENDED\n {2}1 +Running +user:admin +4m +-$/m);
  });

  it("a failed run: reason, message, each step's message and every attempt's actions; a dependency ended is not waited for", () => {
    const wf = diamond(
      {
        A: step({ phase: "Succeeded", attempts: 1, complete: true, actions: ["a1"], targets: { total: 1, done: 1, failed: 0 } }),
        B: step({ phase: "Failed", attempts: 2, maxAttempts: 2, complete: true, actions: ["b1", "b2"], targets: { total: 1, done: 0, failed: 1 }, message: "target dev-9: action FAILED:\nexit 1" }),
        C: step({ phase: "Succeeded", attempts: 1, complete: true, targets: null, workflow: { name: "other", run: 4 } }),
        D: step({ phase: "Omitted", complete: true, message: "dependency B Failed" }),
      },
      { phase: "Failed", reason: "StepFailed", message: "step B failed", completionTime: ago(1 * M) },
    );
    const text = describeWorkflow(wf, now);
    expect(text).toMatch(/^Phase: +Failed\nReason: +StepFailed\nMessage: +step B failed\n/m);
    expect(text).toMatch(/^Completed: +2025-06-01T11:59:00Z \(60s ago\)$/m);
    expect(text).toMatch(/^ {2}Targets: +0 of 1 done, 1 failed$/m);
    expect(text).toMatch(/^ {2}Actions: +b1, b2$/m);
    expect(text).toMatch(/^ {2}Message: +target dev-9: action FAILED: exit 1$/m);
    expect(text).toMatch(/^ {2}Following: +workflow\/other run 4$/m);
    expect(text).toMatch(/^ {2}Dependencies: +B \(Failed\), C \(Succeeded\)$/m);
  });

  it("dependencies and targets in a line", () => {
    expect(formatDependencies(["A", "B"], ["B"], { A: { phase: "Succeeded" }, B: { phase: "Retrying" } })).toBe("A (Succeeded), B (Retrying, waiting)");
    expect(stepWork({ jobTemplate: { kind: "exec", args: {}, targets: { devices: ["a", "b", "c", "d", "e", "f", "g"] }, requireApproval: true } })).toBe("job exec on a, b, c, d, e and 2 more (approval required)");
    expect(stepWork({ jobTemplate: { kind: "noop", args: {}, targets: { selector: { matchExpressions: [{ key: "env", operator: "NotIn", values: ["prod"] }, { key: "gpu", operator: "Exists" }] } } } })).toBe(
      "job noop on selector env notin (prod),gpu",
    );
  });
});
