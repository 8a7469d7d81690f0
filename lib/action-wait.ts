/**
 * Why an action waits (issue 10: "a reboot on a Degraded device stays PENDING_SCHEDULE forever
 * with no explanation"). One rule per line below, computed when read from the facts the
 * scheduler itself uses (seed 004: offered only to devices that are up, which the action's
 * health policy counts, lib/health-policy.ts; within the concurrency policies; the agent runs one action at a time, in creation order), so the console, the
 * REST API and the CLI say the same thing. Pure.
 */
import type { ActionState } from "./action-status";
import { admits, admittedSummaries, DEFAULT_HEALTH_POLICY } from "./health-policy";

export const WAIT_REASONS = [
  /** PENDING_APPROVE: an operator decides. */
  "Approval",
  /** The device is asked to decommission, or no longer Enrolled: it gets no new actions. */
  "DeviceLeaving",
  /** The device's summary is not one the action's health policy admits (Online, or Online or Degraded by default). */
  "DeviceNotOnline",
  /** A concurrency policy covering the device has no free slot. */
  "ConcurrencyPolicy",
  /** Ready: it goes out in the answer to the device's next long-poll. */
  "NextPoll",
  /** Sent in a long-poll answer; the agent has not confirmed it yet (NEW). */
  "Delivering",
  /** The agent has it and runs one action at a time: an earlier one is running. */
  "EarlierAction",
  /** The agent has it and will start it when possible. */
  "Queued",
  /** A cancel was asked; the agent holding it has not stopped it yet. */
  "Cancelling",
] as const;
export type WaitReason = (typeof WAIT_REASONS)[number];

export interface ActionWait {
  reason: WaitReason;
  message: string;
}

export interface WaitFacts {
  state: ActionState;
  kind: string;
  offeredAt: Date | null;
  cancelRequested: boolean;
  /** The expiry, when the action has one: it is cancelled if it has not started by then. */
  expiresAt: Date | null;
  /** The least healthy device summary it may be offered to (lib/health-policy.ts). */
  healthPolicy: string;
  device: { name: string; summary: string; lifecycle: string; decommissionRequested: boolean };
  /** The device's oldest unfinished action created before this one that the agent holds (NEW or RUNNING). */
  earlier: { id: string; kind: string; state: ActionState } | null;
  /** The concurrency policies covering the device that have no free slot now, with the devices keeping them busy. */
  fullPolicies: { selector: string; max: number; busy: string[] }[];
}

const short = (id: string) => id.slice(0, 8);

function listed(names: string[], max = 3): string {
  return names.length <= max ? names.join(", ") : `${names.slice(0, max).join(", ")} and ${names.length - max} more`;
}

/** The reason an unfinished action has not moved on yet, or null when it is not waiting (RUNNING, or ended). */
export function explainWait(f: WaitFacts): ActionWait | null {
  const wait = explain(f);
  if (!wait || !f.expiresAt) return wait;
  return { ...wait, message: `${wait.message}; cancelled if not started by ${f.expiresAt.toISOString()}` };
}

function explain(f: WaitFacts): ActionWait | null {
  switch (f.state) {
    case "PENDING_APPROVE":
      return { reason: "Approval", message: `waits for an operator to approve or reject it (${f.kind} needs approval)` };
    case "PENDING_SCHEDULE": {
      if (f.cancelRequested) return { reason: "Cancelling", message: "cancel requested; waiting for the agent, which may hold it, to stop it" };
      if (f.offeredAt) return { reason: "Delivering", message: `sent to the agent at ${f.offeredAt.toISOString()}; waiting for it to confirm receipt` };
      if (f.device.decommissionRequested || f.device.lifecycle !== "Enrolled")
        return { reason: "DeviceLeaving", message: `device ${f.device.name} is ${f.device.decommissionRequested ? "asked to decommission" : f.device.lifecycle}: it gets no new actions` };
      if (!admits(f.healthPolicy, f.device.summary))
        return {
          reason: "DeviceNotOnline",
          message: `device ${f.device.name} is ${f.device.summary}: this action goes to devices that are ${admittedSummaries(f.healthPolicy)}${f.healthPolicy === DEFAULT_HEALTH_POLICY ? "" : ` (its health policy, ${f.healthPolicy})`}; it goes out once the device is ${admittedSummaries(f.healthPolicy)} again`,
        };
      if (f.fullPolicies.length) {
        const p = f.fullPolicies[0]!;
        return { reason: "ConcurrencyPolicy", message: `concurrency policy "${p.selector}" allows ${p.max} device${p.max === 1 ? "" : "s"} at once and is full: ${listed(p.busy)}` };
      }
      return { reason: "NextPoll", message: `ready: it goes out on ${f.device.name}'s next poll` };
    }
    case "NEW":
      if (f.cancelRequested) return { reason: "Cancelling", message: "cancel requested; waiting for the agent to stop it" };
      if (f.earlier) return { reason: "EarlierAction", message: `the agent runs one action at a time: waits for ${f.earlier.kind} ${short(f.earlier.id)} (${f.earlier.state})` };
      return { reason: "Queued", message: "the agent has it and will start it when possible" };
    case "RUNNING":
      return f.cancelRequested ? { reason: "Cancelling", message: "cancel requested; waiting for the agent to stop it" } : null;
    default:
      return null;
  }
}
