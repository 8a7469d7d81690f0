/**
 * The Workflow object (seed 001, DESIGN.md §6, OPERATOR_API.md "Workflow") as zod schemas, and
 * its validation: one contract for the REST/tRPC input (JSON or YAML), the console's editor
 * (the same rules run as you draw), the workflow engine (lib/workflow.ts) and the CLI. Pure.
 *
 * A workflow is a DAG of named steps (seed 001's map, keyed by step name). A step is a job (an
 * action kind, args and targets: device names or a label selector) or a reference to another
 * workflow (not owned), never both. `dependencies` name other steps; with decision B-1 a
 * dependency is satisfied when it Succeeded or was Skipped. Optional `when`: a boolean
 * expression over the step's dependencies (`whenExpression`), Argo's `depends` grammar.
 */
import { HEALTH_POLICIES } from "./health-policy";
import { z } from "zod";
import { ActionKind, jsonRecord } from "./protocol";
import { Duration, LabelSelectorObject } from "./fleet-spec";
import { cronProblem, timezoneProblem } from "./workflow-schedule";

export const WORKFLOW_API_VERSION = "drover/v1";
/** Argo's limit per DAG is 200 (CEL); Drover's console must stay usable at 10,000 (issue 9). */
export const MAX_WORKFLOW_STEPS = 10_000;

/** Argo's task names (`^[a-zA-Z0-9][-a-zA-Z0-9]*$`, ≤128), not starting with a digit, as Argo requires with dependencies. */
export const StepName = z
  .string()
  .max(128)
  .regex(/^[a-zA-Z][-a-zA-Z0-9]*$/, "letters, digits and '-', starting with a letter");

export const WorkflowName = z
  .string()
  .min(1)
  .max(63)
  .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, "lowercase letters, digits and '-', starting and ending alphanumeric")
  // The console's editor lives at /workflows/new: a workflow of that name could not be opened.
  .refine((n) => n !== "new", '"new" is reserved (the console opens its editor at /workflows/new)');

export const JobTargets = z
  .strictObject({
    devices: z.array(z.string().min(1).max(63)).min(1).max(10_000).optional(),
    selector: LabelSelectorObject.optional(),
  })
  .refine((t) => (t.devices === undefined) !== (t.selector === undefined), "give exactly one of devices or selector");
export type JobTargets = z.infer<typeof JobTargets>;

export const JobTemplate = z.strictObject({
  kind: ActionKind,
  args: jsonRecord(z.unknown()).default({}),
  targets: JobTargets,
  /** The job's actions wait for an operator's approval (as DROVER_APPROVAL_KINDS would). */
  requireApproval: z.boolean().optional(),
  /** The least healthy device summary its actions go to (lib/health-policy.ts); Degraded by default. */
  healthPolicy: z.enum(HEALTH_POLICIES).optional(),
});
export type JobTemplate = z.infer<typeof JobTemplate>;

export const ExternalRef = z.strictObject({ kind: z.literal("Workflow"), name: WorkflowName });

export const RetryStrategy = z.strictObject({
  /** Retries after the first attempt: at most limit + 1 attempts (Argo). */
  limit: z.number().int().min(0).max(100),
  backoff: z
    .strictObject({
      /** Before the first retry. */
      duration: Duration,
      /** Each further delay is the previous one times this (default 2). */
      factor: z.number().min(1).max(100).default(2),
      /** No retry starts later than this after the step's first attempt started. */
      maxDuration: Duration.optional(),
    })
    .optional(),
});
export type RetryStrategy = z.infer<typeof RetryStrategy>;

export const WorkflowStep = z
  .strictObject({
    dependencies: z.array(StepName).max(1000).optional(),
    jobTemplate: JobTemplate.optional(),
    externalRef: ExternalRef.optional(),
    retryStrategy: RetryStrategy.optional(),
    when: z.string().trim().min(1).max(2000).optional(),
  })
  .refine((s) => (s.jobTemplate === undefined) !== (s.externalRef === undefined), "a step is exactly one of jobTemplate or externalRef");
