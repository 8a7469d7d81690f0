"use client";

import { useEffect, useMemo, useRef, useState } from "react";
import { ReactFlowProvider, useReactFlow } from "@xyflow/react";
import { freeSpot, fromInput, sameWorkflow, type EditorDoc, type NewStep, type StepDraft } from "@/lib/workflow-editor";
import type { StepPhase } from "@/lib/workflow-status";
import type { WorkflowObject } from "@/server/workflows/workflows";
import { Button } from "../../ui/button";
import { Card } from "../../ui/card";
import { cx } from "../../ui/cx";
import { STEP_NODE_HEIGHT, STEP_NODE_WIDTH } from "../run-graph";
import { EditorCanvas } from "./editor-canvas";
import { useEditorKeys } from "./keyboard";
import { Palette } from "./palette";
import { loadPositions } from "./positions";
import { ProblemList, WorkflowPanel, YamlPane } from "./side-panels";
import { SaveBar } from "./save-bar";
import { StepPanel } from "./step-panel";
import { useEditor } from "./use-editor";

const FIT = { padding: 0.2, maxZoom: 1.2, duration: 200 } as const;
/** A small graph fits its box at a glance, and the minimap would hide a corner of it (as in the run view); the button shows it anyway. */
const MINIMAP_FROM_STEPS = 9;

function ToolbarButton({ onClick, disabled, title, children, testId }: { onClick: () => void; disabled?: boolean; title: string; children: React.ReactNode; testId: string }) {
  return (
    <Button size="sm" variant="ghost" onClick={onClick} disabled={disabled} title={title} aria-label={title} data-testid={testId}>
      {children}
    </Button>
  );
}

