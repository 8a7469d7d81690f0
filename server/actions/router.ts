import { z } from "zod";
import { router, viewerProcedure, operatorProcedure } from "../trpc/init";
import { ACTION_STATES } from "../../lib/action-status";
import { ActionKind, jsonRecord } from "../../lib/protocol";
import { HEALTH_POLICIES } from "../../lib/health-policy";
import { actionCounts, actionReruns, cancelAction, createActions, decideActions, getAction, listActions, refusalsFor, rerunAction, resolveTargets, needsApproval } from "./actions";
import { listEvents } from "../events/events";
import { idempotencyKeyField, idempotent } from "../idempotency/idempotency";
import { actionOutputTopic, type ActionOutputUpdate } from "./agent-reports";

const States = z
  .preprocess((v) => (typeof v === "string" ? v.split(",").filter(Boolean) : v), z.array(z.enum(ACTION_STATES as [string, ...string[]])))
  .optional();
const Ids = z.object({ ids: z.array(z.string().min(1)).min(1).max(10_000), reason: z.string().max(1024).optional() });
const Id = z.object({ id: z.string().min(1), reason: z.string().max(1024).optional() });
/** `2026-11-23T05:00:00Z`, `2026-11-23T06:00:00.5+01:00`: a moment, never a bare date or a local time. */
const RFC3339 = z.iso
  .datetime({ offset: true, error: "expected an RFC 3339 date-time with an offset, e.g. 2026-11-23T05:00:00Z" })
  .transform((v) => new Date(v));
const Target = z.object({ device: z.string().min(1).max(63).optional(), labelSelector: z.string().max(1024).optional() });

export const CreateActionInput = Target.extend({
  kind: ActionKind,
  args: jsonRecord(z.unknown()).default({}),
  requireApproval: z.boolean().optional(),
  /** Not started (RUNNING) within this many seconds (at most 30 days): the server cancels it, error "expired". */
  expiresInSeconds: z.number().int().min(1).max(30 * 24 * 3600).optional(),
  /** The least healthy device summary it goes to: Online, Degraded (the default) or Error (lib/health-policy.ts). */
  healthPolicy: z.enum(HEALTH_POLICIES).optional(),
});

export const ActionListInput = z.object({
  device: z.string().max(63).optional(),
  state: States,
  kind: z.string().max(64).optional(),
  origin: z.string().max(16).optional(),
  /** Only the actions of this request (ActionRequest id). */
  request: z.string().max(64).optional(),
  labelSelector: z.string().max(1024).optional(),
  /** Created at or after this moment, RFC 3339 with an offset (issue 10). */
  createdAfter: RFC3339.optional(),
  /** Created before this moment. */
  createdBefore: RFC3339.optional(),
  limit: z.coerce.number().int().min(1).max(500).default(50),
  cursor: z.string().optional(),
}).refine((q) => !q.createdAfter || !q.createdBefore || q.createdAfter < q.createdBefore, {
  path: ["createdBefore"],
  message: "must be later than createdAfter",
});

export const actionsRouter = router({
  list: viewerProcedure.input(ActionListInput).query(({ ctx, input }) => {
    const { limit, cursor, ...filter } = input;
    return listActions(ctx.server, { ...filter, state: filter.state as never }, { limit, cursor });
  }),
  get: viewerProcedure.input(z.object({ id: z.string().min(1) })).query(({ ctx, input }) => getAction(ctx.server, input.id)),
  events: viewerProcedure
    .input(z.object({ id: z.string().min(1), limit: z.number().int().min(1).max(500).default(200) }))
    .query(({ ctx, input }) => listEvents(ctx.server, { kind: "Action", name: input.id, limit: input.limit })),
  /** The actions that run this one again (rerunOf), newest first. */
  reruns: viewerProcedure.input(z.object({ id: z.string().min(1) })).query(({ ctx, input }) => actionReruns(ctx.server, input.id)),
  counts: viewerProcedure.query(({ ctx }) => actionCounts(ctx.server)),
  /** Which devices a create request would target, before submitting it. */
  preview: viewerProcedure.input(Target.extend({ kind: z.string().max(64).optional(), args: jsonRecord(z.unknown()).optional() })).query(async ({ ctx, input }) => {
    const targets = await resolveTargets(ctx.server, input);
    return {
      total: targets.length,
      devices: targets.slice(0, 50).map((d) => ({ name: d.name, summary: d.summary })),
      needsApproval: input.kind ? needsApproval(ctx.server, input.kind, false) : null,
      refusals: input.kind ? await refusalsFor(ctx.server, targets, input.kind, input.args ?? {}) : { total: 0, devices: [] },
    };
  }),
  create: operatorProcedure
    .input(CreateActionInput.extend(idempotencyKeyField))
    .mutation(({ ctx, input }) => idempotent(ctx, "actions.create", input, (claim) => createActions(ctx.server, input, ctx.actor, claim))),
  approve: operatorProcedure.input(Ids).mutation(({ ctx, input }) => decideActions(ctx.server, input.ids, "Approved", ctx.actor, input.reason)),
  reject: operatorProcedure.input(Ids).mutation(({ ctx, input }) => decideActions(ctx.server, input.ids, "Rejected", ctx.actor, input.reason)),
  cancel: operatorProcedure.input(Id).mutation(({ ctx, input }) => cancelAction(ctx.server, input.id, ctx.actor, input.reason)),
  /** A new action with the same device, kind, args and approval requirement (409 while this one has not ended). */
  rerun: operatorProcedure
    .input(z.object({ id: z.string().min(1), ...idempotencyKeyField }))
    .mutation(({ ctx, input }) => idempotent(ctx, "actions.rerun", input, (claim) => rerunAction(ctx.server, input.id, ctx.actor, claim))),
  /**
   * A running action's output as the agent sends it (issue 10): the stored output first, then
   * each replacement. The action page subscribes while the action runs; its end comes as an
   * event through events.live, as every state change does.
   */
  output: viewerProcedure.input(z.object({ id: z.string().min(1) })).subscription(async function* ({ ctx, input, signal }) {
    const bus = ctx.server.bus;
    let latest: ActionOutputUpdate | null = null;
    let wake: (() => void) | null = null;
    const unsubscribe = bus.subscribe<ActionOutputUpdate>(actionOutputTopic(input.id), (update) => {
      // Only the newest matters: each carries the whole output so far.
      latest = update;
      wake?.();
    });
    try {
      const row = await ctx.server.db.action.findUnique({ where: { id: input.id }, select: { output: true } });
      if (!row) return;
      if (latest === null) yield { output: row.output ?? "" };
      while (!signal?.aborted) {
        const next = latest as ActionOutputUpdate | null;
        if (next) {
          latest = null;
          yield next;
          continue;
        }
        await new Promise<void>((resolve) => {
          const onAbort = () => resolve();
          wake = () => {
            signal?.removeEventListener("abort", onAbort);
            resolve();
          };
          signal?.addEventListener("abort", onAbort, { once: true });
        });
        wake = null;
      }
    } finally {
      unsubscribe();
    }
  }),
});
