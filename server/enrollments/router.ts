import { z } from "zod";
import { router, viewerProcedure, operatorProcedure } from "../trpc/init";
import { EnrollmentStatus } from "../../lib/protocol";
import { decideEnrollments, listEnrollments } from "./enrollments";

const Ids = z.object({ ids: z.array(z.string().min(1)).min(1).max(1000) });
const Reason = z.string().max(1024).optional();

export const enrollmentsRouter = router({
  list: viewerProcedure
    .input(z.object({ status: EnrollmentStatus.optional(), limit: z.coerce.number().int().min(1).max(1000).default(200) }))
    .query(({ ctx, input }) => listEnrollments(ctx.server, input)),
  approve: operatorProcedure
    .input(Ids.extend({ reason: Reason }))
    .mutation(({ ctx, input }) => decideEnrollments(ctx.server, input.ids, "Approved", ctx.actor, input.reason)),
  deny: operatorProcedure
    .input(Ids.extend({ reason: Reason }))
    .mutation(({ ctx, input }) => decideEnrollments(ctx.server, input.ids, "Denied", ctx.actor, input.reason)),
});
