/**
 * The workflow contract and engine, pure: validation (one row per rule, messages naming the
 * culprit), `when`, the topological order, reference cycles, and the scheduling decision:
 * Argo's diamond, decision B-1, failFast on and off, Skipped and Omitted, Argo's dag-depends
 * cases written as `when`, retries with backoff and maxDuration, the deadline, cancel.
 */
import { describe, expect, it } from "vitest";
import {
  evaluateWhen,
  findCycle,
  findReferenceCycle,
  parseWhen,
  topologicalOrder,
  validateWorkflowGraph,
  WorkflowInput,
  type WorkflowStep,
} from "./workflow-spec";
import { backoffMs, decideWorkflow, reopenStep, waitingFor, type EngineStep, type EngineWorkflow } from "./workflow";
import { stateNames, nextStates, type StateMachine } from "./state-machine";
import { stepMachine, targetMachine, targetMoves, targetPhase, workflowMachine, type StepPhase, type TargetPhase, type WorkflowPhase } from "./workflow-status";

const job = (extra: Partial<WorkflowStep> = {}): WorkflowStep => ({ jobTemplate: { kind: "noop", args: {}, targets: { devices: ["d1"] } }, ...extra });

describe("validation", () => {
  const rows: [string, Record<string, Partial<WorkflowStep>>, string][] = [
    ["unknown dependency", { a: { dependencies: ["nope"] } }, 'dependency "nope" of step "a" is not defined'],
    ["self-loop", { a: { dependencies: ["a"] } }, "dependency cycle: a->a"],
    ["cycle with its path", { a: { dependencies: ["c"] }, b: { dependencies: ["a"] }, c: { dependencies: ["b"] } }, "dependency cycle: a->c->b->a"],
    ["a dependency twice", { a: {}, b: { dependencies: ["a", "a"] } }, 'step "b" lists dependency "a" twice'],
    ["when that does not parse", { a: {}, b: { dependencies: ["a"], when: "a.Succeeded &&" } }, 'when of step "b": unexpected end of expression'],
    ["when with an unknown result", { a: {}, b: { dependencies: ["a"], when: "a.Done" } }, 'when of step "b": "a.Done": a step\'s result is one of Succeeded, Failed, Skipped, Omitted'],
    ["when naming a step that is not a dependency", { a: {}, c: {}, b: { dependencies: ["a"], when: "c.Failed" } }, 'when of step "b" names "c", which is not one of its dependencies'],
  ];
  it.each(rows)("%s", (_, steps, message) => {
    expect(validateWorkflowGraph(steps).map((p) => p.message)).toContain(message);
  });

  it("a valid diamond has no problem; a 10,000-step chain is checked without overflowing the stack", () => {
    expect(validateWorkflowGraph({ a: {}, b: { dependencies: ["a"] }, c: { dependencies: ["a"] }, d: { dependencies: ["b", "c"], when: "b && c.Succeeded" } })).toEqual([]);
    const chain = Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`s${i}`, { dependencies: i ? [`s${i - 1}`] : [] }]));
    expect(findCycle(chain)).toBeNull();
    chain.s0 = { dependencies: ["s9999"] };
    expect(findCycle(chain)?.length).toBe(10_001);
  });

  it("the schema: a step is exactly one of jobTemplate or externalRef; names; targets; unknown fields", () => {
    const wf = (steps: Record<string, unknown>) => WorkflowInput.safeParse({ metadata: { name: "w" }, spec: { steps } });
    const messages = (r: ReturnType<typeof wf>) => (r.success ? [] : r.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`));
    expect(wf({ a: job() }).success).toBe(true);
    expect(messages(wf({ a: {} }))).toContain("spec.steps.a: a step is exactly one of jobTemplate or externalRef");
    expect(messages(wf({ a: { ...job(), externalRef: { kind: "Workflow", name: "x" } } }))).toContain("spec.steps.a: a step is exactly one of jobTemplate or externalRef");
    expect(messages(wf({ "1a": job() })).join()).toContain('step name "1a"');
    expect(messages(wf({ a: { jobTemplate: { kind: "noop", targets: {} } } })).join()).toContain("give exactly one of devices or selector");
    expect(messages(wf({ a: { ...job(), bogus: 1 } })).join()).toContain('Unrecognized key: "bogus"');
    expect(messages(wf({}))).toContain("spec.steps: at least one step");
    // failFast defaults to true; the apiVersion and kind may be left out.
    const ok = WorkflowInput.parse({ metadata: { name: "w" }, spec: { steps: { a: job() } } });
    expect(ok.spec.failFast).toBe(true);
    expect(ok.apiVersion).toBe("drover/v1");
  });

  it("reference cycles across workflows, with the path", () => {
    const refs = new Map([
      ["a", ["b"]],
      ["b", ["c"]],
      ["c", ["a"]],
      ["d", ["b"]],
    ]);
    expect(findReferenceCycle("a", refs)).toEqual(["a", "b", "c", "a"]);
    expect(findReferenceCycle("d", refs)).toBeNull();
    expect(findReferenceCycle("self", new Map([["self", ["self"]]]))).toEqual(["self", "self"]);
  });

  it("topological order: dependencies first, ties by name", () => {
    expect(topologicalOrder({ d: { dependencies: ["b", "c"] }, c: { dependencies: ["a"] }, b: { dependencies: ["a"] }, a: {} })).toEqual(["a", "b", "c", "d"]);
  });
});

describe("when", () => {
  const results = { p: "Succeeded", f: "Failed", s: "Skipped" } as const;
  it.each([
    ["p", true],
    ["s", true],
    ["f", false],
    ["f.Failed", true],
    ["p && (f.Succeeded || f.Failed)", true],
    ["p && f", false],
    ["!f && p", true],
    ["!p || f", false],
    ["!(f.Succeeded) && s.Skipped", true],
    ["true", true],
    ["false || p.Omitted", false],
  ] as const)("%s → %s", (text, expected) => {
    expect(evaluateWhen(parseWhen(text), results)).toBe(expected);
  });
});

describe("the phase tables", () => {
  it("every phase is reachable, and only the ended ones (and a finished workflow, until rerun) have no way forward", () => {
    for (const m of [stepMachine, workflowMachine, targetMachine] as StateMachine<string>[]) {
      const seen = new Set<string>([m.initial]);
      const todo: string[] = [m.initial];
      while (todo.length) {
        for (const n of nextStates(m, todo.pop()!)) {
          if (!seen.has(n)) {
            seen.add(n);
            todo.push(n);
          }
        }
      }
      expect([...seen].sort()).toEqual(stateNames(m).sort());
    }
    // Ended: the engine never moves it again; an operator may reopen one (issue 21), nothing else.
    const serverMoves = (s: string) => stepMachine.transitions.filter((t) => t.from === s && t.by !== "operator");
    for (const s of stateNames(stepMachine)) expect(serverMoves(s).length === 0, s).toBe(stepMachine.states[s].terminal === true);
    expect(stepMachine.transitions.filter((t) => t.by === "operator").map((t) => `${t.from}->${t.to}`)).toEqual(["Failed->Running", "Retrying->Running", "Omitted->Pending"]);
  });
});

describe("targets (issue 21)", () => {
  const phaseRows: [string, Parameters<typeof targetPhase>[0], TargetPhase][] = [
    ["waiting for approval", { skipped: false, error: null, actionState: "PENDING_APPROVE" }, "Waiting"],
    ["waiting to be offered", { skipped: false, error: null, actionState: "PENDING_SCHEDULE" }, "Waiting"],
    ["taken by its agent", { skipped: false, error: null, actionState: "NEW" }, "Running"],
    ["running", { skipped: false, error: null, actionState: "RUNNING" }, "Running"],
    ["DONE", { skipped: false, error: null, actionState: "DONE" }, "Done"],
    ["FAILED", { skipped: false, error: null, actionState: "FAILED" }, "Failed"],
    ["CANCELLED (or timed out)", { skipped: false, error: null, actionState: "CANCELLED" }, "Failed"],
    ["LOST", { skipped: false, error: null, actionState: "LOST" }, "Failed"],
    ["no action: no such device", { skipped: false, error: "no such device", actionState: null }, "Failed"],
    ["its action gone", { skipped: false, error: null, actionState: null }, "Failed"],
    ["skipped, whatever its action", { skipped: true, error: null, actionState: "RUNNING" }, "Skipped"],
  ];
  it.each(phaseRows)("a target %s is %s", (_why, input, phase) => expect(targetPhase(input)).toBe(phase));

  const moveRows: [TargetPhase, StepPhase, WorkflowPhase, string[]][] = [
    ["Waiting", "Running", "Running", ["skip"]],
    ["Running", "Running", "Running", ["skip"]],
    ["Failed", "Running", "Running", ["skip", "retry"]],
    ["Failed", "Retrying", "Running", ["skip", "retry"]],
    ["Failed", "Failed", "Running", ["skip", "retry"]],
    ["Done", "Running", "Running", []],
    ["Skipped", "Running", "Running", []],
    ["Failed", "Succeeded", "Running", []],
    ["Failed", "Failed", "Failed", []],
    ["Waiting", "Running", "Succeeded", []],
  ];
  it.each(moveRows)("a %s target of a %s step in a %s run: %j", (target, step, run, moves) => expect(targetMoves(target, step, run)).toEqual(moves));

  it("a skipped target counts as finished, not failed: the step Succeeds when the others are DONE, and waits while one runs", () => {
    let d = decideWorkflow(wf(), steps({ a: {} }, { a: running(1, { total: 3, done: 2, skipped: 1, failed: 0, failures: [] }) }), T0);
    expect(d.steps).toEqual([{ name: "a", phase: "Succeeded", message: "2 of 3 target(s) DONE (1 skipped)", nextAttemptAt: null }]);
    d = decideWorkflow(wf(), steps({ a: {} }, { a: running(1, { total: 3, done: 1, skipped: 1, failed: 0, failures: [] }) }), T0);
    expect(d.steps).toEqual([]);
  });

  const spec = { a: {}, b: { dependencies: ["a"] }, c: { dependencies: ["b"] }, h: { dependencies: ["a"], when: "a.Failed" }, x: {} };
  const engine = (p: Record<string, StepPhase>) => steps(spec, Object.fromEntries(Object.entries(p).map(([k, v]) => [k, { phase: v }])));
  it("reopenStep: a Failed step Running again, and the steps omitted for it (transitively) Pending again", () => {
    const r = reopenStep(engine({ a: "Failed", b: "Omitted", c: "Omitted", h: "Pending", x: "Running" }), "a", "reopened");
    expect(r.blocking).toEqual([]);
    expect(r.steps.map((c) => [c.name, c.phase])).toEqual([["a", "Running"], ["b", "Pending"], ["c", "Pending"]]);
  });
  it("reopenStep: a Retrying step Running again, its dependents untouched", () => {
    expect(reopenStep(engine({ a: "Retrying", b: "Pending", c: "Pending", h: "Pending" }), "a", "r").steps.map((c) => c.name)).toEqual(["a"]);
  });
  it("reopenStep: refused when a dependent already went on from the failure (its when evaluated), naming it; nothing moves", () => {
    expect(reopenStep(engine({ a: "Failed", b: "Omitted", h: "Running" }), "a", "r")).toEqual({ steps: [], blocking: ["h (Running)"] });
  });
});

// ---------------------------------------------------------------------------------------
// Scheduling

const T0 = new Date("2026-11-23T00:00:00Z");
const at = (seconds: number) => new Date(T0.getTime() + seconds * 1000);

function wf(extra: Partial<EngineWorkflow> = {}): EngineWorkflow {
  return { phase: "Running", startedAt: T0, failFast: true, activeDeadlineSeconds: null, cancel: null, ...extra };
}

function steps(spec: Record<string, Partial<WorkflowStep>>, state: Record<string, Partial<EngineStep>> = {}): EngineStep[] {
  return Object.entries(spec).map(([name, s]) => ({
    name,
    spec: { ...job(), ...s },
    phase: "Pending" as StepPhase,
    message: "",
    attempts: 0,
    firstStartedAt: null,
    nextAttemptAt: null,
    outcome: null,
    ...state[name],
  }));
}

const running = (attempts = 1, outcome: EngineStep["outcome"] = { total: 1, done: 0, skipped: 0, failed: 0, failures: [] }): Partial<EngineStep> => ({ phase: "Running", attempts, firstStartedAt: T0, outcome });
const done = (n = 1): EngineStep["outcome"] => ({ total: n, done: n, skipped: 0, failed: 0, failures: [] });
const fail = (why = "d1: FAILED: exit 1"): EngineStep["outcome"] => ({ total: 1, done: 0, skipped: 0, failed: 1, failures: [why] });
const phases = (d: ReturnType<typeof decideWorkflow>) => Object.fromEntries(d.steps.map((s) => [s.name, s.phase]));

const DIAMOND = { a: {}, b: { dependencies: ["a"] }, c: { dependencies: ["a"] }, d: { dependencies: ["b", "c"] } };

describe("scheduling", () => {
  it("Argo's diamond: A, then B and C together, then D; Succeeded", () => {
    let d = decideWorkflow(wf(), steps(DIAMOND), T0);
    expect(d.start).toEqual([{ name: "a", attempt: 1 }]);
    d = decideWorkflow(wf(), steps(DIAMOND, { a: running(1, done()) }), T0);
    expect(phases(d)).toEqual({ a: "Succeeded", b: "Running", c: "Running" });
    d = decideWorkflow(wf(), steps(DIAMOND, { a: { phase: "Succeeded" }, b: running(1, done()), c: running() }), T0);
    expect(d.start).toEqual([]);
    expect(phases(d)).toEqual({ b: "Succeeded" });
    const pending = steps(DIAMOND, { a: { phase: "Succeeded" }, b: { phase: "Succeeded" }, c: running() });
    expect(waitingFor(pending[3]!, new Map(pending.map((s) => [s.name, s.phase])))).toEqual(["c"]);
    d = decideWorkflow(wf(), steps(DIAMOND, { a: { phase: "Succeeded" }, b: { phase: "Succeeded" }, c: running(1, done()) }), T0);
    expect(d.start).toEqual([{ name: "d", attempt: 1 }]);
    d = decideWorkflow(wf(), steps(DIAMOND, { a: { phase: "Succeeded" }, b: { phase: "Succeeded" }, c: { phase: "Succeeded" }, d: running(1, done()) }), T0);
    expect(d.workflow).toEqual({ phase: "Succeeded", reason: null, message: "4 step(s) ended Succeeded or Skipped" });
  });

  it("an attempt ends only when every target's action has ended", () => {
    const d = decideWorkflow(wf(), steps({ a: {} }, { a: running(1, { total: 3, done: 1, skipped: 0, failed: 1, failures: ["d2: FAILED"] }) }), T0);
    expect(d.steps).toEqual([]);
    expect(d.workflow).toBeNull();
  });

  it("failFast (default): once a step failed, nothing new starts; running ones finish; then Failed (StepFailed)", () => {
    const spec = { a: {}, b: {}, c: { dependencies: ["a"] } };
    let d = decideWorkflow(wf(), steps(spec, { a: running(1, done()), b: running(1, fail()) }), T0);
    expect(phases(d)).toEqual({ a: "Succeeded", b: "Failed", c: "Omitted" });
    expect(d.start).toEqual([]);
    expect(d.workflow).toEqual({ phase: "Failed", reason: "StepFailed", message: "step b failed" });
    expect(d.steps.find((s) => s.name === "b")!.message).toBe("failed: d1: FAILED: exit 1");
    // A step still running keeps the workflow open.
    d = decideWorkflow(wf(), steps({ ...spec, e: {} }, { a: running(1, done()), b: running(1, fail()), e: running() }), T0);
    expect(d.start).toEqual([]);
    expect(d.workflow).toBeNull();
  });

  it("failFast false: other branches run to the end; a failed dependency blocks (Omitted, B-1)", () => {
    const spec = { a: {}, b: {}, c: { dependencies: ["a"] }, d: { dependencies: ["b"] }, e: { dependencies: ["d"] } };
    const d = decideWorkflow(wf({ failFast: false }), steps(spec, { a: running(1, done()), b: running(1, fail()) }), T0);
    expect(phases(d)).toEqual({ a: "Succeeded", b: "Failed", c: "Running", d: "Omitted", e: "Omitted" });
    expect(d.steps.find((s) => s.name === "e")!.message).toBe("dependency d Omitted");
    expect(d.workflow).toBeNull();
  });

  it("when false → Skipped, which satisfies dependents like Succeeded", () => {
    const spec = { a: {}, b: { dependencies: ["a"], when: "a.Failed" }, c: { dependencies: ["b"] } };
    const d = decideWorkflow(wf(), steps(spec, { a: running(1, done()) }), T0);
    expect(phases(d)).toEqual({ a: "Succeeded", b: "Skipped", c: "Running" });
    expect(d.steps.find((s) => s.name === "b")!.message).toBe('when "a.Failed" is false');
  });

  it("Argo's dag-depends, as when (failFast off): P and F, then should-execute-1/2 run, should-not-execute is Skipped", () => {
    const spec = {
      p: {},
      f: {},
      "should-execute-1": { dependencies: ["p", "f"], when: "p && (f.Succeeded || f.Failed)" },
      "should-execute-2": { dependencies: ["p", "f"], when: "p || f" },
      "should-not-execute": { dependencies: ["p", "f"], when: "p && f" },
    };
    const d = decideWorkflow(wf({ failFast: false }), steps(spec, { p: running(1, done()), f: running(1, fail()) }), T0);
    expect(phases(d)).toEqual({ p: "Succeeded", f: "Failed", "should-execute-1": "Running", "should-execute-2": "Running", "should-not-execute": "Skipped" });
  });

  it("retries with backoff: Retrying until duration × factor^(n−1) passes, attempts counted; then Failed naming the attempt", () => {
    const spec = { a: { retryStrategy: { limit: 2, backoff: { duration: "5s", factor: 2 } } } };
    expect([1, 2, 3].map((n) => backoffMs(steps(spec)[0]!, n))).toEqual([5_000, 10_000, 20_000]);
    let d = decideWorkflow(wf(), steps(spec, { a: running(1, fail()) }), at(1));
    expect(d.steps).toEqual([{ name: "a", phase: "Retrying", message: "attempt 1 of 3 failed (d1: FAILED: exit 1); next attempt in 5s", nextAttemptAt: at(6) }]);
    expect(d.start).toEqual([]);
    d = decideWorkflow(wf(), steps(spec, { a: { phase: "Retrying", attempts: 1, firstStartedAt: T0, nextAttemptAt: at(6) } }), at(5.9));
    expect(d.steps).toEqual([]);
    d = decideWorkflow(wf(), steps(spec, { a: { phase: "Retrying", attempts: 1, firstStartedAt: T0, nextAttemptAt: at(6) } }), at(6));
    expect(d.start).toEqual([{ name: "a", attempt: 2 }]);
    d = decideWorkflow(wf(), steps(spec, { a: running(2, fail()) }), at(10));
    expect(d.steps[0]).toMatchObject({ phase: "Retrying", nextAttemptAt: at(20) });
    d = decideWorkflow(wf(), steps(spec, { a: running(3, fail()) }), at(30));
    expect(d.steps[0]).toMatchObject({ phase: "Failed", message: "attempt 3 of 3 failed: d1: FAILED: exit 1" });
    expect(d.workflow?.reason).toBe("StepFailed");
  });

  it("a retry without backoff starts in the same pass; backoff.maxDuration stops retries", () => {
    let d = decideWorkflow(wf(), steps({ a: { retryStrategy: { limit: 1 } } }, { a: running(1, fail()) }), T0);
    expect(d.steps).toMatchObject([{ name: "a", phase: "Running", message: "attempt 2 of 2" }]);
    expect(d.start).toEqual([{ name: "a", attempt: 2 }]);
    d = decideWorkflow(wf(), steps({ a: { retryStrategy: { limit: 5, backoff: { duration: "1m", factor: 2, maxDuration: "90s" } } } }, { a: running(2, fail()) }), at(30));
    expect(d.steps[0]).toMatchObject({ phase: "Failed" });
    expect(d.steps[0]!.message).toContain("no retry: backoff.maxDuration 90s reached");
  });

  it("the deadline: running and retrying steps Failed with their actions cancelled, pending ones Omitted, DeadlineExceeded", () => {
    const spec = { a: {}, b: { retryStrategy: { limit: 3, backoff: { duration: "1h", factor: 2 } } }, c: { dependencies: ["a"] } };
    const state = { a: running(), b: { phase: "Retrying" as const, attempts: 1, nextAttemptAt: at(3600) } };
    expect(decideWorkflow(wf({ activeDeadlineSeconds: 60 }), steps(spec, state), at(59)).workflow).toBeNull();
    const d = decideWorkflow(wf({ activeDeadlineSeconds: 60 }), steps(spec, state), at(60));
    expect(phases(d)).toEqual({ a: "Failed", b: "Failed", c: "Omitted" });
    expect(d.cancelActionsOf).toEqual(["a"]);
    expect(d.workflow).toEqual({ phase: "Failed", reason: "DeadlineExceeded", message: "the deadline of 60s passed" });
  });

  it("cancel: the same, with who and why", () => {
    const d = decideWorkflow(wf({ cancel: { by: "user:admin", reason: "wrong night" } }), steps(DIAMOND, { a: running() }), T0);
    expect(d.steps.find((s) => s.name === "a")!.message).toBe("cancelled by user:admin: wrong night");
    expect(d.workflow?.reason).toBe("Cancelled");
    expect(d.cancelActionsOf).toEqual(["a"]);
  });

  it("a job whose selector matched no device fails; a reference step follows the referenced run", () => {
    let d = decideWorkflow(wf(), steps({ a: {} }, { a: running(1, { total: 0, done: 0, skipped: 0, failed: 0, failures: [] }) }), T0);
    expect(d.steps[0]).toMatchObject({ phase: "Failed", message: "no target: the job's selector matched no Enrolled device" });
    const ref = { r: { jobTemplate: undefined, externalRef: { kind: "Workflow" as const, name: "weekly" } } };
    d = decideWorkflow(wf(), steps(ref, { r: running(1, done()) }), T0);
    expect(d.steps[0]).toMatchObject({ phase: "Succeeded", message: "the referenced workflow Succeeded" });
    d = decideWorkflow(wf(), steps(ref, { r: running() }), T0);
    expect(d.steps).toEqual([]);
  });

  it("a workflow that is not Running is left alone", () => {
    expect(decideWorkflow(wf({ phase: "Succeeded" }), steps(DIAMOND), T0)).toMatchObject({ steps: [], start: [], workflow: null });
  });
});
