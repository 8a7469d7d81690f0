/**
 * The workflow engine (seed 001, DESIGN.md §6, research/engines.md B): one pure decision per
 * pass over a running workflow, from what the server read (each step's phase, attempts and the
 * current attempt's outcome so far) to what it must write and do. No I/O, no clock.
 *
 * Rules, in the order a pass applies them:
 * 1. An operator's cancel, then `activeDeadlineSeconds` (from the run's start): running and
 *    retrying steps Failed, their unfinished actions cancelled, pending ones Omitted; the
 *    workflow Failed (Cancelled / DeadlineExceeded).
 * 2. A running step's attempt ends when every target's action has ended (a job) or the
 *    referenced workflow's run ended: all DONE / Succeeded → Succeeded; otherwise a retry if
 *    `retryStrategy.limit` and `backoff.maxDuration` allow (Retrying until its backoff passes),
 *    else Failed with which targets failed and why. A job whose targets matched no device
 *    fails ("no target").
 * 3. A retrying step whose backoff passed starts its next attempt (failFast does not stop it:
 *    a retry is the same step, as in Argo).
 * 4. Pending steps, dependencies first: without `when`, a step starts when every dependency
 *    Succeeded or was Skipped (decision B-1) and is Omitted when one Failed or was Omitted;
 *    with `when`, it waits until every dependency ended, then starts if `when` holds, else
 *    Skipped. With failFast (default) no step starts once one has Failed.
 * 5. Nothing running, retrying or able to start: the pending rest is Omitted, and the workflow
 *    Succeeded (no step Failed) or Failed (StepFailed, naming the steps).
 */
import { assertTransition } from "./state-machine";
import { parseDuration } from "./fleet-spec";
import { evaluateWhen, parseWhen, topologicalOrder, type StepResult, type WorkflowStep } from "./workflow-spec";
import { isEndedStep, stepMachine, workflowMachine, type StepPhase, type WorkflowFailureReason, type WorkflowPhase } from "./workflow-status";

/** A failed step's message names this many failed targets, then counts the rest. */
export const FAILURES_NAMED = 5;

export interface AttemptOutcome {
  /** Targets of the attempt (a job); 1 for a reference. */
  total: number;
  done: number;
  /** Skipped by an operator (issue 21): finished, not failed; a step whose targets are DONE or skipped Succeeds. */
  skipped: number;
  /** Ended other than DONE: FAILED, CANCELLED, LOST (a job); the reference Failed. */
  failed: number;
  /** "db-1: FAILED: exit 1", "workflow weekly-report Failed: …": at least the first FAILURES_NAMED of `failed`. */
  failures: string[];
}

export interface EngineStep {
  name: string;
  spec: Pick<WorkflowStep, "dependencies" | "when" | "retryStrategy" | "jobTemplate" | "externalRef">;
  phase: StepPhase;
  message: string;
  /** Attempts started so far. */
  attempts: number;
  firstStartedAt: Date | null;
  /** Retrying: when the next attempt may start. */
  nextAttemptAt: Date | null;
  /** The current attempt, while Running. */
  outcome: AttemptOutcome | null;
}

export interface EngineWorkflow {
  phase: WorkflowPhase;
  startedAt: Date | null;
  failFast: boolean;
  activeDeadlineSeconds: number | null;
  cancel: { by: string; reason: string | null } | null;
}

export interface StepChange {
  name: string;
  phase: StepPhase;
  message: string;
  /** Retrying: when the next attempt may start; null otherwise. */
  nextAttemptAt: Date | null;
}

export interface WorkflowDecision {
  steps: StepChange[];
  /** Attempts to start now (the server resolves targets and creates actions, or starts the reference). */
  start: { name: string; attempt: number }[];
  /** Steps whose unfinished actions are cancelled. */
  cancelActionsOf: string[];
  workflow: { phase: WorkflowPhase; reason: WorkflowFailureReason | null; message: string } | null;
  events: { type: "WorkflowStepChanged" | "WorkflowEnded"; reason: string; message: string }[];
}

/** Before attempt `attempt + 1` (after `attempt` failed ones): duration × factor^(attempt − 1); 0 without a backoff. */
export function backoffMs(step: Pick<EngineStep, "spec">, failedAttempts: number): number {
  const b = step.spec.retryStrategy?.backoff;
  if (!b) return 0;
  return parseDuration(b.duration) * Math.pow(b.factor, Math.max(0, failedAttempts - 1));
}

const RESULT_OF: Partial<Record<StepPhase, StepResult>> = { Succeeded: "Succeeded", Failed: "Failed", Skipped: "Skipped", Omitted: "Omitted" };

