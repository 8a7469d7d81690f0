/**
 * The run view's graph model (issue 9), pure so it is tested without a browser: the DAG of a
 * workflow's spec laid out left to right (steps as nodes, dependencies as edges; graph-layout.ts:
 * dagre for small graphs, a layered layout for big ones, in a worker past a few dozen steps),
 * big fan-outs folded into group nodes (collapse.ts), then each step coloured by its phase with
 * its progress text and the critical path marked (critical-path.ts). The layout depends on the
 * drawn shape only, the colours on the status: a live update (a step moved) recolours the nodes
 * without laying 10,000 steps out again.
 */
import { Position, type Edge, type Node, type NodeHandle } from "@xyflow/react";
import type { StepPhase } from "@/lib/workflow-status";
import type { WorkflowSpec } from "@/lib/workflow-spec";
import type { WorkflowStepView } from "@/server/workflows/workflows";
import type { Tone } from "../ui/badge";
import { layoutGraph, STEP_NODE_HEIGHT, STEP_NODE_WIDTH, type GraphLayout, type LayoutGraph } from "./graph-layout";
import { groupPhase, groupSummary, type DisplayGraph, type FanGroup } from "./collapse";
import type { CriticalPath } from "./critical-path";

export { STEP_NODE_HEIGHT, STEP_NODE_WIDTH, type GraphLayout };

export { stepPhaseTone, targetPhaseTone } from "./tones";
import { stepPhaseTone } from "./tones";

/** Node fill, border and minimap colour per phase (Tailwind classes and a hex for the minimap's SVG). */
export const stepPhaseStyle: Record<StepPhase, { node: string; color: string; muted: boolean }> = {
  Pending: { node: "border-slate-300 bg-slate-50 text-slate-700", color: "#94a3b8", muted: false },
  Running: { node: "border-sky-500 bg-sky-50 text-sky-900", color: "#0ea5e9", muted: false },
  Retrying: { node: "border-amber-500 bg-amber-50 text-amber-900", color: "#f59e0b", muted: false },
  Succeeded: { node: "border-emerald-500 bg-emerald-50 text-emerald-900", color: "#10b981", muted: false },
  Failed: { node: "border-red-500 bg-red-50 text-red-900", color: "#ef4444", muted: false },
  Skipped: { node: "border-dashed border-slate-300 bg-white text-slate-400", color: "#e2e8f0", muted: true },
  Omitted: { node: "border-dashed border-slate-300 bg-white text-slate-400", color: "#e2e8f0", muted: true },
};

/** The critical path's colour (edges and node rings): violet, which no phase uses. */
export const CRITICAL_COLOR = "#7c3aed";

/** What decides the layout: the steps and their dependencies (a memo key that is stable across refetches). */
export function layoutKey(spec: Pick<WorkflowSpec, "steps">): string {
  return JSON.stringify(Object.entries(spec.steps).map(([name, s]) => [name, s.dependencies ?? []]));
}

/** Every step a node, every dependency an edge (dependency → dependent); unknown dependencies dropped. */
export function specGraph(spec: Pick<WorkflowSpec, "steps">): LayoutGraph {
  const nodes = Object.keys(spec.steps);
  const edges: LayoutGraph["edges"] = [];
  for (const name of nodes) {
    for (const dep of new Set(spec.steps[name]?.dependencies ?? [])) {
      // The server refuses unknown dependencies; an edge to nowhere would break the layout.
      if (!(dep in spec.steps) || dep === name) continue;
      edges.push({ id: `${dep}->${name}`, source: dep, target: name });
    }
  }
  return { nodes, edges };
}

/** Left to right, dependencies before their dependents, every step a node (the editor's and small graphs' layout). */
export function layoutRunGraph(spec: Pick<WorkflowSpec, "steps">): GraphLayout {
  return layoutGraph(specGraph(spec));
}

/**
 * The line under a step's name: targets done/total while a job has targets, "attempt n of m"
 * once a retry is possible, what a Pending step waits for, the run a reference follows.
 */
export function stepProgress(view: WorkflowStepView | undefined): string {
  if (!view) return "";
  const parts: string[] = [];
  if (view.phase === "Pending") {
    if (view.waitingFor.length) parts.push(`waits for ${view.waitingFor.join(", ")}`);
    return parts.join(" · ");
  }
  const t = view.targets;
  if (t && t.total > 0) {
    const more = [
      t.waitingApproval ? `${t.waitingApproval} waiting for approval` : "",
      t.failed ? `${t.failed} failed` : "",
      t.cancelled ? `${t.cancelled} cancelled` : "",
      t.skipped ? `${t.skipped} skipped` : "",
    ].filter(Boolean);
    parts.push(`${t.done}/${t.total} targets${more.length ? `, ${more.join(", ")}` : ""}`);
  }
  if (view.workflow && view.phase !== "Skipped" && view.phase !== "Omitted") parts.push(`${view.workflow.name}${view.workflow.run ? ` run ${view.workflow.run}` : ""}`);
  if (view.maxAttempts > 1 && view.attempts > 0) parts.push(`attempt ${view.attempts} of ${view.maxAttempts}`);
  return parts.join(" · ");
}

export interface StepNodeData extends Record<string, unknown> {
  step: string;
  phase: StepPhase;
  progress: string;
  /** A job's action kind, or "→ workflow" for a reference. */
  kind: string;
  selected: boolean;
  /** On the critical path (shown only while the toggle is on). */
  critical: boolean;
}
export type StepNode = Node<StepNodeData, "step">;

