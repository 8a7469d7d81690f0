/**
 * Seed 003 (Flight Control "Device API Statuses"): one row per rule of each status table,
 * one block per helper definition, and checks that the state tables are well formed and
 * that every derived value is a state of its table.
 */
import { describe, expect, it } from "vitest";
import {
  APPLICATION_STATUSES,
  applicationSummaryMachine,
  decommissioningMachine,
  deriveApplicationSummary,
  deriveDecommissioning,
  deriveDeviceStatus,
  deriveLifecycle,
  deriveSummary,
  deriveUpdated,
  deriveUpdatingReason,
  deviceIsAwaitingReconnect,
  deviceIsDisconnected,
  deviceIsNotManaged,
  deviceIsRebooting,
  deviceIsUpdatedToDeviceSpec,
  deviceIsUpdatedToFleetSpec,
  deviceIsUpdating,
  deviceStatusMachines,
  disconnectionDeadline,
  lifecycleMachine,
  sweepCutoff,
  RESOURCE_NAMES,
  RESOURCE_STATUSES,
  summaryMachine,
  updatedMachine,
  updateStateMachine,
  type ApplicationStatus,
  type ApplicationSummary,
  type DecommissioningCondition,
  type DeviceFacts,
  type Lifecycle,
  type ReportedStatus,
  type ResourceStatus,
  type StatusSettings,
  type SummaryStatus,
  type UpdatedStatus,
} from "./device-status";
import { enrollmentMachine } from "./enrollment-status";
import { isState, type StateMachine } from "./state-machine";

// ---------------------------------------------------------------------------------------
// Fixtures

const NOW = new Date("2026-03-01T12:00:00.000Z");
const TIMEOUT_S = 300;
const SETTINGS: StatusSettings = { disconnectionTimeoutSeconds: TIMEOUT_S, restoredAt: null };
const ago = (ms: number) => new Date(NOW.getTime() - ms);
/** Heard from 10 s ago: connected. */
const CONNECTED = ago(10_000);
/** Heard from 1 ms longer ago than the timeout: disconnected. */
const DISCONNECTED = ago(TIMEOUT_S * 1000 + 1);

type ReportPatch = Partial<Omit<ReportedStatus, "resources">> & { resources?: Partial<ReportedStatus["resources"]> };

function report(patch: ReportPatch = {}): ReportedStatus {
  return {
    applications: [],
    conditions: {},
    config: { renderedVersion: 1 },
    ...patch,
    resources: { cpu: "Healthy", memory: "Healthy", disk: "Healthy", ...patch.resources },
  };
}

/** An enrolled, connected, unmanaged device that reported all healthy at renderedVersion 1. */
function facts(patch: Partial<DeviceFacts> = {}): DeviceFacts {
  return {
    reported: report(),
    lastSeen: CONNECTED,
    renderedVersion: 1,
    templateVersion: null,
    owner: null,
    fleetTemplateVersion: null,
    enrollmentCompleted: true,
    decommissionRequested: false,
    conflictPaused: false,
    credentialRevoked: false,
    ...patch,
  };
}
const NEVER_REPORTED: Partial<DeviceFacts> = { reported: null, lastSeen: null };

const apps = (...statuses: ApplicationStatus[]) => statuses.map((status, i) => ({ name: `app${i}`, status, restarts: 0 }));

// ---------------------------------------------------------------------------------------
// device.status.summary

