"use client";

import { useCallback, useMemo, useRef, useState } from "react";
import {
  addStep,
  applyLayout,
  connect,
  copySteps,
  deleteEdges,
  deleteSteps,
  draftProblems,
  fromYaml,
  historyOf,
  moveSteps,
  pasteSteps,
  placeMissing,
  pushHistory,
  redo,
  renameStep,
  replacePresent,
  toYaml,
  undo,
  updateStep,
  type Clip,
  type EditorDoc,
  type Locked,
  type NewStep,
  type Outcome,
  type StepDraft,
  type XY,
} from "@/lib/workflow-editor";
import type { WorkflowSpec } from "@/lib/workflow-spec";
import type { YamlProblem } from "@/lib/yaml-problems";
import { layoutRunGraph } from "../run-graph";

export type WorkflowPatch = Partial<Pick<EditorDoc, "name" | "failFast" | "activeDeadlineSeconds" | "schedule">>;

export interface Selection {
  nodes: string[];
  edges: string[];
}
const NOTHING: Selection = { nodes: [], edges: [] };

/** dagre left to right, as the run view lays the same steps out. */
export function layoutSteps(steps: Record<string, StepDraft>): ReadonlyMap<string, XY> {
  // The layout reads the dependencies only, which a draft step has in the spec's shape.
  return layoutRunGraph({ steps: steps as WorkflowSpec["steps"] }).positions;
}

/**
 * The editor's state: the document with its undo history, the selection, the last refusal
 * (why a connection or a change was not made) and the YAML as typed. Every rule is
 * lib/workflow-editor's; this only keeps the state and says which change is an undo entry.
 */
export function useEditor(initial: EditorDoc, locked: Locked, original: Record<string, StepDraft> | undefined, yamlShown: boolean) {
  const [history, setHistory] = useState(() => historyOf(placeMissing(initial, layoutSteps)));
  const [selection, setSelection] = useState<Selection>(NOTHING);
  const [refusal, setRefusal] = useState<string | null>(null);
  // The YAML as the operator typed it, while it is what produced the current document (or failed to).
  const [typed, setTyped] = useState<{ text: string; problems: YamlProblem[]; forDoc: EditorDoc } | null>(null);
  const clipboard = useRef<Clip | null>(null);
  const pastes = useRef(0);
  const dragging = useRef(false);
  const doc = history.present;

  // Stable callbacks for React Flow read the latest state through refs.
  const latest = useRef({ doc, locked, selection });
  latest.current = { doc, locked, selection };

  const commit = useCallback((next: EditorDoc) => {
    setRefusal(null);
    setHistory((h) => pushHistory(h, next));
  }, []);
  const apply = useCallback(
    (outcome: Outcome): boolean => {
      if (!outcome.ok) {
        setRefusal(outcome.reason);
        return false;
      }
      commit(outcome.doc);
      return true;
    },
    [commit],
  );

  const actions = useMemo(
    () => ({
      refuse: (reason: string) => setRefusal(reason),
      dismissRefusal: () => setRefusal(null),
      connect: (source: string, target: string) => apply(connect(latest.current.doc, source, target, latest.current.locked)),
      add: (what: NewStep, position: XY) => {
        const r = addStep(latest.current.doc, what, position);
        commit(r.doc);
        setSelection({ nodes: [r.name], edges: [] });
        return r.name;
      },
      update: (name: string, step: StepDraft) => apply(updateStep(latest.current.doc, name, step, latest.current.locked)),
      rename: (from: string, to: string) => {
        const ok = apply(renameStep(latest.current.doc, from, to, latest.current.locked));
        if (ok) setSelection((s) => ({ ...s, nodes: s.nodes.map((n) => (n === from ? to : n)) }));
        return ok;
      },
      setWorkflow: (patch: WorkflowPatch) => {
        const next: EditorDoc = { ...latest.current.doc, ...patch };
        if ("activeDeadlineSeconds" in patch && patch.activeDeadlineSeconds === undefined) delete next.activeDeadlineSeconds;
        if ("schedule" in patch && patch.schedule === undefined) delete next.schedule;
        commit(next);
      },
      /** Node drags: the first move of a drag is an undo entry, the rest replace it. */
      move: (moves: Record<string, XY>, done: boolean) => {
        if (Object.keys(moves).length > 0) {
          const next = moveSteps(latest.current.doc, moves);
          if (!dragging.current) setHistory((h) => pushHistory(h, next));
          else setHistory((h) => replacePresent(h, next));
          dragging.current = true;
        }
        if (done) dragging.current = false;
      },
      deleteSelection: () => {
        const { doc: d, selection: s, locked: l } = latest.current;
        const edges = s.edges.flatMap((id) => {
          const [source, target] = id.split("->");
          return source && target ? [{ source, target }] : [];
        });
        const r1 = deleteEdges(d, edges, l);
        if (!r1.ok) return void setRefusal(r1.reason);
        const r2 = deleteSteps(r1.doc, s.nodes, l);
        if (!r2.ok) return void setRefusal(r2.reason);
        commit(r2.doc);
        setSelection(NOTHING);
      },
      copy: () => {
        const { doc: d, selection: s } = latest.current;
        if (s.nodes.length === 0) return;
        clipboard.current = copySteps(d, s.nodes);
        pastes.current = 0;
      },
      paste: () => {
        if (!clipboard.current) return;
        // Each paste lands a little further, so copies do not hide each other.
        pastes.current += 1;
        const r = pasteSteps(latest.current.doc, clipboard.current, { x: 40 * pastes.current, y: 40 * pastes.current });
        commit(r.doc);
        setSelection({ nodes: r.names, edges: [] });
      },
      clearSelection: () => setSelection(NOTHING),
      selectAll: () => setSelection({ nodes: Object.keys(latest.current.doc.steps), edges: [] }),
      undo: () => {
        setRefusal(null);
        setHistory(undo);
      },
      redo: () => {
        setRefusal(null);
        setHistory(redo);
      },
      layout: () => commit(applyLayout(latest.current.doc, layoutSteps)),
      /** YAML typed: the canvas follows when it is a valid Workflow; else its problems show and the canvas stays. */
      typeYaml: (text: string) => {
        const r = fromYaml(text, latest.current.doc);
        if (r.doc) {
          const next = placeMissing(r.doc, layoutSteps);
          setHistory((h) => pushHistory(h, next));
          setTyped({ text, problems: [], forDoc: next });
        } else setTyped({ text, problems: r.problems, forDoc: latest.current.doc });
      },
    }),
    [apply, commit],
  );

  const problems = useMemo(() => draftProblems(doc, { locked, ...(original ? { original } : {}) }), [doc, locked, original]);
  // Written (and its problems found at their lines) only while the YAML tab shows: a big graph's canvas edits stay cheap.
  const generated = useMemo(() => {
    if (!yamlShown) return { text: "", problems: [] as YamlProblem[] };
    const text = toYaml(doc);
    // The canvas's own YAML has the draft's problems, at their lines.
    return { text, problems: problems.all.length ? fromYaml(text).problems : [] };
  }, [doc, problems, yamlShown]);
  // The text as typed while it belongs to this document; a canvas change (or undo) writes it anew.
  const yaml = typed && typed.forDoc === doc ? { text: typed.text, problems: typed.problems, typedInvalid: typed.problems.length > 0 } : { ...generated, typedInvalid: false };

  return { doc, history, selection, setSelection, refusal, problems, yaml, actions };
}

export type Editor = ReturnType<typeof useEditor>;
