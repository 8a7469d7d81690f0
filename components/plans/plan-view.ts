/**
 * Reading the server's PlanView for the console: which controls apply (from lib/plan-status's
 * table, so a button shows only for a move the engine allows), which command to draw, a
 * command's nodes as rows (controllers, then workers) filtered and paged. Pure.
 */
import { PLAN_GROUPS, type PlanGroup } from "@/lib/plan-spec";
import {
  commandNodes,
  isPlanError,
  isTerminalNodeState,
  isTerminalPlanState,
  PLAN_NODE_STATES,
  planMachine,
  type PlanCommandStatusView,
  type PlanCounts,
  type PlanNodeState,
  type PlanNodeView,
  type PlanState,
  type PlanView,
} from "@/lib/plan-status";
import type { Segment } from "../fleets/counts-bar";
import { planNodeStateTone } from "./tones";

type Approval = PlanView["status"]["approval"];

/** Waiting for an operator's approval: nothing is signalled until one gives it. */
export function awaitsApproval(state: PlanState, approval: Approval): boolean {
  return approval.required && approval.approvedBy === null && !isTerminalPlanState(state);
}

/**
 * What a plan is doing, in an operator's words, from its state, approval and node counts: the
 * state name alone (SchedulableWait) read the same before approval and while nodes ran. Ended
 * plans keep their state's name (Completed, ApplyFailed, Cancelled …), which already says it.
 */
export function planActivity(state: PlanState, approval: Approval, counts: PlanCounts): { text: string; tone: "amber" | "blue" | "gray" | null } {
  if (isTerminalPlanState(state)) return { text: state, tone: null };
  if (awaitsApproval(state, approval)) return { text: "Waiting for approval", tone: "amber" };
  if (state === "NewPlan") return { text: "Discovering nodes", tone: "gray" };
  const plural = (n: number) => `${n} node${n === 1 ? "" : "s"}`;
  if (counts.SignalSent > 0) return { text: `Running on ${plural(counts.SignalSent)}`, tone: "blue" };
  if (counts.SignalPending > 0) return { text: `Waiting to signal ${plural(counts.SignalPending)}`, tone: "amber" };
  return { text: "Finishing", tone: "blue" };
}

/** Cancel is a move the table lists from the plan's state (an operator's). */
export function canCancel(state: PlanState): boolean {
  return planMachine.transitions.some((t) => t.from === state && t.to === "Cancelled");
}

/** Retry runs a plan that ended in an error state (Cancelled and DeadlineExceeded included) again, as a new plan. */
export function canRetry(state: PlanState): boolean {
  return isPlanError(state);
}

/**
 * A command the plan never finished because the plan ended before it (an error or cancel
 * aborts the rest): its state is still the one NewPlan gave it, which would read as running.
 */
export function commandNotRun(planState: PlanState, commandState: PlanState): boolean {
  return isTerminalPlanState(planState) && !isTerminalPlanState(commandState);
}

/** The plan's name as an operator reads it: metadata.name, else the YAML's spec.id, else the server's id. */
export function planTitle(p: { name: string | null; specId: string | null; id: string }): string {
  return p.name ?? p.specId ?? p.id;
}

export function specIdOf(plan: PlanView): string | null {
  const id = plan.spec.id;
  return typeof id === "string" && id !== "" ? id : null;
}

/**
 * The command the page draws by default: the active one; else the one the plan ended on
 * (the first not Completed), else the last.
 */
export function defaultCommand(plan: PlanView): number | null {
  const commands = plan.status.commands;
  if (commands.length === 0) return null;
  if (plan.status.activeCommand !== null && commands[plan.status.activeCommand]) return plan.status.activeCommand;
  const stuck = commands.find((c) => c.state !== "Completed" && c.state !== "NewPlan");
  return stuck?.id ?? commands.at(-1)!.id;
}

/** "k0supdate v1.31.2+k0s.0", "action exec". */
export function commandTitle(c: Pick<PlanCommandStatusView, "kind" | "actionKind" | "version">): string {
  if (c.kind === "action") return `action ${c.actionKind}`;
  return c.version ? `${c.kind} ${c.version}` : c.kind;
}

/**
 * What approving a plan lets run, for the approval dialog: its commands ("k0supdate v1.30.0,
 * action exec") and the devices they reach (a device in two commands counted once).
 */
export function planApprovalSubject(plan: Pick<PlanView, "status">): { kind: string; work: string; devices: number } {
  const commands = plan.status.commands;
  const devices = new Set(commands.flatMap((c) => nodeRows(c).map((r) => r.node.name)));
  return { kind: "plan", work: commands.map(commandTitle).join(", "), devices: devices.size };
}

export interface NodeRow {
  group: PlanGroup;
  node: PlanNodeView;
}

/** A command's nodes in the order the engine signals them: controllers, then workers. */
export function nodeRows(c: PlanCommandStatusView): NodeRow[] {
  const nodes = commandNodes(c);
  const rows: NodeRow[] = [];
  for (const group of PLAN_GROUPS) for (const node of nodes[group] ?? []) rows.push({ group, node });
  return rows;
}

/** The rows in `states` (all when empty), then the first `limit` of them, with how many matched. */
export function visibleRows(rows: readonly NodeRow[], states: readonly PlanNodeState[], limit: number): { rows: NodeRow[]; matched: number } {
  const matching = states.length === 0 ? rows : rows.filter((r) => states.includes(r.node.state));
  return { rows: matching.slice(0, limit), matched: matching.length };
}

/**
 * The node whose state the node diagram lights: the chosen one if it is still there, else the
 * first one signalled and not done, else the first that failed (why the command stopped), else
 * the first waiting, else the first.
 */
export function focusNode(rows: readonly NodeRow[], chosen: string | null): NodeRow | null {
  if (chosen) {
    const r = rows.find((x) => `${x.group}/${x.node.name}` === chosen);
    if (r) return r;
  }
  const first = (pick: (s: PlanNodeState) => boolean) => rows.find((r) => pick(r.node.state));
  return (
    first((s) => s === "SignalSent") ??
    first((s) => isTerminalNodeState(s) && s !== "SignalCompleted") ??
    first((s) => s === "SignalPending") ??
    rows[0] ??
    null
  );
}

/** Node counts as bar segments, in the node table's order of states. */
export function countSegments(counts: PlanCounts): Segment[] {
  return PLAN_NODE_STATES.map((s) => ({ key: s, label: s, count: counts[s] ?? 0, tone: planNodeStateTone[s] }));
}

/** "3 of 5 nodes completed" */
export function progressText(counts: PlanCounts): string {
  return `${counts.SignalCompleted.toLocaleString()} of ${counts.total.toLocaleString()} node${counts.total === 1 ? "" : "s"} completed`;
}
