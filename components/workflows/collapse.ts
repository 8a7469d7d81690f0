/**
 * Fan-outs folded into one node (issue 9; Argo's UI hangs on thousands of parallel siblings, its
 * users asked for a counted group): steps that share exactly the same dependencies and the same
 * dependents are interchangeable in the picture, so FAN_MIN or more of them can be drawn as one
 * group node that shows their count and phase counts, and expands on click. Pure, so tested
 * without a browser; the run view lays out the graph this returns.
 */
import type { StepPhase } from "@/lib/workflow-status";
import type { WorkflowSpec } from "@/lib/workflow-spec";
import type { LayoutGraph } from "./graph-layout";

/** Siblings from this many on form a collapsible group. */
export const FAN_MIN = 20;
/** From this many steps a graph is big: its fans start collapsed. */
export const BIG_GRAPH_STEPS = 500;

export interface FanGroup {
  /** `fan:<first member>`: step names have no ':' so it never clashes with one. */
  id: string;
  /** In the spec's order. */
  members: string[];
  dependencies: string[];
  dependents: string[];
}

type Steps = Pick<WorkflowSpec, "steps">;

/** The dependents of every step (the spec holds only dependencies), unknown dependencies dropped. */
export function dependentsOf(spec: Steps): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const name of Object.keys(spec.steps)) out.set(name, []);
  for (const [name, s] of Object.entries(spec.steps)) {
    for (const dep of new Set(s.dependencies ?? [])) out.get(dep)?.push(name);
  }
  return out;
}

/** Groups of FAN_MIN or more steps with the same dependencies and the same dependents. */
export function fanGroups(spec: Steps, min = FAN_MIN): FanGroup[] {
  const dependents = dependentsOf(spec);
  const byKey = new Map<string, FanGroup>();
  for (const [name, s] of Object.entries(spec.steps)) {
    const deps = [...new Set(s.dependencies ?? [])].filter((d) => d in spec.steps).sort();
    const outs = [...dependents.get(name)!].sort();
    const key = `${deps.join(",")}|${outs.join(",")}`;
    const g = byKey.get(key);
    if (g) g.members.push(name);
    else byKey.set(key, { id: `fan:${name}`, members: [name], dependencies: deps, dependents: outs });
  }
  return [...byKey.values()].filter((g) => g.members.length >= min);
}

/** A big graph starts with every fan collapsed; a small one with none. */
export function defaultCollapsed(stepCount: number, groups: FanGroup[]): Set<string> {
  return new Set(stepCount >= BIG_GRAPH_STEPS ? groups.map((g) => g.id) : []);
}

/** What the canvas draws: steps, and collapsed groups in place of their members. */
export interface DisplayGraph extends LayoutGraph {
  /** The collapsed groups drawn, by id. */
  groups: Map<string, FanGroup>;
  /** The node that stands for a step: itself, or its collapsed group. */
  nodeOf: (step: string) => string;
  /** A stable key of the drawn shape (layouts are cached on it). */
  key: string;
}

/** The graph with the `collapsed` groups each drawn as one node; edges to and from members go to the group, once. */
export function displayGraph(spec: Steps, groups: FanGroup[], collapsed: ReadonlySet<string>): DisplayGraph {
  const shown = new Map<string, FanGroup>();
  const groupOf = new Map<string, string>();
  for (const g of groups) {
    if (!collapsed.has(g.id)) continue;
    shown.set(g.id, g);
    for (const m of g.members) groupOf.set(m, g.id);
  }
  const nodeOf = (step: string) => groupOf.get(step) ?? step;
  const nodes: string[] = [];
  for (const name of Object.keys(spec.steps)) {
    const g = groupOf.get(name);
    if (g === undefined) nodes.push(name);
    else if (shown.get(g)!.members[0] === name) nodes.push(g);
  }
  const edges: LayoutGraph["edges"] = [];
  const seen = new Set<string>();
  for (const [name, s] of Object.entries(spec.steps)) {
    for (const dep of s.dependencies ?? []) {
      if (!(dep in spec.steps)) continue;
      const source = nodeOf(dep);
      const target = nodeOf(name);
      const id = `${source}->${target}`;
      if (source === target || seen.has(id)) continue;
      seen.add(id);
      edges.push({ id, source, target });
    }
  }
  const key = JSON.stringify([nodes, edges.map((e) => e.id)]);
  return { nodes, edges, groups: shown, nodeOf, key };
}

/** A group's phase counts, most advanced first, and its label: "120 steps: 80 Succeeded, 40 Running". */
export function groupSummary(members: readonly string[], phaseOf: (step: string) => StepPhase): { counts: [StepPhase, number][]; label: string } {
  const counts = new Map<StepPhase, number>();
  for (const m of members) {
    const p = phaseOf(m);
    counts.set(p, (counts.get(p) ?? 0) + 1);
  }
  const order: StepPhase[] = ["Succeeded", "Running", "Retrying", "Failed", "Skipped", "Omitted", "Pending"];
  const list = order.filter((p) => counts.has(p)).map((p) => [p, counts.get(p)!] as [StepPhase, number]);
  return { counts: list, label: `${members.length.toLocaleString("en-US")} steps: ${list.map(([p, c]) => `${c.toLocaleString("en-US")} ${p}`).join(", ")}` };
}

/** The phase a group is coloured by: Failed, Retrying or Running if any member is, else Pending if any is, else the most common. */
export function groupPhase(counts: [StepPhase, number][]): StepPhase {
  for (const p of ["Failed", "Retrying", "Running", "Pending"] as StepPhase[]) if (counts.some(([q]) => q === p)) return p;
  return [...counts].sort((a, b) => b[1] - a[1])[0]?.[0] ?? "Pending";
}
