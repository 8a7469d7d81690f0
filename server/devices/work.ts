/**
 * What a device's long-poll answers with: a newer rendered spec, scheduled actions, cancels,
 * a decommission request. Null means "nothing yet": the poll parks until woken.
 */
import type { RenderedSpec, WorkResponse } from "../../lib/protocol";
import type { ServerContext } from "../context";

export async function pendingWork(ctx: ServerContext, deviceId: string, specVersion: number): Promise<WorkResponse | null> {
  const device = ctx.fast
    ? ctx.fast.workFacts(deviceId)
    : await ctx.db.device.findUnique({
        where: { id: deviceId },
        select: { renderedVersion: true, spec: true, decommissionRequestedAt: true, lifecycle: true },
      });
  if (!device) return null;
  const work: WorkResponse = { actions: [] };
  let any = false;
  if (device.spec !== null && device.renderedVersion > specVersion) {
    work.spec = JSON.parse(device.spec) as RenderedSpec;
    any = true;
  }
  if (device.decommissionRequestedAt !== null && device.lifecycle !== "Decommissioned") {
    work.decommission = true;
    any = true;
  }
  return any ? work : null;
}
