/**
 * A job step's targets, the operator side (issue 21): list the current attempt's targets with
 * their phase (lib/workflow-status.ts `targetMachine`, derived from each target's action) and
 * the moves an operator may make on each; skip one (it counts as finished, not failed: the step
 * can Succeed without it; its unfinished action is cancelled through the action engine); retry
 * one that failed (a new action made by the action engine from the step's jobTemplate, a rerun
 * of the last). Either reopens its step when the step was Retrying or Failed for that target
 * (`reopenStep`, lib/workflow.ts), and a pass of the controller follows in the same
 * transaction. Only while the run is Running (409 otherwise); every refusal changes nothing.
 */
import type { ServerContext } from "../context";
import { Prisma, type Tx } from "../db";
import { locks, transaction } from "../lib/transactions";
import { conflict, invalid, notFound } from "../errors";
import { recordEvents, type NewEvent } from "../events/events";
import { cancelActionInTx, createActionInTx, type CancelOutcome } from "../actions/actions";
import { inChunks } from "../lib/chunks";
import { outputGroups, type OutputGroupsPage, type OutputGroupsView } from "../actions/output-groups";
import { WorkflowSpec } from "../../lib/workflow-spec";
import { reopenStep } from "../../lib/workflow";
import { targetMoves, targetPhase, TARGET_MOVE_TO, type StepPhase, type TargetMove, type TargetPhase, type WorkflowPhase } from "../../lib/workflow-status";
import { FINAL_ACTION_STATES, type ActionState } from "../../lib/action-status";
import type { HealthPolicy } from "../../lib/health-policy";
import { afterPass, FAILED_TARGET, passInTx, workflowEvent, type PassEffects } from "./controller";
import { getWorkflow, type WorkflowObject } from "./workflows";

const TX = { timeout: 60_000, maxWait: 30_000 } as const;
/** The console shows this many targets of a step; the rest are counted. */
export const TARGETS_SHOWN = 500;

export interface WorkflowTargetView {
  target: string;
  phase: TargetPhase;
  actionId: string | null;
  actionState: ActionState | null;
  /** Why it got no action (no such device, not Enrolled), or its action's error. */
  error: string | null;
  skippedBy: string | null;
  skipReason: string | null;
  /** What an operator may do with it now (empty once the run has ended). */
  moves: TargetMove[];
}

export interface WorkflowTargetsView {
  workflow: string;
  step: string;
  run: number;
  attempt: number;
  stepPhase: StepPhase;
  total: number;
  items: WorkflowTargetView[];
}

/** The current attempt's targets of a job step, in the order they were made (the first TARGETS_SHOWN), each with its phase and moves. */
export async function listStepTargets(ctx: ServerContext, name: string, step: string, limit = TARGETS_SHOWN): Promise<WorkflowTargetsView> {
  const { wf, stepPhase, attempt } = await currentAttempt(ctx, name, step);
  const where = { workflowName: name, run: wf.run, step, attempt };
  const [links, total] = await Promise.all([ctx.db.workflowStepAction.findMany({ where, orderBy: { id: "asc" }, take: limit }), ctx.db.workflowStepAction.count({ where })]);
  const ids = links.flatMap((l) => (l.actionId ? [l.actionId] : []));
  const actions = await inChunks(ids, (chunk) => ctx.db.action.findMany({ where: { id: { in: chunk } }, select: { id: true, state: true, error: true } }));
  const byId = new Map(actions.map((a) => [a.id, a]));
  const items = links.map((l): WorkflowTargetView => {
    const a = l.actionId ? byId.get(l.actionId) : undefined;
    const actionState = (a?.state ?? null) as ActionState | null;
    const phase = targetPhase({ skipped: l.skippedAt !== null, error: l.error, actionState });
    return {
      target: l.target,
      phase,
      actionId: l.actionId,
      actionState,
      error: l.error ?? a?.error ?? null,
      skippedBy: l.skippedBy,
      skipReason: l.skipReason,
      moves: targetMoves(phase, stepPhase, wf.phase as WorkflowPhase),
    };
  });
  return { workflow: name, step, run: wf.run, attempt, stepPhase, total, items };
}

/** A job step's current run and attempt (404 for no such workflow or step, 400 for a step that references another workflow). */
async function currentAttempt(ctx: ServerContext, name: string, step: string) {
  const wf = await ctx.db.workflow.findUnique({ where: { name }, select: { phase: true, run: true, spec: true } });
  if (!wf) throw notFound(`workflow "${name}"`);
  jobStep(name, wf.spec, step);
  const row = await ctx.db.workflowStepStatus.findUnique({ where: { workflowName_step: { workflowName: name, step } }, select: { phase: true, attempts: true } });
  return { wf, stepPhase: (row?.phase ?? "Pending") as StepPhase, attempt: row?.attempts ?? 0 };
}

