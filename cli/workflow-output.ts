/**
 * Workflows as text (issue 9): the `drover get workflows` table (and its wide form; a NEXT-RUN
 * column once a listed workflow has a schedule), and the `drover describe workflow` page: the
 * run's phase, reason and times, its schedule, then each step in
 * topological order (dependencies first, the server's status.order) with its phase, attempts,
 * each dependency with its phase and whether the step still waits for it, its targets,
 * message and action ids. Pure: the server's shapes (server/workflows/workflows.ts) in, text out.
 */
import type { WorkflowObject, WorkflowStepView, WorkflowSummary } from "../server/workflows/workflows";
import type { StepPhase } from "../lib/workflow-status";
import type { WorkflowStep } from "../lib/workflow-spec";
import { alignRows, formatAge, type Column } from "./output";
import { formatTime } from "./plan-output";

export type { WorkflowObject, WorkflowStepView, WorkflowSummary };

export const WORKFLOW_FORMATS = ["table", "wide", "json", "yaml"] as const;
export type WorkflowFormat = (typeof WORKFLOW_FORMATS)[number];

/** Written out here rather than imported: lib/workflow-status's values would load the state machine. */
const STEP_ORDER: readonly StepPhase[] = ["Pending", "Running", "Retrying", "Succeeded", "Failed", "Skipped", "Omitted"];

/**
 * Steps done over steps in all: done is Succeeded or Skipped, the phases that satisfy a
 * dependent (a Failed step is counted in FAILED, an Omitted one in neither).
 */
export function formatSteps(w: Pick<WorkflowSummary, "counts" | "steps">): string {
  return `${(w.counts.Succeeded ?? 0) + (w.counts.Skipped ?? 0)}/${w.steps}`;
}

/** `Failed (StepFailed)`: the reason of a finished run that did not succeed. */
export function phaseCell(w: Pick<WorkflowSummary, "phase" | "reason">): string {
  return w.phase === "Failed" && w.reason ? `Failed (${w.reason})` : w.phase;
}

export const workflowColumns: Column<WorkflowSummary>[] = [
  { header: "NAME", cell: (w) => w.name },
  { header: "PHASE", cell: (w) => phaseCell(w) },
  { header: "STEPS", cell: (w) => formatSteps(w) },
  { header: "FAILED", cell: (w) => String(w.counts.Failed ?? 0) },
  { header: "RUN", cell: (w) => String(w.run) },
  { header: "STARTED", cell: (w, now) => (w.startTime ? formatAge(w.startTime, now) : "-") },
  // createdAt: a server older than this CLI does not send it.
  { header: "AGE", cell: (w, now) => (w.createdAt ? formatAge(w.createdAt, now) : "-") },
];

/** `in 5m`, `suspended` (a schedule that starts nothing), `-` (no schedule). */
export function nextRunCell(w: Pick<WorkflowSummary, "schedule" | "nextRunTime">, now: Date): string {
  if (w.nextRunTime) {
    const at = Date.parse(w.nextRunTime);
    return at > now.getTime() ? `in ${formatAge(now.toISOString(), new Date(at))}` : "due";
  }
  return w.schedule ? "suspended" : "-";
}

const nextRunColumn: Column<WorkflowSummary> = { header: "NEXT-RUN", cell: (w, now) => nextRunCell(w, now) };

/** The table's columns for these rows: NEXT-RUN only once one of them has a schedule. */
export function workflowColumnsFor(rows: readonly WorkflowSummary[]): Column<WorkflowSummary>[] {
  return rows.some((w) => w.schedule) ? [...workflowColumns, nextRunColumn] : workflowColumns;
}

/** `-o wide`: the schedule, steps by phase, who created it, the spec's generation, and the message (last: it is long). */
export const workflowWideColumns: Column<WorkflowSummary>[] = [
  ...workflowColumns,
  { header: "SCHEDULE", cell: (w) => w.schedule ?? "-" },
  nextRunColumn,
  { header: "COMPLETED", cell: (w, now) => (w.completionTime ? formatAge(w.completionTime, now) : "-") },
  { header: "STEP-PHASES", cell: (w) => formatStepCounts(w.counts) || "-" },
  { header: "CREATED-BY", cell: (w) => w.createdBy },
  { header: "GENERATION", cell: (w) => String(w.generation) },
  { header: "MESSAGE", cell: (w) => w.message || "-" },
];

