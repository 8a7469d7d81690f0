/**
 * The plan engine (seed 000, DESIGN.md §5, research/engines.md A.4): pure functions from what
 * the plan controller read to what it must write. No I/O, no clock (the caller passes `now`).
 *
 * - `newPlan` classifies each command's discovered nodes (discovery itself is a database
 *   query, made once by the server) and walks the commands in order: the first command that
 *   does not reach SchedulableWait stops the walk and sets the plan's state (k0s
 *   `initprovidershandler.go`); the commands after it are never processed.
 * - `decidePass` is one pass over a running plan: refresh the active command's signalled nodes
 *   from their actions, check the nodes still waiting, move the command (and the plan, which
 *   mirrors its active command) and pick the next nodes to signal: the command's controllers
 *   one at a time, then its workers up to `limits.concurrent`; the next command starts only
 *   when this one is Completed; any error state aborts the command and the plan, and no
 *   further node is signalled (nodes already signalled keep being followed to their end).
 * - `explainNode` / `explainPlan` say in words why a node or plan is where it is, from the
 *   same facts: nothing waits in silence.
 *
 * Every move is asserted against lib/plan-status.ts.
 */
import { admits, admittedSummaries } from "./health-policy";
import { assertTransition, canTransition } from "./state-machine";
import { FINAL_ACTION_STATES, type ActionState } from "./action-status";
import { matchesSelector, type Labels } from "./label-selector";
import { planMachine, planNodeMachine, isTerminalPlanState, type PlanNodeState, type PlanState } from "./plan-status";
import { discoverySelector, type CommandShape, type PlanGroup, type FieldRequirement } from "./plan-spec";

export const GROUP_ROLE: Record<PlanGroup, "controller" | "worker"> = { controllers: "controller", workers: "worker" };

export interface EngineDevice {
  id: string;
  name: string;
  role: string;
  platform: string;
  lifecycle: string;
  decommissionRequested: boolean;
  labels: Labels;
  summary: string;
  lastSeen: string | null;
}

export interface EngineAction {
  id: string;
  state: ActionState;
  error: string | null;
  cancelRequestedBy: string | null;
}

export interface EngineNode {
  id: string;
  command: number;
  group: PlanGroup;
  position: number;
  name: string;
  state: PlanNodeState;
  message: string;
  /** The device now (null: no such device any more). */
  device: EngineDevice | null;
  /** The node's action (SignalSent and after); null when none or when it is gone. */
  action: EngineAction | null;
  actionId: string | null;
  /** Another plan that has this device SignalSent right now. */
  busyIn: string | null;
}

export interface EngineCommand {
  index: number;
  state: PlanState;
  message: string;
  shape: CommandShape;
}

export interface EnginePlan {
  id: string;
  state: PlanState;
  message: string;
  activeCommand: number | null;
  requireApproval: boolean;
  approvedBy: string | null;
  cancel: { by: string; reason: string | null } | null;
  deadline: string | null;
  deadlineAt: Date | null;
}

export interface PlanEvent {
  type: "PlanStateChanged" | "PlanCommandStateChanged" | "PlanNodeStateChanged" | "PlanNodesSignalled";
  reason: string;
  message: string;
}

export interface NodeChange {
  id: string;
  state: PlanNodeState;
  message: string;
}

export interface Signal {
  nodeId: string;
  name: string;
  deviceId: string;
  command: number;
  group: PlanGroup;
}

export interface PassDecision {
  plan: { state: PlanState; message: string; activeCommand: number | null } | null;
  commands: { index: number; state: PlanState; message: string }[];
  nodes: NodeChange[];
  signals: Signal[];
  /** Unfinished actions to cancel (the plan was cancelled or ran out of time). */
  cancelActions: string[];
  /** The active command completed and the next one is active: pass again over its nodes. */
  advanced: boolean;
  events: PlanEvent[];
}

const isFinalAction = (s: ActionState) => (FINAL_ACTION_STATES as readonly string[]).includes(s);
const nodeLabel = (n: { command: number; group: PlanGroup; name: string }) => `${n.name} (command ${n.command}, ${n.group})`;
const listNames = (names: string[], max = 5) => (names.length <= max ? names.join(", ") : `${names.slice(0, max).join(", ")} and ${names.length - max} more`);

// ---------------------------------------------------------------------------------------
// NewPlan

export interface Discovered {
  /** Static: the name listed; selector: the matched device's name. */
  name: string;
  device: EngineDevice | null;
}

