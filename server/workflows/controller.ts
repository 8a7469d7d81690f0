/**
 * The workflow controller (issue 9, DESIGN.md §6, seed 001): the one writer of a workflow's
 * status after its start (but for an operator reopening a step by a target's skip or retry,
 * targets.ts, which passes the workflow at once) (the workflow's phase, reason, message, completionTime; its steps'
 * phases, attempts and messages; the run's outcome in WorkflowRun). A pass reads the workflow,
 * its steps, each running attempt's outcome (one query: the attempt's targets joined to their
 * actions) and the runs its reference steps follow, asks the pure engine (`decideWorkflow`,
 * lib/workflow.ts) and applies the decision in the caller's transaction:
 *
 * - step moves, one event each (`WorkflowStepChanged` on `Workflow/<name>`);
 * - attempts: a job resolves its targets (device names, or the label selector over Enrolled
 *   devices; a retry only the targets of the previous attempt that did not end DONE) and
 *   creates one action per target through the action engine's rules (origin `workflow`,
 *   createdBy `workflow:<name>`; approval by DROVER_APPROVAL_KINDS or
 *   `jobTemplate.requireApproval`; offered to the devices `jobTemplate.healthPolicy` admits,
 *   Online and Degraded by default; cancel; LOST). A target that
 *   cannot get an action (no such device, not Enrolled) is a failed target with why. A
 *   reference follows the referenced workflow's current run when it is Running, else starts a
 *   new run of it (`startRunInTx`), and records which run it follows;
 * - the unfinished actions of the steps the engine names cancelled (cancel, deadline);
 * - the end: conditions (phase, reason, message), completionTime, the run's row, WorkflowEnded.
 *
 * After commit (`afterPass`): events published, devices woken, agents told of cancels, the
 * workflows following an ended run passed, and a timer for the next retry or the deadline.
 *
 * When it runs: inside the transaction of a create, a rerun, a PUT and a cancel; 100 ms after
 * one of its actions ended (`watchWorkflows`); on every controllers' tick for every Running
 * workflow (deadlines, backoff, references); at a Retrying step's next attempt time and at the
 * deadline (timers, so neither waits for the tick); POST /nudge {kind: Workflow}. A pass that
 * would change nothing is found outside any transaction first. Passes run one at a time per
 * server.
 *
 * Schedules (`spec.schedule`, Argo's CronWorkflow): `Workflow.nextScheduleTime` holds the next
 * time the cron falls; when it has come (a timer at that time, armed again at start-up from the
 * database; the tick as a safety net) a tick starts a run (startedBy "schedule",
 * WorkflowScheduled) or, while a run is in progress, is skipped (WorkflowScheduleSkipped: one
 * run at a time, Argo's concurrencyPolicy Forbid). The next time is always computed from now,
 * so ticks missed while no server ran make one catch-up run, not one per missed tick.
 */
import { DEFAULT_HEALTH_POLICY } from "../../lib/health-policy";
import { randomUUID } from "node:crypto";
import type { ServerContext } from "../context";
import { Prisma, type Db, type Tx } from "../db";
import { locks, transaction } from "../lib/transactions";
import { publishEvents, recordEvents, type EventRow, type NewEvent } from "../events/events";
import { topics } from "../bus";
import { inChunks } from "../lib/chunks";
import { selectorWhere } from "../devices/queries";
import { watchEndedActions } from "../actions/ended-watch";
import { afterCancel, cancelActionInTx, insertActionsInTx, needsApproval, type CancelOutcome } from "../actions/actions";
import type { NewActionRow } from "../devices/agent-store";
import { selectorRequirements } from "../../lib/fleet-spec";
import { formatSelector } from "../../lib/label-selector";
import { newRequestRow, requestCreatedEvent } from "../requests/requests";
import { WorkflowSpec } from "../../lib/workflow-spec";
import { DEFAULT_SCHEDULE_TIMEZONE, nextScheduleTime, nextScheduleTimes } from "../../lib/workflow-schedule";
import { assertTransition } from "../../lib/state-machine";
import { workflowMachine, isEndedStep, type StepPhase, type WorkflowPhase } from "../../lib/workflow-status";
import { decideWorkflow, FAILURES_NAMED, type AttemptOutcome, type EngineStep, type WorkflowDecision } from "../../lib/workflow";
import { FINAL_ACTION_STATES, type ActionState } from "../../lib/action-status";

