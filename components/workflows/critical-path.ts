/**
 * The critical path of a run (issue 9): the chain of dependencies that decides how long the run
 * takes. Before any step has a duration it is the longest chain by step count; once some steps
 * have run it is the longest by time: a step that ended counts its duration, a running one the
 * time so far, one that has not started the mean duration of those that ended (the best guess
 * there is), a Skipped or Omitted one nothing. Pure, so tested without a browser.
 */
import type { WorkflowSpec } from "@/lib/workflow-spec";
import type { WorkflowStepView } from "@/server/workflows/workflows";

export interface CriticalPath {
  /** From a first step (no dependency on the path) to the last. */
  steps: string[];
  /** Edge ids (`dep->step`) along it. */
  edges: string[];
  by: "steps" | "duration";
  /** By duration: its length in ms (estimates included); by steps: the step count. */
  length: number;
}

type Steps = Pick<WorkflowSpec, "steps">;

function ms(iso: string | null | undefined): number | null {
  if (!iso) return null;
  const t = Date.parse(iso);
  return Number.isFinite(t) ? t : null;
}

/** The longest chain of dependencies; ties go to more steps, then to the spec's order. */
export function criticalPath(spec: Steps, statuses: Readonly<Record<string, WorkflowStepView>> = {}, now = Date.now()): CriticalPath {
  const names = Object.keys(spec.steps);
  const known: number[] = [];
  for (const n of names) {
    const v = statuses[n];
    const start = ms(v?.startedAt);
    const end = ms(v?.finishedAt);
    if (start !== null && end !== null && end >= start) known.push(end - start);
  }
  const by: CriticalPath["by"] = known.length ? "duration" : "steps";
  const mean = known.length ? known.reduce((a, b) => a + b, 0) / known.length : 1;
  const weight = (n: string): number => {
    if (by === "steps") return 1;
    const v = statuses[n];
    if (v?.phase === "Skipped" || v?.phase === "Omitted") return 0;
    const start = ms(v?.startedAt);
    if (start === null) return mean;
    const end = ms(v?.finishedAt);
    return Math.max(0, (end ?? now) - start);
  };

  // Longest path over a topological order (Kahn, spec order for ties).
  const index = new Map(names.map((n, i) => [n, i]));
  const deps = names.map((n) => [...new Set(spec.steps[n]!.dependencies ?? [])].filter((d) => index.has(d) && d !== n).map((d) => index.get(d)!));
  const outs: number[][] = names.map(() => []);
  deps.forEach((ds, i) => ds.forEach((d) => outs[d]!.push(i)));
  const indegree = deps.map((d) => d.length);
  const order: number[] = [];
  for (let i = 0; i < names.length; i++) if (indegree[i] === 0) order.push(i);
  for (let h = 0; h < order.length; h++) for (const w of outs[order[h]!]!) if (--indegree[w]! === 0) order.push(w);

  const best = new Float64Array(names.length);
  const count = new Int32Array(names.length);
  const prev = new Int32Array(names.length).fill(-1);
  let end = -1;
  for (const i of order) {
    let b = 0;
    let c = 0;
    let p = -1;
    for (const d of deps[i]!) {
      if (best[d]! > b || (best[d] === b && count[d]! > c)) {
        b = best[d]!;
        c = count[d]!;
        p = d;
      }
    }
    best[i] = b + weight(names[i]!);
    count[i] = c + 1;
    prev[i] = p;
    if (end < 0 || best[i]! > best[end]! || (best[i] === best[end] && count[i]! > count[end]!)) end = i;
  }
  const steps: string[] = [];
  for (let i = end; i >= 0; i = prev[i]!) steps.push(names[i]!);
  steps.reverse();
  const edges = steps.slice(1).map((s, i) => `${steps[i]}->${s}`);
  return { steps, edges, by, length: end < 0 ? 0 : best[end]! };
}
