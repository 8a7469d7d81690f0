/**
 * Workflows (seed 001, DESIGN.md §6) as data: the phases of a workflow run and of its steps,
 * the moves between them and who makes each. The workflow engine (lib/workflow.ts) makes only
 * the moves these tables list and asserts them; the console draws the same tables, and the
 * run view colours each step by its phase. Argo's node phases where they mean the same
 * (research/engines.md B.2): Pending, Running, Succeeded, Failed, Skipped (`when` false),
 * Omitted (never ran: a dependency failed or was omitted, or the run ended first); Drover adds
 * Retrying (an attempt failed, the next waits out its backoff).
 */
import { defineStateMachine } from "./state-machine";
import type { ActionState } from "./action-status";

export const workflowMachine = defineStateMachine({
  name: "Workflow",
  initial: "Pending",
  states: {
    Pending: { description: "Saved; its run has not started (a draft, or waiting for its schedule)." },
    Running: { description: "Steps start as their dependencies are satisfied (Succeeded or Skipped)." },
    Succeeded: { terminal: true, description: "Every step Succeeded or was Skipped (condition Complete)." },
    Failed: { terminal: true, description: "A step failed (StepFailed), the deadline passed (DeadlineExceeded), or an operator stopped it (Cancelled)." },
  },
  transitions: [
    { from: "Pending", to: "Running", label: "start (create, rerun, schedule)", by: "operator" },
    { from: "Running", to: "Succeeded", label: "every step ended Succeeded or Skipped", by: "server" },
    { from: "Running", to: "Failed", label: "a step failed, deadline, or cancel", by: "server" },
    { from: "Succeeded", to: "Pending", label: "rerun", by: "operator" },
    { from: "Failed", to: "Pending", label: "rerun", by: "operator" },
  ],
});
export type WorkflowPhase = keyof typeof workflowMachine.states;
export const WORKFLOW_PHASES = Object.keys(workflowMachine.states) as WorkflowPhase[];

export const WORKFLOW_FAILURE_REASONS = ["StepFailed", "DeadlineExceeded", "Cancelled"] as const;
export type WorkflowFailureReason = (typeof WORKFLOW_FAILURE_REASONS)[number];

export const stepMachine = defineStateMachine({
  name: "WorkflowStep",
  initial: "Pending",
  states: {
    Pending: { description: "Waiting for its dependencies (the step says which)." },
    Running: { description: "Its actions run on the targets (a job), or the referenced workflow runs." },
    Retrying: { description: "An attempt failed and retries are left: the next attempt waits out its backoff." },
    Succeeded: { terminal: true, description: "Every target's action is DONE (a job), or the referenced workflow Succeeded." },
    Failed: { terminal: true, description: "The last attempt failed (a target's action FAILED, CANCELLED or LOST; the reference Failed) or the deadline passed." },
    Skipped: { terminal: true, description: "Its `when` was false once its dependencies ended; satisfies its dependents like Succeeded." },
    Omitted: { terminal: true, description: "Never ran: a dependency Failed or was Omitted, or the run ended (failFast, deadline, cancel) first." },
  },
  transitions: [
    { from: "Pending", to: "Running", label: "dependencies satisfied (and `when` true)", by: "server" },
    { from: "Pending", to: "Skipped", label: "`when` false", by: "server" },
    { from: "Pending", to: "Omitted", label: "a dependency failed, or the run ended", by: "server" },
    { from: "Running", to: "Succeeded", label: "every target DONE / the reference Succeeded", by: "server" },
    { from: "Running", to: "Retrying", label: "attempt failed, retries left", by: "server" },
    { from: "Retrying", to: "Running", label: "backoff passed: next attempt", by: "server" },
    { from: "Running", to: "Failed", label: "attempt failed, no retry left; deadline; cancel", by: "server" },
    { from: "Retrying", to: "Failed", label: "deadline, cancel, failFast, or maxDuration reached", by: "server" },
    { from: "Failed", to: "Running", label: "an operator skipped or retried the target(s) it failed for (the run still going)", by: "operator" },
    { from: "Retrying", to: "Running", label: "an operator retried a target, or skipped the last failed one", by: "operator" },
    { from: "Omitted", to: "Pending", label: "the failed dependency it was omitted for was reopened by an operator", by: "operator" },
  ],
});
export type StepPhase = keyof typeof stepMachine.states;
export const STEP_PHASES = Object.keys(stepMachine.states) as StepPhase[];

