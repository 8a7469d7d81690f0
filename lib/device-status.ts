/**
 * Device statuses of seed 003 (Flight Control "Device API Statuses"), as data and as pure
 * derivations. The state tables below drive both the derivation checks and the console's
 * diagrams; the derive* functions follow the seed's formal and helper definitions.
 * Pure module: the clock comes in as `now`.
 */
import { defineStateMachine, type StateMachine } from "./state-machine";

export const RESOURCE_NAMES = ["cpu", "memory", "disk"] as const;
export type ResourceName = (typeof RESOURCE_NAMES)[number];
export const RESOURCE_STATUSES = ["Healthy", "Degraded", "Error", "Critical"] as const;
export type ResourceStatus = (typeof RESOURCE_STATUSES)[number];
export const APPLICATION_STATUSES = ["Preparing", "Starting", "Running", "Completed", "Error"] as const;
export type ApplicationStatus = (typeof APPLICATION_STATUSES)[number];
export const DECOMMISSIONING_STATES = ["Started", "Completed", "Error"] as const;
export type DecommissioningState = (typeof DECOMMISSIONING_STATES)[number];

// ---------------------------------------------------------------------------------------
// device.status.summary

const KNOWN = ["Known"] as const;
const POWERED_ON = ["Known", "PoweredOn"] as const;
const UNKNOWN = ["Unknown"] as const;
const POWERED_ON_STATES = ["Online", "Degraded", "Error", "Rebooting"] as const;
const DISCONNECTED_STATES = ["Offline", "AwaitingReconnect", "ConflictPaused"] as const;

export const summaryMachine = defineStateMachine({
  name: "DeviceSummaryStatus",
  initial: "Offline",
  states: {
    Online: { group: POWERED_ON, description: "All hardware resources and operating system services are reported to be healthy." },
    Degraded: { group: POWERED_ON, description: "One or more resources are degraded but still functional or recovering." },
    Error: { group: POWERED_ON, description: "One or more resources are in error or critical state." },
    Rebooting: { group: POWERED_ON, description: "The device is rebooting." },
    PoweringOff: { group: KNOWN, notYetSupported: true, description: "Not yet supported." },
    PoweredOff: { group: KNOWN, notYetSupported: true, description: "Not yet supported." },
    PoweringOn: { group: KNOWN, notYetSupported: true, description: "Not yet supported." },
    Offline: { group: UNKNOWN, description: "The device is disconnected from the service but may still be running." },
    AwaitingReconnect: { group: UNKNOWN, description: "Awaiting reconnection after the system was restored." },
    ConflictPaused: { group: UNKNOWN, description: "Paused: the device reported a renderedVersion not known to the service." },
  },
  transitions: [
    { from: "Online", to: "Degraded" },
    { from: "Online", to: "Error" },
    { from: "Degraded", to: "Online" },
    { from: "Degraded", to: "Error" },
    { from: "Error", to: "Online" },
    { from: "Error", to: "Degraded" },
    { from: "Online", to: "Rebooting", label: "beforeRebooting hook" },
    { from: "Degraded", to: "Rebooting", label: "beforeRebooting hook" },
    { from: "Error", to: "Rebooting", label: "beforeRebooting hook" },
    { from: "Rebooting", to: "Online", label: "afterRebooting hook" },
    { from: "PoweringOff", to: "PoweredOff" },
    { from: "PoweredOff", to: "PoweringOn" },
    { from: "PoweringOn", to: "Online" },
    // Unknown <-> Known: any powered-on state can become disconnected and back.
    ...DISCONNECTED_STATES.flatMap((u) =>
      POWERED_ON_STATES.flatMap((k) => [
        { from: k, to: u },
        { from: u, to: k },
      ]),
    ),
    { from: "Offline", to: "AwaitingReconnect", label: "restore" },
    { from: "Offline", to: "ConflictPaused" },
    { from: "AwaitingReconnect", to: "ConflictPaused" },
    { from: "ConflictPaused", to: "Offline", label: "resume" },
    { from: "ConflictPaused", to: "AwaitingReconnect", label: "restore" },
  ],
});
export type SummaryStatus = keyof typeof summaryMachine.states;