describe("summary (seed 003 Device Status table)", () => {
  const restored = (restoredAt: Date): StatusSettings => ({ ...SETTINGS, restoredAt });
  const rows: [string, DeviceFacts, StatusSettings, SummaryStatus][] = [
    // Online: !disconnected && !rebooting && ∀ r, resources[r] ∈ {Healthy}
    ["Online: all resources Healthy", facts(), SETTINGS, "Online"],
    ["Online: rebooting=false is not rebooting", facts({ reported: report({ conditions: { rebooting: false } }) }), SETTINGS, "Online"],
    // Degraded: !disconnected && !rebooting && ∀ r ∉ {Error, Critical} && ∃ r ∈ {Degraded}
    ["Degraded: one resource Degraded", facts({ reported: report({ resources: { disk: "Degraded" } }) }), SETTINGS, "Degraded"],
    ["Degraded: every resource Degraded", facts({ reported: report({ resources: { cpu: "Degraded", memory: "Degraded", disk: "Degraded" } }) }), SETTINGS, "Degraded"],
    // Error: !disconnected && !rebooting && ∃ r ∈ {Error, Critical}
    ["Error: one resource Error", facts({ reported: report({ resources: { cpu: "Error" } }) }), SETTINGS, "Error"],
    ["Error: one resource Critical", facts({ reported: report({ resources: { memory: "Critical" } }) }), SETTINGS, "Error"],
    ["Error: Critical beside Degraded (Degraded needs ∀ r ∉ {Error, Critical})", facts({ reported: report({ resources: { cpu: "Degraded", disk: "Critical" } }) }), SETTINGS, "Error"],
    // Rebooting: !disconnected && rebooting
    ["Rebooting: rebooting with healthy resources", facts({ reported: report({ conditions: { rebooting: true } }) }), SETTINGS, "Rebooting"],
    ["Rebooting: rebooting wins over Critical resources", facts({ reported: report({ conditions: { rebooting: true }, resources: { cpu: "Critical" } }) }), SETTINGS, "Rebooting"],
    // Offline: disconnected
    ["Offline: disconnected with healthy resources", facts({ lastSeen: DISCONNECTED }), SETTINGS, "Offline"],
    ["Offline: disconnected while rebooting", facts({ lastSeen: DISCONNECTED, reported: report({ conditions: { rebooting: true } }) }), SETTINGS, "Offline"],
    ["Offline: disconnected with Critical resources", facts({ lastSeen: DISCONNECTED, reported: report({ resources: { cpu: "Critical" } }) }), SETTINGS, "Offline"],
    ["Offline: never reported", facts(NEVER_REPORTED), SETTINGS, "Offline"],
    // AwaitingReconnect (Drover): restoredAt set and lastSeen <= restoredAt
    ["AwaitingReconnect: last seen before the restore", facts({ lastSeen: ago(60_000) }), restored(ago(30_000)), "AwaitingReconnect"],
    ["AwaitingReconnect: last seen exactly at the restore", facts({ lastSeen: ago(30_000) }), restored(ago(30_000)), "AwaitingReconnect"],
    ["AwaitingReconnect: never seen, after a restore", facts(NEVER_REPORTED), restored(ago(30_000)), "AwaitingReconnect"],
    ["AwaitingReconnect: wins over disconnected", facts({ lastSeen: DISCONNECTED }), restored(ago(1_000)), "AwaitingReconnect"],
    ["not AwaitingReconnect: reported 1 ms after the restore", facts({ lastSeen: ago(29_999) }), restored(ago(30_000)), "Online"],
    // ConflictPaused (Drover): facts.conflictPaused
    ["ConflictPaused: connected and healthy", facts({ conflictPaused: true }), SETTINGS, "ConflictPaused"],
    ["ConflictPaused: wins over disconnected", facts({ conflictPaused: true, lastSeen: DISCONNECTED }), SETTINGS, "ConflictPaused"],
    ["ConflictPaused: wins over AwaitingReconnect", facts({ conflictPaused: true, lastSeen: ago(60_000) }), restored(ago(30_000)), "ConflictPaused"],
    // Offline (Drover): Decommissioned, its credential revoked, however recently it reported
    ["Offline: Decommissioned (Completed) a moment ago", facts({ decommissionRequested: true, reported: report({ decommissioning: { state: "Completed" } }) }), SETTINGS, "Offline"],
    ["Online: credential revoked a moment ago (Offline by the sweep, as any silent device)", facts({ credentialRevoked: true }), SETTINGS, "Online"],
    ["Offline: Decommissioned by the server (its credential revoked)", facts({ decommissionRequested: true, credentialRevoked: true }), SETTINGS, "Offline"],
    ["Offline: Decommissioned (Error)", facts({ decommissionRequested: true, reported: report({ decommissioning: { state: "Error" } }) }), SETTINGS, "Offline"],
    ["Online: still Decommissioning (Started)", facts({ decommissionRequested: true, reported: report({ decommissioning: { state: "Started" } }) }), SETTINGS, "Online"],
  ];
  it.each(rows)("%s", (_rule, d, settings, expected) => {
    expect(deriveSummary(d, NOW, settings)).toBe(expected);
    expect(deriveDeviceStatus(d, NOW, settings).summary).toBe(expected);
  });
});

// ---------------------------------------------------------------------------------------
// device.status.updated.status

