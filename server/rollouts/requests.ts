/**
 * Operators' manual controls (issue 7): pause (with a reason), resume, promote (end the
 * canary, including a manual-validation one, or approve a suspended batch), abort (revert).
 * An operator never writes the rollout's status: each control is a RolloutRequest (who, why,
 * when) that the rollout controller, its one owner, acts on at once in the same transaction.
 *
 * The answer is the fleet as it is after the controller ran (CanaryPaused cleared by a
 * resume, the revert of an abort...). A request the rollout cannot take (no rollout open, a
 * resume when nothing is paused, a promote while a batch is still rolling out) is 409 with
 * the controller's reason, and nothing is written.
 */
import type { ServerContext } from "../context";
import { conflict, notFound } from "../errors";
import { afterCommit, finishEffects, newEffects } from "../fleets/render";
import { refreshFleetStatus } from "../fleets/controller";
import { getFleet, type FleetObject } from "../fleets/fleets";
import type { RolloutRequestKind } from "../../lib/rollout";
import { ROLLOUT_CONTROLLER, runRolloutInTx } from "./controller";
import { locks, transaction } from "../lib/transactions";

export async function requestRollout(ctx: ServerContext, name: string, kind: RolloutRequestKind, actor: string, reason?: string): Promise<FleetObject> {
  const now = ctx.now();
  const { effects, rows } = await transaction(
    ctx.db,
    async (tx) => {
      const effects = newEffects(ctx.statusSettings);
      const fleet = await tx.fleet.findUnique({ where: { name }, select: { id: true } });
      if (!fleet) throw notFound(`fleet "${name}"`);
      const open = await tx.rollout.findFirst({ where: { fleetId: fleet.id, endedAt: null }, select: { id: true } });
      if (!open) {
        const last = await tx.rollout.findFirst({ where: { fleetId: fleet.id }, orderBy: { createdAt: "desc" }, select: { templateVersion: true, phase: true } });
        const ended = last ? `: the rollout of version ${last.templateVersion} ended ${last.phase}` : "";
        throw conflict(`fleet ${name} has no rollout in progress to ${kind}${ended}`);
      }
      const request = await tx.rolloutRequest.create({ data: { fleetId: fleet.id, kind, reason: reason ?? null, actor, createdAt: now }, select: { id: true } });
      const decision = await runRolloutInTx(tx, fleet.id, now, effects);
      const outcome = decision?.requests.find((r) => r.id === request.id);
      // Rolled back with the rest: a request that changes nothing is not recorded.
      if (!outcome || outcome.outcome !== "applied") throw conflict(`cannot ${kind} the rollout of fleet ${name}: ${outcome?.message ?? "the rollout did not take the request"}`);
      return { effects, rows: await finishEffects(tx, effects, now, ROLLOUT_CONTROLLER) };
    },
    { locks: [locks.fleet(name)], timeout: 60_000, maxWait: 30_000 },
  );
  afterCommit(ctx, effects, rows);
  await refreshFleetStatus(ctx, [name]);
  return getFleet(ctx, name);
}
