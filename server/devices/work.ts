/**
 * What a device's long-poll answers with: a newer rendered spec, scheduled actions, cancels,
 * a decommission request. Null means "nothing yet": the poll parks until woken.
 */
import type { RenderedSpec, WorkResponse } from "../../lib/protocol";
import type { ServerContext } from "../context";
import { offerWithinPolicies } from "../actions/scheduling";

export async function pendingWork(ctx: ServerContext, deviceId: string, specVersion: number): Promise<WorkResponse | null> {
  const device = ctx.fast
    ? ctx.fast.workFacts(deviceId)
    : await ctx.db.device.findUnique({
        where: { id: deviceId },
        select: { renderedVersion: true, spec: true, decommissionRequestedAt: true, lifecycle: true, summary: true },
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
  if (ctx.fast?.hasActionWork(deviceId)) {
    // Scheduling rules (seed 004): only to an Online device, within concurrency policies.
    // Never to one asked to decommission: it only hears the cancels for what it holds.
    const fast = ctx.fast;
    const eligible = device.summary === "Online" && device.lifecycle === "Enrolled" && device.decommissionRequestedAt === null;
    const { actions, cancel } = eligible
      ? await offerWithinPolicies(ctx, deviceId, (allowed) => fast.offerActions(deviceId, ctx.now(), allowed))
      : await fast.offerActions(deviceId, ctx.now(), false);
    if (actions.length) {
      work.actions = actions;
      any = true;
    }
    if (cancel.length) {
      work.cancel = cancel;
      any = true;
    }
  }
  return any ? work : null;
}
