/**
 * A fleet rollout's phases (DESIGN.md §3, seed 002) as data: the states, the moves between
 * them, and who makes each move. The rollout engine (lib/rollout.ts) makes only the moves
 * this table lists and asserts it; the console draws the same table live.
 *
 * `by: "server"` is the rollout controller (the only writer of a rollout's status, seed
 * 002's "one owner per status"); `by: "operator"` is a pause / resume / promote / abort
 * request that the controller acts on. Operators never write the status themselves.
 */
import { defineStateMachine } from "./state-machine";

export const rolloutMachine = defineStateMachine({
  name: "Rollout",
  initial: "New",
  states: {
    New: {
      transient: true,
      description: "A new template version to roll out; the rollout controller picks the first phase on its first tick (never stored).",
    },
    Canary: { group: ["InProgress"], description: "The canary devices get the new version; every other member keeps the one it runs." },
    CanaryPaused: {
      group: ["InProgress"],
      description: "The canary is paused (restarts over autoPause.maxRestarts, or an operator); nothing else gets the new version.",
    },
    RollingOut: {
      group: ["InProgress"],
      description: "Batch by batch: the current batch's devices get the new version within the disruption budget.",
    },
    Suspended: {
      group: ["InProgress"],
      description: "A batch finished under its success threshold; waits for an operator to promote (continue anyway) or abort.",
    },
    Paused: { group: ["InProgress"], description: "Paused by an operator after the canary; nothing new is rendered until resumed." },
    Completed: { terminal: true, description: "Every member has been given the new version." },
    CanaryFailed: {
      terminal: true,
      description: "The canary failed (restarts over autoFail.maxRestarts, a failed update, or the canary timeout); the fleet reverts to the previous version.",
    },
    Aborted: { terminal: true, description: "An operator aborted the rollout; the fleet reverts to the previous version." },
    Superseded: { terminal: true, description: "A newer template version started its own rollout before this one finished." },
  },
  transitions: [
    { from: "New", to: "Canary", label: "the policy has a canary", by: "server" },
    { from: "New", to: "RollingOut", label: "no canary (or no policy, or the fleet's first version)", by: "server" },

    { from: "Canary", to: "CanaryPaused", label: "auto-pause: restarts > autoPause.maxRestarts", by: "server" },
    { from: "Canary", to: "CanaryPaused", label: "pause", by: "operator" },
    { from: "CanaryPaused", to: "Canary", label: "resume (overrides auto-pause)", by: "operator" },
    { from: "Canary", to: "CanaryFailed", label: "auto-fail: restarts, failed update, canary timeout", by: "server" },
    { from: "CanaryPaused", to: "CanaryFailed", label: "auto-fail: restarts, failed update, canary timeout", by: "server" },
    { from: "Canary", to: "RollingOut", label: "canary ended: duration and noRestartsDuration passed, devices updated", by: "server" },
    { from: "Canary", to: "RollingOut", label: "promote", by: "operator" },
    { from: "CanaryPaused", to: "RollingOut", label: "promote", by: "operator" },

    { from: "RollingOut", to: "Suspended", label: "batch under its success threshold", by: "server" },
    { from: "Suspended", to: "RollingOut", label: "promote: next batch", by: "operator" },
    { from: "Suspended", to: "Completed", label: "promote: it was the last batch", by: "operator" },
    { from: "RollingOut", to: "Paused", label: "pause", by: "operator" },
    { from: "Paused", to: "RollingOut", label: "resume", by: "operator" },
    { from: "RollingOut", to: "Completed", label: "last batch done at or over its threshold", by: "server" },

    ...(["Canary", "CanaryPaused", "RollingOut", "Suspended", "Paused"] as const).flatMap((from) => [
      { from, to: "Aborted" as const, label: "abort", by: "operator" as const },
      { from, to: "Superseded" as const, label: "a newer template version", by: "server" as const },
    ]),
  ],
});

export type RolloutPhase = keyof typeof rolloutMachine.states;
export type RolloutActor = "server" | "operator";

export const ROLLOUT_PHASES = Object.keys(rolloutMachine.states) as RolloutPhase[];
export const TERMINAL_ROLLOUT_PHASES = ["Completed", "CanaryFailed", "Aborted", "Superseded"] as const satisfies readonly RolloutPhase[];
/**
 * A stage's status in a rollout's progress (the canary, each batch): pending, active, done
 * (evaluated and passed on, or the rollout Completed), failed (the canary that ended the rollout
 * CanaryFailed), stopped (running when the rollout was Aborted or Superseded).
 */
export const STAGE_STATUSES = ["pending", "active", "done", "failed", "stopped"] as const;
export type StageStatus = (typeof STAGE_STATUSES)[number];
/** The status of the stage a rollout ended in: failed (CanaryFailed), done (Completed), else stopped. */
export function endedStageStatus(phase: RolloutPhase): StageStatus {
  return phase === "CanaryFailed" ? "failed" : phase === "Completed" ? "done" : "stopped";
}
/** Phases whose outcome sends the fleet back to the previous template version (decision C-1). */
export const REVERTING_ROLLOUT_PHASES = ["CanaryFailed", "Aborted"] as const satisfies readonly RolloutPhase[];

export function isTerminalRolloutPhase(phase: RolloutPhase): boolean {
  return (TERMINAL_ROLLOUT_PHASES as readonly string[]).includes(phase);
}

/** Whether `by` may make this move (the table says who makes each). */
export function canMoveRollout(from: RolloutPhase, to: RolloutPhase, by: RolloutActor): boolean {
  return rolloutMachine.transitions.some((t) => t.from === from && t.to === to && t.by === by);
}

export class RolloutMoveError extends Error {
  constructor(
    readonly from: RolloutPhase,
    readonly to: RolloutPhase,
    readonly by: RolloutActor,
  ) {
    super(`Rollout: the ${by === "server" ? "rollout controller" : "operator"} cannot move ${from} -> ${to}`);
    this.name = "RolloutMoveError";
  }
}

export function assertRolloutMove(from: RolloutPhase, to: RolloutPhase, by: RolloutActor): void {
  if (!canMoveRollout(from, to, by)) throw new RolloutMoveError(from, to, by);
}