export interface NewNode {
  command: number;
  group: PlanGroup;
  position: number;
  name: string;
  deviceId: string | null;
  role: string | null;
  platform: string | null;
  state: PlanNodeState;
  message: string;
}

export interface NewPlanResult {
  state: PlanState;
  message: string;
  activeCommand: number | null;
  commands: { index: number; state: PlanState; message: string }[];
  nodes: NewNode[];
  events: PlanEvent[];
}

/** Why a device does not qualify as a node of `group`, or null when it does. */
export function disqualification(device: EngineDevice | null, name: string, group: PlanGroup): string | null {
  if (!device) return `no device named ${name}`;
  if (device.lifecycle !== "Enrolled") return `${name} is ${device.lifecycle}, not Enrolled`;
  if (device.decommissionRequested) return `${name} is being decommissioned`;
  const role = GROUP_ROLE[group];
  if (device.role !== role) return `${name} is a ${device.role}, not a ${role}`;
  return null;
}

function platformProblem(shape: CommandShape, device: EngineDevice): string | null {
  if (!shape.platforms) return null;
  if (shape.platforms[device.platform]) return null;
  return `${device.name} is ${device.platform}; the command has files for ${Object.keys(shape.platforms).join(", ")}`;
}

export function newPlan(input: {
  commands: CommandShape[];
  /** Per command, per group: what discovery found, in order. */
  discovered: Partial<Record<PlanGroup, Discovered[]>>[];
  /** DROVER_EXCLUDE_FROM_PLANS */
  exclude: readonly ("controller" | "worker")[];
  /** `command/group/name` keys completed in the plan this one retries, and its id. */
  carried: { planId: string; keys: ReadonlySet<string> } | null;
}): NewPlanResult {
  const commands: NewPlanResult["commands"] = input.commands.map((_, index) => ({ index, state: "NewPlan", message: "" }));
  const nodes: NewNode[] = [];
  const events: PlanEvent[] = [];
  let planState: PlanState = "SchedulableWait";
  let planMessage = "";
  for (const [index, shape] of input.commands.entries()) {
    const found = input.discovered[index] ?? {};
    const cmdNodes: NewNode[] = [];
    for (const group of ["controllers", "workers"] as const) {
      (found[group] ?? []).forEach((d, position) => {
        const base = { command: index, group, position, name: d.name, deviceId: d.device?.id ?? null, role: d.device?.role ?? null, platform: d.device?.platform ?? null };
        const missing = disqualification(d.device, d.name, group);
        const noPlatform = !missing && d.device ? platformProblem(shape, d.device) : null;
        let state: PlanNodeState = "SignalPending";
        let message = "";
        if (missing) [state, message] = ["SignalMissingNode", missing];
        else if (noPlatform) [state, message] = ["SignalMissingPlatform", noPlatform];
        else if (input.carried?.keys.has(`${index}/${group}/${d.name}`)) [state, message] = ["SignalCompleted", `completed in plan ${input.carried.planId}`];
        if (state !== "SignalPending") assertTransition(planNodeMachine, "SignalPending", state);
        cmdNodes.push({ ...base, state, message });
      });
    }
    nodes.push(...cmdNodes);
    const excluded = input.exclude.filter((role) => cmdNodes.some((n) => GROUP_ROLE[n.group] === role));
    const missing = cmdNodes.filter((n) => n.state === "SignalMissingNode");
    const noPlatform = cmdNodes.filter((n) => n.state === "SignalMissingPlatform");
    let state: PlanState = "SchedulableWait";
    let message = "";
    if (excluded.length > 0) {
      state = "Restricted";
      message = `command ${index} (${shape.kind}) targets ${excluded.map((r) => `${r}s`).join(" and ")}, excluded from plans on this server (DROVER_EXCLUDE_FROM_PLANS): ${listNames(cmdNodes.filter((n) => excluded.includes(GROUP_ROLE[n.group])).map((n) => n.name))}`;
    } else if (missing.length > 0) {
      state = "IncompleteTargets";
      message = `command ${index} (${shape.kind}): ${listNames(missing.map((n) => n.message))}`;
    } else if (noPlatform.length > 0) {
      state = "MissingPlatform";
      message = `command ${index} (${shape.kind}): ${listNames(noPlatform.map((n) => n.message))}`;
    } else if (cmdNodes.length === 0) {
      message = `command ${index} (${shape.kind}): discovery found no node; nothing to signal`;
    }
    assertTransition(planMachine, "NewPlan", state);
    commands[index] = { index, state, message };
    events.push({ type: "PlanCommandStateChanged", reason: state, message: `command ${index} (${shape.kind}): NewPlan → ${state}${message ? `: ${message}` : ""}` });
    if (state !== "SchedulableWait") {
      planState = state;
      planMessage = message;
      for (const later of commands.slice(index + 1)) later.message = `not processed: command ${index} ended ${state}`;
      break;
    }
  }
  assertTransition(planMachine, "NewPlan", planState);
  events.push({ type: "PlanStateChanged", reason: planState, message: `NewPlan → ${planState}${planMessage ? `: ${planMessage}` : ""}` });
  return { state: planState, message: planMessage, activeCommand: planState === "SchedulableWait" ? 0 : null, commands, nodes, events };
}

