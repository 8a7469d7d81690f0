import { z } from "zod";
import { router, viewerProcedure, operatorProcedure } from "../trpc/init";
import { FleetName } from "../../lib/fleet-spec";
import { listEvents } from "../events/events";
import { idempotent, takeIdempotencyKey } from "../idempotency/idempotency";
import { createFleet, deleteFleet, getFleet, listFleets, listTemplateVersions, parseFleetInput, updateFleet } from "./fleets";
import { requestRollout } from "../rollouts/requests";

export const FleetNameInput = z.object({ name: FleetName });

/**
 * A Fleet object, JSON or YAML already parsed. Validated by `parseFleetInput` (strict, with
 * the full path of an unknown field in the message), not here: zod's flattened error would
 * keep only the top-level key.
 */
export const FleetBody = z.unknown();

/** pause and abort say why (shown in the condition and the events). */
const WithReason = FleetNameInput.extend({ reason: z.string().trim().min(1).max(500).optional() });

export const fleetsRouter = router({
  list: viewerProcedure.query(({ ctx }) => listFleets(ctx.server)),
  get: viewerProcedure.input(FleetNameInput).query(({ ctx, input }) => getFleet(ctx.server, input.name)),
  templateVersions: viewerProcedure
    .input(FleetNameInput.extend({ limit: z.coerce.number().int().min(1).max(1000).default(100) }))
    .query(({ ctx, input }) => listTemplateVersions(ctx.server, input.name, input.limit)),
  events: viewerProcedure
    .input(FleetNameInput.extend({ limit: z.number().int().min(1).max(500).default(100) }))
    .query(({ ctx, input }) => listEvents(ctx.server, { kind: "Fleet", name: input.name, limit: input.limit })),
  create: operatorProcedure.input(FleetBody).mutation(({ ctx, input }) => {
    // The body is the Fleet object itself: the key rides beside its fields and is taken out before the strict parse.
    const { idempotencyKey, body } = takeIdempotencyKey(input);
    return idempotent(ctx, "fleets.create", { idempotencyKey, body }, (claim) => createFleet(ctx.server, parseFleetInput(body), ctx.actor, claim));
  }),
  /** Replace a fleet (404 if none); answers whether anything changed and the new template version, if any. */
  update: operatorProcedure
    .input(z.object({ name: z.string().min(1).max(63), fleet: FleetBody }))
    .mutation(({ ctx, input }) => updateFleet(ctx.server, input.name, parseFleetInput(input.fleet), ctx.actor)),
  delete: operatorProcedure.input(FleetNameInput).mutation(({ ctx, input }) => deleteFleet(ctx.server, input.name, ctx.actor)),
  // Rollout controls: requests the rollout controller acts on at once; the answer is the fleet after it ran.
  pause: operatorProcedure.input(WithReason).mutation(({ ctx, input }) => requestRollout(ctx.server, input.name, "pause", ctx.actor, input.reason)),
  resume: operatorProcedure.input(FleetNameInput).mutation(({ ctx, input }) => requestRollout(ctx.server, input.name, "resume", ctx.actor)),
  promote: operatorProcedure.input(FleetNameInput).mutation(({ ctx, input }) => requestRollout(ctx.server, input.name, "promote", ctx.actor)),
  abort: operatorProcedure.input(WithReason).mutation(({ ctx, input }) => requestRollout(ctx.server, input.name, "abort", ctx.actor, input.reason)),
});