describe("updated.status (seed 003 Device Update Status table)", () => {
  const managed = (templateVersion: string, fleetTemplateVersion: string): Partial<DeviceFacts> => ({
    owner: "fleet-a",
    templateVersion,
    fleetTemplateVersion,
  });
  const updating = (reason: "Preparing" | "ApplyingUpdate" = "ApplyingUpdate") => ({ updating: { status: true, reason } });
  const rows: [string, DeviceFacts, UpdatedStatus][] = [
    // UpToDate: !updating && updatedToDeviceSpec && (notManaged || updatedToFleetSpec)
    ["UpToDate: not managed, at its device spec", facts(), "UpToDate"],
    ["UpToDate: empty owner counts as not managed", facts({ owner: "" }), "UpToDate"],
    ["UpToDate: managed, at its device spec, template version = fleet's", facts(managed("t2", "t2")), "UpToDate"],
    ["UpToDate: updating=false with reason Updated", facts({ reported: report({ conditions: { updating: { status: false, reason: "Updated" } } }) }), "UpToDate"],
    ["UpToDate: disconnected, last status not Updating", facts({ lastSeen: DISCONNECTED }), "UpToDate"],
    // Updating: updating
    ["Updating: Updating condition true", facts({ reported: report({ conditions: updating() }) }), "Updating"],
    ["Updating: even while behind its device spec", facts({ renderedVersion: 2, reported: report({ conditions: updating("Preparing") }) }), "Updating"],
    ["Updating: even when managed and behind the fleet's template", facts({ ...managed("t1", "t2"), reported: report({ conditions: updating() }) }), "Updating"],
    // OutOfDate: !updating && (!updatedToDeviceSpec || (managed && !updatedToFleetSpec))
    ["OutOfDate: not updated to its device spec (not managed)", facts({ renderedVersion: 2 }), "OutOfDate"],
    ["OutOfDate: not updated to its device spec (managed, template matches)", facts({ renderedVersion: 2, ...managed("t2", "t2") }), "OutOfDate"],
    ["OutOfDate: managed, at its device spec, template version behind the fleet's", facts(managed("t1", "t2")), "OutOfDate"],
    ["OutOfDate: disconnected, last status not Updating, behind", facts({ lastSeen: DISCONNECTED, renderedVersion: 2 }), "OutOfDate"],
    // Unknown: never reported, or last status Updating and disconnected since
    ["Unknown: never reported", facts(NEVER_REPORTED), "Unknown"],
    ["Unknown: disconnected while last status was Updating", facts({ lastSeen: DISCONNECTED, reported: report({ conditions: updating() }) }), "Unknown"],
  ];
  it.each(rows)("%s", (_rule, d, expected) => {
    expect(deriveUpdated(d, NOW, SETTINGS)).toBe(expected);
    expect(deriveDeviceStatus(d, NOW, SETTINGS).updated).toBe(expected);
  });

  it("conditions.Updating.reason is the reported update state, null when none is reported", () => {
    expect(deriveUpdatingReason(facts({ reported: report({ conditions: updating("Preparing") }) }))).toBe("Preparing");
    expect(deriveUpdatingReason(facts({ reported: report({ conditions: { updating: { status: false, reason: "Error" } } }) }))).toBe("Error");
    expect(deriveUpdatingReason(facts({ reported: report({ conditions: { updating: { status: false } } }) }))).toBeNull();
    expect(deriveUpdatingReason(facts())).toBeNull();
    expect(deriveUpdatingReason(facts(NEVER_REPORTED))).toBeNull();
  });
});

// ---------------------------------------------------------------------------------------
// device.status.applicationSummary

describe("applicationSummary (seed 003 Application Status table)", () => {
  const withApps = (...statuses: ApplicationStatus[]) => facts({ reported: report({ applications: apps(...statuses) }) });
  const rows: [string, DeviceFacts, ApplicationSummary][] = [
    // NoApplications: !disconnected && len(applications) == 0
    ["NoApplications: connected, no applications", withApps(), "NoApplications"],
    // Healthy: !disconnected && len > 0 && ∀ a ∈ {Running, Completed}
    ["Healthy: all Running", withApps("Running", "Running"), "Healthy"],
    ["Healthy: Running and Completed", withApps("Running", "Completed"), "Healthy"],
    ["Healthy: all Completed", withApps("Completed"), "Healthy"],
    // Degraded: !disconnected && ∀ a ∉ {Error} && ∃ a ∈ {Preparing, Starting}
    ["Degraded: one Starting among Running", withApps("Running", "Starting"), "Degraded"],
    ["Degraded: one Preparing", withApps("Preparing"), "Degraded"],
    // Error: !disconnected && ∃ a ∈ {Error}
    ["Error: one Error", withApps("Error"), "Error"],
    ["Error: Error beside Starting (Degraded needs ∀ a ∉ {Error})", withApps("Starting", "Error", "Running"), "Error"],
    // Unknown: never reported, or disconnected
    ["Unknown: disconnected with healthy applications", facts({ lastSeen: DISCONNECTED, reported: report({ applications: apps("Running") }) }), "Unknown"],
    ["Unknown: disconnected with no applications", facts({ lastSeen: DISCONNECTED }), "Unknown"],
    ["Unknown: never reported", facts(NEVER_REPORTED), "Unknown"],
  ];
  it.each(rows)("%s", (_rule, d, expected) => {
    expect(deriveApplicationSummary(d, NOW, SETTINGS)).toBe(expected);
    expect(deriveDeviceStatus(d, NOW, SETTINGS).applicationSummary).toBe(expected);
  });
});