// ---------------------------------------------------------------------------------------
// A pass over a running plan

/** Whether a waiting node still qualifies: the state and message when it no longer does. */
function recheck(node: EngineNode, shape: CommandShape): { node: PlanNodeState; command: PlanState; message: string } | null {
  const d = node.device;
  if (!d || d.lifecycle !== "Enrolled" || d.decommissionRequested) {
    return { node: "SignalMissingNode", command: "MissingSignalNode", message: disqualification(d, node.name, node.group) ?? `${node.name} is gone` };
  }
  const role = GROUP_ROLE[node.group];
  if (d.role !== role) return { node: "SignalMissingNode", command: "InconsistentTargets", message: `${node.name} was discovered as a ${role} and is now a ${d.role}` };
  const discovery = shape.targets[node.group]?.discovery;
  const selector = discovery ? discoverySelector(discovery) : null;
  if (selector && !(matchesSelector(selector.labels, d.labels) && matchesFields(selector.fields, d.name))) {
    return { node: "SignalMissingNode", command: "InconsistentTargets", message: `${node.name} no longer matches the selector it was discovered by (${discovery?.selector?.labels ?? ""})` };
  }
  const noPlatform = platformProblem(shape, d);
  if (noPlatform) return { node: "SignalMissingPlatform", command: "MissingPlatform", message: noPlatform };
  return null;
}

export function matchesFields(fields: FieldRequirement[], name: string): boolean {
  return fields.every((f) => (f.op === "=" ? name === f.name : name !== f.name));
}

function actionOutcome(node: EngineNode): NodeChange | null {
  if (node.state !== "SignalSent") return null;
  const a = node.action;
  if (!a) return { id: node.id, state: "SignalMissingNode", message: `the action ${node.actionId ?? ""} is gone with its device` };
  if (!isFinalAction(a.state)) return null;
  if (a.state === "DONE") return { id: node.id, state: "SignalCompleted", message: `action ${a.id} DONE` };
  const why =
    a.state === "LOST"
      ? (a.error ?? "the agent no longer had it (LOST)")
      : a.state === "CANCELLED"
        ? `cancelled${a.cancelRequestedBy ? ` by ${a.cancelRequestedBy}` : ""}${a.error ? `: ${a.error}` : ""}`
        : (a.error ?? "failed without an error message");
  return { id: node.id, state: "SignalApplyFailed", message: `action ${a.id} ${a.state}: ${why}` };
}

/** What a pass reads (server/plans/controller.ts loads exactly this much, however big the plan). */
export interface PassInput {
  plan: EnginePlan;
  commands: EngineCommand[];
  /** Every node still SignalSent, of any command, with its action. */
  signalled: EngineNode[];
  /**
   * The active command's waiting nodes the server offers to signal next, per group, in the order
   * to signal them: Online devices first, then the listed order; never a device another plan
   * is updating. As many as could be signalled now, at most.
   */
  candidates: Record<PlanGroup, EngineNode[]>;
  /** The active command's nodes, by group and stored state. */
  counts: Record<PlanGroup, Partial<Record<PlanNodeState, number>>>;
  now: Date;
}

export type GroupCounts = PassInput["counts"];

function total(c: Partial<Record<PlanNodeState, number>>): number {
  return Object.values(c).reduce((a, b) => a + (b ?? 0), 0);
}

