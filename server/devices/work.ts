/**
 * What a device's long-poll answers with: a newer rendered spec, scheduled actions, cancels,
 * a decommission request. Null means "nothing yet": the poll parks until woken.
 */
import type { RenderedSpec, WorkResponse } from "../../lib/protocol";
import type { ServerContext } from "../context";
import { offerWithinPolicies } from "../actions/scheduling";
import { healthRank } from "../../lib/health-policy";
import type { WorkFacts } from "./agent-store";
import { unauthenticated } from "../errors";
import { revokedMessage } from "./certificates";

/**
 * The device's rendered spec as the protocol sends it: the content (its template version's,
 * shared by every member, or its own kept copy) with renderedVersion and templateVersion,
 * which are the device's own and so are stored on the device, not in the content.
 */
export async function renderedSpecOf(ctx: ServerContext, d: Pick<WorkFacts, "renderedVersion" | "templateVersion" | "renderedSpecId" | "spec">): Promise<RenderedSpec | null> {
  let content: Record<string, unknown> | null = null;
  if (d.renderedSpecId !== null) {
    content = await ctx.fast.templateSpec(d.renderedSpecId);
  } else if (d.spec !== null) {
    content = JSON.parse(d.spec) as Record<string, unknown>;
  }
  if (content === null) return null;
  return { renderedVersion: d.renderedVersion, templateVersion: d.templateVersion ?? "", ...content } as RenderedSpec;
}

export async function pendingWork(ctx: ServerContext, deviceId: string, specVersion: number): Promise<WorkResponse | null> {
  const device = await ctx.fast.workFacts(deviceId);
  if (!device) return null;
  // Issue 23: revoked while its poll was held (woken by the revoke) or since it authenticated: refused now.
  if (device.revoked) throw unauthenticated(revokedMessage(device));
  const work: WorkResponse = { actions: [] };
  let any = false;
  if (device.renderedVersion > specVersion) {
    const spec = await renderedSpecOf(ctx, device);
    if (spec) {
      work.spec = spec;
      any = true;
    }
  }
  if (device.decommissionRequestedAt !== null && device.lifecycle !== "Decommissioned") {
    work.decommission = true;
    any = true;
  }
  const fast = ctx.fast;
  if (device.actionWork) {
    // Scheduling rules (seed 004): only to a device that is up, as each action's health policy
    // counts up (Online, or Degraded by default; lib/health-policy.ts), within concurrency
    // policies. Never to one asked to decommission: it only hears the cancels for what it holds.
    const rank = device.lifecycle === "Enrolled" && device.decommissionRequestedAt === null ? healthRank(device.summary) : null;
    const { actions, cancel } =
      rank !== null
        ? await offerWithinPolicies(ctx, deviceId, (allowed) => fast.offerActions(deviceId, ctx.now(), allowed ? rank : null))
        : await fast.offerActions(deviceId, ctx.now(), null);
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
