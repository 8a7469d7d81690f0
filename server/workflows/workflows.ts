/**
 * Workflows, the operator side (issue 9, DESIGN.md §6, seed 001, OPERATOR_API.md "Workflow"):
 * create (which starts the first run, unless `start: false` saves a draft or a schedule will
 * start it: controller.ts runs schedules), read, replace the
 * spec (only steps that have not started), delete, start/rerun (a draft or a finished
 * workflow), cancel. Operators save definitions and ask; the workflow controller
 * (controller.ts) is the one writer of the run's status, and its first pass runs inside each
 * of these transactions, so the answer shows the result.
 *
 * Validation, in order, each refusal a 400 naming the culprit and writing nothing: the schema
 * (the full path of a bad field), the graph (`validateWorkflowGraph`: unknown dependency,
 * cycle with its path, bad `when`), references to workflows that do not exist, and reference
 * cycles across the saved workflows (`findReferenceCycle`, the path).
 */
import { stableJson } from "../../lib/stable-json";
import type { ServerContext } from "../context";
import { Prisma, type Tx } from "../db";
import { locks, transaction } from "../lib/transactions";
import { conflict, invalid, notFound } from "../errors";
import { recordEvents, type NewEvent } from "../events/events";
import { cancelActionInTx, type CancelOutcome } from "../actions/actions";
import { describeZodError } from "../../lib/protocol";
import { findReferenceCycle, stepReferences, topologicalOrder, validateWorkflowGraph, WorkflowInput, WorkflowSpec, WORKFLOW_API_VERSION } from "../../lib/workflow-spec";
import { isEndedStep, type StepPhase, type WorkflowPhase } from "../../lib/workflow-status";
import { waitingFor } from "../../lib/workflow";
import { FINAL_ACTION_STATES } from "../../lib/action-status";
import { afterPass, describeSchedule, nextTickOf, passInTx, startRunInTx, workflowEvent, WORKFLOW_CONTROLLER, type PassEffects } from "./controller";
import { DEFAULT_SCHEDULE_TIMEZONE } from "../../lib/workflow-schedule";
import { claimInTx, type IdempotencyClaim } from "../idempotency/idempotency";

export { WORKFLOW_CONTROLLER };

const TX = { timeout: 60_000, maxWait: 30_000 } as const;

/** Metadata the server writes: sent back as read (`get -o yaml`, then apply), it is ignored like `status`. */
const SERVER_METADATA = ["generation", "run", "creationTimestamp", "createdBy", "updatedBy"] as const;

export function parseWorkflowInput(value: unknown): WorkflowInput {
  let input = value;
  if (value && typeof value === "object" && !Array.isArray(value)) {
    const meta = (value as { metadata?: unknown }).metadata;
    if (meta && typeof meta === "object" && !Array.isArray(meta)) {
      input = { ...value, metadata: Object.fromEntries(Object.entries(meta).filter(([k]) => !(SERVER_METADATA as readonly string[]).includes(k))) };
    }
  }
  const r = WorkflowInput.safeParse(input);
  if (!r.success) throw invalid(describeZodError(r.error));
  return r.data;
}

/** The graph, then the references against the saved workflows (this one's saved version replaced by `spec`). */
/**
 * A save's locks: the workflow, and when it refers to others the references' lock, since
 * `validateAgainstSaved` checks them against every saved workflow: two saves that could close a
 * cycle between them never run side by side.
 */
function workflowLocks(name: string, spec: WorkflowSpec): string[] {
  return [locks.workflow(name), ...(stepReferences(spec).length > 0 ? [locks.workflowReferences] : [])];
}

async function validateAgainstSaved(tx: Tx, name: string, spec: WorkflowSpec): Promise<void> {
  const problem = validateWorkflowGraph(spec.steps)[0];
  if (problem) throw invalid(`${problem.path}: ${problem.message}`);
  const refs = stepReferences(spec);
  if (refs.length === 0) return;
  const saved = await tx.workflow.findMany({ select: { name: true, spec: true } });
  const graph = new Map<string, string[]>(saved.map((w) => [w.name, stepReferences(WorkflowSpec.parse(JSON.parse(w.spec)))]));
  graph.set(name, refs);
  for (const [step, s] of Object.entries(spec.steps)) {
    if (s.externalRef && !graph.has(s.externalRef.name)) throw invalid(`spec.steps.${step}.externalRef: workflow "${s.externalRef.name}" does not exist`);
  }
  const cycle = findReferenceCycle(name, graph);
  if (cycle) throw invalid(`reference cycle across workflows: ${cycle.join("->")}`);
}

