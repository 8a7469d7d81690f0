import { z } from "zod";
import { router, viewerProcedure, operatorProcedure } from "../trpc/init";
import { LabelsSchema } from "../../lib/protocol";
import { idempotencyKeyField, idempotent } from "../idempotency/idempotency";
import { createEnrollmentToken, getEnrollmentToken, listEnrollmentTokens, revokeEnrollmentToken } from "./tokens";

/** Ten years: a token that should never expire simply has no expiry. */
const MAX_EXPIRY_SECONDS = 10 * 365 * 24 * 3600;

export const NewEnrollmentTokenInput = z
  .object({
    /** What it is for, shown in lists: "lab racks", "store 42". */
    name: z
      .string()
      .trim()
      .min(1)
      .max(64)
      .regex(/^[^\p{Cc}]+$/u, "no control characters"),
    description: z.string().trim().max(1024).optional(),
    /** Put on every device that enrolls with it, over the labels the agent asks for. */
    labels: LabelsSchema.default({}),
    /** From now; none: it never expires. */
    expiresInSeconds: z.number().int().min(1).max(MAX_EXPIRY_SECONDS).optional(),
    /** How many enrollments it may make; none: no limit. */
    maxUses: z.number().int().min(1).max(1_000_000).optional(),
    /** Devices enrolling with it are approved at once; otherwise they wait for an operator as usual. */
    autoApprove: z.boolean().default(false),
  })
  .strict();

const Id = z.object({ id: z.string().min(1).max(64) });

export const enrollmentTokensRouter = router({
  /** The answer carries the secret (`token`): the only time it is ever shown. */
  create: operatorProcedure
    .input(NewEnrollmentTokenInput.extend(idempotencyKeyField))
    .mutation(({ ctx, input }) => idempotent(ctx, "enrollmentTokens.create", input, (claim) => createEnrollmentToken(ctx.server, input, ctx.actor, claim))),
  list: viewerProcedure
    .input(z.object({ limit: z.coerce.number().int().min(1).max(1000).default(200) }).default({ limit: 200 }))
    .query(({ ctx, input }) => listEnrollmentTokens(ctx.server, input)),
  get: viewerProcedure.input(Id).query(({ ctx, input }) => getEnrollmentToken(ctx.server, input.id)),
  /** Already revoked: no change. */
  revoke: operatorProcedure.input(Id).mutation(({ ctx, input }) => revokeEnrollmentToken(ctx.server, input.id, ctx.actor)),
});
