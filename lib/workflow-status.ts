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
  ],
});
export type StepPhase = keyof typeof stepMachine.states;
export const STEP_PHASES = Object.keys(stepMachine.states) as StepPhase[];

export function isEndedStep(phase: StepPhase): boolean {
  return stepMachine.states[phase].terminal === true;
}