// ---------------------------------------------------------------------------------------
// Create, rerun, update, cancel, delete

const noEffects = (): PassEffects => ({ events: [], wake: [], cancels: [], followers: [], timers: [] });

/** A workflow that has never run: what it waits for (its schedule, or someone to start the draft). */
function notStartedMessage(name: string, spec: WorkflowSpec, next: Date | null): string {
  if (next) return `waits for its schedule: next run at ${next.toISOString()} (POST /workflows/${name}/start runs it now)`;
  if (spec.schedule) return `schedule suspended: not started (POST /workflows/${name}/start runs it)`;
  return `draft: not started (POST /workflows/${name}/start, or drover workflow rerun ${name}, starts it)`;
}

/**
 * Saves a workflow and starts its first run in the same transaction, unless `options.start` is
 * false or, when not given, the workflow has a schedule (its runs start at its times; a start
 * by hand runs it now). Not started, it is Pending, run 0, with no step rows: nothing runs until
 * a start (or rerun) or its schedule, and PUT may change anything in it.
 */
export async function createWorkflow(
  ctx: ServerContext,
  input: WorkflowInput,
  actor: string,
  options: { start?: boolean | undefined; idempotency?: IdempotencyClaim | undefined } = {},
): Promise<WorkflowObject> {
  const name = input.metadata.name;
  const start = options.start ?? input.spec.schedule === undefined;
  const effects = await transaction(ctx.db, async (tx) => {
    // The request's idempotency key (issue 22) commits with the workflow or not at all.
    await claimInTx(tx, options.idempotency, `Workflow/${name}`);
    if (await tx.workflow.findUnique({ where: { name }, select: { name: true } })) throw conflict(`workflow "${name}" already exists: PUT /workflows/${name} replaces its spec`);
    await validateAgainstSaved(tx, name, input.spec);
    const now = ctx.now();
    const next = nextTickOf(input.spec, now);
    await tx.workflow.create({
      data: {
        name,
        spec: JSON.stringify(input.spec),
        labels: input.metadata.labels ? JSON.stringify(input.metadata.labels) : null,
        failFast: input.spec.failFast,
        activeDeadlineSeconds: input.spec.activeDeadlineSeconds ?? null,
        phase: "Pending",
        run: 0,
        message: start ? "" : notStartedMessage(name, input.spec, next),
        nextScheduleTime: next,
        createdBy: actor,
        updatedBy: actor,
        createdAt: now,
      },
    });
    const n = Object.keys(input.spec.steps).length;
    const scheduled = input.spec.schedule ? `; schedule ${describeSchedule(input.spec)}${next ? `, next run at ${next.toISOString()}` : ""}` : "";
    const created = workflowEvent(name, "WorkflowCreated", "Pending", `${n} step(s)${scheduled}${start || input.spec.schedule ? "" : "; saved as a draft (not started)"}`, actor);
    const timers = next ? [{ name, at: next }] : [];
    if (!start) return { ...noEffects(), events: await recordEvents(tx, [created]), timers };
    const effects = await startAndPass(tx, ctx, name, actor, now, [created]);
    return { ...effects, timers: [...effects.timers, ...timers] };
  }, { ...TX, locks: workflowLocks(name, input.spec) });
  afterPass(ctx, effects);
  return getWorkflow(ctx, name);
}

async function startAndPass(tx: Tx, ctx: ServerContext, name: string, actor: string, now: Date, before: NewEvent[]): Promise<PassEffects> {
  const started = await startRunInTx(tx, name, actor, now);
  const events = await recordEvents(tx, [...before, ...started.events]);
  const pass = await passInTx(tx, ctx, name, now);
  return { events: [...events, ...(pass?.events ?? [])], wake: pass?.wake ?? [], cancels: pass?.cancels ?? [], followers: pass?.followers ?? [], timers: [...started.timers, ...(pass?.timers ?? [])] };
}