// ---------------------------------------------------------------------------------------
// device.status.lifecycle and conditions.DeviceDecommissioning

describe("lifecycle (seed 003 Lifecycle Status table)", () => {
  const decommissioning = (state: "Started" | "Completed" | "Error") => report({ decommissioning: { state } });
  const rows: [string, DeviceFacts, Lifecycle, DecommissioningCondition | null][] = [
    // Enrolled: enrollmentCompleted && spec.decommissioning == nil
    ["Enrolled: enrolled, no decommission requested", facts(), "Enrolled", null],
    // Decommissioning: enrollmentCompleted && requested && (no condition || reason ∉ {Completed, Error})
    ["Decommissioning: requested, no DeviceDecommissioning condition yet", facts({ decommissionRequested: true }), "Decommissioning", "Requested"],
    ["Decommissioning: requested, condition Started", facts({ decommissionRequested: true, reported: decommissioning("Started") }), "Decommissioning", "Started"],
    // Decommissioned: enrollmentCompleted && requested && reason ∈ {Completed, Error}
    ["Decommissioned: condition Completed", facts({ decommissionRequested: true, reported: decommissioning("Completed") }), "Decommissioned", "Completed"],
    ["Decommissioned: condition Error", facts({ decommissionRequested: true, reported: decommissioning("Error") }), "Decommissioned", "Error"],
    ["Decommissioned: stays so when disconnected", facts({ decommissionRequested: true, lastSeen: DISCONNECTED, reported: decommissioning("Completed") }), "Decommissioned", "Completed"],
    // Drover (issue 23): a revoked device's agent cannot complete it, so the request does, on the server
    ["Enrolled: credential revoked, no decommission requested", facts({ credentialRevoked: true }), "Enrolled", null],
    ["Decommissioned: requested of a revoked device", facts({ decommissionRequested: true, credentialRevoked: true }), "Decommissioned", "CredentialRevoked"],
    ["Decommissioned: revoked while the agent reported Started", facts({ decommissionRequested: true, credentialRevoked: true, reported: decommissioning("Started") }), "Decommissioned", "CredentialRevoked"],
    ["Decommissioned: completed by the agent (revoked then) stays Completed", facts({ decommissionRequested: true, credentialRevoked: true, reported: decommissioning("Completed") }), "Decommissioned", "Completed"],
    // Unknown: !enrollmentCompleted
    ["Unknown: enrollment not completed", facts({ enrollmentCompleted: false }), "Unknown", null],
    ["Unknown: enrollment not completed, even with a decommission request", facts({ enrollmentCompleted: false, decommissionRequested: true }), "Unknown", "Requested"],
  ];
  it.each(rows)("%s", (_rule, d, expected, condition) => {
    expect(deriveLifecycle(d)).toBe(expected);
    expect(deriveDecommissioning(d)).toBe(condition);
    expect(deriveDeviceStatus(d, NOW, SETTINGS)).toMatchObject({ lifecycle: expected, decommissioning: condition });
  });
});

// ---------------------------------------------------------------------------------------
// Helper definitions

