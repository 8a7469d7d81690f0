/**
 * The safety sweep (DESIGN.md §1): statuses that change by the clock alone. A device whose
 * agent stopped reporting turns Offline (and its application status Unknown) when the
 * disconnection timeout passes, without anyone looking at it.
 */
import type { ServerContext } from "../context";
import { publishEvents } from "../events/events";
import { CONNECTED_SUMMARIES, deviceFactsSelect, derive, statusChangeEvents, statusColumns, storedStatus } from "./status";
import { sweepCutoff } from "../../lib/device-status";

/**
 * `termStartedAt`: when this server's controllers started (it became the leader, or started on
 * SQLite). With the moment its database last answered again after an outage, and the last
 * moment it refused a heartbeat for its own load (a 429, issue 22 item 4), it is when the server
 * could hear devices from (sweepCutoff): a server's own outage or load never makes a device Offline.
 */
export async function sweepDisconnected(ctx: ServerContext, termStartedAt: Date | null = null): Promise<number> {
  // Heartbeats are being refused right now: nothing is the devices' fault.
  if (!ctx.database.reachable) return 0;
  const now = ctx.now();
  const back = ctx.database.reachableSince;
  const listeningSince = [termStartedAt, back, ctx.database.heartbeatsShedAt].reduce<Date | null>((a, b) => (b !== null && (a === null || b > a) ? b : a), null);
  const cutoff = sweepCutoff(now, ctx.statusSettings, listeningSince);
  if (cutoff === null) return 0;
  const stale = await ctx.db.device.findMany({
    where: {
      lastSeen: { lt: cutoff },
      OR: [{ summary: { in: CONNECTED_SUMMARIES } }, { applicationSummary: { not: "Unknown" } }, { updatedStatus: "Updating" }],
    },
    select: deviceFactsSelect,
    // The oldest first, by the lastSeen index. Without an order Prisma adds one by id for `take`,
    // and SQLite then scanned every device in id order for the LIMIT: 6–10 ms of the event loop
    // every tick with 10,000 devices, none of them stale (issue 22, wake and approve p99).
    orderBy: { lastSeen: "asc" },
    take: 1000,
  });
  if (stale.length === 0) return 0;
  const items = stale.map((row) => {
    const after = derive(row, now, ctx.statusSettings);
    return { id: row.id, lastSeen: row.lastSeen!, columns: statusColumns(after), events: statusChangeEvents(row.name, storedStatus(row), after, "sweep") };
  });
  publishEvents(ctx, await ctx.fast.writeSweep(items, now));
  return stale.length;
}
