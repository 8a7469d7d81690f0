/** The run view's graph model (components/workflows/run-graph.ts): layout from the spec, colours and text from the status. */
import { describe, expect, it } from "vitest";
import type { WorkflowStepView } from "@/server/workflows/workflows";
import { layoutKey, layoutRunGraph, runGraph, stepPhaseStyle, stepPhaseTone, stepProgress, stepsDone, STEP_NODE_WIDTH } from "@/components/workflows/run-graph";
import { STEP_PHASES } from "@/lib/workflow-status";

const job = (dependencies?: string[]) => ({ ...(dependencies ? { dependencies } : {}), jobTemplate: { kind: "noop" as const, args: {}, targets: { devices: ["d1"] } } });
const diamond = { steps: { A: job(), B: job(["A"]), C: job(["A"]), D: job(["B", "C"]) } };

function view(over: Partial<WorkflowStepView>): WorkflowStepView {
  return { phase: "Pending", complete: false, attempts: 0, maxAttempts: 1, actions: [], targets: null, workflow: null, waitingFor: [], message: "", startedAt: null, finishedAt: null, nextAttemptAt: null, ...over };
}

describe("run graph layout", () => {
  it("lays the diamond out left to right: A, then B and C one above the other, then D", () => {
    const layout = layoutRunGraph(diamond);
    const p = (s: string) => layout.positions.get(s)!;
    expect(p("B").x).toBeGreaterThanOrEqual(p("A").x + STEP_NODE_WIDTH);
    expect(p("B").x).toBe(p("C").x);
    expect(p("B").y).not.toBe(p("C").y);
    expect(p("D").x).toBeGreaterThanOrEqual(p("B").x + STEP_NODE_WIDTH);
    expect(layout.edges.map((e) => e.id).sort()).toEqual(["A->B", "A->C", "B->D", "C->D"]);
    expect(layout.width).toBeGreaterThan(3 * STEP_NODE_WIDTH);
  });

  it("keys the layout on steps and dependencies only", () => {
    const other = { steps: { ...diamond.steps, A: { ...job(), jobTemplate: { kind: "noop" as const, args: { x: 1 }, targets: { devices: ["d2"] } } } } };
    expect(layoutKey(other)).toBe(layoutKey(diamond));
    expect(layoutKey({ steps: { ...diamond.steps, D: job(["B"]) } })).not.toBe(layoutKey(diamond));
  });

  it("lays out 2,000 steps in a chain of fans quickly enough for the page", () => {
    const steps: Record<string, ReturnType<typeof job>> = { root: job() };
    for (let i = 0; i < 2000; i++) steps[`s${i}`] = job([i < 50 ? "root" : `s${i - 50}`]);
    const t = performance.now();
    const layout = layoutRunGraph({ steps });
    expect(layout.positions.size).toBe(2001);
    expect(performance.now() - t).toBeLessThan(10_000);
  });
});

describe("run graph nodes", () => {
  it("colours every step by its phase and keeps the layout's positions", () => {
    const layout = layoutRunGraph(diamond);
    const statuses = {
      A: view({ phase: "Succeeded", attempts: 1, targets: { total: 2, done: 2, failed: 0 } }),
      B: view({ phase: "Running", attempts: 1, targets: { total: 4, done: 1, failed: 0 } }),
      C: view({ phase: "Retrying", attempts: 1, maxAttempts: 3, targets: { total: 2, done: 1, failed: 1 } }),
      D: view({ phase: "Pending", waitingFor: ["B", "C"] }),
    };
    const { nodes, edges } = runGraph(diamond, layout, statuses, "C");
    const byId = new Map(nodes.map((n) => [n.id, n]));
    expect(nodes).toHaveLength(4);
    expect(byId.get("A")!.data).toMatchObject({ phase: "Succeeded", progress: "2/2 targets", kind: "noop", selected: false });
    expect(byId.get("B")!.data.progress).toBe("1/4 targets");
    expect(byId.get("C")!.data).toMatchObject({ phase: "Retrying", progress: "1/2 targets, 1 failed · attempt 1 of 3", selected: true });
    expect(byId.get("D")!.data.progress).toBe("waits for B, C");
    expect(byId.get("D")!.position).toEqual(layout.positions.get("D"));
    // Edges out of a Succeeded step are drawn satisfied (green), the others grey.
    expect(edges.find((e) => e.id === "A->B")!.style!.stroke).toBe("#10b981");
    expect(edges.find((e) => e.id === "B->D")!.style!.stroke).toBe("#cbd5e1");
  });

  it("a step without a status yet is Pending", () => {
    const { nodes } = runGraph(diamond, layoutRunGraph(diamond), {}, null);
    expect(nodes.every((n) => n.data.phase === "Pending" && n.data.progress === "")).toBe(true);
  });

  it("has a colour for every phase: Pending grey, Running blue, Retrying amber, Succeeded green, Failed red, Skipped and Omitted muted", () => {
    for (const p of STEP_PHASES) expect(stepPhaseStyle[p]).toBeDefined();
    expect(stepPhaseTone).toMatchObject({ Pending: "gray", Running: "blue", Retrying: "amber", Succeeded: "green", Failed: "red" });
    expect(stepPhaseStyle.Skipped.muted && stepPhaseStyle.Omitted.muted).toBe(true);
    expect(STEP_PHASES.filter((p) => stepPhaseStyle[p].muted)).toEqual(["Skipped", "Omitted"]);
  });

  it("progress text: a reference names the run it follows; attempts show only when a retry is possible", () => {
    expect(stepProgress(view({ phase: "Running", attempts: 1, workflow: { name: "backup", run: 3 } }))).toBe("backup run 3");
    expect(stepProgress(view({ phase: "Failed", attempts: 2, maxAttempts: 2, targets: { total: 1, done: 0, failed: 1 } }))).toBe("0/1 targets, 1 failed · attempt 2 of 2");
    expect(stepProgress(view({ phase: "Succeeded", attempts: 1, maxAttempts: 1, targets: { total: 3, done: 2, failed: 0, skipped: 1 } }))).toBe("2/3 targets, 1 skipped");
    expect(stepProgress(view({ phase: "Omitted" }))).toBe("");
    // Why it waits, in words: a step whose action waits for an operator, a run cancelled under a step.
    expect(stepProgress(view({ phase: "Running", attempts: 1, maxAttempts: 1, targets: { total: 1, done: 0, failed: 0, waitingApproval: 1 } }))).toBe("0/1 targets, 1 waiting for approval");
    expect(stepProgress(view({ phase: "Failed", attempts: 1, maxAttempts: 1, targets: { total: 7, done: 0, failed: 0, cancelled: 7 } }))).toBe("0/7 targets, 7 cancelled");
    expect(stepsDone({ Succeeded: 2, Skipped: 1, Running: 1 })).toBe(3);
  });
});

describe("live updates for workflows", () => {
  it("a Workflow event refreshes the list and that workflow's page; an Action event the open workflow pages, after settling", async () => {
    const { settleDelayMs, targetId, targetsFor } = await import("@/components/live/invalidation");
    expect(targetsFor({ objectKind: "Workflow", objectName: "nightly", type: "WorkflowStepChanged" }).map(targetId)).toEqual(["events.list", "workflows.list", "workflow:nightly"]);
    const action = targetsFor({ objectKind: "Action", objectName: "act-1", type: "ActionStateChanged" });
    expect(action.map(targetId)).toContain("workflows.actions");
    expect(action.filter((t) => settleDelayMs(t) > 0).map(targetId)).toEqual(["plans.actions", "workflows.actions", "requests"]);
  });
});
