"use client";

import "@xyflow/react/dist/style.css";
import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import { Controls, MiniMap, Panel, ReactFlow, ReactFlowProvider, useReactFlow, useStore, type Edge, type NodeTypes, type Viewport } from "@xyflow/react";
import type { WorkflowObject } from "@/server/workflows/workflows";
import { Button } from "../ui/button";
import { layoutKey, runGraph, stepPhaseStyle, STEP_NODE_HEIGHT, STEP_NODE_WIDTH, type GraphLayout, type RunNode } from "./run-graph";
import { defaultCollapsed, displayGraph, fanGroups } from "./collapse";
import { criticalPath } from "./critical-path";
import { useGraphLayout } from "./use-graph-layout";
import { FanNodeView, StepNodeView } from "./step-node";
import { CanvasMiniMap } from "./canvas-minimap";
import { FarLayer } from "./far-layer";

// Module scope: React Flow re-mounts every node when this object changes identity.
const nodeTypes = { step: StepNodeView, fan: FanNodeView } satisfies NodeTypes;

/** A small graph fits its box at a glance; past this many steps the minimap helps find one's way. */
const MINIMAP_FROM_STEPS = 9;
/** From this many nodes the minimap is one canvas (canvas-minimap.tsx) instead of an SVG element per node. */
const CANVAS_MINIMAP_FROM = 1000;
const FIT = { padding: 0.08, maxZoom: 1.1 } as const;
/** The controls' fit view: hidden nodes too (a big graph far out hides them from React Flow, see FarLayer). */
const FIT_ALL = { ...FIT, includeHiddenNodes: true } as const;
/**
 * Below this zoom step names are unreadable: a graph of more than FIT_ALL_NODES nodes that would
 * need it opens at READABLE_ZOOM on its first steps instead of fitting the box (and drawing
 * every node at once); a smaller one always fits.
 */
const MIN_FIT_ZOOM = 0.3;
const FIT_ALL_NODES = 200;
const READABLE_ZOOM = 0.6;

/**
 * The first view of a layout in a box of `width` × `height`: the whole graph (null: fitView)
 * when it fits readably or is small, else its left edge (the first steps) at a readable zoom,
 * vertically centred on them.
 */
function firstView(layout: GraphLayout, width: number, height: number): Viewport | null {
  const fitZoom = Math.min(width / layout.width, height / layout.height) * (1 - 2 * FIT.padding);
  if (fitZoom >= MIN_FIT_ZOOM || layout.positions.size <= FIT_ALL_NODES) return null;
  let minX = Infinity;
  for (const p of layout.positions.values()) minX = Math.min(minX, p.x);
  let sum = 0;
  let n = 0;
  for (const p of layout.positions.values()) {
    if (p.x !== minX) continue;
    sum += p.y + STEP_NODE_HEIGHT / 2;
    n++;
  }
  const midY = n ? sum / n : layout.height / 2;
  return { x: 24 - minX * READABLE_ZOOM, y: height / 2 - midY * READABLE_ZOOM, zoom: READABLE_ZOOM };
}

/**
 * Sets the view of each new layout (firstView; the first one is already React Flow's
 * defaultViewport, so nothing is drawn twice) and when the box changes size. After a fan is
 * expanded the view centres on it instead (`focus`).
 */
function InitialView({ layout, focus, onApplied }: { layout: GraphLayout; focus: React.RefObject<string | null>; onApplied: () => void }) {
  const { fitView, setViewport, setCenter, getZoom } = useReactFlow();
  const width = useStore((s) => s.width);
  const height = useStore((s) => s.height);
  useEffect(() => {
    if (width <= 0 || height <= 0) return;
    const f = focus.current && layout.positions.get(focus.current);
    focus.current = null;
    if (f) {
      void setCenter(f.x + STEP_NODE_WIDTH / 2, f.y + STEP_NODE_HEIGHT / 2, { zoom: Math.max(getZoom(), READABLE_ZOOM) }).then(onApplied);
      return;
    }
    const view = firstView(layout, width, height);
    void (view ? setViewport(view) : fitView(FIT)).then(onApplied);
  }, [layout, width, height, fitView, setViewport, setCenter, getZoom, focus, onApplied]);
  return null;
}