describe("helper definitions (seed 003)", () => {
  describe("deviceIsDisconnected := lastSeen + disconnectionTimeout < now", () => {
    const lastSeen = ago(TIMEOUT_S * 1000);
    it.each([
      ["well within the timeout", ago(1_000), false],
      ["exactly at lastSeen + timeout (strict <: still connected)", lastSeen, false],
      ["1 ms after lastSeen + timeout", ago(TIMEOUT_S * 1000 + 1), true],
      ["long ago", ago(86_400_000), true],
      ["never seen", null, true],
    ] as [string, Date | null, boolean][])("%s", (_what, seen, expected) => {
      expect(deviceIsDisconnected(seen, NOW, SETTINGS)).toBe(expected);
    });

    it("the boundary follows the configured timeout", () => {
      const seen = ago(1_000);
      expect(deviceIsDisconnected(seen, NOW, { disconnectionTimeoutSeconds: 1, restoredAt: null })).toBe(false);
      expect(deviceIsDisconnected(seen, new Date(NOW.getTime() + 1), { disconnectionTimeoutSeconds: 1, restoredAt: null })).toBe(true);
    });

    it("disconnectionDeadline is the last instant the device still counts as connected", () => {
      const seen = ago(5_000);
      const deadline = disconnectionDeadline(seen, SETTINGS);
      expect(deadline?.getTime()).toBe(seen.getTime() + TIMEOUT_S * 1000);
      expect(deviceIsDisconnected(seen, deadline as Date, SETTINGS)).toBe(false);
      expect(deviceIsDisconnected(seen, new Date((deadline as Date).getTime() + 1), SETTINGS)).toBe(true);
      expect(disconnectionDeadline(null, SETTINGS)).toBeNull();
    });
  });

  describe("sweepCutoff (Drover, issue 22): silence counts only from when the server could hear the device", () => {
    const normal = new Date(NOW.getTime() - TIMEOUT_S * 1000);
    it.each([
      ["never an outage, nor a new leader: now − timeout", null, normal],
      ["listening since long ago: now − timeout", ago(86_400_000), normal],
      ["listening since 1 ms over a timeout ago: now − timeout", ago(TIMEOUT_S * 1000 + 1), normal],
      ["listening since exactly a timeout ago (strict <, as deviceIsDisconnected): nothing yet", ago(TIMEOUT_S * 1000), null],
      ["the database back 1 s ago: nothing yet", ago(1_000), null],
      ["a leader that took over just now: nothing yet", NOW, null],
    ] as [string, Date | null, Date | null][])("%s", (_what, since, expected) => {
      expect(sweepCutoff(NOW, SETTINGS, since)).toEqual(expected);
    });

    it("a device is swept only when lastSeen and the listening start are both a full timeout old", () => {
      for (const since of [ago(1_000), ago(TIMEOUT_S * 1000 + 1), null]) {
        for (const seen of [ago(500), ago(TIMEOUT_S * 1000 + 1), ago(86_400_000)]) {
          const cutoff = sweepCutoff(NOW, SETTINGS, since);
          const swept = cutoff !== null && seen < cutoff;
          const heardFrom = since !== null && since > seen ? since : seen;
          expect(swept, `seen ${seen.toISOString()}, listening since ${since?.toISOString() ?? "ever"}`).toBe(deviceIsDisconnected(heardFrom, NOW, SETTINGS));
        }
      }
    });
  });

  describe("deviceIsAwaitingReconnect (Drover): restoredAt set and lastSeen <= restoredAt", () => {
    const restoredAt = ago(30_000);
    it.each([
      ["no restore ever", ago(60_000), null, false],
      ["seen before the restore", ago(60_000), restoredAt, true],
      ["seen exactly at the restore", restoredAt, restoredAt, true],
      ["seen 1 ms after the restore", ago(29_999), restoredAt, false],
      ["never seen, after a restore", null, restoredAt, true],
    ] as [string, Date | null, Date | null, boolean][])("%s", (_what, seen, at, expected) => {
      expect(deviceIsAwaitingReconnect(seen, { ...SETTINGS, restoredAt: at })).toBe(expected);
    });
  });

  describe("deviceIsNotManaged := len(metadata.owner) == 0", () => {
    it.each([
      [null, true],
      ["", true],
      ["fleet-a", false],
    ])("owner %j → %s", (owner, expected) => {
      expect(deviceIsNotManaged(facts({ owner }))).toBe(expected);
    });
  });

  describe("deviceIsRebooting := conditions.rebooting == true", () => {
    it.each([
      ["rebooting: true", facts({ reported: report({ conditions: { rebooting: true } }) }), true],
      ["rebooting: false", facts({ reported: report({ conditions: { rebooting: false } }) }), false],
      ["rebooting absent", facts(), false],
      ["never reported", facts(NEVER_REPORTED), false],
    ] as [string, DeviceFacts, boolean][])("%s → %s", (_what, d, expected) => {
      expect(deviceIsRebooting(d)).toBe(expected);
    });
  });

  describe("deviceIsUpdating := conditions.updating == true", () => {
    it.each([
      ["updating.status true", facts({ reported: report({ conditions: { updating: { status: true, reason: "Preparing" } } }) }), true],
      ["updating.status false", facts({ reported: report({ conditions: { updating: { status: false, reason: "Updated" } } }) }), false],
      ["updating absent", facts(), false],
      ["never reported", facts(NEVER_REPORTED), false],
    ] as [string, DeviceFacts, boolean][])("%s → %s", (_what, d, expected) => {
      expect(deviceIsUpdating(d)).toBe(expected);
    });
  });

  describe("deviceIsUpdatedToDeviceSpec := status.config.renderedVersion == annotations.renderedVersion", () => {
    it.each([
      ["equal", facts({ renderedVersion: 3, reported: report({ config: { renderedVersion: 3 } }) }), true],
      ["device behind", facts({ renderedVersion: 3, reported: report({ config: { renderedVersion: 2 } }) }), false],
      ["device ahead", facts({ renderedVersion: 3, reported: report({ config: { renderedVersion: 4 } }) }), false],
      ["never reported", facts(NEVER_REPORTED), false],
    ] as [string, DeviceFacts, boolean][])("%s → %s", (_what, d, expected) => {
      expect(deviceIsUpdatedToDeviceSpec(d)).toBe(expected);
    });
  });

  describe("deviceIsUpdatedToFleetSpec := updatedToDeviceSpec && templateVersion == fleet's templateVersion", () => {
    it.each([
      ["at device spec, template = fleet's", facts({ owner: "f", templateVersion: "t2", fleetTemplateVersion: "t2" }), true],
      ["at device spec, template behind", facts({ owner: "f", templateVersion: "t1", fleetTemplateVersion: "t2" }), false],
      ["behind device spec, template = fleet's", facts({ owner: "f", renderedVersion: 2, templateVersion: "t2", fleetTemplateVersion: "t2" }), false],
      ["no template version yet", facts({ owner: "f", templateVersion: null, fleetTemplateVersion: "t2" }), false],
    ] as [string, DeviceFacts, boolean][])("%s → %s", (_what, d, expected) => {
      expect(deviceIsUpdatedToFleetSpec(d)).toBe(expected);
    });
  });
});