/**
 * Start a workflow that has no run in progress, from its saved spec: a draft (Pending: its
 * first run; WorkflowStarted says who) or a finished one (a new run: WorkflowRerun, then
 * WorkflowStarted). 409 while it runs. `POST /workflows/{name}/start` and `/rerun` both land here.
 */
export async function rerunWorkflow(ctx: ServerContext, name: string, actor: string): Promise<WorkflowObject> {
  const effects = await transaction(ctx.db, async (tx) => {
    const wf = await tx.workflow.findUnique({ where: { name }, select: { phase: true, run: true } });
    if (!wf) throw notFound(`workflow "${name}"`);
    if (wf.phase === "Pending") return startAndPass(tx, ctx, name, actor, ctx.now(), []);
    if (wf.phase !== "Succeeded" && wf.phase !== "Failed") throw conflict(`workflow ${name} is ${wf.phase}: only a draft or a finished workflow can be started (cancel it first)`);
    return startAndPass(tx, ctx, name, actor, ctx.now(), [workflowEvent(name, "WorkflowRerun", wf.phase, `run ${wf.run} ended ${wf.phase}; starting run ${wf.run + 1}`, actor)]);
  }, { ...TX, locks: [locks.workflow(name)] });
  afterPass(ctx, effects);
  return getWorkflow(ctx, name);
}

/** Stop a running workflow without deleting it: the controller fails it (Cancelled) and cancels its unfinished actions. */
export async function cancelWorkflow(ctx: ServerContext, name: string, actor: string, reason?: string): Promise<WorkflowObject> {
  const effects = await transaction(ctx.db, async (tx) => {
    const now = ctx.now();
    const wf = await tx.workflow.findUnique({ where: { name }, select: { phase: true } });
    if (!wf) throw notFound(`workflow "${name}"`);
    if (wf.phase !== "Running") throw conflict(`workflow ${name} is ${wf.phase}: only a running workflow can be cancelled`);
    const { count } = await tx.workflow.updateMany({ where: { name, phase: "Running", cancelRequestedAt: null }, data: { cancelRequestedAt: now, cancelRequestedBy: actor, cancelReason: reason ?? null } });
    if (count !== 1) throw conflict(`workflow ${name} is already being cancelled`);
    const events = await recordEvents(tx, [workflowEvent(name, "WorkflowCancelRequested", "Running", reason ?? "", actor)]);
    const pass = await passInTx(tx, ctx, name, now);
    return { events: [...events, ...(pass?.events ?? [])], wake: pass?.wake ?? [], cancels: pass?.cancels ?? [], followers: pass?.followers ?? [], timers: pass?.timers ?? [] };
  }, { ...TX, locks: [locks.workflow(name)] });
  afterPass(ctx, effects);
  return getWorkflow(ctx, name);
}


/**
 * Replace the spec. While a run is in progress only steps that have not started may change:
 * changing or removing a started step is 409 naming it, and nothing changes; new steps and
 * edits of Pending steps apply and the next pass (in this transaction) picks them up. A
 * finished workflow's spec is a definition for its next run and may change freely.
 */