export function isEndedStep(phase: StepPhase): boolean {
  return stepMachine.states[phase].terminal === true;
}

/**
 * One target of a job step's attempt (issue 21): a device and the action the step made for it.
 * Its phase is derived from that action (`targetPhase`), except Skipped, which an operator
 * sets. The operator's moves (skip, retry) are the `by: "operator"` rows: the server refuses
 * any other with 409 and the console offers only these buttons.
 */
export const targetMachine = defineStateMachine({
  name: "WorkflowTarget",
  initial: "Waiting",
  states: {
    Waiting: { description: "Its action waits for approval or to be offered (PENDING_APPROVE, PENDING_SCHEDULE)." },
    Running: { description: "Its agent has the action (NEW, RUNNING)." },
    Done: { terminal: true, description: "Its action is DONE." },
    Failed: { description: "Its action ended FAILED, CANCELLED or LOST (or is gone), or it got none (no such device, not Enrolled)." },
    Skipped: { terminal: true, description: "An operator moved on without it, with a reason: it counts as finished, not as a failure, so the step can succeed without it." },
  },
  transitions: [
    { from: "Waiting", to: "Running", label: "offered to its agent", by: "server" },
    { from: "Waiting", to: "Failed", label: "rejected, cancelled or expired", by: "server" },
    { from: "Running", to: "Done", label: "DONE", by: "agent" },
    { from: "Running", to: "Failed", label: "FAILED, CANCELLED, LOST", by: "agent" },
    { from: "Waiting", to: "Skipped", label: "skip: its action is cancelled", by: "operator" },
    { from: "Running", to: "Skipped", label: "skip: its action is cancelled through its agent", by: "operator" },
    { from: "Failed", to: "Skipped", label: "skip", by: "operator" },
    { from: "Failed", to: "Waiting", label: "retry: a new action, a rerun of the last", by: "operator" },
  ],
});
export type TargetPhase = keyof typeof targetMachine.states;
export const TARGET_PHASES = Object.keys(targetMachine.states) as TargetPhase[];
export type TargetMove = "skip" | "retry";

/** A target's phase from what the server holds: skipped by an operator, the error it got instead of an action, its action's state (null: the action is gone). */
export function targetPhase(t: { skipped: boolean; error: string | null; actionState: ActionState | null }): TargetPhase {
  if (t.skipped) return "Skipped";
  if (t.error !== null || t.actionState === null) return "Failed";
  switch (t.actionState) {
    case "PENDING_APPROVE":
    case "PENDING_SCHEDULE":
      return "Waiting";
    case "NEW":
    case "RUNNING":
      return "Running";
    case "DONE":
      return "Done";
    default:
      return "Failed";
  }
}

/** Where an operator's move takes a target: skip → Skipped, retry → Waiting (a new action). */
export const TARGET_MOVE_TO: Record<TargetMove, TargetPhase> = { skip: "Skipped", retry: "Waiting" };

/** Steps whose targets an operator may skip or retry: started and not Succeeded (a Failed one is reopened). */
const STEP_PHASES_WITH_MOVES: readonly StepPhase[] = ["Running", "Retrying", "Failed"];

/**
 * The moves an operator may make on a target now: the table's operator rows from its phase,
 * only while the run is Running and its step is Running, Retrying or Failed.
 */
export function targetMoves(target: TargetPhase, step: StepPhase, run: WorkflowPhase): TargetMove[] {
  if (run !== "Running" || !STEP_PHASES_WITH_MOVES.includes(step)) return [];
  return (Object.keys(TARGET_MOVE_TO) as TargetMove[]).filter((m) => targetMachine.transitions.some((t) => t.from === target && t.to === TARGET_MOVE_TO[m] && t.by === "operator"));
}
