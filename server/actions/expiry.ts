/**
 * Action expiry (issue 10): an action created with `expiresInSeconds` that has not started
 * (RUNNING) by its `expiresAt` is cancelled, with the error saying so. Run by the controllers'
 * tick (every DROVER_SWEEP_SECONDS, so within that of the moment); the offer already skips an
 * expired action in between. A pending one is CANCELLED at once; one the agent holds (NEW) is
 * cancelled through the agent, as an operator's cancel would be.
 */
import type { ServerContext } from "../context";
import { afterCancel, cancelActionInTx, type CancelOutcome } from "./actions";
import { wakeDevicesWithPendingActions } from "./scheduling";
import { transaction } from "../lib/transactions";

export const EXPIRY_ACTOR = "server:expiry";

export async function expireActions(ctx: ServerContext): Promise<number> {
  const now = ctx.now();
  const due = await ctx.db.action.findMany({
    where: { expiresAt: { lte: now }, state: { in: ["PENDING_APPROVE", "PENDING_SCHEDULE", "NEW"] }, cancelRequestedAt: null },
    select: { id: true, expiresAt: true, createdAt: true },
    orderBy: { expiresAt: "asc" },
    take: 1000,
  });
  if (due.length === 0) return 0;
  const outcomes: CancelOutcome[] = await transaction(ctx.db, async (tx) => {
    const out: CancelOutcome[] = [];
    for (const a of due) {
      const seconds = Math.round((a.expiresAt!.getTime() - a.createdAt.getTime()) / 1000);
      out.push(await cancelActionInTx(tx, a.id, EXPIRY_ACTOR, `expired: not started within ${seconds}s of its creation`, now));
    }
    return out;
  });
  afterCancel(ctx, outcomes);
  if (ctx.env.DROVER_ACTION_CONCURRENCY.length > 0) await wakeDevicesWithPendingActions(ctx);
  return outcomes.filter((o) => o.events.length > 0).length;
}
