/**
 * The safety sweep (DESIGN.md §1): statuses that change by the clock alone. A device whose
 * agent stopped reporting turns Offline (and its application status Unknown) when the
 * disconnection timeout passes, without anyone looking at it.
 */
import type { ServerContext } from "../context";
import { publishEvents, recordEvents, type EventRow } from "../events/events";
import { deviceFactsSelect, derive, statusChangeEvents, statusColumns, storedStatus } from "./status";

const CONNECTED_SUMMARIES = ["Online", "Degraded", "Error", "Rebooting"];

export async function sweepDisconnected(ctx: ServerContext): Promise<number> {
  const now = ctx.now();
  const cutoff = new Date(now.getTime() - ctx.statusSettings.disconnectionTimeoutSeconds * 1000);
  const stale = await ctx.db.device.findMany({
    where: {
      lastSeen: { lt: cutoff },
      OR: [{ summary: { in: CONNECTED_SUMMARIES } }, { applicationSummary: { not: "Unknown" } }, { updatedStatus: "Updating" }],
    },
    select: deviceFactsSelect,
    take: 1000,
  });
  if (stale.length === 0) return 0;
  if (ctx.fast) {
    const items = stale.map((row) => {
      const after = derive(row, now, ctx.statusSettings);
      return { id: row.id, lastSeen: row.lastSeen!, columns: statusColumns(after), events: statusChangeEvents(row.name, storedStatus(row), after, "sweep") };
    });
    publishEvents(ctx, await ctx.fast.writeSweep(items, now));
    return stale.length;
  }
  const rows: EventRow[] = await ctx.db.$transaction(async (tx) => {
    const out: EventRow[] = [];
    for (const row of stale) {
      const after = derive(row, now, ctx.statusSettings);
      // Skip a device whose agent reported since we read it: its report already re-derived.
      const { count } = await tx.device.updateMany({ where: { id: row.id, lastSeen: row.lastSeen }, data: statusColumns(after) });
      if (count === 1) out.push(...(await recordEvents(tx, statusChangeEvents(row.name, storedStatus(row), after, "sweep"))));
    }
    return out;
  });
  publishEvents(ctx, rows);
  return stale.length;
}