export const WORKFLOW_CONTROLLER = "workflow-controller";
const TX = { timeout: 60_000, maxWait: 30_000 } as const;
/** As many targets as an action request may have (actions.ts resolveTargets). */
const MAX_TARGETS = 10_000;
const FINAL = new Set<string>(FINAL_ACTION_STATES);

export interface PassEffects {
  events: EventRow[];
  /** Devices with a new PENDING_SCHEDULE action: their held polls are woken. */
  wake: string[];
  cancels: Pick<CancelOutcome, "events" | "deviceId" | "outcome">[];
  /** Workflows with a step following a run that ended here: passed after commit. */
  followers: string[];
  /** A pass is due at this moment (a retry's backoff, the deadline). */
  timers: { name: string; at: Date }[];
}

const emptyEffects = (): PassEffects => ({ events: [], wake: [], cancels: [], followers: [], timers: [] });

function merge(a: PassEffects, b: PassEffects | null): PassEffects {
  if (!b) return a;
  return {
    events: [...a.events, ...b.events],
    wake: [...a.wake, ...b.wake],
    cancels: [...a.cancels, ...b.cancels],
    followers: [...a.followers, ...b.followers],
    timers: [...a.timers, ...b.timers],
  };
}

export function afterPass(ctx: ServerContext, effects: PassEffects): void {
  publishEvents(ctx, effects.events);
  afterCancel(ctx, effects.cancels);
  for (const id of new Set(effects.wake)) ctx.bus.publish(topics.device(id), { at: Date.now() });
  if (effects.followers.length > 0) {
    runWorkflows(ctx, [...new Set(effects.followers)], { look: false }).catch((err: unknown) => ctx.log.error({ err }, "workflow controller failed"));
  }
  for (const t of effects.timers) schedule(ctx, t.name, t.at);
}

// ---------------------------------------------------------------------------------------
// Timers: a retry starts when its backoff has passed, the deadline ends the run when it falls

const timers = new WeakMap<ServerContext, Map<string, NodeJS.Timeout>>();

export function schedule(ctx: ServerContext, name: string, at: Date): void {
  const delay = Math.max(0, at.getTime() - ctx.now().getTime()) + 5;
  // Beyond the tick's reach nothing is gained; setTimeout also caps at 2^31-1 ms.
  if (delay > 24 * 3600 * 1000) return;
  const own = timers.get(ctx) ?? timers.set(ctx, new Map()).get(ctx)!;
  const key = `${name}@${at.getTime()}`;
  if (own.has(key)) return;
  const timer = setTimeout(() => {
    own.delete(key);
    runWorkflows(ctx, [name]).catch((err: unknown) => ctx.log.error({ err, workflow: name }, "workflow controller failed"));
  }, delay);
  timer.unref();
  own.set(key, timer);
}

export function stopWorkflowTimers(ctx: ServerContext): void {
  for (const t of timers.get(ctx)?.values() ?? []) clearTimeout(t);
  timers.delete(ctx);
}

// ---------------------------------------------------------------------------------------
// Starting a run (create, rerun, a referencing step)

export function workflowEvent(name: string, type: string, reason: string, message: string, actor: string): NewEvent {
  return { objectKind: "Workflow", objectName: name, type, reason, message, actor };
}

/**
 * A new run of a saved workflow that is not Running (just created: Pending; or ended): every
 * step Pending again (the previous run's step statuses are dropped; its outcome stays in
 * WorkflowRun), run + 1, startTime now. The caller passes it afterwards.
 */
