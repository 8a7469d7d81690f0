/**
 * The rollout's phase table (DESIGN.md §3, seed 002), row by row. The expected table is
 * written out here, not read from lib/rollout-status.ts, so a changed row fails a test.
 */
import { describe, expect, it } from "vitest";
import {
  assertRolloutMove,
  canMoveRollout,
  isTerminalRolloutPhase,
  REVERTING_ROLLOUT_PHASES,
  ROLLOUT_PHASES,
  rolloutMachine,
  RolloutMoveError,
  TERMINAL_ROLLOUT_PHASES,
  type RolloutActor,
  type RolloutPhase,
} from "./rollout-status";
import { nextStates } from "./state-machine";

const ROLLING = ["Canary", "CanaryPaused", "RollingOut", "Suspended", "Paused"] as const;

/** Every allowed move, who makes it, and the rule it comes from. */
const TABLE: [from: RolloutPhase, to: RolloutPhase, by: RolloutActor, rule: string][] = [
  ["New", "Canary", "server", "the policy has a canary"],
  ["New", "RollingOut", "server", "no canary, no policy, or the fleet's first version"],
  ["Canary", "CanaryPaused", "server", "auto-pause: restarts > autoPause.maxRestarts (EDS)"],
  ["Canary", "CanaryPaused", "operator", "pause request (EDS canary-paused annotation)"],
  ["CanaryPaused", "Canary", "operator", "resume request (EDS canary-unpaused, overrides auto-pause)"],
  ["Canary", "CanaryFailed", "server", "auto-fail: restarts, failed update, canary timeout"],
  ["CanaryPaused", "CanaryFailed", "server", "auto-fail applies while paused (canaryTimeout guards long pauses)"],
  ["Canary", "RollingOut", "server", "canary ended: duration, noRestartsDuration, devices updated"],
  ["Canary", "RollingOut", "operator", "promote (manual validation, or early)"],
  ["CanaryPaused", "RollingOut", "operator", "promote a paused canary (EDS: valid overrides paused)"],
  ["RollingOut", "Suspended", "server", "a batch under its success threshold"],
  ["Suspended", "RollingOut", "operator", "promote approves the next batch"],
  ["Suspended", "Completed", "operator", "promote after the last batch"],
  ["RollingOut", "Paused", "operator", "pause request"],
  ["Paused", "RollingOut", "operator", "resume request"],
  ["RollingOut", "Completed", "server", "last batch at or over its threshold"],
  ...ROLLING.flatMap((from): [RolloutPhase, RolloutPhase, RolloutActor, string][] => [
    [from, "Aborted", "operator", "abort request"],
    [from, "Superseded", "server", "a newer template version"],
  ]),
];

describe("rollout phases", () => {
  it("are the engine's ten phases, New the transient start", () => {
    expect([...ROLLOUT_PHASES].sort()).toEqual(["Aborted", "Canary", "CanaryFailed", "CanaryPaused", "Completed", "New", "Paused", "RollingOut", "Superseded", "Suspended"]);
    expect(rolloutMachine.initial).toBe("New");
    expect(rolloutMachine.states.New.transient).toBe(true);
  });

  it("terminal phases have no way out; the others all do", () => {
    expect([...TERMINAL_ROLLOUT_PHASES].sort()).toEqual(["Aborted", "CanaryFailed", "Completed", "Superseded"]);
    for (const p of ROLLOUT_PHASES) {
      const terminal = (TERMINAL_ROLLOUT_PHASES as readonly string[]).includes(p);
      expect(isTerminalRolloutPhase(p), p).toBe(terminal);
      expect(rolloutMachine.states[p].terminal === true, p).toBe(terminal);
      expect(nextStates(rolloutMachine, p).length === 0, p).toBe(terminal);
    }
    expect([...REVERTING_ROLLOUT_PHASES].sort()).toEqual(["Aborted", "CanaryFailed"]);
  });

  it("every phase is reachable from New", () => {
    const seen = new Set<string>(["New"]);
    const queue: RolloutPhase[] = ["New"];
    while (queue.length > 0) {
      for (const n of nextStates(rolloutMachine, queue.shift()!)) {
        if (!seen.has(n)) {
          seen.add(n);
          queue.push(n);
        }
      }
    }
    expect([...seen].sort()).toEqual([...ROLLOUT_PHASES].sort());
  });

  it("the machine holds exactly the documented moves, each with a label", () => {
    expect(rolloutMachine.transitions.map((t) => `${t.from}->${t.to}:${t.by}`).sort()).toEqual(TABLE.map(([f, t, b]) => `${f}->${t}:${b}`).sort());
    for (const t of rolloutMachine.transitions) expect(t.label, `${t.from}->${t.to}`).toBeTruthy();
  });

  it("only the rollout controller (server) and operators make moves", () => {
    expect(new Set(rolloutMachine.transitions.map((t) => t.by))).toEqual(new Set(["server", "operator"]));
  });
});

describe("canMoveRollout / assertRolloutMove", () => {
  it.each(TABLE)("%s → %s is allowed for %s (%s)", (from, to, by) => {
    expect(canMoveRollout(from, to, by)).toBe(true);
    expect(() => assertRolloutMove(from, to, by)).not.toThrow();
  });

  const others = TABLE.filter(([f, t, b]) => !TABLE.some(([f2, t2, b2]) => f2 === f && t2 === t && b2 !== b)).map(
    ([f, t, b]) => [f, t, b === "server" ? "operator" : "server"] as [RolloutPhase, RolloutPhase, RolloutActor],
  );
  it.each(others)("%s → %s is refused for %s", (from, to, by) => {
    expect(canMoveRollout(from, to, by)).toBe(false);
    expect(() => assertRolloutMove(from, to, by)).toThrow(RolloutMoveError);
  });

  it.each([
    ["Completed", "RollingOut"],
    ["CanaryFailed", "Canary"],
    ["Suspended", "Paused"],
    ["Paused", "Suspended"],
    ["RollingOut", "Canary"],
    ["New", "Completed"],
    ["Canary", "Completed"],
  ] as [RolloutPhase, RolloutPhase][])("%s → %s is refused for everyone", (from, to) => {
    for (const by of ["server", "operator"] as const) expect(() => assertRolloutMove(from, to, by)).toThrow(/cannot move/);
  });
});