export async function updateWorkflow(ctx: ServerContext, name: string, input: WorkflowInput, actor: string): Promise<WorkflowObject> {
  if (input.metadata.name !== name) throw invalid(`metadata.name "${input.metadata.name}" is not the workflow in the path ("${name}")`);
  const effects = await transaction(ctx.db, async (tx): Promise<PassEffects | null> => {
    const wf = await tx.workflow.findUnique({ where: { name }, include: { steps: true } });
    if (!wf) throw notFound(`workflow "${name}"`);
    const labels = input.metadata.labels ? JSON.stringify(input.metadata.labels) : null;
    const old = WorkflowSpec.parse(JSON.parse(wf.spec));
    if (stableJson(old) === stableJson(input.spec) && labels === wf.labels) return null;
    await validateAgainstSaved(tx, name, input.spec);
    const now = ctx.now();
    const running = wf.phase === "Running";
    // A schedule changed (or added, removed, suspended, resumed) counts from now.
    const scheduleChanged = stableJson(old.schedule ?? null) !== stableJson(input.spec.schedule ?? null);
    const next = scheduleChanged ? nextTickOf(input.spec, now) : wf.nextScheduleTime;
    if (running) {
      for (const row of wf.steps) {
        if (row.phase === "Pending") continue;
        const next = input.spec.steps[row.step];
        if (!next) throw conflict(`step ${row.step} has started (${row.phase}): it cannot be removed while workflow ${name} runs`);
        if (stableJson(next) !== stableJson(old.steps[row.step])) throw conflict(`step ${row.step} has started (${row.phase}): only steps that have not started can be changed`);
      }
    }
    await tx.workflow.update({
      where: { name },
      data: {
        spec: JSON.stringify(input.spec),
        labels,
        failFast: input.spec.failFast,
        activeDeadlineSeconds: input.spec.activeDeadlineSeconds ?? null,
        generation: { increment: 1 },
        updatedBy: actor,
        ...(scheduleChanged ? { nextScheduleTime: next } : {}),
        // Never run: its message says what it waits for, which the new schedule may have changed.
        ...(scheduleChanged && wf.run === 0 ? { message: notStartedMessage(name, input.spec, next) } : {}),
      },
    });
    const added = Object.keys(input.spec.steps).filter((s) => !(s in old.steps));
    const removed = Object.keys(old.steps).filter((s) => !(s in input.spec.steps));
    const changed = Object.keys(input.spec.steps).filter((s) => s in old.steps && stableJson(old.steps[s]) !== stableJson(input.spec.steps[s]));
    if (running) {
      if (removed.length) await tx.workflowStepStatus.deleteMany({ where: { workflowName: name, step: { in: removed } } });
      if (added.length) await tx.workflowStepStatus.createMany({ data: added.map((step) => ({ workflowName: name, step, phase: "Pending", updatedAt: now })) });
    }
    const scheduleText = !scheduleChanged ? "" : input.spec.schedule ? `schedule ${describeSchedule(input.spec)}${next ? `, next run at ${next.toISOString()}` : ""}` : "schedule removed";
    const parts = [added.length ? `added ${added.join(", ")}` : "", changed.length ? `changed ${changed.join(", ")}` : "", removed.length ? `removed ${removed.join(", ")}` : "", scheduleText].filter(Boolean);
    const events = await recordEvents(tx, [workflowEvent(name, "WorkflowUpdated", wf.phase, `generation ${wf.generation + 1}${parts.length ? `: ${parts.join("; ")}` : ""}`, actor)]);
    const pass = running ? await passInTx(tx, ctx, name, now) : null;
    const timers = scheduleChanged && next ? [{ name, at: next }] : [];
    return { events: [...events, ...(pass?.events ?? [])], wake: pass?.wake ?? [], cancels: pass?.cancels ?? [], followers: pass?.followers ?? [], timers: [...(pass?.timers ?? []), ...timers] };
  }, { ...TX, locks: workflowLocks(name, input.spec) });
  if (effects) afterPass(ctx, effects);
  return getWorkflow(ctx, name);
}

/**
 * Delete: the current run's unfinished actions are cancelled (running ones through their
 * agents), the workflow and its status go. Referenced workflows are not owned: they keep
 * running. A workflow following this one's run sees it gone and its step fails.
 */
export async function deleteWorkflow(ctx: ServerContext, name: string, actor: string): Promise<{ deleted: string; actionsCancelled: number }> {
  const { events, cancels, followers } = await transaction(ctx.db, async (tx) => {
    const now = ctx.now();
    const wf = await tx.workflow.findUnique({ where: { name }, select: { phase: true, run: true } });
    if (!wf) throw notFound(`workflow "${name}"`);
    const open = await tx.$queryRaw<{ actionId: string }[]>(Prisma.sql`
      SELECT sa."actionId" FROM "WorkflowStepAction" sa JOIN "Action" a ON a."id" = sa."actionId"
      WHERE sa."workflowName" = ${name} AND a."state" NOT IN (${Prisma.join([...FINAL])})`);
    const cancels: CancelOutcome[] = [];
    for (const a of open) {
      const r = await cancelActionInTx(tx, a.actionId, actor, `workflow ${name} deleted`, now);
      if (r.outcome === "cancelled" || r.outcome === "requested") cancels.push(r);
    }
    const followers = await tx.workflowStepStatus.findMany({ where: { refWorkflow: name, phase: "Running" }, select: { workflowName: true } });
    await tx.workflow.delete({ where: { name } });
    const events = await recordEvents(tx, [workflowEvent(name, "WorkflowDeleted", wf.phase, `run ${wf.run}${cancels.length ? `; ${cancels.length} unfinished action(s) cancelled` : ""}`, actor)]);
    return { events, cancels, followers: followers.map((f) => f.workflowName) };
    // A workflow referring to this one and saved meanwhile finds it gone when its step runs (that step fails).
  }, { ...TX, locks: [locks.workflow(name)] });
  afterPass(ctx, { events: [...events, ...cancels.flatMap((c) => c.events)], wake: [], cancels: cancels.map((c) => ({ ...c, events: [] })), followers, timers: [] });
  return { deleted: name, actionsCancelled: cancels.length };
}