/** `1 Running, 3 Pending` (phases with none left out), in the phases' order. */
export function formatStepCounts(counts: Partial<Record<StepPhase, number>>): string {
  return STEP_ORDER.filter((p) => (counts[p] ?? 0) > 0)
    .map((p) => `${counts[p]} ${p}`)
    .join(", ");
}

/** A workflow in full as the list's row (`drover get workflow NAME`). */
export function summaryOfWorkflow(w: WorkflowObject): WorkflowSummary {
  const counts: Partial<Record<StepPhase, number>> = {};
  for (const st of Object.values(w.status.statuses)) counts[st.phase] = (counts[st.phase] ?? 0) + 1;
  return {
    name: w.metadata.name,
    phase: w.status.phase,
    reason: w.status.reason,
    message: w.status.message,
    run: w.status.run,
    steps: Object.keys(w.status.statuses).length,
    counts,
    startTime: w.status.startTime,
    completionTime: w.status.completionTime,
    createdBy: w.metadata.createdBy,
    createdAt: w.metadata.creationTimestamp,
    generation: w.metadata.generation,
    schedule: w.status.schedule?.cron ?? null,
    nextRunTime: w.status.schedule?.nextRunTime ?? null,
  };
}

/** `"0 3 * * *" (Europe/Paris), next run 2026-…Z (in 5h), last tick 2026-…Z (19h ago)`, or suspended. */
export function formatSchedule(sc: NonNullable<WorkflowObject["status"]["schedule"]>, now: Date): string {
  const parts = [`"${sc.cron}" (${sc.timezone})`];
  parts.push(sc.suspend ? "suspended" : sc.nextRunTime ? `next run ${formatTime(sc.nextRunTime, now)}` : "no next run");
  if (sc.lastScheduleTime) parts.push(`last tick ${formatTime(sc.lastScheduleTime, now)}`);
  return parts.join(", ");
}

function oneLine(text: string): string {
  return text.replace(/[\r\n\t]+/g, " ");
}

/** `Key:  value` lines with the values aligned (a null value leaves its line out). */
function fields(pairs: [string, string | null][], indent = ""): string[] {
  const shown = pairs.filter((p): p is [string, string] => p[1] !== null);
  if (shown.length === 0) return [];
  const width = Math.max(...shown.map(([k]) => k.length)) + 3;
  return shown.map(([k, v]) => `${indent}${(k + ":").padEnd(width)}${oneLine(v)}`);
}

/**
 * Each dependency with its phase, and `waiting` for those the step still waits for:
 * `A (Running, waiting), C (Succeeded)`. A dependency ended Failed or Omitted is not waited
 * for: the step will be Omitted.
 */
export function formatDependencies(deps: readonly string[], waiting: readonly string[], statuses: Readonly<Record<string, Pick<WorkflowStepView, "phase">>>): string {
  return deps.map((d) => `${d} (${statuses[d]?.phase ?? "unknown"}${waiting.includes(d) ? ", waiting" : ""})`).join(", ");
}

/** What a step does: `job noop on dev-1, dev-2`, `job exec on app=web`, `workflow other`. */
export function stepWork(step: WorkflowStep | undefined): string {
  if (!step) return "<not in the spec>";
  if (step.externalRef) return `workflow ${step.externalRef.name}`;
  const job = step.jobTemplate;
  if (!job) return "<none>";
  const t = job.targets;
  let on: string;
  if (t.devices) on = t.devices.length > 5 ? `${t.devices.slice(0, 5).join(", ")} and ${t.devices.length - 5} more` : t.devices.join(", ");
  else on = formatSelector(t.selector);
  return `job ${job.kind} on ${on}${job.requireApproval ? " (approval required)" : ""}`;
}

function formatSelector(sel: { matchLabels?: Record<string, string>; matchExpressions?: { key: string; operator: string; values?: string[] }[] } | undefined): string {
  if (!sel) return "<no targets>";
  const parts = [
    ...Object.entries(sel.matchLabels ?? {}).map(([k, v]) => `${k}=${v}`),
    ...(sel.matchExpressions ?? []).map((e) => {
      const op = e.operator;
      if (op === "Exists") return e.key;
      if (op === "DoesNotExist") return `!${e.key}`;
      return `${e.key} ${op.toLowerCase()} (${(e.values ?? []).join(",")})`;
    }),
  ];
  return parts.length ? `selector ${parts.join(",")}` : "every device";
}