/** Reuses the previous node and edge objects whose content did not change, so React Flow skips them on a live update. */
function useStable<T extends { id: string }>(items: T[] | null, same: (a: T, b: T) => boolean): T[] | null {
  const prev = useRef(new Map<string, T>());
  return useMemo(() => {
    if (!items) return null;
    const next = new Map<string, T>();
    const out = items.map((it) => {
      const old = prev.current.get(it.id);
      const keep = old && same(old, it) ? old : it;
      next.set(it.id, keep);
      return keep;
    });
    prev.current = next;
    return out;
    // eslint-disable-next-line react-hooks/exhaustive-deps -- `same` is a module-level function
  }, [items]);
}

function shallowEqual(a: Record<string, unknown>, b: Record<string, unknown>): boolean {
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  return ka.every((k) => Object.is(a[k], b[k]) || (Array.isArray(a[k]) && JSON.stringify(a[k]) === JSON.stringify(b[k])));
}
const sameNode = (a: RunNode, b: RunNode) => a.type === b.type && a.position === b.position && shallowEqual(a.data, b.data);
const sameEdge = (a: Edge, b: Edge) => a.source === b.source && a.target === b.target && a.animated === b.animated && a.className === b.className && a.style?.stroke === b.style?.stroke;

/**
 * Below this zoom a node's text is unreadable: the canvas gets the `rv-far` class and nodes
 * show only their phase's colour (CSS in step-node.tsx). A class, not another node type or
 * new node data: React Flow re-measures every node whose type changes, one store update each.
 */
const FAR_ZOOM = 0.3;
/**
 * Zoomed far out with more edges than this, only the critical path's edges are drawn: each edge
 * is a component and an SVG path, and 3,300 of them in view cost ≈ 6 s to draw on this machine
 * (2,000 steps fitted in view: 1.6 s without them).
 */
const FAR_EDGES_MAX = 1000;
/** Far out, a graph of more nodes than this is painted on one canvas (far-layer.tsx) instead of drawn as elements (600 steps all in view: 1.3 s as elements; 2,000 painted: 0.86 s). */
const FAR_CANVAS_FROM = 300;

/** React Flow with the run view's settings; inside the provider, so it can follow the zoom (one subscription for all nodes). */
function RunCanvas({ nodes, edges, layout, initial, focus, onApplied, onNodeClick, onPaneClick }: {
  nodes: RunNode[];
  edges: Edge[];
  layout: GraphLayout;
  initial: Viewport | null;
  focus: React.RefObject<string | null>;
  onApplied: () => void;
  onNodeClick: (node: RunNode) => void;
  onPaneClick: () => void;
}) {
  const far = useStore((s) => s.transform[2] < FAR_ZOOM);
  // A big graph far out is painted on a canvas (FarLayer); its nodes stay in React Flow, hidden,
  // so the fit view and the minimap still know them.
  const painted = far && nodes.length > FAR_CANVAS_FROM;
  const drawnNodes = useMemo(() => (painted ? nodes.map((n) => ({ ...n, hidden: true })) : nodes), [painted, nodes]);
  const thinned = far && !painted && edges.length > FAR_EDGES_MAX;
  const drawnEdges = useMemo(() => (painted ? [] : thinned ? edges.filter((e) => e.className === "critical") : edges), [painted, thinned, edges]);
  const { screenToFlowPosition, setCenter } = useReactFlow();
  return (
    <ReactFlow<RunNode>
      className={far ? "rv-far" : undefined}
      nodes={drawnNodes}
      edges={drawnEdges}
      nodeTypes={nodeTypes}
      nodesDraggable={false}
      nodesConnectable={false}
      edgesFocusable={false}
      elementsSelectable={false}
      onlyRenderVisibleElements
      onNodeClick={(_e, node) => onNodeClick(node)}
      onPaneClick={(e) => {
        if (!painted) return onPaneClick();
        // Painted: the click is on the canvas; the node under it, if any, is clicked and brought close.
        const p = screenToFlowPosition({ x: e.clientX, y: e.clientY });
        const hit = nodes.find((n) => p.x >= n.position.x && p.x <= n.position.x + STEP_NODE_WIDTH && p.y >= n.position.y && p.y <= n.position.y + STEP_NODE_HEIGHT);
        if (!hit) return onPaneClick();
        if (hit.type === "step") void setCenter(hit.position.x + STEP_NODE_WIDTH / 2, hit.position.y + STEP_NODE_HEIGHT / 2, { zoom: READABLE_ZOOM });
        onNodeClick(hit);
      }}
      zoomOnScroll={false}
      preventScrolling={false}
      panOnDrag
      minZoom={0.05}
      maxZoom={2}
      defaultViewport={initial ?? undefined}
      fitView={!initial}
      fitViewOptions={FIT}
    >
      <InitialView layout={layout} focus={focus} onApplied={onApplied} />
      {painted && <FarLayer nodes={nodes} edges={edges} layout={layout} />}
      {thinned && (
        <Panel position="top-left" className="rounded bg-white/90 px-2 py-1 text-xs text-slate-500 shadow-sm" data-testid="run-view-edges-hidden">
          Zoom in to see the dependencies
        </Panel>
      )}
      <Controls showInteractive={false} fitViewOptions={FIT_ALL} />
      {nodes.length >= CANVAS_MINIMAP_FROM ? (
        <CanvasMiniMap nodes={nodes} layout={layout} />
      ) : (
        nodes.length >= MINIMAP_FROM_STEPS && <MiniMap<RunNode> pannable zoomable style={{ width: 160, height: 100 }} nodeColor={(n) => stepPhaseStyle[n.data.phase].color} />
      )}
    </ReactFlow>
  );
}

