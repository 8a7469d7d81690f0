import { z } from "zod";
import { router, viewerProcedure, operatorProcedure } from "../trpc/init";
import { listEvents } from "../events/events";
import { idempotencyKeyField, idempotent } from "../idempotency/idempotency";
import { PLAN_STATES } from "../../lib/plan-status";
import { approvePlan, cancelPlan, createPlan, getPlan, listPlans, parsePlanInput, parsePlanOptions, retryPlan, skipPlanNode } from "./plans";

const PlanId = z.object({ id: z.string().min(1).max(64) });

export const plansRouter = router({
  list: viewerProcedure
    .input(
      z
        .object({
          state: z.array(z.enum(PLAN_STATES as [string, ...string[]])).optional(),
          limit: z.coerce.number().int().min(1).max(500).default(50),
          cursor: z.string().max(64).optional(),
        })
        .default({ limit: 50 }),
    )
    .query(({ ctx, input }) => listPlans(ctx.server, { state: input.state as never }, input)),
  get: viewerProcedure.input(PlanId).query(({ ctx, input }) => getPlan(ctx.server, input.id)),
  events: viewerProcedure
    .input(PlanId.extend({ limit: z.number().int().min(1).max(500).default(100) }))
    .query(({ ctx, input }) => listEvents(ctx.server, { kind: "Plan", name: input.id, limit: input.limit })),
  /**
   * A k0s Plan (autopilot.k0sproject.io/v1beta2) or Drover's (drover/v1), JSON or YAML already
   * parsed. Validated by `parsePlanInput` (strict, the full path of a bad field in the message).
   */
  create: operatorProcedure
    .input(z.object({ plan: z.unknown(), requireApproval: z.boolean().optional(), deadline: z.string().max(32).optional(), ...idempotencyKeyField }))
    .mutation(({ ctx, input }) => {
      const { plan, idempotencyKey: _key, ...options } = input;
      return idempotent(ctx, "plans.create", input, (idempotency) =>
        createPlan(ctx.server, { input: parsePlanInput(plan), options: parsePlanOptions(options), actor: ctx.actor, idempotency }),
      );
    }),
  /** The reason is optional here (scripts keep working); the console asks for one. */
  approve: operatorProcedure
    .input(PlanId.extend({ reason: z.string().trim().min(1).max(500).optional() }))
    .mutation(({ ctx, input }) => approvePlan(ctx.server, input.id, ctx.actor, input.reason)),
  cancel: operatorProcedure
    .input(PlanId.extend({ reason: z.string().trim().min(1).max(500).optional() }))
    .mutation(({ ctx, input }) => cancelPlan(ctx.server, input.id, ctx.actor, input.reason)),
  retry: operatorProcedure
    .input(PlanId.extend(idempotencyKeyField))
    .mutation(({ ctx, input }) => idempotent(ctx, "plans.retry", input, (claim) => retryPlan(ctx.server, input.id, ctx.actor, claim))),
  /** Move on without one node (issue 21), with a reason: it counts as done for its command. */
  skipNode: operatorProcedure
    .input(PlanId.extend({ node: z.string().min(1).max(253), command: z.number().int().min(0).max(1000).optional(), reason: z.string().trim().min(1).max(500) }))
    .mutation(({ ctx, input }) => skipPlanNode(ctx.server, input.id, { name: input.node, command: input.command }, ctx.actor, input.reason)),
});