export async function startRunInTx(tx: Tx, name: string, actor: string, now: Date): Promise<{ run: number; events: NewEvent[]; timers: PassEffects["timers"] }> {
  const wf = await tx.workflow.findUnique({ where: { name }, select: { phase: true, run: true, spec: true, activeDeadlineSeconds: true } });
  if (!wf) throw new Error(`workflow ${name} not found`);
  const from = wf.phase as WorkflowPhase;
  if (from !== "Pending") assertTransition(workflowMachine, from, "Pending");
  assertTransition(workflowMachine, "Pending", "Running");
  const spec = WorkflowSpec.parse(JSON.parse(wf.spec));
  const run = wf.run + 1;
  const { count } = await tx.workflow.updateMany({
    where: { name, phase: from, run: wf.run },
    data: { phase: "Running", run, reason: null, message: "", startTime: now, completionTime: null, cancelRequestedAt: null, cancelRequestedBy: null, cancelReason: null },
  });
  if (count !== 1) throw new Error(`workflow ${name} changed concurrently`);
  await tx.workflowStepStatus.deleteMany({ where: { workflowName: name } });
  await tx.workflowStepStatus.createMany({ data: Object.keys(spec.steps).map((step) => ({ workflowName: name, step, phase: "Pending", updatedAt: now })) });
  await tx.workflowRun.create({ data: { workflowName: name, run, startedBy: actor, phase: "Running", startTime: now } });
  const n = Object.keys(spec.steps).length;
  return {
    run,
    events: [workflowEvent(name, "WorkflowStarted", "Running", `run ${run}: ${n} step(s)${wf.activeDeadlineSeconds ? `, deadline ${wf.activeDeadlineSeconds}s` : ""}`, actor)],
    timers: wf.activeDeadlineSeconds ? [{ name, at: new Date(now.getTime() + wf.activeDeadlineSeconds * 1000) }] : [],
  };
}

// ---------------------------------------------------------------------------------------
// Reading what a pass needs

interface FailedTarget {
  step: string;
  target: string;
  targetError: string | null;
  state: string | null;
  error: string | null;
  cancelRequestedBy: string | null;
}

function targetFailure(r: FailedTarget): string {
  if (r.targetError) return `${r.target}: ${r.targetError}`;
  if (r.state === null) return `${r.target}: its action is gone (the device was deleted)`;
  if (r.state === "CANCELLED") return `${r.target}: CANCELLED${r.cancelRequestedBy ? ` by ${r.cancelRequestedBy}` : ""}${r.error ? `: ${r.error}` : ""}`;
  return `${r.target}: ${r.state}${r.error ? `: ${r.error}` : ""}`;
}

/** A target failed: not skipped by an operator, and it got no action, its action is gone, or it ended other than DONE. */
export const FAILED_TARGET = Prisma.sql`(sa."skippedAt" IS NULL AND (sa."error" IS NOT NULL OR a."state" IS NULL OR a."state" IN ('FAILED', 'CANCELLED', 'LOST')))`;
const RUNNING_ATTEMPTS = Prisma.sql`
    FROM "WorkflowStepAction" sa
    JOIN "WorkflowStepStatus" ss ON ss."workflowName" = sa."workflowName" AND ss."step" = sa."step" AND ss."attempts" = sa."attempt"
    LEFT JOIN "Action" a ON a."id" = sa."actionId"`;

/**
 * Every running attempt's outcome in the current run, grouped in the database: per step the
 * targets, those DONE and those failed, and the first few failures with why (the engine's
 * message names five). Two queries however many targets: a pass over a 10,000-device step
 * reads one row per step, not one per target.
 */
export async function runningOutcomes(db: Db | Tx, name: string, run: number): Promise<Map<string, AttemptOutcome>> {
  const where = Prisma.sql`WHERE sa."workflowName" = ${name} AND sa."run" = ${run} AND ss."phase" = 'Running'`;
  const [counts, failed] = await Promise.all([
    db.$queryRaw<{ step: string; total: bigint | number; done: bigint | number; skipped: bigint | number; failed: bigint | number }[]>(Prisma.sql`
      SELECT sa."step", COUNT(*) AS "total",
        SUM(CASE WHEN sa."skippedAt" IS NULL AND NOT ${FAILED_TARGET} AND a."state" = 'DONE' THEN 1 ELSE 0 END) AS "done",
        SUM(CASE WHEN sa."skippedAt" IS NOT NULL THEN 1 ELSE 0 END) AS "skipped",
        SUM(CASE WHEN ${FAILED_TARGET} THEN 1 ELSE 0 END) AS "failed"
      ${RUNNING_ATTEMPTS} ${where}
      GROUP BY sa."step"`),
    db.$queryRaw<FailedTarget[]>(Prisma.sql`
      SELECT "step", "target", "targetError", "state", "error", "cancelRequestedBy" FROM (
        SELECT sa."step", sa."target", sa."error" AS "targetError", a."state", a."error", a."cancelRequestedBy",
          ROW_NUMBER() OVER (PARTITION BY sa."step" ORDER BY sa."id") AS "n"
        ${RUNNING_ATTEMPTS} ${where} AND ${FAILED_TARGET}
      ) f WHERE "n" <= ${FAILURES_NAMED}`),
  ]);
  const out = new Map<string, AttemptOutcome>();
  for (const c of counts) out.set(c.step, { total: Number(c.total), done: Number(c.done ?? 0), skipped: Number(c.skipped ?? 0), failed: Number(c.failed ?? 0), failures: [] });
  for (const f of failed) out.get(f.step)?.failures.push(targetFailure(f));
  return out;
}

