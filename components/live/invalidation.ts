/**
 * Which queries an event concerns. Live updates refetch only those (STYLE.md), batched over
 * a short window so that a burst of events costs one refetch per query.
 */
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
  | { kind: "fleets.status" }
  | { kind: "plans.list" }
  | { kind: "plan"; id: string }
  /** Open plan pages: their nodes show their actions' states, which move with Action events. */
  | { kind: "plans.actions" }
  | { kind: "workflows.list" }
  | { kind: "workflow"; name: string }
  /** Open workflow pages: their steps show their actions' progress (targets done), which moves with Action events. */
  | { kind: "workflows.actions" }
  /** Action requests (the inbox's, a request's page): their progress is counted from their actions. */
  | { kind: "requests" };

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

/**
 * A plan's actions move in bursts (a command signals many nodes at once, each reports NEW,
 * RUNNING, DONE), and the plan engine writes its own Plan event once it has read them: open
 * plan pages refetch for Action events at most once per this window, after the last one.
 */
export const PLAN_ACTIONS_SETTLE_MS = 400;

/**
 * A workflow step's actions move in bursts as well (one per target, each NEW, RUNNING, DONE),
 * and the workflow controller writes its own Workflow event 100 ms after one ended: open
 * workflow pages refetch for Action events at most once per this window, after the last one.
 */
export const WORKFLOW_ACTIONS_SETTLE_MS = 400;

/**
 * A request's actions move in bursts too (2,000 approved at once, then each NEW, RUNNING,
 * DONE): request pages and the inbox recount at most once per this window, after the last one.
 */
export const REQUESTS_SETTLE_MS = 400;

/** How long to wait before refetching a target: 0 for at once (batched with the others). */
export function settleDelayMs(t: InvalidationTarget): number {
  if (t.kind === "fleets.status") return FLEET_SETTLE_MS;
  if (t.kind === "plans.actions") return PLAN_ACTIONS_SETTLE_MS;
  if (t.kind === "workflows.actions") return WORKFLOW_ACTIONS_SETTLE_MS;
  if (t.kind === "requests") return REQUESTS_SETTLE_MS;
  return 0;
}

/** The fields of an event row that decide what it concerns (objectKind as a string: kinds newer than this console are ignored). */
export interface EventKey {
  objectKind: string;
  objectName: string;
  type?: string;
}

export function targetsFor(event: EventKey): InvalidationTarget[] {
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
      targets.push({ kind: "actions.list" }, { kind: "actions.counts" }, { kind: "action", id: event.objectName }, { kind: "plans.actions" }, { kind: "workflows.actions" }, { kind: "requests" });
      break;
    case "ActionRequest":
      // Created or decided: the inbox and the request's page.
      targets.push({ kind: "requests" });
      break;
    case "Plan":
      // objectName is the plan's id: published when the plan, a command or a node moves.
      targets.push({ kind: "plans.list" }, { kind: "plan", id: event.objectName });
      break;
    case "Workflow":
      // objectName is the workflow's name: published when the run or a step moves.
      targets.push({ kind: "workflows.list" }, { kind: "workflow", name: event.objectName });
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
    case "plan":
      return `plan:${t.id}`;
    case "workflow":
      return `workflow:${t.name}`;
    default:
      return t.kind;
  }
}