export type WorkflowStep = z.infer<typeof WorkflowStep>;

/**
 * A recurring schedule (DESIGN.md §6, Argo's CronWorkflow): each time `cron` falls (in
 * `timezone`, an IANA name, default UTC) the server starts a run (startedBy "schedule"), unless
 * `suspend`. One run at a time: a tick while a run is in progress is skipped (Argo's
 * concurrencyPolicy Forbid); ticks missed while the server was down make one catch-up run.
 */
export const WorkflowSchedule = z.strictObject({
  cron: z
    .string()
    .trim()
    .min(1)
    .max(200)
    .superRefine((cron, ctx) => {
      const problem = cronProblem(cron);
      if (problem) ctx.addIssue({ code: "custom", message: problem });
    }),
  timezone: z
    .string()
    .min(1)
    .max(64)
    .superRefine((tz, ctx) => {
      const problem = timezoneProblem(tz);
      if (problem) ctx.addIssue({ code: "custom", message: problem });
    })
    .optional(),
  /** True: no tick starts a run (a start by hand still does). */
  suspend: z.boolean().optional(),
});
export type WorkflowSchedule = z.infer<typeof WorkflowSchedule>;

export const WorkflowSpec = z.strictObject({
  /** Runs it by itself at these times; without one a workflow runs when created (unless a draft) and on each start/rerun. */
  schedule: WorkflowSchedule.optional(),
  /** From the run's start; past it the workflow is Failed (DeadlineExceeded) and its running actions are cancelled. */
  activeDeadlineSeconds: z.number().int().min(1).max(31 * 24 * 3600).optional(),
  /** Default true: once a step fails, no new step starts; running ones finish; then the workflow is Failed. */
  failFast: z.boolean().default(true),
  steps: jsonRecord(WorkflowStep)
    .refine((steps) => Object.keys(steps).length > 0, "at least one step")
    .refine((steps) => Object.keys(steps).length <= MAX_WORKFLOW_STEPS, `at most ${MAX_WORKFLOW_STEPS} steps`)
    .superRefine((steps, ctx) => {
      for (const name of Object.keys(steps)) {
        const r = StepName.safeParse(name);
        if (!r.success) ctx.addIssue({ code: "custom", path: [name], message: `step name "${name}": ${r.error.issues[0]?.message ?? "invalid"}` });
      }
    }),
});
export type WorkflowSpec = z.infer<typeof WorkflowSpec>;

export const WorkflowInput = z.strictObject({
  apiVersion: z.literal(WORKFLOW_API_VERSION).default(WORKFLOW_API_VERSION),
  kind: z.literal("Workflow").default("Workflow"),
  metadata: z.strictObject({ name: WorkflowName, labels: jsonRecord(z.string()).optional() }),
  spec: WorkflowSpec,
  /** Written by the server only: accepted and ignored, so a workflow read back applies as is. */
  status: z.unknown().optional(),
});
export type WorkflowInput = z.infer<typeof WorkflowInput>;

// ---------------------------------------------------------------------------------------
// `when`: Argo's `depends` grammar over the step's dependencies

export const STEP_RESULTS = ["Succeeded", "Failed", "Skipped", "Omitted"] as const;
export type StepResult = (typeof STEP_RESULTS)[number];

export type WhenExpr =
  | { op: "lit"; value: boolean }
  | { op: "ref"; step: string; result: StepResult | null }
  | { op: "not"; arg: WhenExpr }
  | { op: "and" | "or"; args: [WhenExpr, WhenExpr] };

export class WhenError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "WhenError";
  }
}

/**
 * `backup.Succeeded && !(drain.Failed || drain.Omitted)`, `true`, `drain`: `&&`, `||`, `!`,
 * parentheses; a term is `step` (it Succeeded or was Skipped, as a plain dependency) or
 * `step.Succeeded|Failed|Skipped|Omitted`. Throws WhenError naming the problem.
 */