type WorkflowRow = Prisma.WorkflowGetPayload<{ include: { steps: true } }>;

/** The runs the running reference steps follow (no query when there are none). */
function followedRuns(db: Db | Tx, running: { refWorkflow: string | null; refRun: number | null }[]) {
  const keys = running.flatMap((r) => (r.refWorkflow && r.refRun !== null ? [{ workflowName: r.refWorkflow, run: r.refRun }] : []));
  if (keys.length === 0) return Promise.resolve([]);
  return db.workflowRun.findMany({ where: { OR: keys }, select: { workflowName: true, run: true, phase: true, reason: true, message: true } });
}

interface Loaded {
  wf: WorkflowRow;
  spec: WorkflowSpec;
  decision: WorkflowDecision;
}

async function load(db: Db | Tx, name: string, now: Date): Promise<Loaded | null> {
  const wf = await db.workflow.findUnique({ where: { name }, include: { steps: true } });
  if (!wf || wf.phase !== "Running") return null;
  const spec = WorkflowSpec.parse(JSON.parse(wf.spec));
  const rows = wf.steps;
  const running = rows.filter((r) => r.phase === "Running");
  const [grouped, runs] = await Promise.all([
    running.some((r) => spec.steps[r.step]?.jobTemplate) ? runningOutcomes(db, name, wf.run) : Promise.resolve(new Map<string, AttemptOutcome>()),
    followedRuns(db, running),
  ]);
  const outcomes = new Map<string, AttemptOutcome>();
  for (const r of running) {
    const step = spec.steps[r.step];
    if (step?.jobTemplate) outcomes.set(r.step, grouped.get(r.step) ?? { total: 0, done: 0, skipped: 0, failed: 0, failures: [] });
  }
  for (const r of running) {
    if (!r.refWorkflow) continue;
    if (r.refRun === null) {
      outcomes.set(r.step, { total: 1, done: 0, skipped: 0, failed: 1, failures: [`workflow ${r.refWorkflow} not found`] });
      continue;
    }
    const followed = runs.find((x) => x.workflowName === r.refWorkflow && x.run === r.refRun);
    if (!followed) outcomes.set(r.step, { total: 1, done: 0, skipped: 0, failed: 1, failures: [`workflow ${r.refWorkflow} was deleted`] });
    else if (followed.phase === "Succeeded") outcomes.set(r.step, { total: 1, done: 1, skipped: 0, failed: 0, failures: [] });
    else if (followed.phase === "Failed")
      outcomes.set(r.step, { total: 1, done: 0, skipped: 0, failed: 1, failures: [`workflow ${r.refWorkflow} run ${r.refRun} Failed (${followed.reason ?? "?"}): ${followed.message}`] });
    else outcomes.set(r.step, { total: 1, done: 0, skipped: 0, failed: 0, failures: [] });
  }
  const byName = new Map(rows.map((r) => [r.step, r]));
  const steps: EngineStep[] = Object.entries(spec.steps).map(([stepName, stepSpec]) => {
    const r = byName.get(stepName);
    return {
      name: stepName,
      spec: stepSpec,
      phase: (r?.phase ?? "Pending") as StepPhase,
      message: r?.message ?? "",
      attempts: r?.attempts ?? 0,
      firstStartedAt: r?.firstStartedAt ?? null,
      nextAttemptAt: r?.nextAttemptAt ?? null,
      outcome: outcomes.get(stepName) ?? null,
    };
  });
  const decision = decideWorkflow(
    {
      phase: "Running",
      startedAt: wf.startTime,
      failFast: wf.failFast,
      activeDeadlineSeconds: wf.activeDeadlineSeconds,
      cancel: wf.cancelRequestedBy ? { by: wf.cancelRequestedBy, reason: wf.cancelReason } : null,
    },
    steps,
    now,
  );
  return { wf, spec, decision };
}