/**
 * The run view's canvas: the spec's DAG laid out once per drawn shape (steps, dependencies,
 * which fans are collapsed; in a worker for big graphs), recoloured on every status change.
 * Fans of many alike steps can fold into one counted node (collapsed at first in a big graph),
 * the critical path can be shown, and only visible nodes are rendered, so a graph of thousands
 * of steps stays usable.
 */
export function RunView({ workflow, selected, onSelect }: { workflow: WorkflowObject; selected: string | null; onSelect: (step: string | null) => void }) {
  const spec = workflow.spec;
  const statuses = workflow.status.statuses;
  const key = layoutKey(spec);
  const stepCount = Object.keys(spec.steps).length;
  // eslint-disable-next-line react-hooks/exhaustive-deps -- the fans depend on the graph's shape only
  const groups = useMemo(() => fanGroups(spec), [key]);
  const groupOfStep = useMemo(() => new Map(groups.flatMap((g) => g.members.map((m) => [m, g.id] as const))), [groups]);
  // Fans the operator flipped from their default (collapsed in a big graph, expanded in a small one).
  const [flipped, setFlipped] = useState<ReadonlySet<string>>(() => new Set());
  const collapsed = useMemo(() => {
    const c = defaultCollapsed(stepCount, groups);
    for (const id of flipped) if (!c.delete(id)) c.add(id);
    return c;
  }, [stepCount, groups, flipped]);
  const focus = useRef<string | null>(null);
  const flip = useCallback((id: string) => setFlipped((prev) => {
    const next = new Set(prev);
    if (!next.delete(id)) next.add(id);
    return next;
  }), []);
  const setAllCollapsed = (all: boolean) => {
    const d = defaultCollapsed(stepCount, groups);
    setFlipped(new Set(groups.filter((g) => d.has(g.id) !== all).map((g) => g.id)));
  };
  // A step chosen elsewhere (the step table) inside a collapsed fan: expand the fan to show it.
  const hiddenIn = selected ? groupOfStep.get(selected) : undefined;
  if (hiddenIn && collapsed.has(hiddenIn)) {
    focus.current = selected;
    flip(hiddenIn);
  }
  // eslint-disable-next-line react-hooks/exhaustive-deps -- the drawn shape: the spec's graph and the collapsed fans
  const display = useMemo(() => displayGraph(spec, groups, collapsed), [key, groups, collapsed]);
  const { layout, graph: laidOut, pending } = useGraphLayout(display);

  const [showCritical, setShowCritical] = useState(false);
  // eslint-disable-next-line react-hooks/exhaustive-deps -- the path depends on the shape and the statuses (durations)
  const critical = useMemo(() => (showCritical ? criticalPath(spec, statuses) : null), [showCritical, key, statuses]);
  const graph = useMemo(
    () => (layout && laidOut ? runGraph(spec, layout, statuses, selected, { display: laidOut, critical }) : null),
    [spec, layout, laidOut, statuses, selected, critical],
  );
  const nodes = useStable(graph?.nodes ?? null, sameNode);
  const edges = useStable(graph?.edges ?? null, sameEdge);
  const height = layout ? Math.round(Math.min(560, Math.max(220, layout.height + 60))) : stepCount > 20 ? 560 : 220;
  const collapsedCount = collapsed.size;
  // Marks the box once a layout's first view is set (the bench waits for it; no re-render).
  const box = useRef<HTMLDivElement>(null);
  const viewApplied = useCallback(() => box.current?.setAttribute("data-view", "ready"), []);
  // The box's width, known before the canvas mounts, so its first view is set from the start.
  const [boxWidth, setBoxWidth] = useState(0);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const ro = new ResizeObserver(() => setBoxWidth(el.clientWidth));
    ro.observe(el);
    return () => ro.disconnect();
  }, []);

  return (
    <div className="w-full">
      <div className="flex flex-wrap items-center justify-between gap-2 border-b border-slate-100 px-4 py-2 text-xs text-slate-500">
        <span data-testid="run-view-summary" aria-live="polite">
          {pending ? (
            <span data-testid="run-view-layout-pending">Laying out {display.nodes.length.toLocaleString("en-US")} {display.nodes.length === stepCount ? "steps" : "nodes"}…</span>
          ) : (
            <>
              {stepCount.toLocaleString("en-US")} steps
              {collapsedCount > 0 && `, ${collapsedCount} fan${collapsedCount === 1 ? "" : "s"} collapsed (click one to expand)`}
            </>
          )}
          {critical && (
            <span className="ml-2 text-violet-700" data-testid="run-view-critical-summary">
              · critical path: {critical.steps.length} step{critical.steps.length === 1 ? "" : "s"}
              {critical.by === "duration" ? ` by duration (≈ ${Math.round(critical.length / 1000)} s)` : " (longest chain)"}
            </span>
          )}
        </span>
        <span className="flex items-center gap-2">
          {groups.length > 0 && (
            <Button
              variant="secondary"
              size="sm"
              data-testid={collapsedCount > 0 ? "run-view-expand-all" : "run-view-collapse-all"}
              onClick={() => setAllCollapsed(collapsedCount === 0)}
            >
              {collapsedCount > 0 ? "Expand fans" : "Collapse fans"}
            </Button>
          )}
          <Button variant={showCritical ? "primary" : "secondary"} size="sm" aria-pressed={showCritical} data-testid="run-view-critical-toggle" onClick={() => setShowCritical((v) => !v)}>
            Critical path
          </Button>
        </span>
      </div>
      <div
        ref={box}
        style={{ height }}
        className="relative w-full"
        data-testid="run-view"
        data-layout={pending ? "pending" : "ready"}
        data-nodes={nodes?.length ?? 0}
        role="figure"
        aria-label={`Steps of workflow ${workflow.metadata.name} and their dependencies`}
      >
        {nodes && edges && layout && boxWidth > 0 ? (
          <ReactFlowProvider>
            <RunCanvas
              nodes={nodes}
              edges={edges}
              layout={layout}
              initial={firstView(layout, boxWidth, height)}
              focus={focus}
              onApplied={viewApplied}
              onNodeClick={(node) => {
                if (node.type === "fan") {
                  focus.current = (laidOut?.groups.get(node.id)?.members[0]) ?? null;
                  flip(node.id);
                } else onSelect(node.id === selected ? null : node.id);
              }}
              onPaneClick={() => onSelect(null)}
            />
          </ReactFlowProvider>
        ) : (
          <div className="flex h-full items-center justify-center text-sm text-slate-500">{!layout && `Laying out ${stepCount.toLocaleString("en-US")} steps…`}</div>
        )}
        {pending && nodes && <div className="pointer-events-none absolute inset-0 bg-white/40" aria-hidden />}
      </div>
    </div>
  );
}
