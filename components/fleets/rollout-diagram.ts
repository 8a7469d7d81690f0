/**
 * lib/rollout-status's table as a diagram spec, made readable at page width: each move's
 * label to its first clause ("auto-pause: restarts > autoPause.maxRestarts" → "auto-pause";
 * the whole text is in the table and in the events), and the moves every in-progress phase
 * makes alike (abort, superseded) as one edge from the InProgress group. Same states, same
 * moves as the engine enforces.
 */
import { rolloutMachine } from "@/lib/rollout-status";
import { specFromMachine } from "../state-diagram/from-machine";
import type { DiagramSpec, DiagramTransition } from "../state-diagram/types";

const shortLabel = (label: string | undefined) => (label ? (label.split(/[:(]/)[0] ?? label).trim() : undefined);

function build(): DiagramSpec {
  const spec = specFromMachine(rolloutMachine);
  const inProgress = spec.states.filter((s) => s.groups?.includes("InProgress")).map((s) => s.id);
  // Targets every in-progress phase moves to with the same label: drawn once, from the group.
  const fromAll = new Set(
    [...new Set(spec.transitions.map((t) => `${t.to}\u0000${t.label ?? ""}`))].filter((key) => {
      const [to, label] = key.split("\u0000");
      return inProgress.every((from) => spec.transitions.some((t) => t.from === from && t.to === to && (t.label ?? "") === label));
    }),
  );
  const transitions: DiagramTransition[] = spec.transitions.map((t) => {
    if (fromAll.has(`${t.to}\u0000${t.label ?? ""}`)) return { from: t.from, to: t.to };
    const label = shortLabel(t.label);
    return { from: t.from, to: t.to, ...(label ? { label } : {}), ...(t.by ? { by: t.by } : {}) };
  });
  // Top to bottom: the phases read in order and the labels fit the page's width; laid out in
  // the order that draws it with no crossing lines (diagram-specs.test.ts).
  return { ...spec, direction: "TB", transitions, order: 22 };
}

export const rolloutDiagramSpec: DiagramSpec = build();
