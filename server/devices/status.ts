/**
 * Bridges stored device rows and the pure derivations of lib/device-status: builds the
 * facts, derives, and says which axes changed (each change is an event).
 */
import {
  deriveDeviceStatus,
  disconnectionDeadline,
  summaryMachine,
  updatedMachine,
  applicationSummaryMachine,
  lifecycleMachine,
  updateStateMachine,
  decommissioningMachine,
  type DerivedStatus,
  type DeviceFacts,
  type ReportedStatus,
  type StatusSettings,
} from "../../lib/device-status";
import { canTransition, isState, type StateMachine } from "../../lib/state-machine";
import type { NewEvent } from "../events/events";
import type { Prisma } from "../db";

/** The columns the derivation reads. */
export const deviceFactsSelect = {
  id: true,
  name: true,
  reported: true,
  lastSeen: true,
  renderedVersion: true,
  templateVersion: true,
  owner: true,
  enrollmentId: true,
  decommissionRequestedAt: true,
  conflictPaused: true,
  summary: true,
  updatedStatus: true,
  updatingReason: true,
  applicationSummary: true,
  lifecycle: true,
  decommissioning: true,
  credentialRevokedAt: true,
  /** fleet[owner].spec.templateVersion, for deviceIsUpdatedToFleetSpec. */
  ownerFleet: { select: { templateVersion: true } },
} satisfies Prisma.DeviceSelect;
export type DeviceFactsRow = Prisma.DeviceGetPayload<{ select: typeof deviceFactsSelect }>;

export function parseReported(json: string | null): ReportedStatus | null {
  return json === null ? null : (JSON.parse(json) as ReportedStatus);
}

/**
 * The derivation's input. `fleetTemplateVersion` is the owner fleet's templateVersion: the row
 * carries it (`ownerFleet`, read with the device); pass it when deriving for a version the
 * row does not show yet (a template change inside its transaction).
 */
export function factsOf(row: DeviceFactsRow, fleetTemplateVersion: string | null = row.ownerFleet?.templateVersion ?? null): DeviceFacts {
  return {
    reported: parseReported(row.reported),
    lastSeen: row.lastSeen,
    renderedVersion: row.renderedVersion,
    templateVersion: row.templateVersion,
    owner: row.owner,
    fleetTemplateVersion,
    // A Device row exists only once its EnrollmentRequest was approved.
    enrollmentCompleted: row.enrollmentId !== null,
    decommissionRequested: row.decommissionRequestedAt !== null,
    conflictPaused: row.conflictPaused,
    credentialRevoked: row.credentialRevokedAt !== null,
  };
}

export function storedStatus(row: DeviceFactsRow): DerivedStatus {
  return {
    summary: row.summary as DerivedStatus["summary"],
    updated: row.updatedStatus as DerivedStatus["updated"],
    updatingReason: row.updatingReason as DerivedStatus["updatingReason"],
    applicationSummary: row.applicationSummary as DerivedStatus["applicationSummary"],
    lifecycle: row.lifecycle as DerivedStatus["lifecycle"],
    decommissioning: row.decommissioning as DerivedStatus["decommissioning"],
  };
}

export type StatusColumns = ReturnType<typeof statusColumns>;

export function statusColumns(s: DerivedStatus) {
  return {
    summary: s.summary,
    updatedStatus: s.updated,
    updatingReason: s.updatingReason,
    applicationSummary: s.applicationSummary,
    lifecycle: s.lifecycle,
    decommissioning: s.decommissioning,
  } satisfies Prisma.DeviceUpdateInput;
}

const AXES = [
  { key: "summary", machine: summaryMachine, type: "SummaryChanged" },
  { key: "updated", machine: updatedMachine, type: "UpdatedStatusChanged" },
  { key: "updatingReason", machine: updateStateMachine, type: "UpdateStateChanged" },
  { key: "applicationSummary", machine: applicationSummaryMachine, type: "ApplicationSummaryChanged" },
  { key: "lifecycle", machine: lifecycleMachine, type: "LifecycleChanged" },
  { key: "decommissioning", machine: decommissioningMachine, type: "DecommissioningChanged" },
] as const satisfies readonly { key: keyof DerivedStatus; machine: StateMachine<string>; type: string }[];

/**
 * One event per axis that changed. Derived statuses are observations, so a move the table
 * does not list is recorded (flagged in the message) rather than refused.
 */
export function statusChangeEvents(deviceName: string, before: DerivedStatus, after: DerivedStatus, actor: string): NewEvent[] {
  const events: NewEvent[] = [];
  for (const axis of AXES) {
    const from = before[axis.key];
    const to = after[axis.key];
    if (from === to || to === null) continue;
    const m = axis.machine as StateMachine<string>;
    const listed = from === null || (isState(m, from) && isState(m, to) && canTransition(m, from, to));
    events.push({
      objectKind: "Device",
      objectName: deviceName,
      type: axis.type,
      reason: to,
      message: `${axis.key}: ${from ?? "none"} → ${to}${listed ? "" : " (not in the state table)"}`,
      actor,
    });
  }
  return events;
}

export function derive(row: DeviceFactsRow, now: Date, settings: StatusSettings): DerivedStatus {
  return deriveDeviceStatus(factsOf(row), now, settings);
}

/** The summaries of a device the service still counts as connected: the ones the sweep moves to Offline. */
export const CONNECTED_SUMMARIES = ["Online", "Degraded", "Error", "Rebooting"];

/**
 * A re-derivation by a render or a move (not a heartbeat, not the sweep): the same derivation,
 * but a device stored as connected stays connected, as at its disconnection deadline. Marking a
 * device Offline by the clock is the sweep's alone, since only the sweep knows when devices could
 * not be heard (a database outage, a new leader; issue 22): a rollout's render right after the
 * database came back must not mark Offline the devices whose heartbeats were refused.
 */
export function rederive(row: DeviceFactsRow, now: Date, settings: StatusSettings): DerivedStatus {
  const deadline = disconnectionDeadline(row.lastSeen, settings);
  const held = CONNECTED_SUMMARIES.includes(row.summary) && deadline !== null && deadline < now;
  return derive(row, held ? deadline : now, settings);
}

/**
 * Why a device is OutOfDate, in words (Flight Control PR 3249: every OutOfDate device shows
 * why); null when it is not. Computed when read, from the same facts as the status, so it
 * can never disagree with it.
 */
export function outOfDateReason(
  facts: Pick<DeviceFacts, "reported" | "renderedVersion" | "templateVersion" | "owner" | "fleetTemplateVersion">,
  updatedStatus: string,
): string | null {
  if (updatedStatus !== "OutOfDate") return null;
  const parts: string[] = [];
  if (facts.owner && facts.templateVersion !== facts.fleetTemplateVersion) {
    parts.push(
      `fleet ${facts.owner} is at template version ${facts.fleetTemplateVersion ?? "?"}; this device's spec is ` +
        (facts.templateVersion === null ? "not rendered yet" : `version ${facts.templateVersion}`),
    );
  }
  const running = facts.reported?.config.renderedVersion;
  if (running !== undefined && running !== facts.renderedVersion) {
    parts.push(`running renderedVersion ${running} of ${facts.renderedVersion}`);
    const updating = facts.reported?.conditions.updating;
    if (updating?.reason === "Error") parts.push(`the last update failed${updating.info ? `: ${updating.info}` : ""}`);
  }
  return parts.length ? parts.join("; ") : "not updated to its device spec";
}
