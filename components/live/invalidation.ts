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
  | { kind: "action"; id: string };

export function targetsFor(event: Pick<EventRow, "objectKind" | "objectName">): InvalidationTarget[] {
  const targets: InvalidationTarget[] = [{ kind: "events.list" }];
  switch (event.objectKind) {
    case "Device":
      targets.push({ kind: "devices.list" }, { kind: "devices.counts" }, { kind: "device", name: event.objectName });
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
      targets.push({ kind: "devices.list" }, { kind: "devices.counts" });
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
    default:
      return t.kind;
  }
}
