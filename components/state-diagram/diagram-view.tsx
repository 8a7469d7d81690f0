"use client";

import "@xyflow/react/dist/style.css";
import { useEffect, useMemo, useRef, type ReactNode } from "react";
import { MarkerType, ReactFlow, ReactFlowProvider, useReactFlow, useStore, type EdgeMarker, type EdgeTypes, type NodeTypes } from "@xyflow/react";
import { highlightDiagram, stateNodeId } from "./layout";
import { GroupNodeView, StartNodeView, StateNodeView } from "./nodes";
import { TransitionEdgeView } from "./transition-edge";
import { FitIcon, Toolbar, ToolButton, ZoomInIcon, ZoomOutIcon } from "./controls";
import { fitViewport, MAX_ZOOM, overflows, stepZoom, type Size, type ZoomRange } from "./sizing";
import type { DiagramLayout, Highlight, TransitionEdge } from "./types";

/** The row above the canvas with the toolbar (and a hint when part of the diagram is out of view). */
export const TOOLBAR_ROW_PX = 40;

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

export interface DiagramViewProps {
  layout: DiagramLayout;
  /** The canvas the diagram is drawn in, in screen pixels (the toolbar's row is above it). */
  box: Size;
  range: ZoomRange;
  current: string | null;
  highlight: Highlight;
  ariaLabel: string;
  /** Names the toolbar ("Device status diagram controls"). */
  name: string;
  /** More buttons after zoom and fit (expand, close). */
  extraButtons?: ReactNode;
  /** Said beside the toolbar while the whole diagram is in view. */
  hint?: string;
}

/** One drawn diagram with its zoom, fit and pan, in a box of known size. */
export function DiagramView(props: DiagramViewProps) {
  return (
    <ReactFlowProvider>
      <Canvas {...props} />
    </ReactFlowProvider>
  );
}

function Canvas({ layout, box, range, current, highlight, ariaLabel, name, extraButtons, hint }: DiagramViewProps) {
  const view = useMemo(() => {
    const h = highlightDiagram(layout, current, highlight);
    return { nodes: h.nodes, edges: withMarkers(h.edges) };
  }, [layout, current, highlight]);

  // The current state's centre: where a diagram too big for its box is shown from.
  const focus = useMemo(() => {
    const n = current === null ? undefined : layout.nodes.find((x) => x.id === stateNodeId(current));
    return n ? { x: n.position.x + (n.width ?? 0) / 2, y: n.position.y + (n.height ?? 0) / 2 } : null;
  }, [layout, current]);
  const { width, height } = box;
  const fitted = useMemo(() => fitViewport(layout, { width, height }, range, focus), [layout, width, height, range, focus]);

  const { setViewport, zoomTo } = useReactFlow();
  const zoom = useStore((s) => s.transform[2]);
  // Once someone pans or zooms, a live change of state no longer moves the view under them;
  // a new box size or layout (or Fit) does.
  const touched = useRef(false);
  const fittedFor = useRef<{ layout: DiagramLayout; width: number; height: number } | null>(null);
  useEffect(() => {
    const last = fittedFor.current;
    const sameBox = last?.layout === layout && last.width === width && last.height === height;
    if (sameBox && touched.current) return;
    fittedFor.current = { layout, width, height };
    touched.current = false;
    void setViewport(fitted);
  }, [fitted, layout, width, height, setViewport]);

  const zoomBy = (direction: 1 | -1) => {
    touched.current = true;
    void zoomTo(stepZoom(zoom, direction, range.minZoom), { duration: 120 });
  };

  const overflow = overflows(layout, box, zoom);
  return (
    // A group, not an img: React Flow's own root is an application with a live region and a link.
    <div role="group" aria-roledescription="state diagram" aria-label={ariaLabel} data-zoom={zoom.toFixed(3)} data-overflow={overflow ? "true" : "false"}>
      {/* The toolbar has its own row: over the canvas it hid the states in a corner. */}
      <div className="flex items-center justify-end gap-3 px-2" style={{ height: TOOLBAR_ROW_PX }}>
        <p className="min-w-0 truncate text-xs text-slate-600" aria-live="polite">
          {overflow ? "Part of this diagram is out of view: drag to pan, or zoom out." : hint}
        </p>
        <Toolbar label={`${name} controls`}>
          <ToolButton label="Zoom in" onClick={() => zoomBy(1)} disabled={zoom >= MAX_ZOOM - 1e-3}>
            <ZoomInIcon />
          </ToolButton>
          <ToolButton label="Zoom out" onClick={() => zoomBy(-1)} disabled={zoom <= range.minZoom + 1e-3}>
            <ZoomOutIcon />
          </ToolButton>
          <ToolButton
            label="Fit to view"
            onClick={() => {
              touched.current = false;
              void setViewport(fitted, { duration: 150 });
            }}
          >
            <FitIcon />
          </ToolButton>
          {extraButtons}
        </Toolbar>
      </div>
      <div className="relative cursor-grab active:cursor-grabbing" style={{ width, height }}>
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
          zoomOnScroll
          zoomOnPinch
          zoomOnDoubleClick={false}
          preventScrolling
          panOnDrag
          minZoom={range.minZoom}
          maxZoom={MAX_ZOOM}
          defaultViewport={fitted}
          onMoveStart={(event) => {
            if (event) touched.current = true;
          }}
          proOptions={{ hideAttribution: false }}
        />
      </div>
    </div>
  );
}