/** The dependencies a pending step still waits for, for the console and `describe`. */
export function waitingFor(step: Pick<EngineStep, "spec">, phases: ReadonlyMap<string, StepPhase>): string[] {
  return (step.spec.dependencies ?? []).filter((d) => !isEndedStep(phases.get(d) ?? "Pending"));
}

export function decideWorkflow(wf: EngineWorkflow, input: EngineStep[], now: Date): WorkflowDecision {
  const out: WorkflowDecision = { steps: [], start: [], cancelActionsOf: [], workflow: null, events: [] };
  if (wf.phase !== "Running") return out;
  const steps = new Map(input.map((s) => [s.name, s]));
  const phase = new Map(input.map((s) => [s.name, s.phase]));
  const move = (s: EngineStep, to: StepPhase, message: string, nextAttemptAt: Date | null = null) => {
    const from = phase.get(s.name)!;
    assertTransition(stepMachine, from, to);
    phase.set(s.name, to);
    const existing = out.steps.findIndex((c) => c.name === s.name);
    if (existing >= 0) out.steps.splice(existing, 1);
    out.steps.push({ name: s.name, phase: to, message, nextAttemptAt });
    out.events.push({ type: "WorkflowStepChanged", reason: to, message: `${s.name}: ${from} → ${to}${message ? `: ${message}` : ""}` });
  };
  const end = (to: WorkflowPhase, reason: WorkflowFailureReason | null, message: string) => {
    assertTransition(workflowMachine, wf.phase, to);
    out.workflow = { phase: to, reason, message };
    out.events.push({ type: "WorkflowEnded", reason: reason ?? to, message });
  };

  // 1. Cancel, then the deadline.
  const deadlineAt = wf.startedAt && wf.activeDeadlineSeconds ? wf.startedAt.getTime() + wf.activeDeadlineSeconds * 1000 : null;
  if (wf.cancel || (deadlineAt !== null && now.getTime() >= deadlineAt)) {
    const reason: WorkflowFailureReason = wf.cancel ? "Cancelled" : "DeadlineExceeded";
    const why = wf.cancel ? `cancelled by ${wf.cancel.by}${wf.cancel.reason ? `: ${wf.cancel.reason}` : ""}` : `exceeded the workflow's deadline of ${wf.activeDeadlineSeconds}s`;
    for (const s of input) {
      if (s.phase === "Running" || s.phase === "Retrying") {
        move(s, "Failed", why);
        if (s.phase === "Running" && s.spec.jobTemplate) out.cancelActionsOf.push(s.name);
      } else if (s.phase === "Pending") move(s, "Omitted", `not started: ${why}`);
    }
    end("Failed", reason, wf.cancel ? why : `the deadline of ${wf.activeDeadlineSeconds}s passed`);
    return out;
  }

  // 2. Running attempts that ended.
  for (const s of input) {
    if (s.phase !== "Running" || !s.outcome) continue;
    const o = s.outcome;
    if (o.total === 0) {
      move(s, "Failed", "no target: the job's selector matched no Enrolled device");
      continue;
    }
    if (o.done + o.skipped + o.failed < o.total) continue;
    if (o.failed === 0) {
      move(s, "Succeeded", s.spec.jobTemplate ? `${o.done} of ${o.total} target(s) DONE${o.skipped ? ` (${o.skipped} skipped)` : ""}` : "the referenced workflow Succeeded");
      continue;
    }
    const failures = o.failures.slice(0, FAILURES_NAMED).join("; ") + (o.failed > FAILURES_NAMED ? `; and ${o.failed - FAILURES_NAMED} more` : "");
    const limit = s.spec.retryStrategy?.limit ?? 0;
    if (s.attempts <= limit) {
      const delay = backoffMs(s, s.attempts);
      const maxDuration = s.spec.retryStrategy?.backoff?.maxDuration;
      const at = new Date(now.getTime() + delay);
      if (maxDuration && s.firstStartedAt && at.getTime() > s.firstStartedAt.getTime() + parseDuration(maxDuration)) {
        move(s, "Failed", `attempt ${s.attempts} failed (${failures}); no retry: backoff.maxDuration ${maxDuration} reached`);
      } else {
        move(s, "Retrying", `attempt ${s.attempts} of ${limit + 1} failed (${failures}); next attempt ${delay > 0 ? `in ${Math.round(delay / 1000)}s` : "now"}`, at);
      }
      continue;
    }
    move(s, "Failed", `${limit > 0 ? `attempt ${s.attempts} of ${limit + 1} failed` : "failed"}: ${failures}`);
  }

  // 3. Retries whose backoff passed (this pass's new Retrying ones included, when they need no wait).
  for (const s of input) {
    if (phase.get(s.name) !== "Retrying") continue;
    const at = out.steps.find((c) => c.name === s.name)?.nextAttemptAt ?? s.nextAttemptAt;
    if (at && at.getTime() > now.getTime()) continue;
    move(s, "Running", `attempt ${s.attempts + 1} of ${(s.spec.retryStrategy?.limit ?? 0) + 1}`);
    out.start.push({ name: s.name, attempt: s.attempts + 1 });
  }

  // 4. Pending steps, dependencies first.
  const failedAny = () => [...phase.values()].some((p) => p === "Failed");
  for (const name of topologicalOrder(Object.fromEntries(input.map((s) => [s.name, s.spec])))) {
    const s = steps.get(name)!;
    if (phase.get(name) !== "Pending") continue;
    const deps = s.spec.dependencies ?? [];
    const depPhases = deps.map((d) => [d, phase.get(d) ?? "Omitted"] as const);
    if (s.spec.when === undefined) {
      const blocked = depPhases.find(([, p]) => p === "Failed" || p === "Omitted");
      if (blocked) {
        move(s, "Omitted", `dependency ${blocked[0]} ${blocked[1]}`);
        continue;
      }
      if (!depPhases.every(([, p]) => p === "Succeeded" || p === "Skipped")) continue;
    } else if (!depPhases.every(([, p]) => isEndedStep(p))) continue;
    if (wf.failFast && failedAny()) continue; // no new step once one has failed; Omitted when the run ends
    if (s.spec.when !== undefined) {
      const results = Object.fromEntries(depPhases.map(([d, p]) => [d, RESULT_OF[p]!]));
      if (!evaluateWhen(parseWhen(s.spec.when), results)) {
        move(s, "Skipped", `when "${s.spec.when}" is false`);
        continue;
      }
    }
    move(s, "Running", `attempt 1 of ${(s.spec.retryStrategy?.limit ?? 0) + 1}`);
    out.start.push({ name, attempt: 1 });
  }

  // 5. The end.
  const open = [...phase.values()].some((p) => p === "Running" || p === "Retrying");
  if (open) return out;
  const failed = input.filter((s) => phase.get(s.name) === "Failed").map((s) => s.name);
  for (const s of input) {
    if (phase.get(s.name) === "Pending") move(s, "Omitted", failed.length ? `not started: step ${failed[0]} failed (failFast)` : "not started");
  }
  if (failed.length > 0) end("Failed", "StepFailed", `step${failed.length > 1 ? "s" : ""} ${failed.join(", ")} failed`);
  else end("Succeeded", null, `${input.length} step(s) ended Succeeded or Skipped`);
  return out;
}

