"use client";

import "@xyflow/react/dist/style.css";
import { useCallback, useMemo, type DragEvent } from "react";
import {
  Background,
  Controls,
  MarkerType,
  MiniMap,
  ReactFlow,
  useReactFlow,
  type Connection,
  type Edge,
  type EdgeChange,
  type FinalConnectionState,
  type IsValidConnection,
  type NodeChange,
  type NodeTypes,
} from "@xyflow/react";
import { canConnect, edgesOf, selectorText, type XY } from "@/lib/workflow-editor";
import type { StepPhase } from "@/lib/workflow-status";
import { STEP_NODE_HEIGHT, STEP_NODE_WIDTH } from "../run-graph";
import { EditorNodeView, type EditorNode } from "./editor-node";
import { PALETTE_MIME, parsePaletteItem } from "./palette";
import type { Editor } from "./use-editor";

// Module scope: React Flow re-mounts every node when this object changes identity.
const nodeTypes = { draft: EditorNodeView } satisfies NodeTypes;
const FIT = { padding: 0.2, maxZoom: 1.2 } as const;

function describeTargets(step: Editor["doc"]["steps"][string]): string {
  const t = step.jobTemplate?.targets;
  if (!t) return step.externalRef ? "reference" : "";
  if (t.devices) return t.devices.length === 1 ? t.devices[0]! : `${t.devices.length} devices`;
  if (t.selector) return selectorText(t.selector) || "every device";
  return "";
}

/**
 * The editor's canvas: every step a node (dragged to move, right handle to another's left
 * handle to add a dependency), every dependency an edge. A connection is checked as it is
 * drawn (`isValidConnection`: the handle turns red) and refused with its reason when dropped.
 * Deletion and the other keys are the editor's (keyboard.ts), not React Flow's, so a locked
 * step is refused with a reason and typing in a field never deletes a step.
 */
