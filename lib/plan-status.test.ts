import { describe, expect, it } from "vitest";
import { nextStates, stateNames, type StateMachine } from "./state-machine";
import { ERROR_PLAN_STATES, planMachine, planNodeMachine } from "./plan-status";

function reachable<S extends string>(m: StateMachine<S>): Set<S> {
  const seen = new Set<S>([m.initial]);
  const todo = [m.initial];
  while (todo.length) {
    for (const n of nextStates(m, todo.pop()!)) {
      if (seen.has(n)) continue;
      seen.add(n);
      todo.push(n);
    }
  }
  return seen;
}

describe("plan state machines", () => {
  it("every state is reachable from the initial one, and only terminal states have no way out", () => {
    for (const m of [planMachine, planNodeMachine] as StateMachine<string>[]) {
      expect([...reachable(m)].sort()).toEqual(stateNames(m).sort());
      for (const s of stateNames(m)) expect(nextStates(m, s).length === 0, `${m.name} ${s}`).toBe(m.states[s]!.terminal === true);
    }
  });

  it("keeps the seed's core states and error states, plus ApplyFailed (decision A-1), Cancelled and DeadlineExceeded", () => {
    expect(ERROR_PLAN_STATES.sort()).toEqual(
      ["ApplyFailed", "Cancelled", "DeadlineExceeded", "IncompleteTargets", "InconsistentTargets", "MissingPlatform", "MissingSignalNode", "Restricted"].sort(),
    );
    // The seed's node states, plus SignalSkipped: an operator's way past a node (issue 21).
    expect(stateNames(planNodeMachine).sort()).toEqual(["SignalApplyFailed", "SignalCompleted", "SignalMissingNode", "SignalMissingPlatform", "SignalPending", "SignalSent", "SignalSkipped"]);
  });

  it("only an operator skips a node, and only one that waits or was signalled", () => {
    const into = planNodeMachine.transitions.filter((t) => t.to === "SignalSkipped");
    expect(into.map((t) => [t.from, t.by]).sort()).toEqual([
      ["SignalPending", "operator"],
      ["SignalSent", "operator"],
    ]);
  });
});