export function decidePass(input: PassInput): PassDecision {
  const { plan, commands, signalled, candidates, now } = input;
  const out: PassDecision = { plan: null, commands: [], nodes: [], signals: [], cancelActions: [], events: [], advanced: false };
  const counts: GroupCounts = { controllers: { ...input.counts.controllers }, workers: { ...input.counts.workers } };
  const nodeState = new Map([...signalled, ...candidates.controllers, ...candidates.workers].map((n) => [n.id, n.state]));
  const changeNode = (n: EngineNode, state: PlanNodeState, message: string) => {
    const from = nodeState.get(n.id)!;
    assertTransition(planNodeMachine, from, state);
    nodeState.set(n.id, state);
    if (n.command === plan.activeCommand) {
      counts[n.group][from] = (counts[n.group][from] ?? 0) - 1;
      counts[n.group][state] = (counts[n.group][state] ?? 0) + 1;
    }
    out.nodes.push({ id: n.id, state, message });
    out.events.push({ type: "PlanNodeStateChanged", reason: state, message: `${nodeLabel(n)}: ${from} → ${state}${message ? `: ${message}` : ""}` });
  };

  // Follow every signalled node to its end, whatever the plan's state (a plan that ended still
  // shows what happened to the nodes it had signalled).
  for (const n of signalled) {
    const change = actionOutcome(n);
    if (change) changeNode(n, change.state, change.message);
  }
  if (isTerminalPlanState(plan.state) || plan.activeCommand === null) return out;

  let planState = plan.state;
  const cmdState = new Map(commands.map((c) => [c.index, c.state]));
  const moveCommand = (c: EngineCommand, to: PlanState, message: string) => {
    const from = cmdState.get(c.index)!;
    assertTransition(planMachine, from, to);
    cmdState.set(c.index, to);
    out.commands.push({ index: c.index, state: to, message });
    out.events.push({ type: "PlanCommandStateChanged", reason: to, message: `command ${c.index} (${c.shape.kind}): ${from} → ${to}${message ? `: ${message}` : ""}` });
  };
  const movePlan = (to: PlanState, message: string, activeCommand: number | null) => {
    if (to !== planState) {
      // The plan mirrors its active command, which reached an error found in Schedulable through it.
      const via = !canTransition(planMachine, planState, to) && canTransition(planMachine, planState, "Schedulable") ? "Schedulable" : null;
      if (via) assertTransition(planMachine, via, to);
      else assertTransition(planMachine, planState, to);
      out.events.push({ type: "PlanStateChanged", reason: to, message: `${planState} → ${via ? `${via} → ` : ""}${to}${message ? `: ${message}` : ""}` });
    }
    planState = to;
    out.plan = { state: to, message, activeCommand };
    // An end before the last command: the commands after it never run, and say so.
    if (isTerminalPlanState(to) && to !== "Completed") {
      for (const c of commands) {
        if (c.index > (plan.activeCommand ?? 0)) out.commands.push({ index: c.index, state: cmdState.get(c.index)!, message: `not run: command ${plan.activeCommand} ended ${to}` });
      }
    }
  };

  const active = commands.find((c) => c.index === plan.activeCommand);
  if (!active) return out;
  const mine = signalled.filter((n) => n.command === active.index);
  const facts = (): GroupFacts => groupFacts(counts, mine.filter((n) => nodeState.get(n.id) === "SignalSent" && n.group === "controllers").map((n) => n.name));

  // An operator's cancel, then the deadline: end the plan and cancel what is still unfinished.
  if (plan.cancel || (plan.deadlineAt && now.getTime() >= plan.deadlineAt.getTime())) {
    const cancelled = plan.cancel !== null;
    const to: PlanState = cancelled ? "Cancelled" : "DeadlineExceeded";
    const unfinished = (counts.controllers.SignalPending ?? 0) + (counts.workers.SignalPending ?? 0) + (counts.controllers.SignalSent ?? 0) + (counts.workers.SignalSent ?? 0);
    const named = [...mine.filter((n) => nodeState.get(n.id) === "SignalSent"), ...candidates.controllers, ...candidates.workers];
    const ctx: ExplainContext = { plan, command: active, facts: facts(), now };
    const message = cancelled
      ? `cancelled by ${plan.cancel!.by}${plan.cancel!.reason ? `: ${plan.cancel!.reason}` : ""}`
      : `the deadline of ${plan.deadline} passed at ${plan.deadlineAt!.toISOString()} with ${unfinished} node(s) of command ${active.index} unfinished${named.length ? `: ${listNames(named.map((n) => `${n.name} (${explainNode(n, ctx)})`), 3)}` : ""}`;
    moveCommand(active, to, message);
    movePlan(to, message, null);
    out.cancelActions = signalled.filter((n) => nodeState.get(n.id) === "SignalSent" && n.action && !isFinalAction(n.action.state)).map((n) => n.action!.id);
    return out;
  }

  // SchedulableWait: did a signalled node fail?
  const failed = mine.filter((n) => nodeState.get(n.id) === "SignalApplyFailed" || nodeState.get(n.id) === "SignalMissingNode");
  if (failed.length > 0) {
    const gone = failed.filter((n) => nodeState.get(n.id) === "SignalMissingNode");
    const to: PlanState = gone.length === failed.length ? "MissingSignalNode" : "ApplyFailed";
    if (to === "MissingSignalNode") moveCommand(active, "Schedulable", "");
    const message = failed.map((n) => `${n.name}: ${out.nodes.find((c) => c.id === n.id)?.message ?? n.message}`).join("; ");
    moveCommand(active, to, message);
    movePlan(to, `command ${active.index} (${active.shape.kind}) ${to}: ${message}`, null);
    return out;
  }

  const all = total(counts.controllers) + total(counts.workers);
  // Skipped by an operator counts as done (issue 21): the command moves on without the node.
  const done = (g: PlanGroup) => (counts[g].SignalCompleted ?? 0) + (counts[g].SignalSkipped ?? 0);
  const skipped = (counts.controllers.SignalSkipped ?? 0) + (counts.workers.SignalSkipped ?? 0);
  if (done("controllers") + done("workers") === all) {
    moveCommand(active, "Completed", all === 0 ? "no node to signal" : `${all} node(s) SignalCompleted${skipped ? ` or SignalSkipped (${skipped} skipped)` : ""}`);
    const next = commands.find((c) => c.index === active.index + 1);
    if (!next) {
      movePlan("Completed", `${commands.length} command(s) completed`, null);
      return out;
    }
    // The next command's nodes were not read for this pass: the caller passes again at once.
    movePlan(cmdState.get(next.index)!, "", next.index);
    out.advanced = true;
    return out;
  }

  // The plan waits for its approval before anything is signalled.
  if (plan.requireApproval && plan.approvedBy === null) {
    if (out.plan === null && plan.message !== APPROVAL_WAIT) movePlan(planState, APPROVAL_WAIT, active.index);
    return out;
  }

  // Pick the next nodes: controllers one at a time; workers only after every controller.
  let picked: EngineNode[] = [];
  const f = facts();
  if (f.controllersLeft > 0) {
    if (f.controllerSent === null) picked = candidates.controllers.slice(0, 1);
  } else {
    const limit = active.shape.targets.workers?.limits?.concurrent ?? 1;
    picked = candidates.workers.slice(0, Math.max(0, limit - f.workersSent));
  }

  // A node must still qualify when its turn comes (checked in Schedulable, before it is signalled).
  const problems = picked.map((n) => ({ n, p: recheck(n, active.shape) })).filter((x): x is { n: EngineNode; p: NonNullable<ReturnType<typeof recheck>> } => x.p !== null);
  if (problems.length > 0) {
    const first = problems[0]!;
    for (const { n, p } of problems) changeNode(n, p.node, p.message);
    moveCommand(active, "Schedulable", "");
    const message = problems.filter((x) => x.p.command === first.p.command).map((x) => x.p.message).join("; ");
    moveCommand(active, first.p.command, message);
    movePlan(first.p.command, `command ${active.index} (${active.shape.kind}) ${first.p.command}: ${message}`, null);
    return out;
  }

  if (picked.length > 0) {
    moveCommand(active, "Schedulable", "");
    for (const n of picked) {
      changeNode(n, "SignalSent", "");
      out.signals.push({ nodeId: n.id, name: n.name, deviceId: n.device!.id, command: n.command, group: n.group });
    }
    moveCommand(active, "SchedulableWait", "");
    out.events.push({ type: "PlanNodesSignalled", reason: "Schedulable", message: `command ${active.index} (${active.shape.kind}): signalled ${listNames(picked.map((n) => n.name), 10)}` });
  }
  if (out.plan === null && (plan.message !== "" || planState !== plan.state)) movePlan(planState, "", active.index);
  return out;
}