// ---------------------------------------------------------------------------------------
// device.status.updated.status and conditions.Updating.reason

export const updatedMachine = defineStateMachine({
  name: "DeviceUpdatedStatus",
  initial: "Unknown",
  states: {
    Unknown: { description: "Never reported, or last reported Updating and disconnected since." },
    UpToDate: { group: KNOWN, description: "Updated to its device spec (and, in a fleet, to the fleet's template version)." },
    OutOfDate: { group: KNOWN, description: "Not updating and not at its device spec or fleet template version." },
    Updating: { group: KNOWN, description: "Updating to its device spec." },
  },
  transitions: [
    { from: "UpToDate", to: "OutOfDate" },
    { from: "OutOfDate", to: "Updating" },
    { from: "Updating", to: "UpToDate" },
    { from: "Updating", to: "OutOfDate" },
    ...(["UpToDate", "OutOfDate", "Updating"] as const).flatMap((k) => [
      { from: "Unknown" as const, to: k },
      { from: k, to: "Unknown" as const },
    ]),
  ],
});
export type UpdatedStatus = keyof typeof updatedMachine.states;

const UPDATING = ["Updating"] as const;
export const updateStateMachine = defineStateMachine({
  name: "DeviceUpdateState",
  initial: "Preparing",
  states: {
    Preparing: { group: UPDATING, description: "Validating the desired spec and downloading dependencies." },
    ReadyToUpdate: { group: UPDATING, description: "Spec validated, dependencies downloaded, ready to update." },
    ApplyingUpdate: { group: UPDATING, description: "The update transaction has started; writing to disk." },
    Rebooting: { group: UPDATING, description: "Rebooting to activate the new OS image and configuration." },
    ActivatingConfig: { group: UPDATING, transient: true, description: "Activating the new configuration without a reboot (not reported)." },
    RollingBack: { group: UPDATING, description: "Rolling back to the pre-update OS image and configuration." },
    Updated: { group: UPDATING, terminal: true, description: "Update complete; the device conforms to its device spec." },
    Canceled: { group: UPDATING, terminal: true, notYetSupported: true, description: "Not yet supported." },
    Error: { group: UPDATING, terminal: true, description: "Failed, rolled back, and will not retry." },
  },
  transitions: [
    { from: "Preparing", to: "ReadyToUpdate" },
    { from: "Preparing", to: "Canceled" },
    { from: "Preparing", to: "Error", label: "on error" },
    { from: "ReadyToUpdate", to: "ApplyingUpdate", label: "beforeUpdating hook" },
    { from: "ReadyToUpdate", to: "Canceled" },
    { from: "ApplyingUpdate", to: "Rebooting", label: "if OS updated: beforeRebooting hook" },
    { from: "ApplyingUpdate", to: "ActivatingConfig", label: "if OS not updated" },
    { from: "ApplyingUpdate", to: "RollingBack", label: "on error" },
    { from: "Rebooting", to: "ActivatingConfig", label: "afterRebooting hook" },
    { from: "Rebooting", to: "RollingBack", label: "on greenboot failed" },
    { from: "ActivatingConfig", to: "Updated", label: "afterUpdating hook" },
    { from: "ActivatingConfig", to: "RollingBack", label: "on error" },
    { from: "RollingBack", to: "Error" },
  ],
});
export type UpdateState = keyof typeof updateStateMachine.states;
/** The update states an agent may report (ActivatingConfig is transient, Canceled unsupported). */
export const REPORTED_UPDATE_STATES = [
  "Preparing",
  "ReadyToUpdate",
  "ApplyingUpdate",
  "Rebooting",
  "RollingBack",
  "Updated",
  "Error",
] as const satisfies readonly UpdateState[];

// ---------------------------------------------------------------------------------------
// device.status.applicationSummary

