/**
 * Nudge (seed 004: "the API will allow scheduling a cluster task to nudge actions"): an
 * operator's escape hatch that reconciles one object now.
 */
import { z } from "zod";
import type { ServerContext } from "./context";
import { conflict, notFound } from "./errors";
import { FINAL_ACTION_STATES } from "../lib/action-status";
import { nudgeDevice } from "./devices/lifecycle";
import { publishEvents, recordEvents } from "./events/events";
import { topics } from "./bus";
import { router, operatorProcedure } from "./trpc/init";
import { runPlans } from "./plans/controller";
import { runWorkflows } from "./workflows/controller";

export const NudgeInput = z.object({ kind: z.enum(["Device", "Action", "Plan", "Workflow"]), name: z.string().min(1).max(128) });

export async function nudge(ctx: ServerContext, input: z.infer<typeof NudgeInput>, actor: string): Promise<{ nudged: string }> {
  if (input.kind === "Device") {
    await nudgeDevice(ctx, input.name, actor);
    return { nudged: `Device/${input.name}` };
  }
  if (input.kind === "Plan") {
    const plan = await ctx.db.plan.findUnique({ where: { id: input.name }, select: { state: true } });
    if (!plan) throw notFound(`plan "${input.name}"`);
    const events = await recordEvents(ctx.db, [{ objectKind: "Plan", objectName: input.name, type: "Nudged", reason: plan.state, actor }]);
    publishEvents(ctx, events);
    await runPlans(ctx, [input.name]);
    return { nudged: `Plan/${input.name}` };
  }
  if (input.kind === "Workflow") {
    const wf = await ctx.db.workflow.findUnique({ where: { name: input.name }, select: { phase: true } });
    if (!wf) throw notFound(`workflow "${input.name}"`);
    const events = await recordEvents(ctx.db, [{ objectKind: "Workflow", objectName: input.name, type: "Nudged", reason: wf.phase, actor }]);
    publishEvents(ctx, events);
    await runWorkflows(ctx, [input.name]);
    return { nudged: `Workflow/${input.name}` };
  }
  const action = await ctx.db.action.findUnique({ where: { id: input.name }, select: { deviceId: true, state: true } });
  if (!action) throw notFound(`action "${input.name}"`);
  // An ended action has nothing left to reconcile: saying "Nudged" would be a control that does nothing (issue 10).
  if ((FINAL_ACTION_STATES as readonly string[]).includes(action.state)) throw conflict(`action ${input.name} is ${action.state}: an ended action has nothing to nudge`);
  // One statement each: no transaction.
  const events = await recordEvents(ctx.db, [{ objectKind: "Action", objectName: input.name, type: "Nudged", reason: action.state, actor }]);
  publishEvents(ctx, events);
  ctx.bus.publish(topics.device(action.deviceId), { at: Date.now() });
  return { nudged: `Action/${input.name}` };
}

export const nudgeRouter = router({
  nudge: operatorProcedure.input(NudgeInput).mutation(({ ctx, input }) => nudge(ctx.server, input, ctx.actor)),
});