/** A collapsed fan-out: its members' count and phase counts; a click expands it. */
export interface FanNodeData extends Record<string, unknown> {
  group: string;
  count: number;
  counts: [StepPhase, number][];
  /** "120 steps: 80 Succeeded, 40 Running" */
  label: string;
  phase: StepPhase;
  /** What its members do (their kinds, one or "mixed"). */
  kind: string;
  critical: boolean;
}
export type FanNode = Node<FanNodeData, "fan">;
export type RunNode = StepNode | FanNode;

/**
 * Size and handles given up front: React Flow counts a node it has not measured yet as visible,
 * so without them the first draw renders every node of a big graph (2,000 on the first frame)
 * before culling to the visible ones; and edges to a node off screen (never rendered, never
 * measured) have their ends without it.
 */
const MEASURED = { width: STEP_NODE_WIDTH, height: STEP_NODE_HEIGHT } as const;
const HANDLES: NodeHandle[] = [
  { type: "target", position: Position.Left, x: -2, y: STEP_NODE_HEIGHT / 2 - 2, width: 4, height: 4 },
  { type: "source", position: Position.Right, x: STEP_NODE_WIDTH - 2, y: STEP_NODE_HEIGHT / 2 - 2, width: 4, height: 4 },
];

function stepKind(s: WorkflowSpec["steps"][string] | undefined): string {
  return s?.jobTemplate ? s.jobTemplate.kind : `→ ${s?.externalRef?.name ?? "workflow"}`;
}

/**
 * React Flow's nodes and edges: the layout's positions, each step in its phase's colours, each
 * collapsed fan (`display`, default: every step drawn) as one counted node, and the `critical`
 * path's nodes and edges marked.
 */
export function runGraph(
  spec: Pick<WorkflowSpec, "steps">,
  layout: GraphLayout,
  statuses: Readonly<Record<string, WorkflowStepView>>,
  selected: string | null,
  options: { display?: Pick<DisplayGraph, "nodes" | "groups" | "nodeOf">; critical?: CriticalPath | null } = {},
): { nodes: RunNode[]; edges: Edge[] } {
  const display = options.display ?? { nodes: Object.keys(spec.steps), groups: new Map<string, FanGroup>(), nodeOf: (s: string) => s };
  const phaseOf = (step: string): StepPhase => statuses[step]?.phase ?? "Pending";
  const criticalNodes = new Set<string>();
  const criticalEdges = new Set<string>();
  if (options.critical) {
    for (const s of options.critical.steps) criticalNodes.add(display.nodeOf(s));
    for (let i = 1; i < options.critical.steps.length; i++) {
      criticalEdges.add(`${display.nodeOf(options.critical.steps[i - 1]!)}->${display.nodeOf(options.critical.steps[i]!)}`);
    }
  }
  const nodes: RunNode[] = [];
  for (const id of display.nodes) {
    const position = layout.positions.get(id) ?? { x: 0, y: 0 };
    const group = display.groups.get(id);
    if (group) {
      const { counts, label } = groupSummary(group.members, phaseOf);
      const kinds = new Set(group.members.map((m) => stepKind(spec.steps[m])));
      nodes.push({
        id,
        type: "fan",
        position,
        width: STEP_NODE_WIDTH,
        height: STEP_NODE_HEIGHT,
        measured: MEASURED,
        handles: HANDLES,
        data: { group: id, count: group.members.length, counts, label, phase: groupPhase(counts), kind: kinds.size === 1 ? [...kinds][0]! : "mixed", critical: criticalNodes.has(id) },
      });
      continue;
    }
    const view = statuses[id];
    nodes.push({
      id,
      type: "step",
      position,
      width: STEP_NODE_WIDTH,
      height: STEP_NODE_HEIGHT,
      measured: MEASURED,
      handles: HANDLES,
      data: { step: id, phase: view?.phase ?? "Pending", progress: stepProgress(view), kind: stepKind(spec.steps[id]), selected: id === selected, critical: criticalNodes.has(id) },
    });
  }
  // A group's edge is satisfied (green) when all its members are, animated when any runs.
  const phasesOf = (id: string): StepPhase[] => display.groups.get(id)?.members.map(phaseOf) ?? [phaseOf(id)];
  const edges: Edge[] = layout.edges.map((e) => {
    // An edge is "live" once its source ended and let the dependent start.
    const satisfied = phasesOf(e.source).every((p) => p === "Succeeded" || p === "Skipped");
    const running = phasesOf(e.target).some((p) => p === "Running");
    const critical = criticalEdges.has(e.id);
    return {
      ...e,
      type: "smoothstep",
      animated: running && satisfied,
      ...(critical ? { className: "critical", zIndex: 1 } : {}),
      style: critical ? { stroke: CRITICAL_COLOR, strokeWidth: 3 } : { stroke: satisfied ? "#10b981" : "#cbd5e1", strokeWidth: 1.5 },
    };
  });
  return { nodes, edges };
}

/** Step phase counts as segments of a bar (the list's "steps done/total"). */
export function stepSegments(counts: Partial<Record<StepPhase, number>>): { key: string; label: string; count: number; tone: Tone }[] {
  return (["Succeeded", "Skipped", "Running", "Retrying", "Failed", "Omitted", "Pending"] as StepPhase[]).map((p) => ({ key: p, label: p, count: counts[p] ?? 0, tone: stepPhaseTone[p] }));
}

/** Steps that ended well (Succeeded or Skipped) out of all. */
export function stepsDone(counts: Partial<Record<StepPhase, number>>): number {
  return (counts.Succeeded ?? 0) + (counts.Skipped ?? 0);
}