/** The actions the current attempt's targets hold now (a retried target's newest) grouped by identical output (server/actions/output-groups.ts). */
export async function stepOutputs(ctx: ServerContext, name: string, step: string, page: OutputGroupsPage): Promise<OutputGroupsView & { workflow: string; step: string; run: number; attempt: number }> {
  const { wf, attempt } = await currentAttempt(ctx, name, step);
  const groups = await outputGroups(ctx, { workflow: name, run: wf.run, step, attempt }, page);
  return { workflow: name, step, run: wf.run, attempt, ...groups };
}

function jobStep(name: string, specText: string, step: string) {
  const s = WorkflowSpec.parse(JSON.parse(specText)).steps[step];
  if (!s) throw notFound(`step "${step}" of workflow ${name}`);
  if (!s.jobTemplate) throw invalid(`step ${step} references workflow ${s.externalRef?.name ?? "?"}: it has no targets of its own`);
  return s.jobTemplate;
}

/** Skip a target of a running workflow's step, with a reason: it counts as finished, not failed; its unfinished action is cancelled. */
export function skipWorkflowTarget(ctx: ServerContext, name: string, step: string, target: string, actor: string, reason: string): Promise<WorkflowObject> {
  return moveTarget(ctx, name, step, target, "skip", actor, reason);
}

/** Retry a failed target of a running workflow's step, with a reason: a new action for it, made as the step made the first. */
export function retryWorkflowTarget(ctx: ServerContext, name: string, step: string, target: string, actor: string, reason: string): Promise<WorkflowObject> {
  return moveTarget(ctx, name, step, target, "retry", actor, reason);
}

