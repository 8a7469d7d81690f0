/**
 * Plans as text (issue 8): the `drover get plans` table (and its wide form), and the
 * `drover describe plan` page: the plan's state, approval and times, then each command in
 * order with its nodes, controllers then workers. Pure: the server's PlanView and
 * PlanSummaryView (lib/plan-status.ts) in, text out.
 */
import { commandNodes, isTerminalPlanState, PLAN_NODE_STATES, type PlanCommandStatusView, type PlanCounts, type PlanNodeView, type PlanState, type PlanSummaryView, type PlanView } from "../lib/plan-status";
import type { PlanGroup } from "../lib/plan-spec";
import { alignRows, formatAge, type Column } from "./output";

/** Written out here rather than imported: lib/plan-spec's values would load its zod schemas. */
const GROUPS: readonly PlanGroup[] = ["controllers", "workers"];
const ROLE: Record<PlanGroup, string> = { controllers: "controller", workers: "worker" };

export const PLAN_FORMATS = ["table", "wide", "json", "yaml"] as const;
export type PlanFormat = (typeof PLAN_FORMATS)[number];

/** metadata.name, else the k0s spec.id (both informational: the server's id is the key). */
export function planName(name: string | null, specId: string | null): string {
  return name ?? specId ?? "<none>";
}

/** Nodes done over nodes in all (every command's): `3/5`. */
export function formatProgress(counts: PlanCounts): string {
  return `${counts.SignalCompleted}/${counts.total}`;
}

/** `airgapupdate:Completed,k0supdate:SchedulableWait`. */
export function formatCommands(commands: { kind: string; state: PlanState }[]): string {
  return commands.length ? commands.map((c) => `${c.kind}:${c.state}`).join(",") : "<none>";
}

/** `-` when not required, else Approved, Pending (it still waits) or NotApproved (it ended first). */
export function approvalCell(p: Pick<PlanSummaryView, "approval" | "state">): string {
  if (!p.approval.required) return "-";
  if (p.approval.approvedBy) return "Approved";
  return isTerminalPlanState(p.state) ? "NotApproved" : "Pending";
}

export const planColumns: Column<PlanSummaryView>[] = [
  { header: "ID", cell: (p) => p.id },
  { header: "NAME", cell: (p) => planName(p.name, p.specId) },
  { header: "STATE", cell: (p) => p.state },
  { header: "COMMANDS", cell: (p) => formatCommands(p.commands) },
  { header: "PROGRESS", cell: (p) => formatProgress(p.counts) },
  { header: "APPROVAL", cell: (p) => approvalCell(p) },
  { header: "CREATED-BY", cell: (p) => p.createdBy },
  { header: "AGE", cell: (p, now) => formatAge(p.createdAt, now) },
];

/** `-o wide`: who approved, the dialect, what it retries and the message (last: it is long). */
export const planWideColumns: Column<PlanSummaryView>[] = [
  ...planColumns,
  { header: "APPROVED-BY", cell: (p) => p.approval.approvedBy ?? "-" },
  { header: "API-VERSION", cell: (p) => p.apiVersion },
  { header: "RETRY-OF", cell: (p) => p.retryOf ?? "-" },
  { header: "MESSAGE", cell: (p) => p.message },
];

/** A plan in full as the list's row (`drover get plan ID`). */
export function summaryOf(plan: PlanView): PlanSummaryView {
  const specId = typeof plan.spec.id === "string" ? plan.spec.id : null;
  return {
    id: plan.metadata.id,
    name: plan.metadata.name,
    specId,
    apiVersion: plan.apiVersion,
    state: plan.status.state,
    message: plan.status.message,
    commands: plan.status.commands.map((c) => ({ kind: c.kind, state: c.state })),
    counts: plan.status.counts,
    approval: plan.status.approval,
    createdBy: plan.metadata.createdBy,
    createdAt: plan.metadata.creationTimestamp,
    endedAt: plan.status.endedAt,
    retryOf: plan.metadata.retryOf,
  };
}

/** `2025-06-01T11:55:00Z (5m ago)`: the time to the second, and how long ago. */
export function formatTime(time: string, now: Date): string {
  const at = Date.parse(time);
  if (Number.isNaN(at)) return time;
  const iso = time.replace(/\.\d+Z$/, "Z");
  return at > now.getTime() ? `${iso} (in ${formatAge(now.toISOString(), new Date(at))})` : `${iso} (${formatAge(time, now)} ago)`;
}

