/**
 * Display helpers for action requests (issue 10: one operator's request over many devices,
 * decided as a unit). Pure.
 */
import type { WaitReason } from "@/lib/action-wait";
import type { RequestProgress } from "@/server/requests/requests";
import type { Segment } from "../fleets/counts-bar";

/** A request's progress as the server counts it (server/requests/requests.ts), one type for both. */
export type ProgressCounts = RequestProgress;

/** "because …": why a group of actions waits, in a phrase after a count ("9 waiting because the device is not Online"). */
export const WAIT_PHRASES: Record<WaitReason, string> = {
  Approval: "for approval",
  DeviceLeaving: "because the device is leaving",
  DeviceNotOnline: "because the device's health does not let them go now",
  ConcurrencyPolicy: "for a concurrency policy slot",
  NextPoll: "for the device's next poll",
  Delivering: "for the agent to confirm receipt",
  EarlierAction: "for an earlier action on the device",
  Queued: "in the agent's queue",
  Cancelling: "for a cancel to reach the agent",
};

/** The bar's segments: done, running, waiting (approval apart), failed, cancelled. */
export function progressSegments(p: ProgressCounts): Segment[] {
  const otherWaiting = p.waiting - p.pendingApproval;
  return [
    { key: "done", label: "done", count: p.done, tone: "green" },
    { key: "running", label: "running", count: p.running, tone: "blue" },
    { key: "waiting", label: "waiting", count: otherWaiting, tone: "slate" },
    { key: "approval", label: "waiting for approval", count: p.pendingApproval, tone: "purple" },
    { key: "failed", label: "failed", count: p.failed, tone: "red" },
    { key: "cancelled", label: "cancelled", count: p.cancelled, tone: "gray" },
  ];
}

/** "41/50 done, 9 waiting, 0 failed". */
export function progressLine(p: ProgressCounts): string {
  const parts = [`${p.done.toLocaleString("en-US")}/${p.total.toLocaleString("en-US")} done`];
  if (p.running) parts.push(`${p.running.toLocaleString("en-US")} running`);
  parts.push(`${p.waiting.toLocaleString("en-US")} waiting`, `${p.failed.toLocaleString("en-US")} failed`);
  if (p.cancelled) parts.push(`${p.cancelled.toLocaleString("en-US")} cancelled`);
  return parts.join(", ");
}

/** Every action of the request has ended (done, failed, cancelled, lost). */
export function isSettled(p: ProgressCounts): boolean {
  return p.total > 0 && p.waiting === 0 && p.running === 0;
}