const APP_KNOWN = ["NoApplications", "Healthy", "Degraded", "Error"] as const;
export const applicationSummaryMachine = defineStateMachine({
  name: "DeviceApplicationSummary",
  initial: "Unknown",
  states: {
    Unknown: { description: "Never reported, or currently disconnected." },
    NoApplications: { group: KNOWN, description: "No applications are defined for the device." },
    Healthy: { group: KNOWN, description: "All applications are running or have completed." },
    Degraded: { group: KNOWN, description: "Some applications are not in service but starting or recovering." },
    Error: { group: KNOWN, description: "One or more applications are in error state." },
  },
  transitions: [
    ...APP_KNOWN.flatMap((a) => APP_KNOWN.filter((b) => b !== a).map((b) => ({ from: a, to: b }))),
    ...APP_KNOWN.flatMap((k) => [
      { from: "Unknown" as const, to: k },
      { from: k, to: "Unknown" as const },
    ]),
  ],
});
export type ApplicationSummary = keyof typeof applicationSummaryMachine.states;

// ---------------------------------------------------------------------------------------
// device.status.lifecycle and the DeviceDecommissioning condition

export const lifecycleMachine = defineStateMachine({
  name: "DeviceLifecycle",
  initial: "Unknown",
  states: {
    Unknown: { description: "Enrollment not completed. No managed device should be here." },
    Enrolled: { description: "Enrollment approved; carries out normal operations." },
    Decommissioning: { description: "Decommissioning requested; no longer available for work." },
    Decommissioned: {
      terminal: true,
      description: "Decommissioning completed, or failed unrecoverably; or, for a device whose credential was revoked, completed by the server at the request.",
    },
  },
  transitions: [
    { from: "Unknown", to: "Enrolled" },
    { from: "Enrolled", to: "Decommissioning", label: "decommission requested" },
    { from: "Decommissioning", to: "Decommissioned" },
    // Drover (issue 23): a revoked device's agent can no longer talk, so nothing would ever complete its decommission.
    { from: "Enrolled", to: "Decommissioned", label: "decommission requested, credential revoked" },
  ],
});
export type Lifecycle = keyof typeof lifecycleMachine.states;

export const decommissioningMachine = defineStateMachine({
  name: "DeviceDecommissioning",
  initial: "Requested",
  states: {
    Requested: { group: ["Decommissioning"], description: "Requested by a user; the device may not have received it yet." },
    Started: { group: ["Decommissioning"], description: "The agent received the request and is decommissioning." },
    Completed: { group: ["Decommissioned"], terminal: true, description: "The agent completed decommissioning." },
    Error: { group: ["Decommissioned"], terminal: true, description: "The agent hit an unrecoverable error while decommissioning." },
    CredentialRevoked: {
      group: ["Decommissioned"],
      terminal: true,
      description: "Completed by the server: an operator revoked the device's credential, so its agent cannot take part.",
    },
  },
  transitions: [
    { from: "Requested", to: "CredentialRevoked", label: "credential revoked" },
    { from: "Started", to: "CredentialRevoked", label: "credential revoked" },
    { from: "Requested", to: "Started" },
    { from: "Requested", to: "Completed" },
    { from: "Requested", to: "Error" },
    { from: "Started", to: "Completed" },
    { from: "Started", to: "Error" },
  ],
});
export type DecommissioningCondition = keyof typeof decommissioningMachine.states;

/** Every device status axis, for the console's diagrams. */
export const deviceStatusMachines = {
  summary: summaryMachine,
  updated: updatedMachine,
  updateState: updateStateMachine,
  applicationSummary: applicationSummaryMachine,
  lifecycle: lifecycleMachine,
  decommissioning: decommissioningMachine,
} as const satisfies Record<string, StateMachine<string>>;

// ---------------------------------------------------------------------------------------
// Derivations

