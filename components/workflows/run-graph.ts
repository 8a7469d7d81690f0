/**
 * The run view's graph model (issue 9), pure so it is tested without a browser: the DAG of a
 * workflow's spec laid out left to right with dagre (steps as nodes, dependencies as edges),
 * then each step coloured by its phase with its progress text. The layout depends on the spec
 * only, the colours on the status: a live update (a step moved) recolours the nodes without
 * laying 10,000 steps out again.
 */
import dagre from "@dagrejs/dagre";
import type { Edge, Node } from "@xyflow/react";
import type { StepPhase } from "@/lib/workflow-status";
import type { WorkflowSpec } from "@/lib/workflow-spec";
import type { WorkflowStepView } from "@/server/workflows/workflows";
import type { Tone } from "../ui/badge";

export const STEP_NODE_WIDTH = 184;
export const STEP_NODE_HEIGHT = 58;

/** The run view's colours: Pending grey, Running blue, Retrying amber, Succeeded green, Failed red, Skipped and Omitted muted. */
export const stepPhaseTone: Record<StepPhase, Tone> = {
  Pending: "gray",
  Running: "blue",
  Retrying: "amber",
  Succeeded: "green",
  Failed: "red",
  Skipped: "slate",
  Omitted: "slate",
};

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

export interface GraphLayout {
  /** Top-left corner of each step's node. */
  positions: Map<string, { x: number; y: number }>;
  edges: { id: string; source: string; target: string }[];
  width: number;
  height: number;
}

/** What decides the layout: the steps and their dependencies (a memo key that is stable across refetches). */
export function layoutKey(spec: Pick<WorkflowSpec, "steps">): string {
  return JSON.stringify(Object.entries(spec.steps).map(([name, s]) => [name, s.dependencies ?? []]));
}

/** dagre, left to right: dependencies before their dependents. */
export function layoutRunGraph(spec: Pick<WorkflowSpec, "steps">): GraphLayout {
  const g = new dagre.graphlib.Graph();
  g.setGraph({ rankdir: "LR", nodesep: 24, ranksep: 64, marginx: 8, marginy: 8 });
  g.setDefaultEdgeLabel(() => ({}));
  const names = Object.keys(spec.steps);
  for (const name of names) g.setNode(name, { width: STEP_NODE_WIDTH, height: STEP_NODE_HEIGHT });
  const edges: GraphLayout["edges"] = [];
  for (const name of names) {
    for (const dep of spec.steps[name]?.dependencies ?? []) {
      // The server refuses unknown dependencies; an edge to nowhere would break dagre.
      if (!(dep in spec.steps)) continue;
      g.setEdge(dep, name);
      edges.push({ id: `${dep}->${name}`, source: dep, target: name });
    }
  }
  dagre.layout(g);
  const positions = new Map<string, { x: number; y: number }>();
  let width = 0;
  let height = 0;
  for (const name of names) {
    const n = g.node(name);
    positions.set(name, { x: n.x - STEP_NODE_WIDTH / 2, y: n.y - STEP_NODE_HEIGHT / 2 });
    width = Math.max(width, n.x + STEP_NODE_WIDTH / 2);
    height = Math.max(height, n.y + STEP_NODE_HEIGHT / 2);
  }
  return { positions, edges, width, height };
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
  if (view.targets && view.targets.total > 0) parts.push(`${view.targets.done}/${view.targets.total} targets${view.targets.failed ? `, ${view.targets.failed} failed` : ""}`);
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
}
export type StepNode = Node<StepNodeData, "step">;

/** React Flow's nodes and edges: the layout's positions, each step in its phase's colours. */
export function runGraph(
  spec: Pick<WorkflowSpec, "steps">,
  layout: GraphLayout,
  statuses: Readonly<Record<string, WorkflowStepView>>,
  selected: string | null,
): { nodes: StepNode[]; edges: Edge[] } {
  const nodes: StepNode[] = [];
  for (const [step, s] of Object.entries(spec.steps)) {
    const view = statuses[step];
    const phase = view?.phase ?? "Pending";
    nodes.push({
      id: step,
      type: "step",
      position: layout.positions.get(step) ?? { x: 0, y: 0 },
      width: STEP_NODE_WIDTH,
      height: STEP_NODE_HEIGHT,
      data: { step, phase, progress: stepProgress(view), kind: s.jobTemplate ? s.jobTemplate.kind : `→ ${s.externalRef?.name ?? "workflow"}`, selected: step === selected },
    });
  }
  const edges: Edge[] = layout.edges.map((e) => {
    const from = statuses[e.source]?.phase ?? "Pending";
    // An edge is "live" once its source ended and let the dependent start.
    const satisfied = from === "Succeeded" || from === "Skipped";
    return { ...e, type: "smoothstep", animated: statuses[e.target]?.phase === "Running" && satisfied, style: { stroke: satisfied ? "#10b981" : "#cbd5e1", strokeWidth: 1.5 } };
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