// ---------------------------------------------------------------------------------------
// The state tables themselves

const ALL_MACHINES: [string, StateMachine<string>][] = [
  ...Object.entries(deviceStatusMachines).map(([k, m]): [string, StateMachine<string>] => [k, m as StateMachine<string>]),
  ["enrollment", enrollmentMachine as StateMachine<string>],
];

function reachable(m: StateMachine<string>): Set<string> {
  const seen = new Set<string>([m.initial]);
  const queue = [m.initial];
  while (queue.length) {
    const from = queue.shift() as string;
    for (const t of m.transitions) {
      if (t.from === from && !seen.has(t.to)) {
        seen.add(t.to);
        queue.push(t.to);
      }
    }
  }
  return seen;
}

describe("state tables are well formed", () => {
  it.each(ALL_MACHINES)("%s: initial state and every transition name known states", (_k, m) => {
    expect(isState(m, m.initial)).toBe(true);
    for (const t of m.transitions) {
      expect(isState(m, t.from), `${m.name}: ${t.from}`).toBe(true);
      expect(isState(m, t.to), `${m.name}: ${t.to}`).toBe(true);
    }
  });

  it.each(ALL_MACHINES)("%s: every state is reachable from the initial state or marked notYetSupported", (_k, m) => {
    const reach = reachable(m);
    const unreachable = Object.entries(m.states)
      .filter(([name, def]) => !reach.has(name) && !def.notYetSupported)
      .map(([name]) => name);
    expect(unreachable).toEqual([]);
  });

  it.each(ALL_MACHINES)("%s: terminal states have no way out, and no transition is listed twice", (_k, m) => {
    for (const [name, def] of Object.entries(m.states)) {
      if (def.terminal) expect(m.transitions.filter((t) => t.from === name), `${m.name}: ${name}`).toEqual([]);
    }
    const keys = m.transitions.map((t) => `${t.from}->${t.to}`);
    expect(new Set(keys).size).toBe(keys.length);
  });

  it("the summary table holds exactly the seed's states plus Drover's two, and the seed's PoweredOn moves", () => {
    expect(Object.keys(summaryMachine.states).sort()).toEqual(
      ["AwaitingReconnect", "ConflictPaused", "Degraded", "Error", "Offline", "Online", "PoweredOff", "PoweringOff", "PoweringOn", "Rebooting"].sort(),
    );
    const moves = summaryMachine.transitions.map((t) => `${t.from}->${t.to}`);
    for (const move of ["Online->Degraded", "Online->Error", "Degraded->Online", "Degraded->Error", "Error->Online", "Error->Degraded", "Online->Rebooting", "Degraded->Rebooting", "Error->Rebooting", "Rebooting->Online"]) {
      expect(moves).toContain(move);
    }
    // Rebooting only ever comes back through the afterRebooting hook, to Online.
    expect(moves).not.toContain("Rebooting->Degraded");
    expect(moves).not.toContain("Rebooting->Error");
  });

  it("the update-state table follows the seed's Updating diagram", () => {
    const moves = updateStateMachine.transitions.map((t) => `${t.from}->${t.to}`).sort();
    expect(moves).toEqual(
      [
        "Preparing->ReadyToUpdate",
        "Preparing->Canceled",
        "Preparing->Error",
        "ReadyToUpdate->ApplyingUpdate",
        "ReadyToUpdate->Canceled",
        "ApplyingUpdate->Rebooting",
        "ApplyingUpdate->ActivatingConfig",
        "ApplyingUpdate->RollingBack",
        "Rebooting->ActivatingConfig",
        "Rebooting->RollingBack",
        "ActivatingConfig->Updated",
        "ActivatingConfig->RollingBack",
        "RollingBack->Error",
      ].sort(),
    );
    expect(updateStateMachine.states.ActivatingConfig.transient).toBe(true);
    expect(updateStateMachine.states.Canceled.notYetSupported).toBe(true);
  });

  it("the lifecycle and decommissioning tables follow the seed's lifecycle diagram", () => {
    expect(lifecycleMachine.transitions.map((t) => `${t.from}->${t.to}`)).toEqual([
      "Unknown->Enrolled",
      "Enrolled->Decommissioning",
      "Decommissioning->Decommissioned",
      "Enrolled->Decommissioned",
    ]);
    expect(decommissioningMachine.initial).toBe("Requested");
    expect(decommissioningMachine.states.Completed.group).toEqual(["Decommissioned"]);
    expect(decommissioningMachine.states.Error.group).toEqual(["Decommissioned"]);
    expect(decommissioningMachine.states.CredentialRevoked.group).toEqual(["Decommissioned"]);
  });
});

