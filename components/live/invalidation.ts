/**
 * Which queries an event concerns. Live updates refetch only those (STYLE.md), batched over
 * a short window so that a burst of events costs one refetch per query.
 */
import type { EventRow } from "../trpc";

export type InvalidationTarget =
  | { kind: "devices.list" }
  | { kind: "devices.counts" }
  | { kind: "device"; name: string }
  | { kind: "enrollments.list" }
  | { kind: "events.list" }
  | { kind: "actions.list" }
  | { kind: "actions.counts" }
  | { kind: "action"; id: string }
  | { kind: "fleets.list" }
  | { kind: "fleet"; name: string }
  /** Every fleet's status (list and open fleet pages): counts and rollout progress move with their devices. */
  | { kind: "fleets.status" };

/**
 * Device events that move a fleet's counts or its rollout's progress (the fleet controller
 * recounts on the same ones, server/fleets/controller.ts). The event names the device, not its
 * fleet, so they refresh the fleet status queries on screen (invalidation refetches only the
 * active ones: the fleets list, or the one fleet page open).
 */
const FLEET_DEVICE_EVENTS = new Set([
  "UpdatedStatusChanged",
  "UpdateStateChanged",
  "ApplicationSummaryChanged",
  "FleetJoined",
  "FleetLeft",
  "MultipleOwnersChanged",
  "SpecRendered",
  "DeviceEnrolled",
  "LifecycleChanged",
]);

/**
 * The fleet controller recounts 150 ms after the device events that move counts; the rollout
 * controller looks soon after a member's report. Refetching fleet status at once would often
 * read the counts from before: wait this long after the last such event.
 */
export const FLEET_SETTLE_MS = 600;

/** How long to wait before refetching a target: 0 for at once (batched with the others). */
export function settleDelayMs(t: InvalidationTarget): number {
  return t.kind === "fleets.status" ? FLEET_SETTLE_MS : 0;
}

export function targetsFor(event: Pick<EventRow, "objectKind" | "objectName"> & Partial<Pick<EventRow, "type">>): InvalidationTarget[] {
  const targets: InvalidationTarget[] = [{ kind: "events.list" }];
  switch (event.objectKind) {
    case "Device":
      targets.push({ kind: "devices.list" }, { kind: "devices.counts" }, { kind: "device", name: event.objectName });
      if (event.type === undefined || FLEET_DEVICE_EVENTS.has(event.type)) targets.push({ kind: "fleets.status" });
      break;
    case "Fleet":
      // objectName is the fleet's name: its page (status, versions, events) and the list.
      targets.push({ kind: "fleets.list" }, { kind: "fleet", name: event.objectName });
      break;
    case "EnrollmentRequest":
      targets.push({ kind: "enrollments.list" }, { kind: "devices.counts" });
      break;
    case "Action":
      // objectName is the action's id; lists include the device's own actions section.
      targets.push({ kind: "actions.list" }, { kind: "actions.counts" }, { kind: "action", id: event.objectName });
      break;
    case "Server":
      // A restore or a settings change can move every device at once.
      targets.push({ kind: "devices.list" }, { kind: "devices.counts" }, { kind: "fleets.status" });
      break;
    default:
      break;
  }
  return targets;
}

export function targetId(t: InvalidationTarget): string {
  switch (t.kind) {
    case "device":
      return `device:${t.name}`;
    case "action":
      return `action:${t.id}`;
    case "fleet":
      return `fleet:${t.name}`;
    default:
      return t.kind;
  }
}