const changes = (d: WorkflowDecision) => d.steps.length > 0 || d.start.length > 0 || d.cancelActionsOf.length > 0 || d.workflow !== null;

// ---------------------------------------------------------------------------------------
// Applying a pass

const deviceSelect = { id: true, name: true, lifecycle: true, decommissionRequestedAt: true } satisfies Prisma.DeviceSelect;
type TargetDevice = Prisma.DeviceGetPayload<{ select: typeof deviceSelect }>;

/** The devices an attempt targets, by name (with why one cannot take an action) or by selector. */
async function resolveAttemptTargets(tx: Tx, wf: { name: string; run: number }, spec: WorkflowSpec, step: string, attempt: number): Promise<{ target: string; device: TargetDevice | null; error: string | null }[]> {
  const job = spec.steps[step]!.jobTemplate!;
  let names: string[];
  if (attempt > 1) {
    // A retry runs again only the targets of the previous attempt that did not end DONE (nor were skipped by an operator).
    const previous = await tx.$queryRaw<{ target: string; state: string | null }[]>(Prisma.sql`
      SELECT sa."target", a."state" FROM "WorkflowStepAction" sa LEFT JOIN "Action" a ON a."id" = sa."actionId"
      WHERE sa."workflowName" = ${wf.name} AND sa."run" = ${wf.run} AND sa."step" = ${step} AND sa."attempt" = ${attempt - 1} AND sa."skippedAt" IS NULL`);
    names = previous.filter((p) => p.state !== "DONE").map((p) => p.target);
  } else if (job.targets.devices) {
    names = [...new Set(job.targets.devices)];
  } else {
    const rows = await tx.device.findMany({
      where: { AND: [...selectorWhere(selectorRequirements(job.targets.selector)), { lifecycle: "Enrolled", decommissionRequestedAt: null, credentialRevokedAt: null }] },
      select: deviceSelect,
      orderBy: { name: "asc" },
      take: MAX_TARGETS,
    });
    return rows.map((d) => ({ target: d.name, device: d, error: null }));
  }
  const found = await inChunks(names, (chunk) => tx.device.findMany({ where: { name: { in: chunk } }, select: deviceSelect }));
  const byName = new Map(found.map((d) => [d.name, d]));
  return names.map((target) => {
    const d = byName.get(target);
    if (!d) return { target, device: null, error: "no such device" };
    if (d.lifecycle !== "Enrolled" || d.decommissionRequestedAt) return { target, device: null, error: `the device is ${d.decommissionRequestedAt ? "being decommissioned" : d.lifecycle}: actions go to Enrolled devices only` };
    return { target, device: d, error: null };
  });
}