// ---------------------------------------------------------------------------------------
// Reading

export interface WorkflowCondition {
  type: "Complete" | "Failed";
  status: "True" | "False";
  reason: string;
  message: string;
  lastTransitionTime: string | null;
}

export interface WorkflowStepView {
  phase: StepPhase;
  complete: boolean;
  attempts: number;
  /** limit + 1 */
  maxAttempts: number;
  /** The current run's actions for this step, every attempt, oldest first. */
  actions: string[];
  /** The current attempt's targets (a job); skipped: by an operator, neither done nor failed. Optional for clients of an older server. */
  /** The current attempt's targets: done, failed (cancelled ones apart), skipped by an operator, waiting for approval, cancelled. */
  targets: { total: number; done: number; failed: number; skipped?: number; waitingApproval?: number; cancelled?: number } | null;
  /** A reference: the workflow and the run of it this step follows. */
  workflow: { name: string; run: number | null } | null;
  /** Dependencies not ended yet (Pending steps). */
  waitingFor: string[];
  message: string;
  startedAt: string | null;
  finishedAt: string | null;
  nextAttemptAt: string | null;
}

export interface WorkflowObject {
  apiVersion: typeof WORKFLOW_API_VERSION;
  kind: "Workflow";
  metadata: { name: string; labels?: Record<string, string>; generation: number; run: number; creationTimestamp: string; createdBy: string; updatedBy: string };
  spec: WorkflowSpec;
  status: {
    phase: WorkflowPhase;
    reason: string | null;
    message: string;
    run: number;
    conditions: WorkflowCondition[];
    startTime: string | null;
    completionTime: string | null;
    cancelRequestedBy: string | null;
    /** In topological order (dependencies first), as `drover describe workflow` lists them. */
    order: string[];
    statuses: Record<string, WorkflowStepView>;
    /** The last 20 runs, newest first; startedBy: an operator, "schedule", or workflow:<name> (a reference). */
    runs: { run: number; phase: string; reason: string | null; startedBy: string; startTime: string; completionTime: string | null }[];
    /** spec.schedule as the server runs it (null without one): nextRunTime null while suspended; lastScheduleTime, the tick that last started a run. Optional for clients of an older server. */
    schedule?: WorkflowScheduleStatus | null;
  };
}

export interface WorkflowScheduleStatus {
  cron: string;
  timezone: string;
  suspend: boolean;
  nextRunTime: string | null;
  lastScheduleTime: string | null;
}

const iso = (d: Date | null) => d?.toISOString() ?? null;

function conditions(wf: { phase: string; reason: string | null; message: string; completionTime: Date | null; startTime: Date | null }): WorkflowCondition[] {
  const at = iso(wf.completionTime ?? wf.startTime);
  return [
    { type: "Complete", status: wf.phase === "Succeeded" ? "True" : "False", reason: wf.phase === "Succeeded" ? "Succeeded" : wf.phase, message: wf.phase === "Succeeded" ? wf.message : "", lastTransitionTime: at },
    { type: "Failed", status: wf.phase === "Failed" ? "True" : "False", reason: wf.phase === "Failed" ? (wf.reason ?? "Failed") : wf.phase, message: wf.phase === "Failed" ? wf.message : "", lastTransitionTime: at },
  ];
}

const FINAL = new Set<string>(FINAL_ACTION_STATES);