export function EditorCanvas({ editor, phases, locked, minimap }: { editor: Editor; phases: Readonly<Record<string, StepPhase>>; locked: ReadonlySet<string>; minimap: boolean }) {
  const { doc, selection, problems, actions, setSelection } = editor;
  const { screenToFlowPosition } = useReactFlow();

  const selectedNodes = useMemo(() => new Set(selection.nodes), [selection.nodes]);
  const selectedEdges = useMemo(() => new Set(selection.edges), [selection.edges]);
  const nodes = useMemo<EditorNode[]>(
    () =>
      Object.entries(doc.steps).map(([name, step]) => ({
        id: name,
        type: "draft",
        position: doc.positions[name] ?? { x: 0, y: 0 },
        width: STEP_NODE_WIDTH,
        height: STEP_NODE_HEIGHT,
        selected: selectedNodes.has(name),
        data: {
          step: name,
          kind: step.jobTemplate ? step.jobTemplate.kind : `→ ${step.externalRef?.name || "workflow"}`,
          detail: describeTargets(step),
          problems: (problems.byStep.get(name) ?? []).map((p) => p.message),
          locked: locked.has(name),
          phase: phases[name] ?? null,
        },
      })),
    [doc.steps, doc.positions, selectedNodes, problems, locked, phases],
  );
  const edges = useMemo<Edge[]>(
    () =>
      edgesOf(doc).map((e) => ({
        ...e,
        type: "smoothstep",
        selected: selectedEdges.has(e.id),
        markerEnd: { type: MarkerType.ArrowClosed, width: 16, height: 16 },
        style: { strokeWidth: selectedEdges.has(e.id) ? 2.5 : 1.5 },
      })),
    [doc, selectedEdges],
  );

  const onNodesChange = useCallback(
    (changes: NodeChange<EditorNode>[]) => {
      const moves: Record<string, XY> = {};
      let done = false;
      let select: Map<string, boolean> | null = null;
      for (const c of changes) {
        if (c.type === "position") {
          if (c.position) moves[c.id] = c.position;
          // A drag's end, or a move that is whole at once (arrow keys): the undo entry is complete.
          if (c.dragging !== true) done = true;
        } else if (c.type === "select") (select ??= new Map()).set(c.id, c.selected);
      }
      if (Object.keys(moves).length || done) actions.move(moves, done);
      if (select) {
        const changed = select;
        setSelection((s) => {
          const set = new Set(s.nodes);
          for (const [id, on] of changed) {
            if (on) set.add(id);
            else set.delete(id);
          }
          return { ...s, nodes: [...set] };
        });
      }
    },
    [actions, setSelection],
  );
  const onEdgesChange = useCallback(
    (changes: EdgeChange[]) => {
      const select = changes.filter((c) => c.type === "select");
      if (!select.length) return;
      setSelection((s) => {
        const set = new Set(s.edges);
        for (const c of select) {
          if (c.selected) set.add(c.id);
          else set.delete(c.id);
        }
        return { ...s, edges: [...set] };
      });
    },
    [setSelection],
  );

  const isValidConnection = useCallback<IsValidConnection>((c) => canConnect(editor.doc, c.source, c.target, locked).ok, [editor.doc, locked]);
  const onConnect = useCallback((c: Connection) => void actions.connect(c.source, c.target), [actions]);
  // Dropped on a handle that refused it: say why (the same check, for its reason).
  const onConnectEnd = useCallback(
    (_e: MouseEvent | TouchEvent, state: FinalConnectionState) => {
      if (state.isValid || !state.toNode || !state.fromNode || !state.fromHandle) return;
      const fromSource = state.fromHandle.type === "source";
      const source = fromSource ? state.fromNode.id : state.toNode.id;
      const target = fromSource ? state.toNode.id : state.fromNode.id;
      const check = canConnect(editor.doc, source, target, locked);
      if (!check.ok) actions.refuse(check.reason);
    },
    [actions, editor.doc, locked],
  );

  const onDragOver = (e: DragEvent) => {
    if (!e.dataTransfer.types.includes(PALETTE_MIME)) return;
    e.preventDefault();
    e.dataTransfer.dropEffect = "copy";
  };
  const onDrop = (e: DragEvent) => {
    const item = parsePaletteItem(e.dataTransfer.getData(PALETTE_MIME));
    if (!item) return;
    e.preventDefault();
    const p = screenToFlowPosition({ x: e.clientX, y: e.clientY });
    actions.add(item, { x: p.x - STEP_NODE_WIDTH / 2, y: p.y - STEP_NODE_HEIGHT / 2 });
  };

  return (
    <div className="h-full w-full" onDragOver={onDragOver} onDrop={onDrop} data-testid="editor-canvas">
      <ReactFlow<EditorNode>
        nodes={nodes}
        edges={edges}
        nodeTypes={nodeTypes}
        onNodesChange={onNodesChange}
        onEdgesChange={onEdgesChange}
        onConnect={onConnect}
        onConnectEnd={onConnectEnd}
        isValidConnection={isValidConnection}
        onPaneClick={() => setSelection({ nodes: [], edges: [] })}
        onlyRenderVisibleElements
        deleteKeyCode={null}
        multiSelectionKeyCode={["Shift", "Meta", "Control"]}
        selectionKeyCode="Shift"
        connectionRadius={28}
        minZoom={0.1}
        maxZoom={2}
        fitView
        fitViewOptions={FIT}
        proOptions={{ hideAttribution: true }}
      >
        <Background gap={16} size={1} color="#e2e8f0" />
        <Controls showInteractive={false} fitViewOptions={FIT} />
        {minimap && <MiniMap<EditorNode> pannable zoomable style={{ width: 150, height: 96 }} nodeColor={(n) => (n.data.problems.length ? "#ef4444" : n.data.locked ? "#0ea5e9" : "#94a3b8")} />}
      </ReactFlow>
    </div>
  );
}