/** One pass over a workflow inside the caller's transaction; null when nothing changed. */
export async function passInTx(tx: Tx, ctx: ServerContext, name: string, now: Date, depth = 0): Promise<PassEffects | null> {
  const loaded = await load(tx, name, now);
  if (!loaded || !changes(loaded.decision)) return null;
  const { wf, spec, decision } = loaded;
  const effects = emptyEffects();
  const newEvents: NewEvent[] = decision.events.map((e) => workflowEvent(name, e.type, e.reason, e.message, WORKFLOW_CONTROLLER));
  const starting = new Map(decision.start.map((s) => [s.name, s.attempt]));
  const rowByStep = new Map(wf.steps.map((r) => [r.step, r]));

  // Step moves (and the attempt counters of those that start).
  for (const c of decision.steps) {
    const attempt = starting.get(c.name);
    const row = rowByStep.get(c.name);
    await tx.workflowStepStatus.update({
      where: { workflowName_step: { workflowName: name, step: c.name } },
      data: {
        phase: c.phase,
        message: c.message,
        nextAttemptAt: c.nextAttemptAt,
        ...(isEndedStep(c.phase) ? { finishedAt: now } : {}),
        ...(attempt !== undefined ? { attempts: attempt, startedAt: now, firstStartedAt: row?.firstStartedAt ?? now } : {}),
      },
    });
    if (c.phase === "Retrying" && c.nextAttemptAt) effects.timers.push({ name, at: c.nextAttemptAt });
  }

  // Attempts.
  for (const { name: step, attempt } of decision.start) {
    const s = spec.steps[step]!;
    if (s.externalRef) {
      const child = s.externalRef.name;
      const target = await tx.workflow.findUnique({ where: { name: child }, select: { phase: true, run: true } });
      let refRun: number | null = null;
      if (target?.phase === "Running") {
        refRun = target.run;
        newEvents.push(workflowEvent(name, "WorkflowReferenceFollowed", "Running", `${step}: follows workflow ${child} run ${refRun}, already Running`, WORKFLOW_CONTROLLER));
      } else if (target) {
        const started = await startRunInTx(tx, child, `workflow:${name}`, now);
        refRun = started.run;
        // Recorded before the child's first pass, so a run that ends at once is seen by this workflow's next pass.
        await tx.workflowStepStatus.update({ where: { workflowName_step: { workflowName: name, step } }, data: { refWorkflow: child, refRun } });
        const childEvents = await recordEvents(tx, started.events);
        effects.events.push(...childEvents);
        effects.timers.push(...started.timers);
        newEvents.push(workflowEvent(name, "WorkflowReferenceStarted", "Running", `${step}: started workflow ${child} run ${refRun}`, WORKFLOW_CONTROLLER));
        // A reference cycle is refused at save time; the depth bound is a second line of defence.
        if (depth < 32) Object.assign(effects, merge(effects, await passInTx(tx, ctx, child, now, depth + 1)));
      }
      await tx.workflowStepStatus.update({ where: { workflowName_step: { workflowName: name, step } }, data: { refWorkflow: child, refRun } });
      continue;
    }
    const job = s.jobTemplate!;
    const targets = await resolveAttemptTargets(tx, wf, spec, step, attempt);
    const approval = needsApproval(ctx, job.kind, job.requireApproval);
    const state: ActionState = approval ? "PENDING_APPROVE" : "PENDING_SCHEDULE";
    const args = JSON.stringify(job.args);
    const actions: NewActionRow[] = [];
    const links: Prisma.WorkflowStepActionCreateManyInput[] = [];
    // One request per step attempt (issue 10): its actions are decided as a unit.
    const request = newRequestRow(
      {
        kind: job.kind,
        args,
        origin: "workflow",
        ref: `workflow/${name}/${step}/run/${wf.run}/attempt/${attempt}`,
        ...(attempt === 1 && job.targets.selector
          ? { targetKind: "selector" as const, target: formatSelector(selectorRequirements(job.targets.selector)) }
          : { targetKind: "devices" as const, target: targets.map((t) => t.target).join(", ").slice(0, 1024) }),
        createdBy: `workflow:${name}`,
        requireApproval: approval,
      },
      now,
    );
    for (const t of targets) {
      if (!t.device) {
        links.push({ workflowName: name, run: wf.run, step, attempt, target: t.target, error: t.error, createdAt: now });
        continue;
      }
      const id = randomUUID();
      actions.push({
        id,
        deviceId: t.device.id,
        kind: job.kind,
        args,
        origin: "workflow",
        state,
        requireApproval: approval,
        healthPolicy: job.healthPolicy ?? DEFAULT_HEALTH_POLICY,
        createdBy: `workflow:${name}`,
        // Distinct, ordered creation times keep "oldest createdAt first" well defined.
        createdAt: new Date(now.getTime() + actions.length),
        requestId: request.id,
      });
      links.push({ workflowName: name, run: wf.run, step, attempt, target: t.target, deviceId: t.device.id, actionId: id, createdAt: now });
      newEvents.push({
        objectKind: "Action",
        objectName: id,
        type: "ActionCreated",
        reason: state,
        message: `${job.kind} on ${t.target} for workflow ${name} step ${step} (attempt ${attempt})${approval ? ", waiting for approval" : ""}`,
        actor: WORKFLOW_CONTROLLER,
      });
      if (!approval) effects.wake.push(t.device.id);
    }
    if (actions.length > 0) {
      await insertActionsInTx(tx, request, actions, now);
      newEvents.push(requestCreatedEvent(request, actions.length, WORKFLOW_CONTROLLER));
    }
    if (links.length > 0) await tx.workflowStepAction.createMany({ data: links });
  }

  // Cancel and deadline: the named steps' unfinished actions are cancelled.
  const cancels: CancelOutcome[] = [];
  if (decision.cancelActionsOf.length > 0) {
    const open = await tx.$queryRaw<{ actionId: string }[]>(Prisma.sql`
      SELECT sa."actionId" FROM "WorkflowStepAction" sa JOIN "Action" a ON a."id" = sa."actionId"
      WHERE sa."workflowName" = ${name} AND sa."run" = ${wf.run} AND sa."step" IN (${Prisma.join(decision.cancelActionsOf)})
        AND a."state" NOT IN (${Prisma.join([...FINAL])})`);
    const actor = wf.cancelRequestedBy ?? WORKFLOW_CONTROLLER;
    const why = wf.cancelRequestedBy ? `workflow ${name} cancelled` : `workflow ${name} passed its deadline`;
    for (const a of open) cancels.push(await cancelActionInTx(tx, a.actionId, actor, why, now));
  }

  // The end of the run.
  if (decision.workflow) {
    const w = decision.workflow;
    await tx.workflow.update({ where: { name }, data: { phase: w.phase, reason: w.reason, message: w.message, completionTime: now } });
    await tx.workflowRun.update({ where: { workflowName_run: { workflowName: name, run: wf.run } }, data: { phase: w.phase, reason: w.reason, message: w.message, completionTime: now } });
    const followers = await tx.workflowStepStatus.findMany({ where: { refWorkflow: name, refRun: wf.run, phase: "Running" }, select: { workflowName: true } });
    effects.followers.push(...followers.map((f) => f.workflowName));
  }

  const events = await recordEvents(tx, newEvents);
  let out = merge(effects, { ...emptyEffects(), events: [...events, ...cancels.flatMap((c) => c.events)], cancels: cancels.map((c) => ({ ...c, events: [] })) });
  // Again at once after starting attempts: a job that matched no device, or a reference whose run
  // ended in its first pass, ends in the same transaction.
  if (decision.start.length > 0 && depth < 64) out = merge(out, await passInTx(tx, ctx, name, now, depth + 1));
  return out;
}