async function moveTarget(ctx: ServerContext, name: string, step: string, target: string, move: TargetMove, actor: string, reason: string): Promise<WorkflowObject> {
  const effects = await transaction(ctx.db, async (tx): Promise<PassEffects> => {
    const now = ctx.now();
    const wf = await tx.workflow.findUnique({ where: { name }, include: { steps: true } });
    if (!wf) throw notFound(`workflow "${name}"`);
    const spec = WorkflowSpec.parse(JSON.parse(wf.spec));
    const job = jobStep(name, wf.spec, step);
    if (wf.phase !== "Running") throw conflict(`workflow ${name} is ${wf.phase}: its run has ended, so its targets can no longer be skipped or retried (rerun it)`);
    // The run row, guarded and locked: a cancel or the end of the run cannot slip in between.
    const { count: still } = await tx.workflow.updateMany({ where: { name, phase: "Running", run: wf.run, cancelRequestedAt: null }, data: { phase: "Running" } });
    if (still !== 1) throw conflict(`workflow ${name} is being cancelled or changed concurrently`);
    const row = wf.steps.find((r) => r.step === step);
    const stepPhase = (row?.phase ?? "Pending") as StepPhase;
    const link = row
      ? await tx.workflowStepAction.findFirst({ where: { workflowName: name, run: wf.run, step, attempt: row.attempts, target }, orderBy: { id: "desc" } })
      : null;
    if (!link) throw notFound(`target "${target}" in the current attempt of step ${step} (run ${wf.run})`);
    const action = link.actionId ? await tx.action.findUnique({ where: { id: link.actionId }, select: { state: true } }) : null;
    const from = targetPhase({ skipped: link.skippedAt !== null, error: link.error, actionState: (action?.state ?? null) as ActionState | null });
    if (!targetMoves(from, stepPhase, "Running").includes(move)) {
      throw conflict(
        `target ${target} of step ${step} is ${from} (step ${stepPhase}): ${move === "skip" ? "only a target that has not finished (Waiting, Running or Failed) can be skipped" : "only a Failed target can be retried"}${stepPhase === "Pending" || stepPhase === "Succeeded" ? `, in a step that is Running, Retrying or Failed` : ""}`,
      );
    }
    const newEvents: NewEvent[] = [];
    const cancels: CancelOutcome[] = [];
    const wake: string[] = [];
    const where = `workflow ${name} step ${step}`;
    if (move === "skip") {
      const { count } = await tx.workflowStepAction.updateMany({ where: { id: link.id, skippedAt: null, actionId: link.actionId }, data: { skippedAt: now, skippedBy: actor, skipReason: reason } });
      if (count !== 1) throw conflict(`target ${target} of step ${step} changed concurrently`);
      if (link.actionId && action && !(FINAL_ACTION_STATES as readonly string[]).includes(action.state)) {
        cancels.push(await cancelActionInTx(tx, link.actionId, actor, `target ${target} skipped in ${where}: ${reason}`, now));
      }
      newEvents.push(workflowEvent(name, "WorkflowTargetSkipped", from, `${step}/${target} (${from} → ${TARGET_MOVE_TO.skip}): ${reason}`, actor));
    } else {
      const device = await tx.device.findUnique({ where: { name: target }, select: { id: true, name: true, lifecycle: true, decommissionRequestedAt: true } });
      if (!device) throw conflict(`target ${target} cannot be retried: no such device`);
      if (device.lifecycle !== "Enrolled" || device.decommissionRequestedAt) {
        throw conflict(`target ${target} cannot be retried: the device is ${device.decommissionRequestedAt ? "being decommissioned" : device.lifecycle}: actions go to Enrolled devices only`);
      }
      const created = await createActionInTx(
        tx,
        ctx,
        {
          device,
          kind: job.kind,
          args: job.args,
          origin: "workflow",
          requireApproval: job.requireApproval,
          healthPolicy: job.healthPolicy as HealthPolicy | undefined,
          rerunOf: link.actionId,
          createdBy: `workflow:${name}`,
          ref: `workflow/${name}/${step}/run/${wf.run}/attempt/${link.attempt}/retry/${target}`,
          note: ` for ${where} (attempt ${link.attempt}, retried by ${actor})`,
        },
        actor,
        now,
      );
      const { count } = await tx.workflowStepAction.updateMany({
        where: { id: link.id, skippedAt: null, actionId: link.actionId },
        data: { actionId: created.id, deviceId: device.id, error: null },
      });
      if (count !== 1) throw conflict(`target ${target} of step ${step} changed concurrently`);
      newEvents.push(...created.events);
      if (created.wake) wake.push(created.wake);
      newEvents.push(workflowEvent(name, "WorkflowTargetRetried", from, `${step}/${target} (${from} → ${TARGET_MOVE_TO.retry}): new action ${created.id}${link.actionId ? `, a rerun of ${link.actionId}` : ""}: ${reason}`, actor));
    }

    // The step goes back to Running when it waits or failed only for targets now skipped or retried.
    if ((stepPhase === "Retrying" || stepPhase === "Failed") && (move === "retry" || (await failedTargets(tx, name, wf.run, step, link.attempt)) === 0)) {
      const engineSteps = Object.entries(spec.steps).map(([s, sp]) => ({ name: s, spec: sp, phase: (wf.steps.find((r) => r.step === s)?.phase ?? "Pending") as StepPhase }));
      const reopened = reopenStep(engineSteps, step, `reopened by ${actor}: target ${target} ${move === "skip" ? "skipped" : "retried"}`);
      if (reopened.blocking.length) throw conflict(`step ${step} cannot run again: ${reopened.blocking.join(", ")} already went on from its ${stepPhase === "Failed" ? "failure" : "phase"}`);
      for (const c of reopened.steps) {
        const was = wf.steps.find((r) => r.step === c.name)?.phase ?? "Pending";
        const { count } = await tx.workflowStepStatus.updateMany({
          where: { workflowName: name, step: c.name, phase: was },
          data: { phase: c.phase, message: c.message, nextAttemptAt: null, finishedAt: null },
        });
        if (count !== 1) throw conflict(`step ${c.name} changed concurrently`);
        newEvents.push(workflowEvent(name, "WorkflowStepChanged", c.phase, `${c.name}: ${was} → ${c.phase}: ${c.message}`, actor));
      }
    }
    const events = await recordEvents(tx, newEvents);
    const pass = await passInTx(tx, ctx, name, now);
    return {
      events: [...events, ...cancels.flatMap((c) => c.events), ...(pass?.events ?? [])],
      wake: [...wake, ...(pass?.wake ?? [])],
      cancels: [...cancels.map((c) => ({ ...c, events: [] })), ...(pass?.cancels ?? [])],
      followers: pass?.followers ?? [],
      timers: pass?.timers ?? [],
    };
  }, { ...TX, locks: [locks.workflow(name)] });
  afterPass(ctx, effects);
  return getWorkflow(ctx, name);
}

/** The failed targets of one attempt (skipped ones are not failed). */
async function failedTargets(tx: Tx, name: string, run: number, step: string, attempt: number): Promise<number> {
  const [r] = await tx.$queryRaw<{ n: bigint | number }[]>(Prisma.sql`
    SELECT COUNT(*) AS "n" FROM "WorkflowStepAction" sa LEFT JOIN "Action" a ON a."id" = sa."actionId"
    WHERE sa."workflowName" = ${name} AND sa."run" = ${run} AND sa."step" = ${step} AND sa."attempt" = ${attempt} AND ${FAILED_TARGET}`);
  return Number(r?.n ?? 0);
}
