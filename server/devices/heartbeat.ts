/**
 * Ingesting an agent's status report (the heartbeat): lastSeen, reported status, derived
 * statuses, conflict detection, decommissioning progress. One transaction per report.
 */
import type { StatusReport } from "../../lib/protocol";
import type { ReportedStatus } from "../../lib/device-status";
import type { ServerContext } from "../context";
import { publishEvents, recordEvents, type NewEvent } from "../events/events";
import { derive, statusChangeEvents, statusColumns, storedStatus, type DeviceFactsRow } from "./status";

export async function ingestStatus(ctx: ServerContext, device: DeviceFactsRow, report: StatusReport): Promise<void> {
  const now = ctx.now();
  const reported: ReportedStatus = {
    resources: report.resources,
    applications: report.applications,
    conditions: report.conditions,
    config: report.config,
    decommissioning: report.decommissioning,
  };
  const events: NewEvent[] = [];
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
      actor: `device:${device.name}`,
    });
  }
  const reportedJson = JSON.stringify(reported);
  const next: DeviceFactsRow = {
    ...device,
    reported: reportedJson,
    lastSeen: now,
    conflictPaused: device.conflictPaused || conflict,
  };
  const before = storedStatus(device);
  const after = derive(next, now, ctx.statusSettings);
  events.push(...statusChangeEvents(device.name, before, after, `device:${device.name}`));

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

  const data = {
    reported: next.reported,
    lastSeen: now,
    conflictPaused: next.conflictPaused,
    ...statusColumns(after),
    ...(revoke ? { credentialRevokedAt: now } : {}),
  };
  if (events.length === 0) {
    // The common case: nothing changed but lastSeen; one statement, no transaction.
    if (ctx.fast) ctx.fast.touch(device.id, reportedJson, now);
    else await ctx.db.device.update({ where: { id: device.id }, data });
  } else {
    const rows = await ctx.db.$transaction(async (tx) => {
      await tx.device.update({ where: { id: device.id }, data });
      return recordEvents(tx, events);
    });
    publishEvents(ctx, rows);
  }
  ctx.metrics.heartbeats.inc();
}
