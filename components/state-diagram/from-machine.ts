/** A state table of lib/state-machine as a diagram spec: the console draws the same data the engine enforces. */
import type { StateMachine } from "@/lib/state-machine";
import type { DiagramSpec } from "./types";

const cache = new WeakMap<StateMachine<string>, DiagramSpec>();

export function specFromMachine(machine: StateMachine<string>, direction: DiagramSpec["direction"] = "LR"): DiagramSpec {
  const cached = cache.get(machine);
  if (cached && cached.direction === direction) return cached;
  const spec: DiagramSpec = {
    direction,
    initial: machine.initial,
    states: Object.entries(machine.states).map(([id, def]) => ({
      id,
      description: def.description,
      groups: def.group ?? [],
      transient: def.transient ?? false,
      notYetSupported: def.notYetSupported ?? false,
      terminal: def.terminal ?? false,
    })),
    transitions: machine.transitions.map((t) => ({ from: t.from, to: t.to, ...(t.label ? { label: t.label } : {}), ...(t.by ? { by: t.by } : {}) })),
  };
  cache.set(machine, spec);
  return spec;
}