function attemptsText(st: WorkflowStepView): string {
  return `${st.attempts} of ${st.maxAttempts}`;
}

function stepLines(w: WorkflowObject, name: string, now: Date): string[] {
  const st = w.status.statuses[name];
  const spec = w.spec.steps[name];
  if (!st) return [`${name}: <no status>`];
  const deps = spec?.dependencies ?? [];
  const lines = [`${name}: ${st.phase}`];
  lines.push(
    ...fields(
      [
        ["Runs", stepWork(spec)],
        ["Dependencies", deps.length ? formatDependencies(deps, st.waitingFor, w.status.statuses) : "-"],
        ["When", spec?.when ?? null],
        ["Attempts", attemptsText(st)],
        ["Targets", st.targets && st.attempts > 0 ? `${st.targets.done} of ${st.targets.total} done${st.targets.failed ? `, ${st.targets.failed} failed` : ""}${st.targets.skipped ? `, ${st.targets.skipped} skipped` : ""}` : null],
        ["Following", st.workflow?.run ? `workflow/${st.workflow.name} run ${st.workflow.run}` : null],
        ["Started", st.startedAt ? formatTime(st.startedAt, now) : null],
        ["Finished", st.finishedAt ? formatTime(st.finishedAt, now) : null],
        ["Next attempt", st.nextAttemptAt ? formatTime(st.nextAttemptAt, now) : null],
        ["Actions", st.actions.length ? st.actions.join(", ") : "-"],
        ["Message", st.message || null],
      ],
      "  ",
    ),
  );
  return lines;
}

/** `drover describe workflow`: readable top to bottom in a terminal. */
export function describeWorkflow(w: WorkflowObject, now = new Date()): string {
  const s = w.status;
  const counts = summaryOfWorkflow(w).counts;
  const total = Object.keys(s.statuses).length;
  const labels = Object.entries(w.metadata.labels ?? {}).map(([k, v]) => `${k}=${v}`);
  const lines = fields([
    ["Name", w.metadata.name],
    ["Labels", labels.length ? labels.join(",") : null],
    ["Phase", s.phase],
    ["Reason", s.reason],
    ["Message", s.message || null],
    ["Run", s.run ? String(s.run) : "-"],
    ["Started", s.startTime ? formatTime(s.startTime, now) : null],
    ["Completed", s.completionTime ? formatTime(s.completionTime, now) : null],
    ["Cancelled by", s.cancelRequestedBy],
    ["Fail fast", w.spec.failFast === false ? "no: other steps go on after a failure" : "yes"],
    ["Deadline", w.spec.activeDeadlineSeconds ? `${w.spec.activeDeadlineSeconds}s after the run's start` : null],
    ["Schedule", s.schedule ? formatSchedule(s.schedule, now) : null],
    ["Created", `${formatTime(w.metadata.creationTimestamp, now)} by ${w.metadata.createdBy}`],
    ["Generation", `${w.metadata.generation}${w.metadata.updatedBy !== w.metadata.createdBy ? ` (last changed by ${w.metadata.updatedBy})` : ""}`],
    ["Steps", `${total}${total ? `: ${formatStepCounts(counts)}` : ""}`],
  ]);
  // status.order is topological; steps it does not name (an older server) go last.
  const order = [...s.order, ...Object.keys(s.statuses).filter((n) => !s.order.includes(n))];
  lines.push("", "Steps (dependencies first):");
  for (const name of order) lines.push("", ...stepLines(w, name, now));
  if (s.runs.length > 0) {
    lines.push("", "Runs (newest first):");
    const rows = s.runs.map((r) => [String(r.run), r.reason && r.phase === "Failed" ? `Failed (${r.reason})` : r.phase, r.startedBy, formatAge(r.startTime, now), r.completionTime ? formatAge(r.completionTime, now) : "-"]);
    lines.push(...alignRows([["RUN", "PHASE", "STARTED-BY", "STARTED", "ENDED"], ...rows]).lines.map((l) => `  ${l}`));
  }
  return lines.join("\n") + "\n";
}