/** What the agent last reported (the heartbeat body, less its action queue). */
export interface ReportedStatus {
  resources: Record<ResourceName, ResourceStatus>;
  applications: { name: string; status: ApplicationStatus; restarts: number }[];
  conditions: {
    updating?: { status: boolean; reason?: UpdateState | undefined; info?: string | undefined } | undefined;
    rebooting?: boolean | undefined;
  };
  config: { renderedVersion: number };
  decommissioning?: { state: DecommissioningState; info?: string | undefined } | undefined;
  /** What the agent runs (lib/protocol AgentCapabilities), when it says. */
  capabilities?: { kinds: string[]; exec?: { allow: string[] } | undefined } | undefined;
}

export interface DeviceFacts {
  /** Last heartbeat body, or null when the agent never reported. */
  reported: ReportedStatus | null;
  lastSeen: Date | null;
  /** device.metadata.annotations.renderedVersion: the spec version the service rendered. */
  renderedVersion: number;
  /** device.metadata.annotations.templateVersion */
  templateVersion: string | null;
  /** device.metadata.owner: the fleet, if managed. */
  owner: string | null;
  /** fleet[owner].spec.templateVersion, when owned. */
  fleetTemplateVersion: string | null;
  enrollmentCompleted: boolean;
  /** device.spec.decommissioning != nil */
  decommissionRequested: boolean;
  /** Set when the device reported a renderedVersion newer than the service knows, until resumed. */
  conflictPaused: boolean;
  /**
   * Drover (issue 23): the device's credential is revoked, by an operator or when its
   * decommission completed. Its agent can no longer talk to the service.
   */
  credentialRevoked: boolean;
}

export interface StatusSettings {
  disconnectionTimeoutSeconds: number;
  /** When the database was last restored from a backup, if ever. */
  restoredAt: Date | null;
}

export interface DerivedStatus {
  summary: SummaryStatus;
  updated: UpdatedStatus;
  /** conditions.Updating.reason: the update state, while one is reported. */
  updatingReason: UpdateState | null;
  applicationSummary: ApplicationSummary;
  lifecycle: Lifecycle;
  /** conditions.DeviceDecommissioning.reason, with Requested before the agent reports. */
  decommissioning: DecommissioningCondition | null;
}

// Helper definitions (seed 003), one function each.

export function deviceIsDisconnected(lastSeen: Date | null, now: Date, settings: StatusSettings): boolean {
  if (lastSeen === null) return true;
  return lastSeen.getTime() + settings.disconnectionTimeoutSeconds * 1000 < now.getTime();
}

export function deviceIsAwaitingReconnect(lastSeen: Date | null, settings: StatusSettings): boolean {
  if (settings.restoredAt === null) return false;
  return lastSeen === null || lastSeen.getTime() <= settings.restoredAt.getTime();
}

export function deviceIsNotManaged(d: DeviceFacts): boolean {
  return d.owner === null || d.owner.length === 0;
}

export function deviceIsRebooting(d: DeviceFacts): boolean {
  return d.reported?.conditions.rebooting === true;
}

export function deviceIsUpdating(d: DeviceFacts): boolean {
  return d.reported?.conditions.updating?.status === true;
}

export function deviceIsUpdatedToDeviceSpec(d: DeviceFacts): boolean {
  return d.reported !== null && d.reported.config.renderedVersion === d.renderedVersion;
}

export function deviceIsUpdatedToFleetSpec(d: DeviceFacts): boolean {
  return deviceIsUpdatedToDeviceSpec(d) && d.templateVersion !== null && d.templateVersion === d.fleetTemplateVersion;
}

export function deriveSummary(d: DeviceFacts, now: Date, settings: StatusSettings): SummaryStatus {
  // Drover: a Decommissioned device's credential is revoked, so it is disconnected from the
  // service by definition (issue 10: it showed Online until the disconnection timeout).
  if (deriveLifecycle(d) === "Decommissioned") return "Offline";
  if (d.conflictPaused) return "ConflictPaused";
  if (deviceIsAwaitingReconnect(d.lastSeen, settings)) return "AwaitingReconnect";
  if (deviceIsDisconnected(d.lastSeen, now, settings) || d.reported === null) return "Offline";
  if (deviceIsRebooting(d)) return "Rebooting";
  const statuses = RESOURCE_NAMES.map((r) => d.reported?.resources[r]);
  if (statuses.some((s) => s === "Error" || s === "Critical")) return "Error";
  if (statuses.some((s) => s === "Degraded")) return "Degraded";
  return "Online";
}