// ---------------------------------------------------------------------------------------
// Schedules: a tick starts a run, or is skipped while one is in progress

/** Who starts a scheduled run (WorkflowRun.startedBy, the events' actor). */
export const SCHEDULE_ACTOR = "schedule";

/** When the schedule next falls after `now`: null without a schedule, or while it is suspended. */
export function nextTickOf(spec: Pick<WorkflowSpec, "schedule">, now: Date): Date | null {
  const s = spec.schedule;
  if (!s || s.suspend) return null;
  return nextScheduleTime(s, now);
}

export function describeSchedule(spec: Pick<WorkflowSpec, "schedule">): string {
  const s = spec.schedule;
  return s ? `"${s.cron}" (${s.timezone ?? DEFAULT_SCHEDULE_TIMEZONE})${s.suspend ? ", suspended" : ""}` : "";
}

/**
 * One tick of a workflow whose next scheduled time has come, in its own transaction: the time
 * moves to the next one after now (whatever was missed: one catch-up run); then a run starts,
 * or the tick is skipped while one is in progress. Null when it was not due after all.
 */
async function scheduleTickInTx(tx: Tx, ctx: ServerContext, name: string, now: Date): Promise<PassEffects | null> {
  const wf = await tx.workflow.findUnique({ where: { name }, select: { phase: true, run: true, spec: true, nextScheduleTime: true } });
  const due = wf?.nextScheduleTime;
  if (!wf || !due || due > now) return null;
  const spec = WorkflowSpec.parse(JSON.parse(wf.spec));
  const next = nextTickOf(spec, now);
  // Guarded on the time read, so a PUT that moved it in between wins.
  const { count } = await tx.workflow.updateMany({ where: { name, nextScheduleTime: due }, data: { nextScheduleTime: next } });
  if (count !== 1 || !spec.schedule || spec.schedule.suspend) return null;
  const effects = emptyEffects();
  if (next) effects.timers.push({ name, at: next });
  const nextText = next ? `; next at ${next.toISOString()}` : "";
  // Ticks that fell between the due one and now were missed (the server was down): at most a few counted.
  const missed = nextScheduleTimes(spec.schedule, due, 100).filter((t) => t <= now).length;
  const missedText = missed > 0 ? ` (${missed === 100 ? "100 or more" : missed} later tick(s) missed while no server ran: one catch-up run)` : "";
  if (wf.phase === "Running") {
    const skipped = workflowEvent(name, "WorkflowScheduleSkipped", "Running", `tick at ${due.toISOString()} skipped: run ${wf.run} is still Running (one run at a time, concurrencyPolicy Forbid)${nextText}`, SCHEDULE_ACTOR);
    effects.events.push(...(await recordEvents(tx, [skipped])));
    return effects;
  }
  await tx.workflow.update({ where: { name }, data: { lastScheduleTime: due } });
  const started = await startRunInTx(tx, name, SCHEDULE_ACTOR, now);
  const scheduled = workflowEvent(name, "WorkflowScheduled", "Running", `tick at ${due.toISOString()}${missedText}: starting run ${started.run}${nextText}`, SCHEDULE_ACTOR);
  effects.events.push(...(await recordEvents(tx, [scheduled, ...started.events])));
  effects.timers.push(...started.timers);
  return merge(effects, await passInTx(tx, ctx, name, now));
}

