/**
 * Plans (seed 000, DESIGN.md §5) as data: the processing states that plans and commands share,
 * the per-node signal states, the moves between them and who makes each. The plan engine
 * (lib/plan.ts) makes only the moves these tables list and asserts them; the console draws the
 * same tables live. Also the shapes the server answers with (`PlanView`), for console and CLI.
 *
 * Error states (decision A-1, research/engines.md A.2): the seed's five, each with the seed's
 * meaning, plus ApplyFailed (a node's update failed). Drover adds two ends the seed has no
 * name for: Cancelled (an operator cancelled the plan) and DeadlineExceeded (the plan's
 * optional deadline passed). The core treats every state but the four core ones as an error
 * (seed 000 "Error States").
 */
import { defineStateMachine } from "./state-machine";
import type { PlanCommandKind, PlanGroup } from "./plan-spec";
import type { ActionState } from "./action-status";

export const planMachine = defineStateMachine({
  name: "Plan",
  initial: "NewPlan",
  states: {
    NewPlan: { group: ["Core"], description: "Just created: a status entry per command (same index) and each command's nodes discovered, once." },
    SchedulableWait: { group: ["Core"], description: "Evaluate the active command: refresh its nodes from their actions and decide whether a node can be signalled." },
    Schedulable: {
      group: ["Core"],
      transient: true,
      description: "Signal the next nodes (or record why one no longer qualifies), then back to SchedulableWait. Entered and left within one pass.",
    },
    Completed: { group: ["Core"], terminal: true, description: "Every node SignalCompleted (a plan: every command Completed). No further processing." },
    IncompleteTargets: { group: ["Errors"], terminal: true, description: "A node named for discovery does not exist as an Enrolled device of that role (NewPlan)." },
    InconsistentTargets: { group: ["Errors"], terminal: true, description: "A node probe failed: a discovered node's role or labels no longer match how it was discovered." },
    Restricted: { group: ["Errors"], terminal: true, description: "The command targets a node type excluded by DROVER_EXCLUDE_FROM_PLANS (NewPlan)." },
    MissingPlatform: { group: ["Errors"], terminal: true, description: "A node's platform has no entry in the command's platforms." },
    MissingSignalNode: { group: ["Errors"], terminal: true, description: "A node discovered at NewPlan no longer exists or is no longer Enrolled." },
    ApplyFailed: { group: ["Errors"], terminal: true, description: "A node's action ended FAILED, CANCELLED or LOST: the node is SignalApplyFailed, with why." },
    Cancelled: { group: ["Errors"], terminal: true, description: "An operator cancelled the plan: nothing more is signalled, unfinished actions are cancelled." },
    DeadlineExceeded: { group: ["Errors"], terminal: true, description: "The plan's deadline passed before it completed; unfinished actions are cancelled." },
  },
  transitions: [
    { from: "NewPlan", to: "SchedulableWait", label: "nodes discovered", by: "server" },
    { from: "NewPlan", to: "IncompleteTargets", label: "a named node is missing", by: "server" },
    { from: "NewPlan", to: "Restricted", label: "excluded node type", by: "server" },
    { from: "NewPlan", to: "MissingPlatform", label: "no file for a node's platform", by: "server" },
    { from: "NewPlan", to: "Cancelled", label: "cancel", by: "operator" },
    { from: "SchedulableWait", to: "Schedulable", label: "a node can be signalled, or stopped qualifying", by: "server" },
    { from: "Schedulable", to: "SchedulableWait", label: "signalled", by: "server" },
    { from: "Schedulable", to: "MissingSignalNode", label: "a node is gone or not Enrolled", by: "server" },
    { from: "Schedulable", to: "InconsistentTargets", label: "a node's role or labels changed", by: "server" },
    { from: "Schedulable", to: "MissingPlatform", label: "a node's platform changed", by: "server" },
    { from: "SchedulableWait", to: "Completed", label: "every node SignalCompleted", by: "server" },
    { from: "SchedulableWait", to: "ApplyFailed", label: "a node's action failed", by: "server" },
    { from: "SchedulableWait", to: "DeadlineExceeded", label: "deadline passed", by: "server" },
    { from: "SchedulableWait", to: "Cancelled", label: "cancel", by: "operator" },
  ],
});
export type PlanState = keyof typeof planMachine.states;
export const PLAN_STATES = Object.keys(planMachine.states) as PlanState[];
export const CORE_PLAN_STATES = ["NewPlan", "SchedulableWait", "Schedulable", "Completed"] as const satisfies readonly PlanState[];
export const ERROR_PLAN_STATES = PLAN_STATES.filter((s) => !(CORE_PLAN_STATES as readonly string[]).includes(s));

export function isTerminalPlanState(state: PlanState): boolean {
  return planMachine.states[state].terminal === true;
}
export function isPlanError(state: PlanState): boolean {
  return ERROR_PLAN_STATES.includes(state);
}