// ---------------------------------------------------------------------------------------
// Every derived value is a state of its table (enumerating the inputs)

describe("derived values are states of the matching tables", () => {
  const resourceCombos: Record<(typeof RESOURCE_NAMES)[number], ResourceStatus>[] = [];
  for (const cpu of RESOURCE_STATUSES) for (const memory of RESOURCE_STATUSES) for (const disk of RESOURCE_STATUSES) resourceCombos.push({ cpu, memory, disk });
  const appCombos: ApplicationStatus[][] = [[]];
  for (const a of APPLICATION_STATUSES) {
    appCombos.push([a]);
    for (const b of APPLICATION_STATUSES) if (a <= b) appCombos.push([a, b]);
  }

  /** The seed's formal definitions, written independently of the implementation. */
  function seedSummary(d: DeviceFacts, settings: StatusSettings): SummaryStatus[] {
    const disconnected = d.lastSeen === null || d.lastSeen.getTime() + settings.disconnectionTimeoutSeconds * 1000 < NOW.getTime();
    const rebooting = d.reported?.conditions.rebooting === true;
    const rs = d.reported ? RESOURCE_NAMES.map((r) => d.reported?.resources[r]) : [];
    const holds: SummaryStatus[] = [];
    if (d.reported && !disconnected && !rebooting && rs.every((s) => s === "Healthy")) holds.push("Online");
    if (d.reported && !disconnected && !rebooting && rs.every((s) => s !== "Error" && s !== "Critical") && rs.some((s) => s === "Degraded")) holds.push("Degraded");
    if (d.reported && !disconnected && !rebooting && rs.some((s) => s === "Error" || s === "Critical")) holds.push("Error");
    if (d.reported && !disconnected && rebooting) holds.push("Rebooting");
    if (disconnected || !d.reported) holds.push("Offline");
    return holds;
  }
  function seedApplications(d: DeviceFacts, settings: StatusSettings): ApplicationSummary[] {
    const disconnected = d.lastSeen === null || d.lastSeen.getTime() + settings.disconnectionTimeoutSeconds * 1000 < NOW.getTime();
    const as = d.reported?.applications.map((a) => a.status) ?? [];
    const holds: ApplicationSummary[] = [];
    const known = d.reported !== null && !disconnected;
    if (known && as.length === 0) holds.push("NoApplications");
    if (known && as.length > 0 && as.every((s) => s === "Running" || s === "Completed")) holds.push("Healthy");
    if (known && as.every((s) => s !== "Error") && as.some((s) => s === "Preparing" || s === "Starting")) holds.push("Degraded");
    if (known && as.some((s) => s === "Error")) holds.push("Error");
    if (!known) holds.push("Unknown");
    return holds;
  }

  /** Spec versions only matter to updated.status: vary them fully on a few application sets. */
  const versionCombos = (appCount: number): [number, string | null, string | null][] =>
    appCount === 0
      ? [
          [1, null, null],
          [2, null, null],
          [1, "fleet-a", "t1"],
          [1, "fleet-a", "t2"],
        ]
      : [[1, null, null]];

  it("over resources × rebooting × updating × connection × applications × versions × conflict × restore", () => {
    const seen = { summary: new Set<string>(), updated: new Set<string>(), updatingReason: new Set<string>(), applicationSummary: new Set<string>() };
    const problems: string[] = [];
    const restoredAt = ago(60_000);
    const lastSeens: [string, Date | null][] = [
      ["connected", CONNECTED],
      ["disconnected", DISCONNECTED],
      ["never", null],
    ];
    let n = 0;
    for (const resources of resourceCombos)
      for (const rebooting of [undefined, false, true])
        for (const updating of [undefined, { status: false, reason: "Updated" as const }, { status: true, reason: "ApplyingUpdate" as const }])
          for (const [seenLabel, lastSeen] of lastSeens)
            for (const applications of appCombos)
              for (const [renderedVersion, owner, templateVersion] of versionCombos(applications.length))
                for (const conflictPaused of [false, true])
                  for (const settings of [SETTINGS, { ...SETTINGS, restoredAt }]) {
                    n++;
                    const d = facts({
                      reported: lastSeen === null ? null : report({ resources, applications: apps(...applications), conditions: { rebooting, updating } }),
                      lastSeen,
                      renderedVersion,
                      owner,
                      templateVersion,
                      fleetTemplateVersion: owner ? "t2" : null,
                      conflictPaused,
                    });
                    const s = deriveDeviceStatus(d, NOW, settings);
                    seen.summary.add(s.summary);
                    seen.updated.add(s.updated);
                    seen.applicationSummary.add(s.applicationSummary);
                    if (s.updatingReason !== null) seen.updatingReason.add(s.updatingReason);
                    const where = () => JSON.stringify({ resources, rebooting, updating, seenLabel, applications, renderedVersion, owner, templateVersion, conflictPaused, restored: settings.restoredAt !== null });
                    if (!isState(summaryMachine, s.summary)) problems.push(`summary ${s.summary} at ${where()}`);
                    if (!isState(updatedMachine, s.updated)) problems.push(`updated ${s.updated} at ${where()}`);
                    if (!isState(applicationSummaryMachine, s.applicationSummary)) problems.push(`applicationSummary ${s.applicationSummary} at ${where()}`);
                    if (!isState(lifecycleMachine, s.lifecycle)) problems.push(`lifecycle ${s.lifecycle} at ${where()}`);
                    if (s.updatingReason !== null && !isState(updateStateMachine, s.updatingReason)) problems.push(`updatingReason ${s.updatingReason} at ${where()}`);
                    if (summaryMachine.states[s.summary].notYetSupported) problems.push(`summary entered notYetSupported ${s.summary} at ${where()}`);

                    // Exactly one of the seed's summary rules holds, and it is the one derived
                    // (Drover's ConflictPaused and AwaitingReconnect take precedence over them).
                    const awaiting = settings.restoredAt !== null && (lastSeen === null || lastSeen.getTime() <= settings.restoredAt.getTime());
                    const summaryRules = seedSummary(d, settings);
                    if (summaryRules.length !== 1) problems.push(`summary rules ${summaryRules.join("|")} at ${where()}`);
                    const expectedSummary = conflictPaused ? "ConflictPaused" : awaiting ? "AwaitingReconnect" : summaryRules[0];
                    if (s.summary !== expectedSummary) problems.push(`summary ${s.summary} ≠ ${expectedSummary} at ${where()}`);

                    const appRules = seedApplications(d, settings);
                    if (appRules.length !== 1) problems.push(`application rules ${appRules.join("|")} at ${where()}`);
                    else if (s.applicationSummary !== appRules[0]) problems.push(`applicationSummary ${s.applicationSummary} ≠ ${appRules[0]} at ${where()}`);
                  }
    expect(n).toBeGreaterThan(50_000);
    expect(problems.slice(0, 10)).toEqual([]);
    // …and the derivations reach every state that is not "not yet supported".
    const supported = (m: StateMachine<string>) => Object.entries(m.states).filter(([, def]) => !def.notYetSupported).map(([k]) => k).sort();
    expect([...seen.summary].sort()).toEqual(supported(summaryMachine as StateMachine<string>));
    expect([...seen.updated].sort()).toEqual(supported(updatedMachine as StateMachine<string>));
    expect([...seen.applicationSummary].sort()).toEqual(supported(applicationSummaryMachine as StateMachine<string>));
  });

  it("lifecycle and decommissioning over enrollment × request × reported decommissioning state", () => {
    const seenLifecycle = new Set<string>();
    for (const enrollmentCompleted of [false, true])
      for (const decommissionRequested of [false, true])
        for (const state of [undefined, "Started", "Completed", "Error"] as const) {
          const d = facts({ enrollmentCompleted, decommissionRequested, reported: report(state ? { decommissioning: { state } } : {}) });
          const life = deriveLifecycle(d);
          const cond = deriveDecommissioning(d);
          seenLifecycle.add(life);
          expect(isState(lifecycleMachine, life)).toBe(true);
          if (cond !== null) expect(isState(decommissioningMachine, cond)).toBe(true);
          // The seed's formal definitions, one of which holds.
          const expected: Lifecycle = !enrollmentCompleted
            ? "Unknown"
            : !decommissionRequested
              ? "Enrolled"
              : state === "Completed" || state === "Error"
                ? "Decommissioned"
                : "Decommissioning";
          expect(life, JSON.stringify({ enrollmentCompleted, decommissionRequested, state })).toBe(expected);
        }
    expect([...seenLifecycle].sort()).toEqual(Object.keys(lifecycleMachine.states).sort());
  });
});
