/**
 * Colours for state names. Keyed by the state types of lib/device-status, so a state added
 * to a table fails the type check here until it has a colour; the state lists themselves
 * live only in lib/.
 */
import type {
  ApplicationStatus,
  ApplicationSummary,
  DecommissioningCondition,
  Lifecycle,
  ResourceStatus,
  SummaryStatus,
  UpdateState,
  UpdatedStatus,
} from "@/lib/device-status";
import type { EnrollmentState } from "@/lib/enrollment-status";
import type { ActionState } from "@/lib/action-status";
import type { Tone } from "../ui/badge";

export const summaryTone: Record<SummaryStatus, Tone> = {
  Online: "green",
  Degraded: "amber",
  Error: "red",
  Rebooting: "blue",
  PoweringOff: "gray",
  PoweredOff: "gray",
  PoweringOn: "gray",
  Offline: "gray",
  AwaitingReconnect: "purple",
  ConflictPaused: "orange",
};

export const updatedTone: Record<UpdatedStatus, Tone> = {
  UpToDate: "green",
  Updating: "blue",
  OutOfDate: "amber",
  Unknown: "gray",
};

export const updateStateTone: Record<UpdateState, Tone> = {
  Preparing: "blue",
  ReadyToUpdate: "blue",
  ApplyingUpdate: "blue",
  Rebooting: "blue",
  ActivatingConfig: "blue",
  RollingBack: "orange",
  Updated: "green",
  Canceled: "gray",
  Error: "red",
};

export const applicationSummaryTone: Record<ApplicationSummary, Tone> = {
  NoApplications: "slate",
  Healthy: "green",
  Degraded: "amber",
  Error: "red",
  Unknown: "gray",
};

export const lifecycleTone: Record<Lifecycle, Tone> = {
  Enrolled: "green",
  Decommissioning: "amber",
  Decommissioned: "gray",
  Unknown: "gray",
};

export const decommissioningTone: Record<DecommissioningCondition, Tone> = {
  Requested: "amber",
  Started: "amber",
  Completed: "gray",
  Error: "red",
  CredentialRevoked: "gray",
};

export const resourceTone: Record<ResourceStatus, Tone> = {
  Healthy: "green",
  Degraded: "amber",
  Error: "red",
  Critical: "red",
};

export const applicationTone: Record<ApplicationStatus, Tone> = {
  Preparing: "blue",
  Starting: "blue",
  Running: "green",
  Completed: "slate",
  Error: "red",
};

export const enrollmentTone: Record<EnrollmentState, Tone> = {
  Pending: "amber",
  Approved: "green",
  Denied: "red",
};

/** Seed 004's legend: violet start, black/blue intermediate, green success, grey not run, red failure. */
export const actionStateTone: Record<ActionState, Tone> = {
  PENDING_APPROVE: "purple",
  PENDING_SCHEDULE: "slate",
  NEW: "blue",
  RUNNING: "blue",
  DONE: "green",
  FAILED: "red",
  CANCELLED: "gray",
  LOST: "orange",
};

/** Looks a state up in a tone table; unknown names (a newer server) are grey. */
export function toneOf(table: Record<string, Tone>, state: string | null | undefined): Tone {
  if (!state) return "gray";
  return table[state] ?? "gray";
}