/** `5 nodes: 3 SignalCompleted, 1 SignalSent, 1 SignalPending` (states with none left out). */
export function formatCounts(counts: PlanCounts): string {
  const parts = PLAN_NODE_STATES.filter((s) => counts[s] > 0).map((s) => `${counts[s]} ${s}`);
  const total = `${counts.total} node${counts.total === 1 ? "" : "s"}`;
  return parts.length ? `${total}: ${parts.join(", ")}` : total;
}

function formatApproval(plan: PlanView, now: Date): string {
  const a = plan.status.approval;
  if (!a.required) return "not required";
  if (a.approvedBy) return `approved by ${a.approvedBy}${a.approvedAt ? ` at ${formatTime(a.approvedAt, now)}` : ""}`;
  if (isTerminalPlanState(plan.status.state)) return "required, never given";
  return `waiting for an operator (drover plan approve ${plan.metadata.id})`;
}

/** `k0supdate v1.30.1+k0s.0`, `action exec`. */
export function commandTitle(c: Pick<PlanCommandStatusView, "kind" | "version" | "actionKind">): string {
  return c.kind === "action" ? `action ${c.actionKind}` : `${c.kind} ${c.version ?? "<no version>"}`;
}

function nodeRows(c: PlanCommandStatusView, now: Date): string[][] {
  const rows: string[][] = [];
  for (const group of GROUPS) {
    for (const n of commandNodes(c)[group] ?? ([] as PlanNodeView[])) {
      rows.push([n.name, ROLE[group], n.state, n.actionId ?? "-", formatAge(n.lastUpdatedTimestamp, now), oneLine(n.message)]);
    }
  }
  return rows;
}

function oneLine(text: string): string {
  return text.replace(/[\r\n\t]+/g, " ");
}

/** `Key:  value` lines with the values aligned, like kubectl describe. */
function fields(pairs: [string, string | null][]): string[] {
  const shown = pairs.filter((p): p is [string, string] => p[1] !== null);
  const width = Math.max(...shown.map(([k]) => k.length)) + 3;
  return shown.map(([k, v]) => `${(k + ":").padEnd(width)}${oneLine(v)}`);
}

/** `drover describe plan`: readable top to bottom in a terminal. */
export function describePlan(plan: PlanView, now = new Date()): string {
  const s = plan.status;
  const specId = typeof plan.spec.id === "string" ? plan.spec.id : null;
  const lines = fields([
    ["Name", planName(plan.metadata.name, specId)],
    ["ID", plan.metadata.id],
    ["API Version", plan.apiVersion],
    ["State", s.state],
    ["Message", s.message || "-"],
    ["Approval", formatApproval(plan, now)],
    ["Created", `${formatTime(plan.metadata.creationTimestamp, now)} by ${plan.metadata.createdBy}`],
    ["Started", s.startedAt ? formatTime(s.startedAt, now) : null],
    ["Ended", s.endedAt ? formatTime(s.endedAt, now) : null],
    ["Deadline", s.deadline ? `${s.deadline}${s.deadlineAt ? `, ${formatTime(s.deadlineAt, now)}` : ""}` : null],
    ["Cancelled by", s.cancelRequestedBy],
    ["Retry of", plan.metadata.retryOf],
    ["Retried by", plan.metadata.retriedBy.length ? plan.metadata.retriedBy.join(", ") : null],
    ["Nodes", formatCounts(s.counts)],
  ]);
  for (const c of s.commands) {
    const active = s.activeCommand === c.id && !isTerminalPlanState(s.state) ? ", active" : "";
    lines.push("", `Command ${c.id}: ${commandTitle(c)} (${c.state}${active})`);
    if (c.description) lines.push(`  ${oneLine(c.description)}`);
    const rows = nodeRows(c, now);
    if (rows.length === 0) {
      lines.push("  (no nodes)");
      continue;
    }
    lines.push(...alignRows([["NODE", "ROLE", "STATE", "ACTION", "UPDATED", "MESSAGE"], ...rows]).lines.map((l) => `  ${l}`));
  }
  return lines.join("\n") + "\n";
}
