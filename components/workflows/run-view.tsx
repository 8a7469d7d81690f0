"use client";

import "@xyflow/react/dist/style.css";
import { useEffect, useMemo } from "react";
import { Controls, MiniMap, ReactFlow, ReactFlowProvider, useReactFlow, useStore, type NodeTypes } from "@xyflow/react";
import type { WorkflowObject } from "@/server/workflows/workflows";
import { layoutKey, layoutRunGraph, runGraph, stepPhaseStyle, type StepNode } from "./run-graph";
import { StepNodeView } from "./step-node";

// Module scope: React Flow re-mounts every node when this object changes identity.
const nodeTypes = { step: StepNodeView } satisfies NodeTypes;

/** A small graph fits its box at a glance; past this many steps the minimap helps find one's way. */
const MINIMAP_FROM_STEPS = 9;
const FIT = { padding: 0.08, maxZoom: 1.1 } as const;

/** Keeps the whole graph in view when its box changes size (the step panel opens or closes). */
function FitOnResize() {
  const { fitView } = useReactFlow();
  const width = useStore((s) => s.width);
  const height = useStore((s) => s.height);
  useEffect(() => {
    if (width > 0 && height > 0) void fitView(FIT);
  }, [width, height, fitView]);
  return null;
}

/**
 * The run view's canvas: the spec's DAG laid out once per shape of the graph (steps and
 * dependencies), recoloured on every status change. Only visible nodes are rendered, so a
 * graph of thousands of steps stays usable when zoomed in.
 */
export function RunView({ workflow, selected, onSelect }: { workflow: WorkflowObject; selected: string | null; onSelect: (step: string | null) => void }) {
  const spec = workflow.spec;
  const key = layoutKey(spec);
  // eslint-disable-next-line react-hooks/exhaustive-deps -- laid out again only when the graph's shape changes, not on every refetch
  const layout = useMemo(() => layoutRunGraph(spec), [key]);
  const graph = useMemo(() => runGraph(spec, layout, workflow.status.statuses, selected), [spec, layout, workflow.status.statuses, selected]);
  const height = Math.round(Math.min(560, Math.max(220, layout.height + 60)));

  return (
    <div style={{ height }} className="w-full" data-testid="run-view" role="figure" aria-label={`Steps of workflow ${workflow.metadata.name} and their dependencies`}>
      <ReactFlowProvider>
        <ReactFlow<StepNode>
          nodes={graph.nodes}
          edges={graph.edges}
          nodeTypes={nodeTypes}
          nodesDraggable={false}
          nodesConnectable={false}
          edgesFocusable={false}
          elementsSelectable={false}
          onlyRenderVisibleElements
          onNodeClick={(_e, node) => onSelect(node.id === selected ? null : node.id)}
          onPaneClick={() => onSelect(null)}
          zoomOnScroll={false}
          preventScrolling={false}
          panOnDrag
          minZoom={0.05}
          maxZoom={2}
          fitView
          fitViewOptions={FIT}
        >
          <FitOnResize />
          <Controls showInteractive={false} />
          {graph.nodes.length >= MINIMAP_FROM_STEPS && (
            <MiniMap<StepNode> pannable zoomable style={{ width: 160, height: 100 }} nodeColor={(n) => stepPhaseStyle[n.data.phase].color} />
          )}
        </ReactFlow>
      </ReactFlowProvider>
    </div>
  );
}
