/**
 * Four eyes (issue 21, `DROVER_FOUR_EYES=1`): nobody approves work they requested. Checked in
 * the one domain function of each approval path (decideActions, decideRequest, approvePlan),
 * before anything is written, so REST and tRPC refuse alike with 403 and nothing changes.
 * Rejecting your own request stays allowed: it lets nothing run, as cancelling it would.
 */
import type { ServerContext } from "../context";
import type { Tx } from "../db";
import { forbidden } from "../errors";

/** An object's `createdBy` says who asked for it: an operator, or a plan or workflow on one's behalf. */
export type Owner = string | null;

/**
 * The operators behind an owner (pure but for the two look-ups it names): `user:X` is X; a plan's
 * actions (`plan:ID`) were requested by whoever submitted the plan; a workflow step's
 * (`workflow:NAME`) by whoever wrote the workflow and whoever started its current run.
 * Owners that name nobody (none: an agent's own action; `rollout:…`) have no requester to exclude.
 */
export async function requestersOf(db: Pick<Tx, "plan" | "workflow" | "workflowRun">, owners: Iterable<Owner>): Promise<Set<string>> {
  const users = new Set<string>();
  for (const owner of new Set(owners)) {
    if (owner === null) continue;
    if (owner.startsWith("user:")) users.add(owner);
    else if (owner.startsWith("plan:")) {
      const plan = await db.plan.findUnique({ where: { id: owner.slice(5) }, select: { createdBy: true } });
      if (plan?.createdBy.startsWith("user:")) users.add(plan.createdBy);
    } else if (owner.startsWith("workflow:")) {
      const name = owner.slice(9);
      const wf = await db.workflow.findUnique({ where: { name }, select: { createdBy: true, updatedBy: true, run: true } });
      if (!wf) continue;
      const run = await db.workflowRun.findUnique({ where: { workflowName_run: { workflowName: name, run: wf.run } }, select: { startedBy: true } });
      for (const who of [wf.createdBy, wf.updatedBy, run?.startedBy]) if (who?.startsWith("user:")) users.add(who);
    }
  }
  return users;
}

/**
 * 403 when four eyes is on and `actor` is among the requesters of what it approves. `what`
 * names the object for the message ("plan plan-1", "request r-1", "action a-1").
 */
export async function assertNotOwnApproval(
  ctx: Pick<ServerContext, "env">,
  db: Pick<Tx, "plan" | "workflow" | "workflowRun">,
  actor: string,
  subjects: { what: string; owner: Owner }[],
): Promise<void> {
  if (!ctx.env.DROVER_FOUR_EYES) return;
  // One look-up per owner, not per subject: 2,000 actions of one plan are one plan read.
  const firstOf = new Map<Owner, string>();
  for (const s of subjects) if (!firstOf.has(s.owner)) firstOf.set(s.owner, s.what);
  for (const [owner, what] of firstOf) {
    if ((await requestersOf(db, [owner])).has(actor)) {
      throw forbidden(`four eyes (DROVER_FOUR_EYES=1): ${actor} requested ${what}${owner === actor ? "" : ` (through ${owner})`}, so another operator must approve it`);
    }
  }
}
