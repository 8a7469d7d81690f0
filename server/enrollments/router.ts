import { z } from "zod";
import { router, viewerProcedure, operatorProcedure } from "../trpc/init";
import { EnrollmentStatus, LabelsSchema } from "../../lib/protocol";
import { decideEnrollments, denyEnrollments, getEnrollment, listEnrollments, reopenEnrollments, type DenyManyInput } from "./enrollments";

const Ids = z.object({ ids: z.array(z.string().min(1)).min(1).max(1000) });
const Reason = z.string().max(1024).optional();
const ClientAddress = z.string().min(1).max(64);

/** By ids, or every Pending one (optionally from one address): exactly one of the two. */
const DenyMany = z
  .object({
    ids: Ids.shape.ids.optional(),
    allPending: z.literal(true).optional(),
    clientAddress: ClientAddress.optional(),
    reason: Reason,
  })
  .strict()
  .superRefine((v, ctx) => {
    if (v.ids && v.allPending) ctx.addIssue({ code: "custom", message: "give either ids or allPending: true, not both" });
    else if (!v.ids && !v.allPending) ctx.addIssue({ code: "custom", message: "give ids, or allPending: true to deny every Pending request" });
    if (v.clientAddress !== undefined && !v.allPending) ctx.addIssue({ code: "custom", path: ["clientAddress"], message: "only with allPending: true" });
  });

export const enrollmentsRouter = router({
  list: viewerProcedure
    .input(
      z.object({
        status: EnrollmentStatus.optional(),
        clientAddress: ClientAddress.optional(),
        limit: z.coerce.number().int().min(1).max(1000).default(200),
      }),
    )
    .query(({ ctx, input }) => listEnrollments(ctx.server, input)),
  /** One request with its host facts and where it was first and last seen from (REST `GET /enrollments/{id}`). */
  get: viewerProcedure.input(z.object({ id: z.string().min(1).max(128) })).query(({ ctx, input }) => getEnrollment(ctx.server, input.id)),
  /** `labels`: put on every device approved, over the labels it asked for (the operator wins). */
  approve: operatorProcedure
    .input(Ids.extend({ reason: Reason, labels: LabelsSchema.optional() }))
    .mutation(({ ctx, input }) => decideEnrollments(ctx.server, input.ids, "Approved", ctx.actor, input.reason, input.labels)),
  deny: operatorProcedure
    .input(Ids.extend({ reason: Reason }))
    .mutation(({ ctx, input }) => decideEnrollments(ctx.server, input.ids, "Denied", ctx.actor, input.reason)),
  /** Revert denials: Denied → Pending (REST `POST /enrollments/{id}/reopen`). */
  reopen: operatorProcedure.input(Ids.extend({ reason: Reason })).mutation(({ ctx, input }) => reopenEnrollments(ctx.server, input.ids, ctx.actor, input.reason)),
  /** Clear the inbox in bulk (REST `POST /enrollments/deny`). */
  denyMany: operatorProcedure.input(DenyMany).mutation(({ ctx, input }) => {
    const target: DenyManyInput = input.ids ? { ids: input.ids } : { allPending: true, clientAddress: input.clientAddress };
    return denyEnrollments(ctx.server, target, ctx.actor, input.reason);
  }),
});