export const planNodeMachine = defineStateMachine({
  name: "PlanNode",
  initial: "SignalPending",
  states: {
    SignalPending: { description: "Discovered; waiting to be signalled (the message says what for)." },
    SignalSent: { description: "An action was created for the node; waiting for its outcome." },
    SignalCompleted: { terminal: true, description: "The node's action is DONE (or the node completed in the run this plan retries)." },
    SignalMissingNode: { terminal: true, description: "No Enrolled device of that name and role, or it no longer matches its discovery." },
    SignalMissingPlatform: { terminal: true, description: "The node's platform has no entry in the command's platforms." },
    SignalApplyFailed: { terminal: true, description: "The node's action ended FAILED, CANCELLED or LOST; the message is its error." },
    SignalSkipped: {
      terminal: true,
      description: "An operator moved on without the node, with a reason (recorded): it counts as done for its command; an action it was waiting on is cancelled.",
    },
  },
  transitions: [
    { from: "SignalPending", to: "SignalSent", label: "action created", by: "server" },
    { from: "SignalSent", to: "SignalCompleted", label: "action DONE", by: "server" },
    { from: "SignalSent", to: "SignalApplyFailed", label: "action FAILED, CANCELLED or LOST", by: "server" },
    { from: "SignalSent", to: "SignalMissingNode", label: "the device is gone", by: "server" },
    { from: "SignalPending", to: "SignalMissingNode", label: "missing, not Enrolled, role or labels changed", by: "server" },
    { from: "SignalPending", to: "SignalMissingPlatform", label: "platform not in platforms", by: "server" },
    { from: "SignalPending", to: "SignalCompleted", label: "completed in the plan retried", by: "server" },
    { from: "SignalPending", to: "SignalSkipped", label: "skip, with a reason", by: "operator" },
    { from: "SignalSent", to: "SignalSkipped", label: "skip, with a reason (its action cancelled)", by: "operator" },
  ],
});
export type PlanNodeState = keyof typeof planNodeMachine.states;
export const PLAN_NODE_STATES = Object.keys(planNodeMachine.states) as PlanNodeState[];

export function isTerminalNodeState(state: PlanNodeState): boolean {
  return planNodeMachine.states[state].terminal === true;
}

// ---------------------------------------------------------------------------------------
// What the server answers (tRPC `plans.get` / REST `GET /plans/{id}`): the k0s status shape

export interface PlanNodeView {
  name: string;
  state: PlanNodeState;
  /** Always set: why the node is where it is (waiting for what, failed with what). */
  message: string;
  lastUpdatedTimestamp: string;
  /** The device's role and platform as discovered; null when no such device. */
  role: string | null;
  platform: string | null;
  /** The action that signalled the node, and its state now. */
  actionId: string | null;
  actionState: ActionState | null;
  /** The device's summary now (Online, Offline…); null when gone. */
  deviceSummary: string | null;
}

/**
 * A command's nodes by group, as k0s's PlanCommandK0sUpdateStatus has them (`controllers`,
 * `workers`; a group the command does not target is absent, airgapupdate has only workers).
 */
export type PlanCommandNodes = Partial<Record<PlanGroup, PlanNodeView[]>>;

interface PlanCommandStatusFields {
  id: number;
  state: PlanState;
  /** Why the command is in its state (k0s calls it description). */
  description: string;
  /** The action kind a node is signalled with, and the version for updates. */
  actionKind: string;
  version: string | null;
  /** Workers signalled at once (controllers: always 1). */
  concurrent: number;
  counts: PlanCounts;
  startedAt: string | null;
  endedAt: string | null;
}

/**
 * `status.commands[i]`: k0s's PlanCommandStatus (`id`, `state`, `description`, the nodes under
 * the command's own key, `k0supdate: {controllers, workers}` / `airgapupdate: {workers}`, the
 * key spec.commands[i] has), and Drover's `action` command the same way; plus Drover's fields
 * (kind, counts, times…).
 */
export type PlanCommandStatusView = PlanCommandStatusFields &
  (
    | { kind: "k0supdate"; k0supdate: PlanCommandNodes }
    | { kind: "airgapupdate"; airgapupdate: Pick<PlanCommandNodes, "workers"> }
    | { kind: "action"; action: PlanCommandNodes }
  );

/** The nodes of a command, whichever its kind. */
export function commandNodes(c: PlanCommandStatusView): PlanCommandNodes {
  switch (c.kind) {
    case "k0supdate":
      return c.k0supdate;
    case "airgapupdate":
      return c.airgapupdate;
    case "action":
      return c.action;
  }
}

/** `{kind, [kind]: nodes}`: the nodes under the command's own key. */
export function commandWithNodes(kind: PlanCommandKind, nodes: PlanCommandNodes) {
  return { kind, [kind]: nodes } as { kind: "k0supdate"; k0supdate: PlanCommandNodes } | { kind: "airgapupdate"; airgapupdate: PlanCommandNodes } | { kind: "action"; action: PlanCommandNodes };
}

export type PlanCounts = Record<PlanNodeState, number> & { total: number };

export interface PlanApprovalView {
  required: boolean;
  approvedBy: string | null;
  approvedAt: string | null;
  /** Why it was approved, when the approver said (issue 21). */
  reason: string | null;
}

export interface PlanView {
  apiVersion: string;
  kind: "Plan";
  /** `name` is the plan's metadata.name (a label), `id` the server's id. */
  metadata: { id: string; name: string | null; createdBy: string; creationTimestamp: string; retryOf: string | null; retriedBy: string[] };
  /** As submitted (defaults applied); `spec.id` is informational. */
  spec: Record<string, unknown>;
  status: {
    state: PlanState;
    message: string;
    /** The command being processed (null before the first and after the end). */
    activeCommand: number | null;
    approval: PlanApprovalView;
    deadline: string | null;
    deadlineAt: string | null;
    cancelRequestedBy: string | null;
    startedAt: string | null;
    endedAt: string | null;
    counts: PlanCounts;
    commands: PlanCommandStatusView[];
  };
}

export interface PlanSummaryView {
  id: string;
  name: string | null;
  specId: string | null;
  apiVersion: string;
  state: PlanState;
  message: string;
  commands: { kind: PlanCommandKind; state: PlanState }[];
  counts: PlanCounts;
  approval: PlanApprovalView;
  createdBy: string;
  createdAt: string;
  endedAt: string | null;
  retryOf: string | null;
}