export function parseWhen(text: string): WhenExpr {
  const tokens = text.match(/\s*(&&|\|\||!|\(|\)|[A-Za-z][-A-Za-z0-9]*(?:\.[A-Za-z]+)?|\S)/g)?.map((t) => t.trim()) ?? [];
  let i = 0;
  const peek = () => tokens[i];
  const next = () => tokens[i++];
  const primary = (): WhenExpr => {
    const t = next();
    if (t === undefined) throw new WhenError("unexpected end of expression");
    if (t === "!") return { op: "not", arg: primary() };
    if (t === "(") {
      const e = or();
      if (next() !== ")") throw new WhenError("missing ')'");
      return e;
    }
    if (t === "true" || t === "false") return { op: "lit", value: t === "true" };
    const m = /^([A-Za-z][-A-Za-z0-9]*)(?:\.([A-Za-z]+))?$/.exec(t);
    if (!m) throw new WhenError(`unexpected "${t}"`);
    const result = m[2] ?? null;
    if (result !== null && !(STEP_RESULTS as readonly string[]).includes(result)) throw new WhenError(`"${t}": a step's result is one of ${STEP_RESULTS.join(", ")}`);
    return { op: "ref", step: m[1]!, result: result as StepResult | null };
  };
  const and = (): WhenExpr => {
    let left = primary();
    while (peek() === "&&") {
      next();
      left = { op: "and", args: [left, primary()] };
    }
    return left;
  };
  const or = (): WhenExpr => {
    let left = and();
    while (peek() === "||") {
      next();
      left = { op: "or", args: [left, and()] };
    }
    return left;
  };
  const expr = or();
  if (i < tokens.length) throw new WhenError(`unexpected "${tokens[i]}"`);
  return expr;
}

export function whenSteps(e: WhenExpr): string[] {
  switch (e.op) {
    case "lit":
      return [];
    case "ref":
      return [e.step];
    case "not":
      return whenSteps(e.arg);
    default:
      return [...whenSteps(e.args[0]), ...whenSteps(e.args[1])];
  }
}

export function evaluateWhen(e: WhenExpr, results: Readonly<Record<string, StepResult>>): boolean {
  switch (e.op) {
    case "lit":
      return e.value;
    case "ref": {
      const r = results[e.step];
      return e.result === null ? r === "Succeeded" || r === "Skipped" : r === e.result;
    }
    case "not":
      return !evaluateWhen(e.arg, results);
    case "and":
      return evaluateWhen(e.args[0], results) && evaluateWhen(e.args[1], results);
    case "or":
      return evaluateWhen(e.args[0], results) || evaluateWhen(e.args[1], results);
  }
}

// ---------------------------------------------------------------------------------------
// Validation beyond the schema: the graph

export interface WorkflowProblem {
  /** The step concerned (null: the workflow). */
  step: string | null;
  /** Dotted path for the editor ("spec.steps.backup.dependencies"). */
  path: string;
  message: string;
}

/**
 * The rules seed 001 and DESIGN §6 add to the schema, each message naming the culprit:
 * unknown dependencies, a step depending on itself or twice on one step, cycles (the path,
 * Argo's "A->B->A"), `when` expressions that do not parse or name a step that is not a
 * dependency. The editor runs this as you draw; the server refuses with the first.
 */
export function validateWorkflowGraph(steps: Readonly<Record<string, Pick<WorkflowStep, "dependencies" | "when">>>): WorkflowProblem[] {
  const problems: WorkflowProblem[] = [];
  const names = new Set(Object.keys(steps));
  for (const [name, step] of Object.entries(steps)) {
    const deps = step.dependencies ?? [];
    const seen = new Set<string>();
    for (const d of deps) {
      if (seen.has(d)) problems.push({ step: name, path: `spec.steps.${name}.dependencies`, message: `step "${name}" lists dependency "${d}" twice` });
      seen.add(d);
      if (!names.has(d)) problems.push({ step: name, path: `spec.steps.${name}.dependencies`, message: `dependency "${d}" of step "${name}" is not defined` });
    }
    if (step.when !== undefined) {
      try {
        const refs = whenSteps(parseWhen(step.when));
        for (const r of refs) {
          if (!seen.has(r)) problems.push({ step: name, path: `spec.steps.${name}.when`, message: `when of step "${name}" names "${r}", which is not one of its dependencies` });
        }
      } catch (error) {
        problems.push({ step: name, path: `spec.steps.${name}.when`, message: `when of step "${name}": ${(error as Error).message}` });
      }
    }
  }
  const cycle = findCycle(steps);
  if (cycle) problems.push({ step: cycle[0]!, path: `spec.steps.${cycle[0]!}.dependencies`, message: `dependency cycle: ${cycle.join("->")}` });
  return problems;
}