export async function getWorkflow(ctx: ServerContext, name: string): Promise<WorkflowObject> {
  const wf = await ctx.db.workflow.findUnique({ where: { name }, include: { steps: true, runs: { orderBy: { run: "desc" }, take: 20 } } });
  if (!wf) throw notFound(`workflow "${name}"`);
  const spec = WorkflowSpec.parse(JSON.parse(wf.spec));
  const links = await ctx.db.workflowStepAction.findMany({ where: { workflowName: name, run: wf.run }, orderBy: [{ attempt: "asc" }, { id: "asc" }] });
  const actionIds = links.flatMap((l) => (l.actionId ? [l.actionId] : []));
  const states = new Map<string, string>();
  for (let i = 0; i < actionIds.length; i += 500) {
    for (const a of await ctx.db.action.findMany({ where: { id: { in: actionIds.slice(i, i + 500) } }, select: { id: true, state: true } })) states.set(a.id, a.state);
  }
  const rowByStep = new Map(wf.steps.map((r) => [r.step, r]));
  // Grouped once: filtering every link per step is quadratic, and 10,000 steps is a workflow the console must show.
  const linksByStep = new Map<string, typeof links>();
  for (const l of links) (linksByStep.get(l.step) ?? linksByStep.set(l.step, []).get(l.step)!).push(l);
  const phases = new Map<string, StepPhase>(Object.keys(spec.steps).map((s) => [s, (rowByStep.get(s)?.phase ?? "Pending") as StepPhase]));
  const statuses: Record<string, WorkflowStepView> = {};
  for (const [stepName, s] of Object.entries(spec.steps)) {
    const row = rowByStep.get(stepName);
    const phase = phases.get(stepName)!;
    const own = linksByStep.get(stepName) ?? [];
    const current = own.filter((l) => l.attempt === (row?.attempts ?? 0));
    statuses[stepName] = {
      phase,
      complete: isEndedStep(phase),
      attempts: row?.attempts ?? 0,
      maxAttempts: (s.retryStrategy?.limit ?? 0) + 1,
      actions: own.flatMap((l) => (l.actionId ? [l.actionId] : [])),
      targets: s.jobTemplate
        ? {
            total: current.length,
            done: current.filter((l) => !l.skippedAt && l.actionId && states.get(l.actionId) === "DONE").length,
            failed: current.filter(
              (l) =>
                !l.skippedAt &&
                (l.error || (l.actionId && FINAL.has(states.get(l.actionId) ?? "DONE") && states.get(l.actionId) !== "DONE" && states.get(l.actionId) !== "CANCELLED") || (l.actionId && !states.has(l.actionId))),
            ).length,
            skipped: current.filter((l) => l.skippedAt).length,
            // Said apart from failures: what waits for an operator, and what a cancel stopped.
            waitingApproval: current.filter((l) => !l.skippedAt && l.actionId && states.get(l.actionId) === "PENDING_APPROVE").length,
            cancelled: current.filter((l) => !l.skippedAt && !l.error && l.actionId && states.get(l.actionId) === "CANCELLED").length,
          }
        : null,
      workflow: s.externalRef ? { name: s.externalRef.name, run: row?.refRun ?? null } : null,
      waitingFor: phase === "Pending" ? waitingFor({ spec: s }, phases) : [],
      message: row?.message ?? "",
      startedAt: iso(row?.startedAt ?? null),
      finishedAt: iso(row?.finishedAt ?? null),
      nextAttemptAt: iso(row?.nextAttemptAt ?? null),
    };
  }
  return {
    apiVersion: WORKFLOW_API_VERSION,
    kind: "Workflow",
    metadata: {
      name: wf.name,
      ...(wf.labels ? { labels: JSON.parse(wf.labels) as Record<string, string> } : {}),
      generation: wf.generation,
      run: wf.run,
      creationTimestamp: wf.createdAt.toISOString(),
      createdBy: wf.createdBy,
      updatedBy: wf.updatedBy,
    },
    spec,
    status: {
      phase: wf.phase as WorkflowPhase,
      reason: wf.reason,
      message: wf.message,
      run: wf.run,
      conditions: conditions(wf),
      startTime: iso(wf.startTime),
      completionTime: iso(wf.completionTime),
      cancelRequestedBy: wf.cancelRequestedBy,
      order: topologicalOrder(spec.steps),
      statuses,
      runs: wf.runs.map((r) => ({ run: r.run, phase: r.phase, reason: r.reason, startedBy: r.startedBy, startTime: r.startTime.toISOString(), completionTime: iso(r.completionTime) })),
      schedule: spec.schedule
        ? { cron: spec.schedule.cron, timezone: spec.schedule.timezone ?? DEFAULT_SCHEDULE_TIMEZONE, suspend: spec.schedule.suspend === true, nextRunTime: iso(wf.nextScheduleTime), lastScheduleTime: iso(wf.lastScheduleTime) }
        : null,
    },
  };
}

