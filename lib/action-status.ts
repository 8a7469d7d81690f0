/**
 * Node actions (seed 004, DESIGN.md §4) as data: the states of an action in Drover and the
 * moves between them, each with who makes it. The engine refuses any other move (409); the
 * console draws this table.
 */
import { defineStateMachine, type TransitionDef } from "./state-machine";

export const actionMachine = defineStateMachine({
  name: "Action",
  initial: "PENDING_SCHEDULE",
  states: {
    PENDING_APPROVE: { group: ["Core"], description: "Known to the server; cannot be scheduled until an operator approves it." },
    PENDING_SCHEDULE: { group: ["Core"], description: "Approved (or needing no approval); offered to the agent in its long-poll, maybe already sent." },
    NEW: { group: ["Agent"], description: "The agent knows about the action and will execute it when possible." },
    RUNNING: { group: ["Agent"], description: "The action is running on the agent." },
    DONE: { terminal: true, description: "The action finished successfully." },
    FAILED: { terminal: true, description: "Unable to successfully execute the action." },
    CANCELLED: { terminal: true, description: "The action was interrupted or never executed." },
    LOST: {
      terminal: true,
      description:
        "Its outcome cannot be known: the agent's records of it were purged before the server synced them, or the device's credential was revoked, so its agent can never report it.",
    },
  },
  transitions: [
    { from: "PENDING_APPROVE", to: "PENDING_SCHEDULE", label: "approve", by: "operator" },
    { from: "PENDING_APPROVE", to: "CANCELLED", label: "reject / cancel / expiry", by: "operator" },
    { from: "PENDING_SCHEDULE", to: "NEW", label: "agent confirms", by: "agent" },
    { from: "PENDING_SCHEDULE", to: "CANCELLED", label: "cancel / expiry", by: "operator" },
    { from: "NEW", to: "RUNNING", label: "agent starts", by: "agent" },
    { from: "NEW", to: "CANCELLED", label: "agent cancels", by: "agent" },
    { from: "NEW", to: "LOST", label: "not reported", by: "server" },
    // Drover (issue 23): a revoked device can never report again, so what it held would never end.
    { from: "NEW", to: "LOST", label: "revoked", by: "server" },
    { from: "RUNNING", to: "DONE", label: "agent reports", by: "agent" },
    { from: "RUNNING", to: "FAILED", label: "agent reports", by: "agent" },
    { from: "RUNNING", to: "CANCELLED", label: "agent cancels", by: "agent" },
    { from: "RUNNING", to: "LOST", label: "not reported", by: "server" },
    { from: "RUNNING", to: "LOST", label: "revoked", by: "server" },
  ] satisfies TransitionDef<string>[],
});
export type ActionState = keyof typeof actionMachine.states;

export const ACTION_STATES = Object.keys(actionMachine.states) as ActionState[];
export const ACTIVE_ACTION_STATES = ["NEW", "RUNNING"] as const satisfies readonly ActionState[];
export const PENDING_ACTION_STATES = ["PENDING_APPROVE", "PENDING_SCHEDULE"] as const satisfies readonly ActionState[];
export const FINAL_ACTION_STATES = ["DONE", "FAILED", "CANCELLED", "LOST"] as const satisfies readonly ActionState[];

/** Whether `by` may make this move (the table says who makes each). */
export function canMove(from: ActionState, to: ActionState, by: "operator" | "agent" | "server"): boolean {
  return actionMachine.transitions.some((t) => t.from === from && t.to === to && t.by === by);
}

export const ACTION_ORIGINS = ["user", "plan", "workflow", "rollout", "agent"] as const;
export type ActionOrigin = (typeof ACTION_ORIGINS)[number];

/** Kinds the agent knows; others fail on the agent with a clear error. */
export const BUILTIN_ACTION_KINDS = ["noop", "sleep", "exec", "reboot"] as const;
