import { z } from "zod";
import { router, viewerProcedure, operatorProcedure } from "../trpc/init";
import { listActions } from "../actions/actions";
import { decideRequest, getRequest, listRequests, requestOutputs, REQUEST_ORIGINS } from "./requests";
import { OutputGroupsInput } from "../actions/output-groups";

/** `?pendingApproval=true` in a query string, or a boolean from tRPC. */
const Flag = z.preprocess((v) => (v === "true" ? true : v === "false" ? false : v), z.boolean()).optional();

export const RequestListInput = z.object({
  /** Only requests with at least one action still waiting for approval. */
  pendingApproval: Flag,
  origin: z.enum(REQUEST_ORIGINS).optional(),
  limit: z.coerce.number().int().min(1).max(500).default(50),
  cursor: z.string().max(64).optional(),
});

const Decide = z.object({ id: z.string().min(1).max(64), reason: z.string().max(1024).optional() });

export const requestsRouter = router({
  list: viewerProcedure.input(RequestListInput).query(({ ctx, input }) => {
    const { limit, cursor, ...filter } = input;
    return listRequests(ctx.server, filter, { limit, cursor });
  }),
  /** One request with its progress (waiting ones by reason) and the first page of its actions. */
  get: viewerProcedure
    .input(z.object({ id: z.string().min(1).max(64), limit: z.coerce.number().int().min(1).max(500).default(50) }))
    .query(async ({ ctx, input }) => {
      const request = await getRequest(ctx.server, input.id);
      const actions = await listActions(ctx.server, { request: input.id }, { limit: input.limit });
      return { ...request, actions };
    }),
  /** Its actions grouped by identical output (issue 21): a page of groups, largest first, each naming its first devices. */
  outputs: viewerProcedure
    .input(OutputGroupsInput.extend({ id: z.string().min(1).max(64) }))
    .query(({ ctx, input }) => {
      const { id, ...page } = input;
      return requestOutputs(ctx.server, id, page);
    }),
  approve: operatorProcedure.input(Decide).mutation(({ ctx, input }) => decideRequest(ctx.server, input.id, "Approved", ctx.actor, input.reason)),
  reject: operatorProcedure.input(Decide).mutation(({ ctx, input }) => decideRequest(ctx.server, input.id, "Rejected", ctx.actor, input.reason)),
});
