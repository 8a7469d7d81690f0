/**
 * Ingesting an agent's status report (the heartbeat): lastSeen, reported status, derived
 * statuses, conflict detection, decommissioning progress.
 *
 * The common report changes nothing but lastSeen: one statement. A report that changes a
 * status re-reads the device inside a transaction and derives from that fresh row, so a
 * decommission or resume that landed meanwhile is never written over. Both run as prepared
 * statements in group commits of the agent store (devices/agent-store-sql.ts).
 */
import type { StatusReport } from "../../lib/protocol";
import type { ReportedStatus } from "../../lib/device-status";
import type { ServerContext } from "../context";
import { publishEvents, type NewEvent } from "../events/events";
import type { HeartbeatWrite } from "./agent-store";
import type { Requester } from "./sql-driver";
import { actionsEnded, reconcileQueue } from "../actions/agent-reports";
import { topics } from "../bus";
import { recordInventory } from "./inventory";
import { noteAgentVersion } from "./agent-version";
import { derive, statusChangeEvents, statusColumns, storedStatus, type DeviceFactsRow } from "./status";

function applyReport(device: DeviceFactsRow, reportedJson: string, report: StatusReport, now: Date, ctx: ServerContext) {
  const events: NewEvent[] = [];
  const actor = `device:${device.name}`;
  // A renderedVersion newer than the service knows means the service lost state (restore):
  // pause the device rather than silently overwrite it (DESIGN.md §2).
  const conflict = !device.conflictPaused && report.config.renderedVersion > device.renderedVersion;
  if (conflict) {
    events.push({
      objectKind: "Device",
      objectName: device.name,
      type: "ConflictPaused",
      reason: "UnknownRenderedVersion",
      message: `reported renderedVersion ${report.config.renderedVersion}, service knows ${device.renderedVersion}`,
      actor,
    });
  }
  const next: DeviceFactsRow = { ...device, reported: reportedJson, lastSeen: now, conflictPaused: device.conflictPaused || conflict };
  const before = storedStatus(device);
  const after = derive(next, now, ctx.statusSettings);
  events.push(...statusChangeEvents(device.name, before, after, actor));

  // Decommissioning finished (or failed for good): the credential stops working now.
  const revoke = after.lifecycle === "Decommissioned" && before.lifecycle !== "Decommissioned";
  if (revoke) {
    events.push({
      objectKind: "Device",
      objectName: device.name,
      type: "CredentialRevoked",
      reason: "Decommissioned",
      message: report.decommissioning?.info ?? "",
      actor: "server",
    });
  }
  const data: HeartbeatWrite = {
    reported: reportedJson,
    lastSeen: now,
    ...(conflict ? { conflictPaused: true } : {}),
    ...statusColumns(after),
    ...(revoke ? { credentialRevokedAt: now } : {}),
  };
  return { data, events };
}

const maxRestarts = (apps: readonly { restarts: number }[]) => apps.reduce((m, a) => Math.max(m, a.restarts), 0);

/** Whether the highest restart count differs from the last report's (parsed only when there are restarts). */
function restartsMoved(previous: string | null, report: StatusReport): boolean {
  const now = maxRestarts(report.applications);
  if (now === 0) return false;
  return previous === null || now !== maxRestarts((JSON.parse(previous) as ReportedStatus).applications ?? []);
}

/**
 * `requester`: the report's connection (issue 22 item 4). When it is gone by the time the report's
 * group commit starts, nothing is written and this rejects with ClientGone (sql-driver.ts).
 */
export async function ingestStatus(ctx: ServerContext, device: DeviceFactsRow & { holdsActions?: boolean }, report: StatusReport, requester?: Requester): Promise<void> {
  const now = ctx.now();
  const reported: ReportedStatus = {
    resources: report.resources,
    applications: report.applications,
    conditions: report.conditions,
    config: report.config,
    decommissioning: report.decommissioning,
    capabilities: report.capabilities,
    // The latest usage (inventory.ts): this write happens on every report anyway.
    ...(report.system?.usage ? { usage: report.system.usage } : {}),
  };
  const reportedJson = JSON.stringify(reported);
  // Started first, so that it joins the same group commit as the write below; null
  // (nothing to write) on most reports.
  const inventory = recordInventory(ctx, device.id, report.system, now, requester);
  inventory?.catch(() => {}); // awaited below; not unhandled if the status write throws first
  const changes = applyReport(device, reportedJson, report, now, ctx).events.length > 0;
  if (!changes) {
    // Nothing changed but lastSeen and the report; status columns are left as they are.
    await ctx.fast.touch(device.id, reportedJson, now, requester);
  } else {
    // Re-read, decide and write in one transaction (a group commit of the agent store).
    const events = await ctx.fast.writeHeartbeat(device.id, (fresh) => applyReport(fresh, reportedJson, report, now, ctx), requester);
    publishEvents(ctx, events);
    // The report that ends a decommission ends the actions the device still held (LOST).
    actionsEnded(ctx, events);
    // A status change may make work offerable (e.g. back Online with actions waiting): wake its poll.
    ctx.bus.publish(topics.device(device.id), { at: Date.now() });
  }
  // A member's report that may move its fleet's rollout (a status, a restart count): the
  // rollout controller looks within a moment, so a canary pauses within a heartbeat.
  if (device.owner !== null && (changes || restartsMoved(device.reported, report))) ctx.bus.publish(topics.memberReports, { owner: device.owner });
  // The queue the agent sent is its whole queue: what we have as NEW or RUNNING and it lacks is LOST.
  await reconcileQueue(ctx, device, report.actions);
  if (inventory) await inventory;
  // An agent that upgraded itself says so in its first full facts (issue 12); most reports: nothing.
  if (report.system?.agent) await noteAgentVersion(ctx, device, report.system);
  ctx.metrics.heartbeats.inc();
}