function EditorBody({ workflow }: { workflow: WorkflowObject | undefined }) {
  const creating = workflow === undefined;
  const running = workflow?.status.phase === "Running";
  // A started step of a running workflow is locked (the server's 409 rule); it changes live as steps start.
  const statuses = workflow?.status.statuses;
  const phases = useMemo<Record<string, StepPhase>>(() => {
    if (!running || !statuses) return {};
    return Object.fromEntries(Object.entries(statuses).flatMap(([s, v]) => (v.phase === "Pending" ? [] : [[s, v.phase]])));
  }, [running, statuses]);
  const lockedKey = Object.keys(phases).sort().join(",");
  // eslint-disable-next-line react-hooks/exhaustive-deps -- a new set only when the started steps change, not on every refetch
  const locked = useMemo(() => new Set(Object.keys(phases)), [lockedKey]);
  const saved = useMemo(() => (workflow ? fromInput(workflow) : null), [workflow]);
  const original = saved?.steps;

  const [initial] = useState<EditorDoc>(() => (saved ? { ...saved, positions: loadPositions(saved.name, saved.steps) } : { name: "", failFast: true, steps: {}, positions: {} }));
  const [tab, setTab] = useState<"canvas" | "yaml">("canvas");
  const editor = useEditor(initial, locked, original, tab === "yaml");
  const { doc, selection, problems, actions, refusal, yaml } = editor;
  const { fitView, screenToFlowPosition } = useReactFlow();
  const [minimapChoice, setMinimapChoice] = useState<boolean | null>(null);
  const minimap = minimapChoice ?? Object.keys(doc.steps).length >= MINIMAP_FROM_STEPS;
  useEditorKeys(actions, tab === "canvas");

  // A new layout (button, import) is fitted once React Flow has the new positions.
  const [fitRequest, setFitRequest] = useState(0);
  useEffect(() => {
    if (fitRequest > 0) requestAnimationFrame(() => void fitView(FIT));
  }, [fitRequest, fitView]);

  const selectedStep = selection.nodes.length === 1 ? selection.nodes[0]! : null;
  const step: StepDraft | undefined = selectedStep ? doc.steps[selectedStep] : undefined;
  const dirty = saved ? !sameWorkflow(doc, saved) : Object.keys(doc.steps).length > 0;
  // Closing or reloading the tab with unsaved changes asks first (the browser's own prompt).
  useEffect(() => {
    if (!dirty) return;
    const warn = (e: BeforeUnloadEvent) => e.preventDefault();
    window.addEventListener("beforeunload", warn);
    return () => window.removeEventListener("beforeunload", warn);
  }, [dirty]);

  // A clicked palette item lands in the middle of what is in view, below any step in the way.
  const canvasBox = useRef<HTMLDivElement>(null);
  const add = (what: NewStep) => {
    const r = canvasBox.current?.getBoundingClientRect();
    const c = r && r.width > 0 ? screenToFlowPosition({ x: r.left + r.width / 2, y: r.top + r.height / 3 }) : { x: 0, y: 0 };
    actions.add(what, freeSpot(doc.positions, { x: c.x - STEP_NODE_WIDTH / 2, y: c.y - STEP_NODE_HEIGHT / 2 }, { width: STEP_NODE_WIDTH, height: STEP_NODE_HEIGHT }));
  };

  return (
    <div className="space-y-3">
      <Card className="overflow-hidden" data-testid="workflow-editor">
        <div className="flex flex-wrap items-center gap-1 border-b border-slate-100 px-2 py-1.5">
          <div className="mr-2 inline-flex rounded-md bg-slate-100 p-0.5" role="tablist">
            {(["canvas", "yaml"] as const).map((t) => (
              <button
                key={t}
                type="button"
                role="tab"
                aria-selected={tab === t}
                onClick={() => setTab(t)}
                data-testid={`editor-tab-${t}`}
                className={cx("rounded px-3 py-1 text-xs font-medium", tab === t ? "bg-white text-slate-900 shadow-sm" : "text-slate-600 hover:text-slate-900")}
              >
                {t === "canvas" ? "Canvas" : "YAML"}
                {t === "yaml" && yaml.typedInvalid && <span className="ml-1 text-red-600">●</span>}
              </button>
            ))}
          </div>
          <ToolbarButton onClick={actions.undo} disabled={editor.history.past.length === 0} title="Undo (Ctrl+Z)" testId="editor-undo">
            ↶ Undo
          </ToolbarButton>
          <ToolbarButton onClick={actions.redo} disabled={editor.history.future.length === 0} title="Redo (Ctrl+Shift+Z or Ctrl+Y)" testId="editor-redo">
            ↷ Redo
          </ToolbarButton>
          <span className="mx-1 h-4 w-px bg-slate-200" />
          <ToolbarButton
            onClick={() => {
              actions.layout();
              setFitRequest((n) => n + 1);
            }}
            disabled={Object.keys(doc.steps).length === 0}
            title="Lay the steps out left to right (dagre)"
            testId="editor-layout"
          >
            Auto-layout
          </ToolbarButton>
          <ToolbarButton onClick={() => void fitView(FIT)} title="Fit the whole workflow in view" testId="editor-fit">
            Fit view
          </ToolbarButton>
          <Button size="sm" variant="ghost" aria-pressed={minimap} onClick={() => setMinimapChoice(!minimap)} title={minimap ? "Hide the minimap" : "Show the minimap"} data-testid="editor-minimap" className={cx(minimap && "bg-slate-100 text-slate-900")}>
            Minimap
          </Button>
          <span className="mx-1 h-4 w-px bg-slate-200" />
          <ToolbarButton onClick={actions.copy} disabled={selection.nodes.length === 0} title="Copy the selected steps (Ctrl+C)" testId="editor-copy">
            Copy
          </ToolbarButton>
          <ToolbarButton onClick={actions.paste} title="Paste the copied steps under fresh names (Ctrl+V)" testId="editor-paste">
            Paste
          </ToolbarButton>
          <ToolbarButton onClick={actions.deleteSelection} disabled={selection.nodes.length + selection.edges.length === 0} title="Delete the selected steps and dependencies (Delete)" testId="editor-delete">
            Delete
          </ToolbarButton>
          <span className="ml-auto pr-1 text-xs text-slate-600">
            {Object.keys(doc.steps).length} step{Object.keys(doc.steps).length === 1 ? "" : "s"}
            {selection.nodes.length > 1 ? ` · ${selection.nodes.length} selected` : ""}
          </span>
        </div>
        {refusal && (
          <div className="flex items-center justify-between gap-2 bg-red-50 px-3 py-1.5 text-sm text-red-800" role="alert" data-testid="editor-refusal">
            <span>{refusal}</span>
            <button type="button" className="text-xs text-red-700 hover:underline" onClick={actions.dismissRefusal}>
              Dismiss
            </button>
          </div>
        )}
        <div className={tab === "canvas" ? "flex flex-col md:h-[max(420px,calc(100vh-300px))] md:flex-row" : "hidden"}>
          <Palette onAdd={add} self={doc.name} />
          <div className="relative h-[420px] min-w-0 md:h-auto md:flex-1" ref={canvasBox}>
            <EditorCanvas editor={editor} phases={phases} locked={locked} minimap={minimap} />
            {Object.keys(doc.steps).length === 0 && (
              <p className="pointer-events-none absolute inset-x-0 top-1/3 text-center text-sm text-slate-600">Add a step from the palette: click it, or drag it here.</p>
            )}
          </div>
          {selectedStep && step ? (
            <StepPanel
              key={selectedStep}
              name={selectedStep}
              step={step}
              problems={problems.byStep.get(selectedStep) ?? []}
              locked={locked.has(selectedStep)}
              phase={phases[selectedStep] ?? null}
              self={doc.name}
              onRename={(to) => actions.rename(selectedStep, to)}
              onChange={(next) => actions.update(selectedStep, next)}
              onDelete={actions.deleteSelection}
              onClose={() => editor.setSelection({ nodes: [], edges: [] })}
            />
          ) : (
            <WorkflowPanel doc={doc} creating={creating} onChange={actions.setWorkflow} />
          )}
        </div>
        {tab === "yaml" && (
          <YamlPane
            text={yaml.text}
            problems={yaml.problems}
            readOnly={false}
            onChange={(t) => {
              actions.typeYaml(t);
              setFitRequest((n) => n + 1);
            }}
          />
        )}
        <div className="border-t border-slate-100">
          <ProblemList problems={problems} yamlInvalid={yaml.typedInvalid} onSelect={(s) => editor.setSelection({ nodes: [s], edges: [] })} />
        </div>
      </Card>
      <SaveBar doc={doc} workflow={workflow} dirty={dirty} blocked={problems.all.length > 0 ? `${problems.all.length} problem(s) to fix first` : yaml.typedInvalid ? "the YAML has problems" : null} />
    </div>
  );
}

/**
 * The workflow editor (issue 9): a palette, the canvas (steps as nodes, dependencies as
 * edges; cycles refused as they are drawn), the selected step's panel, a YAML tab that
 * round-trips with the canvas, the draft's problems pinned to its steps, then Save draft and
 * Run. `workflow` unset: a new workflow.
 */
export function WorkflowEditor({ workflow }: { workflow?: WorkflowObject }) {
  return (
    <ReactFlowProvider>
      <EditorBody workflow={workflow} />
    </ReactFlowProvider>
  );
}
