/**
 * lib/plan-status's tables as diagram specs, readable at page width: each move's label to its
 * first clause ("a node can be signalled, or stopped qualifying" → "a node can be signalled";
 * the whole text is in the table and in the events), and only the operator's moves marked by
 * who makes them: every other move is the plan engine's (the cards say so), and a "· server"
 * on each edge made the plan's diagram too wide to read. Same states, same moves as the plan
 * engine asserts.
 */
import { planMachine, planNodeMachine } from "@/lib/plan-status";
import { specFromMachine } from "../state-diagram/from-machine";
import type { DiagramSpec } from "../state-diagram/types";

const shortLabel = (label: string | undefined) => (label ? (label.split(/[,:(]/)[0] ?? label).trim() : undefined);

function readable(spec: DiagramSpec): DiagramSpec {
  return {
    ...spec,
    transitions: spec.transitions.map((t) => {
      const label = shortLabel(t.label);
      return { from: t.from, to: t.to, ...(label ? { label } : {}), ...(t.by && t.by !== "server" ? { by: t.by } : {}) };
    }),
  };
}

/** Plans and commands share the same processing states. Each laid out in the order that draws it with the fewest crossings (diagram-specs.test.ts). */
export const planDiagramSpec: DiagramSpec = { ...readable(specFromMachine(planMachine)), order: 27 };
export const planNodeDiagramSpec: DiagramSpec = { ...readable(specFromMachine(planNodeMachine)), order: 24 };