/**
 * An operator's skip or retry of a target reopened its step (issue 21): a Retrying step is
 * Running again; a Failed one too, and the steps Omitted because it failed (its dependents,
 * transitively) are Pending again, so the next pass decides them anew. A dependent that has
 * already gone on from the failure (a `when` evaluated: Skipped or started) cannot be undone:
 * it is named in `blocking` and nothing may move.
 */
export function reopenStep(input: Pick<EngineStep, "name" | "spec" | "phase">[], name: string, message: string): { steps: StepChange[]; blocking: string[] } {
  const step = input.find((s) => s.name === name);
  if (!step || (step.phase !== "Failed" && step.phase !== "Retrying")) return { steps: [], blocking: [] };
  assertTransition(stepMachine, step.phase, "Running");
  const steps: StepChange[] = [{ name, phase: "Running", message, nextAttemptAt: null }];
  const blocking: string[] = [];
  if (step.phase === "Retrying") return { steps, blocking };
  const reopened = new Set([name]);
  const byName = new Map(input.map((s) => [s.name, s]));
  for (const other of topologicalOrder(Object.fromEntries(input.map((s) => [s.name, s.spec])))) {
    const s = byName.get(other)!;
    if (reopened.has(other) || !(s.spec.dependencies ?? []).some((d) => reopened.has(d))) continue;
    if (s.phase === "Omitted") {
      assertTransition(stepMachine, "Omitted", "Pending");
      reopened.add(other);
      steps.push({ name: other, phase: "Pending", message: `waiting again: ${name} was reopened`, nextAttemptAt: null });
    } else if (s.phase !== "Pending") blocking.push(`${other} (${s.phase})`);
  }
  return blocking.length ? { steps: [], blocking } : { steps, blocking };
}