export const APPROVAL_WAIT = "waiting for an operator to approve the plan";

/** What a waiting node's words depend on, from the command's counts. */
export interface GroupFacts {
  /** Controllers not yet SignalCompleted. */
  controllersLeft: number;
  /** The controller being updated, if any. */
  controllerSent: string | null;
  workersSent: number;
}

export function groupFacts(counts: GroupCounts, sentControllers: string[]): GroupFacts {
  return {
    controllersLeft: total(counts.controllers) - (counts.controllers.SignalCompleted ?? 0) - (counts.controllers.SignalSkipped ?? 0),
    controllerSent: (counts.controllers.SignalSent ?? 0) > 0 ? (sentControllers[0] ?? "a controller") : null,
    workersSent: counts.workers.SignalSent ?? 0,
  };
}

// ---------------------------------------------------------------------------------------
// Words for the console

export interface ExplainContext {
  plan: Pick<EnginePlan, "state" | "activeCommand" | "requireApproval" | "approvedBy">;
  command: Pick<EngineCommand, "index" | "shape">;
  /** The command's counts, for "one controller at a time" and slots. */
  facts: GroupFacts;
  now: Date;
}

function since(iso: string | null, now: Date): string {
  if (!iso) return "never seen";
  const s = Math.max(0, Math.round((now.getTime() - Date.parse(iso)) / 1000));
  return s < 120 ? `last seen ${s}s ago` : s < 7200 ? `last seen ${Math.round(s / 60)}m ago` : `last seen ${Math.round(s / 3600)}h ago`;
}