export interface WorkflowSummary {
  name: string;
  phase: WorkflowPhase;
  reason: string | null;
  message: string;
  run: number;
  steps: number;
  counts: Partial<Record<StepPhase, number>>;
  startTime: string | null;
  completionTime: string | null;
  createdBy: string;
  createdAt: string;
  generation: number;
  /** spec.schedule's cron (null: none) and when it next starts a run (null: none, or suspended). Optional for clients of an older server. */
  schedule?: string | null;
  nextRunTime?: string | null;
  /** Actions of its run waiting for an operator's approval: what a running workflow waits for. Optional for clients of an older server. */
  waitingApproval?: number;
}

/** Workflows by name, a page at a time (cursor: the last name of the previous page). */
export async function listWorkflows(ctx: ServerContext, filter: { phase?: WorkflowPhase[] | undefined }, page: { limit: number; cursor?: string | undefined }) {
  const where = filter.phase?.length ? { phase: { in: filter.phase } } : {};
  const [rows, total] = await Promise.all([
    ctx.db.workflow.findMany({ where, orderBy: { name: "asc" }, take: page.limit + 1, ...(page.cursor ? { cursor: { name: page.cursor }, skip: 1 } : {}) }),
    ctx.db.workflow.count({ where }),
  ]);
  const pageRows = rows.slice(0, page.limit);
  const running = pageRows.filter((r) => r.phase === "Running").map((r) => `workflow:${r.name}`);
  const [groups, waiting] = await Promise.all([
    pageRows.length ? ctx.db.workflowStepStatus.groupBy({ by: ["workflowName", "phase"], where: { workflowName: { in: pageRows.map((r) => r.name) } }, _count: { _all: true } }) : [],
    // What a running workflow waits for, said in its row: its actions waiting for approval (few rows: by state first).
    running.length ? ctx.db.action.groupBy({ by: ["createdBy"], where: { state: "PENDING_APPROVE", createdBy: { in: running } }, _count: { _all: true } }) : [],
  ]);
  const waitingBy = new Map(waiting.map((g) => [g.createdBy, g._count._all]));
  const items: WorkflowSummary[] = pageRows.map((w) => {
    const counts: Partial<Record<StepPhase, number>> = {};
    let steps = 0;
    for (const g of groups) {
      if (g.workflowName !== w.name) continue;
      counts[g.phase as StepPhase] = g._count._all;
      steps += g._count._all;
    }
    // Parsed only when needed (a spec may hold 10,000 steps): a workflow that never ran has no step rows, all its steps are Pending.
    const spec = steps === 0 && w.run === 0 ? (JSON.parse(w.spec) as WorkflowSpec) : null;
    if (spec) {
      steps = Object.keys(spec.steps).length;
      counts.Pending = steps;
    }
    const schedule = w.spec.includes('"schedule"') ? ((spec ?? (JSON.parse(w.spec) as WorkflowSpec)).schedule?.cron ?? null) : null;
    return {
      name: w.name,
      phase: w.phase as WorkflowPhase,
      reason: w.reason,
      message: w.message,
      run: w.run,
      steps,
      counts,
      startTime: iso(w.startTime),
      completionTime: iso(w.completionTime),
      createdBy: w.createdBy,
      createdAt: w.createdAt.toISOString(),
      generation: w.generation,
      schedule,
      nextRunTime: iso(w.nextScheduleTime),
      waitingApproval: waitingBy.get(`workflow:${w.name}`) ?? 0,
    };
  });
  return { items, total, nextCursor: rows.length > page.limit ? (items[items.length - 1]?.name ?? null) : null };
}