/** Ticks every due schedule (or those of the named workflows), and arms a timer for those not due yet. */
async function runSchedules(ctx: ServerContext, names: string[] | undefined): Promise<void> {
  const now = ctx.now();
  const rows = await ctx.db.workflow.findMany({
    where: names ? { name: { in: names }, nextScheduleTime: { not: null } } : { nextScheduleTime: { lte: now } },
    select: { name: true, nextScheduleTime: true },
    orderBy: { nextScheduleTime: "asc" },
  });
  for (const row of rows) {
    if (row.nextScheduleTime! > now) {
      // A timer that fired a little early, or a name passed before its time: armed again.
      schedule(ctx, row.name, row.nextScheduleTime!);
      continue;
    }
    try {
      const effects = await transaction(ctx.db, (tx) => scheduleTickInTx(tx, ctx, row.name, ctx.now()), { ...TX, locks: [locks.workflow(row.name)] });
      if (effects) afterPass(ctx, effects);
    } catch (err) {
      ctx.log.error({ err, workflow: row.name }, "workflow schedule failed");
    }
  }
}

/** At start-up: a timer for every armed schedule, from the database (a time already past fires at once: the catch-up). */
async function armSchedules(ctx: ServerContext): Promise<void> {
  const rows = await ctx.db.workflow.findMany({ where: { nextScheduleTime: { not: null } }, select: { name: true, nextScheduleTime: true } });
  for (const r of rows) schedule(ctx, r.name, r.nextScheduleTime!);
}

// ---------------------------------------------------------------------------------------
// Running by itself: the tick, the watcher, the timers

const serial = new WeakMap<ServerContext, Promise<void>>();

/** Passes over every Running workflow (or those named). One run at a time per server. */
export function runWorkflows(ctx: ServerContext, names?: string[], options: { look?: boolean } = {}): Promise<void> {
  const previous = serial.get(ctx) ?? Promise.resolve();
  const next = previous.catch(() => undefined).then(() => runOnce(ctx, names, options.look ?? true));
  serial.set(ctx, next);
  return next;
}

async function runOnce(ctx: ServerContext, names: string[] | undefined, look: boolean): Promise<void> {
  if (names && names.length === 0) return;
  await runSchedules(ctx, names);
  const open = await ctx.db.workflow.findMany({ where: { phase: "Running", ...(names ? { name: { in: names } } : {}) }, select: { name: true }, orderBy: { createdAt: "asc" } });
  for (const { name } of open) {
    try {
      if (look) {
        const first = await load(ctx.db, name, ctx.now());
        if (!first || !changes(first.decision)) continue;
      }
      const effects = await transaction(ctx.db, (tx) => passInTx(tx, ctx, name, ctx.now()), { ...TX, locks: [locks.workflow(name)] });
      if (effects) afterPass(ctx, effects);
    } catch (err) {
      ctx.log.error({ err, workflow: name }, "workflow controller failed");
    }
  }
}

/** Runs the workflow controller shortly after one of its actions ended (a burst is one pass per workflow). */
export function watchWorkflows(ctx: ServerContext, delayMs = 100): { stop(): void } {
  const watch = watchEndedActions(
    ctx,
    "workflow controller",
    async (ids) => {
      const links = await inChunks(ids, (chunk) => ctx.db.workflowStepAction.findMany({ where: { actionId: { in: chunk } }, select: { workflowName: true } }));
      await runWorkflows(ctx, [...new Set(links.map((l) => l.workflowName))], { look: false });
    },
    delayMs,
  );
  armSchedules(ctx).catch((err: unknown) => ctx.log.error({ err }, "workflow schedules not armed"));
  return {
    stop() {
      watch.stop();
      stopWorkflowTimers(ctx);
    },
  };
}
