"use client";

import "@xyflow/react/dist/style.css";
import { useEffect, useMemo } from "react";
import { MarkerType, ReactFlow, ReactFlowProvider, useReactFlow, useStore, type EdgeMarker, type EdgeTypes, type NodeTypes } from "@xyflow/react";
import { highlightDiagram, layoutDiagram } from "./layout";
import { GroupNodeView, StartNodeView, StateNodeView } from "./nodes";
import { TransitionEdgeView } from "./transition-edge";
import type { DiagramSpec, Highlight, TransitionEdge } from "./types";

// Module scope: React Flow re-mounts every node when these objects change identity.
const nodeTypes = { state: StateNodeView, stateGroup: GroupNodeView, start: StartNodeView } satisfies NodeTypes;
const edgeTypes = { transition: TransitionEdgeView } satisfies EdgeTypes;

const marker = (color: string, reverse = false): EdgeMarker => ({
  type: MarkerType.ArrowClosed,
  color,
  width: 14,
  height: 14,
  ...(reverse ? { orient: "auto-start-reverse" } : {}),
});
const MARKERS = {
  normal: { end: marker("#94a3b8"), start: marker("#94a3b8", true) },
  active: { end: marker("#1f5bd6"), start: marker("#1f5bd6", true) },
  muted: { end: marker("#cbd5e1"), start: marker("#cbd5e1", true) },
};

function withMarkers(edges: TransitionEdge[]): TransitionEdge[] {
  return edges.map((e) => {
    const m = e.data?.active ? MARKERS.active : e.data?.muted ? MARKERS.muted : MARKERS.normal;
    return { ...e, markerEnd: m.end, ...(e.data?.bidirectional ? { markerStart: m.start } : {}) };
  });
}

/** Keeps the whole diagram in view when its box changes size. */
function FitOnResize() {
  const { fitView } = useReactFlow();
  const width = useStore((s) => s.width);
  const height = useStore((s) => s.height);
  useEffect(() => {
    if (width > 0 && height > 0) void fitView({ padding: 0.06, maxZoom: 1.1 });
  }, [width, height, fitView]);
  return null;
}

export interface StateDiagramProps {
  spec: DiagramSpec;
  /** The state to highlight, or null when none applies. */
  current: string | null;
  highlight?: Highlight;
  /** Rendered height in pixels; by default from the layout's proportions at `approxWidth`. */
  height?: number;
  /** About how wide the diagram will be drawn, to choose a height that fits it. */
  approxWidth?: number;
  ariaLabel: string;
  testId?: string;
}

/**
 * A read-only, live state diagram: the layout is computed once per spec, the highlight
 * follows `current`.
 */
export function StateDiagram({ spec, current, highlight = "blue", height, approxWidth = 860, ariaLabel, testId }: StateDiagramProps) {
  const layout = useMemo(() => layoutDiagram(spec), [spec]);
  const view = useMemo(() => {
    const h = highlightDiagram(layout, current, highlight);
    return { nodes: h.nodes, edges: withMarkers(h.edges) };
  }, [layout, current, highlight]);

  const boxHeight = height ?? Math.round(Math.min(520, Math.max(140, layout.height * Math.min(1.1, approxWidth / Math.max(layout.width, 1)) + 32)));

  return (
    <div style={{ height: boxHeight }} className="w-full" data-testid={testId} data-current={current ?? ""} role="img" aria-label={ariaLabel}>
      <ReactFlowProvider>
        <ReactFlow
          nodes={view.nodes}
          edges={view.edges}
          nodeTypes={nodeTypes}
          edgeTypes={edgeTypes}
          nodesDraggable={false}
          nodesConnectable={false}
          nodesFocusable={false}
          edgesFocusable={false}
          elementsSelectable={false}
          zoomOnScroll={false}
          zoomOnDoubleClick={false}
          preventScrolling={false}
          panOnDrag
          minZoom={0.2}
          maxZoom={2}
          fitView
          fitViewOptions={{ padding: 0.06, maxZoom: 1.1 }}
          proOptions={{ hideAttribution: false }}
        >
          <FitOnResize />
        </ReactFlow>
      </ReactFlowProvider>
    </div>
  );
}