/** A cycle as the path that closes it (["A", "B", "A"]), or null. Iterative, so 10,000 steps in a chain do not overflow the stack. */
export function findCycle(steps: Readonly<Record<string, Pick<WorkflowStep, "dependencies">>>): string[] | null {
  const state = new Map<string, 1 | 2>(); // 1: on the current path, 2: done
  for (const root of Object.keys(steps).sort()) {
    if (state.has(root)) continue;
    const path: string[] = [];
    const stack: { name: string; deps: string[]; i: number }[] = [{ name: root, deps: [...(steps[root]?.dependencies ?? [])], i: 0 }];
    state.set(root, 1);
    path.push(root);
    while (stack.length > 0) {
      const top = stack[stack.length - 1]!;
      if (top.i >= top.deps.length) {
        state.set(top.name, 2);
        stack.pop();
        path.pop();
        continue;
      }
      const d = top.deps[top.i++]!;
      if (!(d in steps)) continue;
      const s = state.get(d);
      if (s === 1) return [...path.slice(path.indexOf(d)), d];
      if (s === 2) continue;
      state.set(d, 1);
      path.push(d);
      stack.push({ name: d, deps: [...(steps[d]?.dependencies ?? [])], i: 0 });
    }
  }
  return null;
}

/** Steps in a topological order (dependencies first; ties by name), as `drover describe workflow` lists them. Assumes no cycle. */
export function topologicalOrder(steps: Readonly<Record<string, Pick<WorkflowStep, "dependencies">>>): string[] {
  const indegree = new Map(Object.keys(steps).map((n) => [n, 0]));
  const dependents = new Map<string, string[]>();
  for (const [name, step] of Object.entries(steps)) {
    for (const d of new Set(step.dependencies ?? [])) {
      if (!(d in steps)) continue;
      indegree.set(name, indegree.get(name)! + 1);
      (dependents.get(d) ?? dependents.set(d, []).get(d)!).push(name);
    }
  }
  const ready = [...indegree].filter(([, n]) => n === 0).map(([k]) => k).sort();
  const out: string[] = [];
  while (ready.length > 0) {
    const n = ready.shift()!;
    out.push(n);
    for (const m of (dependents.get(n) ?? []).sort()) {
      indegree.set(m, indegree.get(m)! - 1);
      if (indegree.get(m) === 0) {
        // Keep `ready` sorted so the order does not depend on the map's.
        const at = ready.findIndex((r) => r > m);
        ready.splice(at === -1 ? ready.length : at, 0, m);
      }
    }
  }
  return out;
}

/**
 * A reference cycle across workflows through `name` (its path, ["a", "b", "a"]), given each
 * saved workflow's referenced workflows; null when none. The server asks before it saves.
 */
export function findReferenceCycle(name: string, references: ReadonlyMap<string, readonly string[]>): string[] | null {
  const path: string[] = [name];
  const visiting = new Set<string>([name]);
  const done = new Set<string>();
  const walk = (from: string): string[] | null => {
    for (const to of references.get(from) ?? []) {
      if (to === name) return [...path, to];
      if (visiting.has(to) || done.has(to)) continue;
      visiting.add(to);
      path.push(to);
      const found = walk(to);
      if (found) return found;
      path.pop();
      visiting.delete(to);
      done.add(to);
    }
    return null;
  };
  return walk(name);
}

export function stepReferences(spec: Pick<WorkflowSpec, "steps">): string[] {
  return [...new Set(Object.values(spec.steps).flatMap((s) => (s.externalRef ? [s.externalRef.name] : [])))];
}