/** Why a node is where it is, for a person. Stored messages (failures, completions) win when the node has ended. */
export function explainNode(node: Pick<EngineNode, "command" | "group" | "state" | "message" | "device" | "action" | "busyIn" | "name">, ctx: ExplainContext): string {
  const { plan, command } = ctx;
  if (node.state === "SignalSent") {
    const a = node.action;
    if (!a) return node.message || "signalled";
    const offline = node.device && node.device.summary !== "Online" ? `; the device is ${node.device.summary} (${since(node.device.lastSeen, ctx.now)})` : "";
    switch (a.state) {
      case "PENDING_APPROVE":
        return `action waiting for an operator's approval${offline}`;
      case "PENDING_SCHEDULE": {
        // Queued while the device is not one the command's health policy sends work to.
        const policy = command.shape.healthPolicy;
        return node.device && !admits(policy, node.device.summary)
          ? `action queued: it is offered when the device is ${admittedSummaries(policy)}${offline}`
          : `action offered to the agent; waiting for it to confirm${offline}`;
      }
      case "NEW":
        return `the agent accepted the action${a.cancelRequestedBy ? `; cancel requested by ${a.cancelRequestedBy}` : ""}${offline}`;
      case "RUNNING":
        return `running on the agent${a.cancelRequestedBy ? `; cancel requested by ${a.cancelRequestedBy}` : ""}${offline}`;
      default:
        return `action ${a.state}`;
    }
  }
  if (node.state !== "SignalPending") return node.message;
  if (isTerminalPlanState(plan.state)) return `never signalled: the plan ended ${plan.state}`;
  if (plan.requireApproval && !plan.approvedBy) return APPROVAL_WAIT;
  if (plan.activeCommand === null || command.index > plan.activeCommand) return `waiting for command ${plan.activeCommand ?? 0} to complete`;
  if (node.busyIn) return `waiting: plan ${node.busyIn} is updating this device`;
  const f = ctx.facts;
  if (node.group === "workers" && f.controllersLeft > 0) return "waiting for every controller to complete first";
  const offline = node.device && node.device.summary !== "Online" ? ` (the device is ${node.device.summary}, ${since(node.device.lastSeen, ctx.now)}; Online nodes go first)` : "";
  if (node.group === "controllers") {
    return f.controllerSent ? `waiting: one controller at a time, ${f.controllerSent} is updating${offline}` : `next controller${offline}`;
  }
  const limit = command.shape.targets.workers?.limits?.concurrent ?? 1;
  return f.workersSent >= limit ? `waiting for a slot: ${f.workersSent} of ${limit} workers updating${offline}` : `next worker${offline}`;
}

/** The plan's message: what it ended with, or what it waits for now. */
export function explainPlan(plan: Pick<EnginePlan, "state" | "message" | "activeCommand" | "requireApproval" | "approvedBy">, counts: { total: number; done: number; sent: number }): string {
  if (isTerminalPlanState(plan.state)) return plan.message;
  if (plan.requireApproval && !plan.approvedBy) return APPROVAL_WAIT;
  if (plan.activeCommand === null) return plan.message;
  return `command ${plan.activeCommand}: ${counts.done} of ${counts.total} node(s) completed, ${counts.sent} signalled`;
}