export function deriveUpdated(d: DeviceFacts, now: Date, settings: StatusSettings): UpdatedStatus {
  // "never reported status, or last reported Updating and disconnected since"
  if (d.reported === null) return "Unknown";
  if (deviceIsDisconnected(d.lastSeen, now, settings) && deviceIsUpdating(d)) return "Unknown";
  if (deviceIsUpdating(d)) return "Updating";
  if (deviceIsUpdatedToDeviceSpec(d) && (deviceIsNotManaged(d) || deviceIsUpdatedToFleetSpec(d))) return "UpToDate";
  return "OutOfDate";
}

export function deriveUpdatingReason(d: DeviceFacts): UpdateState | null {
  return d.reported?.conditions.updating?.reason ?? null;
}

export function deriveApplicationSummary(d: DeviceFacts, now: Date, settings: StatusSettings): ApplicationSummary {
  if (d.reported === null || deviceIsDisconnected(d.lastSeen, now, settings) || deriveLifecycle(d) === "Decommissioned") return "Unknown";
  const apps = d.reported.applications;
  if (apps.length === 0) return "NoApplications";
  if (apps.some((a) => a.status === "Error")) return "Error";
  if (apps.some((a) => a.status === "Preparing" || a.status === "Starting")) return "Degraded";
  return "Healthy";
}

export function deriveDecommissioning(d: DeviceFacts): DecommissioningCondition | null {
  const reported = d.reported?.decommissioning?.state;
  if (reported === "Completed" || reported === "Error") return reported;
  // Drover: requested of a revoked device (or revoked while decommissioning), it completes on the server.
  if (d.decommissionRequested && d.credentialRevoked) return "CredentialRevoked";
  if (reported) return reported;
  return d.decommissionRequested ? "Requested" : null;
}

export function deriveLifecycle(d: DeviceFacts): Lifecycle {
  if (!d.enrollmentCompleted) return "Unknown";
  if (!d.decommissionRequested) return "Enrolled";
  const reason = deriveDecommissioning(d);
  if (reason === "Completed" || reason === "Error" || reason === "CredentialRevoked") return "Decommissioned";
  return "Decommissioning";
}

export function deriveDeviceStatus(d: DeviceFacts, now: Date, settings: StatusSettings): DerivedStatus {
  return {
    summary: deriveSummary(d, now, settings),
    updated: deriveUpdated(d, now, settings),
    updatingReason: deriveUpdatingReason(d),
    applicationSummary: deriveApplicationSummary(d, now, settings),
    lifecycle: deriveLifecycle(d),
    decommissioning: deriveDecommissioning(d),
  };
}

/**
 * The instant after which, with no new report, this device's derived status changes by the
 * clock alone (it becomes disconnected). The sweep uses it; null when time changes nothing.
 */
export function disconnectionDeadline(lastSeen: Date | null, settings: StatusSettings): Date | null {
  if (lastSeen === null) return null;
  return new Date(lastSeen.getTime() + settings.disconnectionTimeoutSeconds * 1000);
}

/**
 * The sweep's cutoff (issue 22): a connected device last seen before it is disconnected; null
 * when no device may be marked yet. A device's silence counts only from `listeningSince`, the
 * moment since which the server could hear it (its sweep's leader took over, its database
 * answered again after an outage): heartbeats the server refused or never received before
 * then were not missed by the device, so every device gets one full timeout after it.
 */
export function sweepCutoff(now: Date, settings: StatusSettings, listeningSince: Date | null): Date | null {
  const timeoutMs = settings.disconnectionTimeoutSeconds * 1000;
  if (listeningSince !== null && listeningSince.getTime() + timeoutMs >= now.getTime()) return null;
  return new Date(now.getTime() - timeoutMs);
}
