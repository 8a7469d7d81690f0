/**
 * Plans, the operator side (issue 8, DESIGN.md §5, seed 000): create (NewPlan: discovery once,
 * a status entry per command and per node, then the first pass in the same transaction, so
 * the answer shows the first nodes signalled), approve, cancel, retry, read. The status of a
 * plan, its commands and nodes is written by the plan controller's pass (controller.ts) and,
 * at creation, by NewPlan: operators only ask (approve, cancel) and the pass acts.
 *
 * Plans are many and kept: every create gets a server-made id, `spec.id` is only a label (so
 * reusing it, k0s #4065, is harmless), and a retry is a new plan that carries over the nodes
 * already SignalCompleted (k0s #4006).
 */
import { randomBytes, randomUUID } from "node:crypto";
import { checkAgentUpgradeArgs } from "../agent-dist/versions";
import type { ServerContext } from "../context";
import type { Prisma, Tx } from "../db";
import { assertNotOwnApproval } from "../approvals/four-eyes";
import { conflict, invalid, notFound } from "../errors";
import { recordEvents, type NewEvent } from "../events/events";
import { selectorWhere } from "../devices/queries";
import { inChunks } from "../lib/chunks";
import { describeZodError } from "../../lib/protocol";
import { parseDuration } from "../../lib/fleet-spec";
import {
  commandShape,
  discoverySelector,
  MAX_PLAN_NODES,
  PLAN_GROUPS,
  PlanCreateOptions,
  PlanInput,
  type CommandShape,
  type PlanCommandKind,
  type PlanGroup,
} from "../../lib/plan-spec";
import { GROUP_ROLE, explainNode, explainPlan, groupFacts, newPlan, type Discovered, type GroupCounts, type PlanEvent } from "../../lib/plan";
import {
  commandWithNodes,
  isTerminalPlanState,
  PLAN_NODE_STATES,
  type PlanCounts,
  type PlanNodeState,
  type PlanNodeView,
  type PlanState,
  type PlanSummaryView,
  type PlanView,
} from "../../lib/plan-status";
import type { ActionState } from "../../lib/action-status";
import { afterPass, busyElsewhere, engineDevice, passInTx, planDeviceSelect, PLAN_CONTROLLER, type PassEffects } from "./controller";
import { cancelActionInTx, type CancelOutcome } from "../actions/actions";
import { locks, snapshotRead, transaction } from "../lib/transactions";
import { claimInTx, type IdempotencyClaim } from "../idempotency/idempotency";

export { PLAN_CONTROLLER };

const TX = { timeout: 60_000, maxWait: 30_000 } as const;

export function parsePlanInput(value: unknown): PlanInput {
  const r = PlanInput.safeParse(value);
  if (!r.success) throw invalid(describeZodError(r.error));
  return r.data;
}

export function parsePlanOptions(value: unknown): PlanCreateOptions {
  const r = PlanCreateOptions.safeParse(value ?? {});
  if (!r.success) throw invalid(describeZodError(r.error));
  return r.data;
}

function newPlanId(): string {
  return `plan-${randomBytes(5).toString("hex")}`;
}

export function planEvents(planId: string, events: PlanEvent[], actor: string): NewEvent[] {
  return events.map((e) => ({ objectKind: "Plan", objectName: planId, type: e.type, reason: e.reason, message: e.message, actor }));
}

// ---------------------------------------------------------------------------------------
// Discovery (once, at NewPlan)

async function discover(tx: Tx, shape: CommandShape): Promise<Partial<Record<PlanGroup, Discovered[]>>> {
  const out: Partial<Record<PlanGroup, Discovered[]>> = {};
  for (const group of PLAN_GROUPS) {
    const target = shape.targets[group];
    if (!target) continue;
    const d = target.discovery;
    if (d.static) {
      const names = [...new Set(d.static.nodes)];
      const rows = await inChunks(names, (chunk) => tx.device.findMany({ where: { name: { in: chunk } }, select: planDeviceSelect }));
      const byName = new Map(rows.map((r) => [r.name, r]));
      out[group] = names.map((name) => {
        const row = byName.get(name);
        return { name, device: row ? engineDevice(row) : null };
      });
    } else {
      // A selector finds Enrolled devices of the group's role (controllers or workers) only.
      const sel = discoverySelector(d)!;
      const where: Prisma.DeviceWhereInput = {
        AND: [
          ...selectorWhere(sel.labels),
          ...sel.fields.map((f): Prisma.DeviceWhereInput => (f.op === "=" ? { name: f.name } : { name: { not: f.name } })),
          { role: GROUP_ROLE[group], lifecycle: "Enrolled", decommissionRequestedAt: null, credentialRevokedAt: null },
        ],
      };
      const rows = await tx.device.findMany({ where, select: planDeviceSelect, orderBy: { name: "asc" }, take: MAX_PLAN_NODES + 1 });
      out[group] = rows.map((r) => ({ name: r.name, device: engineDevice(r) }));
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------
// Create (and retry)

interface CreateArgs {
  input: PlanInput;
  options: PlanCreateOptions;
  actor: string;
  retryOf?: string;
  /** The request's idempotency key (issue 22), written in the plan's own transaction. */
  idempotency?: IdempotencyClaim | undefined;
}

export async function createPlan(ctx: ServerContext, args: CreateArgs): Promise<PlanView> {
  const { input, options, actor } = args;
  const requireApproval = options.requireApproval ?? input.spec.requireApproval ?? false;
  const deadline = options.deadline ?? input.spec.deadline ?? null;
  const shapes = input.spec.commands.map(commandShape);
  // An agentupgrade command names a build this server must hold (issue 12).
  for (const [i, shape] of shapes.entries()) if (shape.action) await checkAgentUpgradeArgs(ctx, shape.action.kind, shape.action.args, `spec.commands[${i}].action.args`);
  const id = newPlanId();
  const effects = await transaction(ctx.db, async (tx) => {
    await claimInTx(tx, args.idempotency, `Plan/${id}`);
    const now = ctx.now();
    let carried: { planId: string; keys: Set<string> } | null = null;
    if (args.retryOf) {
      const done = await tx.planNode.findMany({ where: { planId: args.retryOf, state: "SignalCompleted" }, select: { commandIndex: true, group: true, name: true } });
      carried = { planId: args.retryOf, keys: new Set(done.map((n) => `${n.commandIndex}/${n.group}/${n.name}`)) };
    }
    // NewPlan: discovery for each command in order, once. The engine's walk stops at the first
    // command that fails and keeps no node of the commands after it (k0s: not processed).
    const discovered: Partial<Record<PlanGroup, Discovered[]>>[] = [];
    let total = 0;
    for (const shape of shapes) {
      const found = await discover(tx, shape);
      total += Object.values(found).reduce((n, list) => n + list.length, 0);
      if (total > MAX_PLAN_NODES) throw invalid(`the plan discovers more than ${MAX_PLAN_NODES} nodes: split it`);
      discovered.push(found);
    }
    const result = newPlan({ commands: shapes, discovered, exclude: ctx.env.DROVER_EXCLUDE_FROM_PLANS, carried });
    const terminal = isTerminalPlanState(result.state);
    await tx.plan.create({
      data: {
        id,
        name: input.metadata?.name ?? null,
        specId: input.spec.id ?? null,
        apiVersion: input.apiVersion,
        spec: JSON.stringify(input.spec),
        requireApproval,
        deadline,
        deadlineAt: deadline ? new Date(now.getTime() + parseDuration(deadline)) : null,
        retryOf: args.retryOf ?? null,
        createdBy: actor,
        state: result.state,
        message: result.message,
        activeCommand: result.activeCommand,
        startedAt: now,
        endedAt: terminal ? now : null,
        createdAt: now,
      },
    });
    await tx.planCommandStatus.createMany({
      data: result.commands.map((c) => ({
        planId: id,
        index: c.index,
        kind: shapes[c.index]!.kind,
        state: c.state,
        message: c.message,
        startedAt: c.index === 0 ? now : null,
        endedAt: isTerminalPlanState(c.state) ? now : null,
        updatedAt: now,
      })),
    });
    if (result.nodes.length > 0) {
      await tx.planNode.createMany({
        data: result.nodes.map((n) => ({
          // A UUID: it becomes the id of the node's action (the agent protocol's action ids are UUIDs).
          id: randomUUID(),
          planId: id,
          commandIndex: n.command,
          group: n.group,
          position: n.position,
          name: n.name,
          deviceId: n.deviceId,
          role: n.role,
          platform: n.platform,
          state: n.state,
          message: n.message,
          updatedAt: now,
        })),
      });
    }
    const created: NewEvent = {
      objectKind: "Plan",
      objectName: id,
      type: args.retryOf ? "PlanRetried" : "PlanCreated",
      reason: "NewPlan",
      message: `${shapes.length} command(s) (${shapes.map((s) => s.kind).join(", ")}), ${result.nodes.length} node(s)${args.retryOf ? `, retrying ${args.retryOf}` : ""}${requireApproval ? ", waiting for approval" : ""}`,
      actor,
    };
    const events = await recordEvents(tx, [created, ...planEvents(id, result.events, PLAN_CONTROLLER)]);
    const pass = terminal ? null : await passInTx(tx, ctx, id, now);
    return { events: [...events, ...(pass?.events ?? [])], wake: pass?.wake ?? [], cancels: pass?.cancels ?? [] } satisfies PassEffects;
  }, { ...TX, locks: [locks.plan(id)] });
  afterPass(ctx, effects);
  return getPlan(ctx, id);
}

export async function retryPlan(ctx: ServerContext, id: string, actor: string, idempotency?: IdempotencyClaim): Promise<PlanView> {
  const old = await ctx.db.plan.findUnique({ where: { id }, select: { state: true, apiVersion: true, spec: true, name: true, requireApproval: true, deadline: true } });
  if (!old) throw notFound(`plan "${id}"`);
  const state = old.state as PlanState;
  if (!isTerminalPlanState(state)) throw conflict(`plan ${id} is ${state}: only a plan that ended can be retried (cancel it first)`);
  if (state === "Completed") throw conflict(`plan ${id} is Completed: there is nothing to retry`);
  const input = parsePlanInput({ apiVersion: old.apiVersion, kind: "Plan", ...(old.name ? { metadata: { name: old.name } } : {}), spec: JSON.parse(old.spec) as unknown });
  return createPlan(ctx, {
    input,
    options: { requireApproval: old.requireApproval, ...(old.deadline ? { deadline: old.deadline } : {}) },
    actor,
    retryOf: id,
    idempotency,
  });
}

// ---------------------------------------------------------------------------------------
// Operators ask; the pass acts (in the same transaction, so the answer shows the result)

/** What an operator's ask wrote: its events, and the actions it cancelled (their events already recorded). */
type Asked = NewEvent[] | { events: NewEvent[]; cancels: CancelOutcome[] };

async function askAndPass(ctx: ServerContext, id: string, ask: (tx: Tx, plan: { state: PlanState; requireApproval: boolean; approvedBy: string | null; cancelRequestedAt: Date | null; createdBy: string }, now: Date) => Promise<Asked>) {
  const effects = await transaction(ctx.db, async (tx) => {
    const now = ctx.now();
    const plan = await tx.plan.findUnique({ where: { id }, select: { state: true, requireApproval: true, approvedBy: true, cancelRequestedAt: true, createdBy: true } });
    if (!plan) throw notFound(`plan "${id}"`);
    const asked = await ask(tx, { ...plan, state: plan.state as PlanState }, now);
    const { events: newEvents, cancels } = Array.isArray(asked) ? { events: asked, cancels: [] } : asked;
    const events = [...(await recordEvents(tx, newEvents)), ...cancels.flatMap((c) => c.events)];
    const pass = await passInTx(tx, ctx, id, now);
    return { events: [...events, ...(pass?.events ?? [])], wake: pass?.wake ?? [], cancels: [...cancels.map((c) => ({ ...c, events: [] })), ...(pass?.cancels ?? [])] };
  }, { ...TX, locks: [locks.plan(id)] });
  afterPass(ctx, effects);
  return getPlan(ctx, id);
}

/**
 * One approval for the whole plan: its nodes' actions are created approved by this operator,
 * with the reason (kept on the plan, in the PlanApproved event and in each action's approval
 * record). Four eyes refuses the plan's own submitter (server/approvals/four-eyes.ts).
 */
export function approvePlan(ctx: ServerContext, id: string, actor: string, reason?: string): Promise<PlanView> {
  return askAndPass(ctx, id, async (tx, plan, now) => {
    if (isTerminalPlanState(plan.state)) throw conflict(`plan ${id} is ${plan.state}: nothing to approve`);
    if (!plan.requireApproval) throw conflict(`plan ${id} does not wait for approval`);
    if (plan.approvedBy) throw conflict(`plan ${id} was already approved by ${plan.approvedBy}`);
    await assertNotOwnApproval(ctx, tx, actor, [{ what: `plan ${id}`, owner: plan.createdBy }]);
    const { count } = await tx.plan.updateMany({ where: { id, approvedBy: null }, data: { approvedBy: actor, approvedAt: now, approvalReason: reason ?? null } });
    if (count !== 1) throw conflict(`plan ${id} was approved concurrently`);
    return [{ objectKind: "Plan", objectName: id, type: "PlanApproved", reason: plan.state, message: `its nodes are signalled from now on${reason ? `: ${reason}` : ""}`, actor }];
  });
}

/** Nothing more is signalled; the plan's unfinished actions are cancelled. */
export function cancelPlan(ctx: ServerContext, id: string, actor: string, reason?: string): Promise<PlanView> {
  return askAndPass(ctx, id, async (tx, plan, now) => {
    if (isTerminalPlanState(plan.state)) throw conflict(`plan ${id} is ${plan.state}: it has already ended`);
    const { count } = await tx.plan.updateMany({ where: { id, cancelRequestedAt: null }, data: { cancelRequestedAt: now, cancelRequestedBy: actor, cancelReason: reason ?? null } });
    if (count !== 1) throw conflict(`plan ${id} is already being cancelled`);
    return [{ objectKind: "Plan", objectName: id, type: "PlanCancelRequested", reason: plan.state, message: reason ?? "", actor }];
  });
}

/**
 * An operator moves on without one node (issue 21): a device that stays in Error or Offline
 * would otherwise hold its command, and the plan, for ever. The node becomes SignalSkipped with
 * the reason (recorded in its message and a PlanNodeSkipped event); it counts as done for its
 * command, so the pass in the same transaction may complete the command and go on. An action
 * it was waiting on is cancelled (at once when not yet offered, through its agent otherwise).
 * A node in several commands is named with `command`.
 */
export function skipPlanNode(ctx: ServerContext, id: string, node: { name: string; command?: number | undefined }, actor: string, reason: string): Promise<PlanView> {
  return askAndPass(ctx, id, async (tx, plan, now) => {
    if (isTerminalPlanState(plan.state)) throw conflict(`plan ${id} is ${plan.state}: it has already ended`);
    const named = await tx.planNode.findMany({
      where: { planId: id, name: node.name, ...(node.command !== undefined ? { commandIndex: node.command } : {}) },
      select: { id: true, state: true, commandIndex: true, group: true, actionId: true },
    });
    if (named.length === 0) throw notFound(`node "${node.name}"${node.command !== undefined ? ` in command ${node.command}` : ""} of plan ${id}`);
    const open = named.filter((n) => n.state === "SignalPending" || n.state === "SignalSent");
    if (open.length === 0) throw conflict(`node ${node.name} is ${named.map((n) => n.state).join(", ")}: only a node waiting (SignalPending) or signalled (SignalSent) can be skipped`);
    if (open.length > 1) throw invalid(`node ${node.name} waits in commands ${open.map((n) => n.commandIndex).join(" and ")}: say which (command)`);
    const n = open[0]!;
    const message = `skipped by ${actor}: ${reason}`;
    const { count } = await tx.planNode.updateMany({ where: { id: n.id, state: n.state }, data: { state: "SignalSkipped", message, updatedAt: now } });
    if (count !== 1) throw conflict(`node ${node.name} changed concurrently`);
    const cancels = n.state === "SignalSent" && n.actionId ? [await cancelActionInTx(tx, n.actionId, actor, `node ${node.name} skipped in plan ${id}: ${reason}`, now)] : [];
    const events: NewEvent[] = [
      { objectKind: "Plan", objectName: id, type: "PlanNodeSkipped", reason: n.state, message: `${node.name} (command ${n.commandIndex}, ${n.group}) skipped: ${reason}`, actor },
    ];
    return { events, cancels };
  });
}

// ---------------------------------------------------------------------------------------
// Reading

const emptyCounts = (): PlanCounts => ({ ...(Object.fromEntries(PLAN_NODE_STATES.map((s) => [s, 0])) as Record<PlanNodeState, number>), total: 0 });

function addCount(counts: PlanCounts, state: string, n = 1) {
  counts[state as PlanNodeState] = (counts[state as PlanNodeState] ?? 0) + n;
  counts.total += n;
}

const iso = (d: Date | null) => d?.toISOString() ?? null;

export async function getPlan(ctx: ServerContext, id: string): Promise<PlanView> {
  // One snapshot: a pass writes the plan, its commands and its nodes together, and on
  // PostgreSQL separate reads could straddle it (a command Completed beside a plan whose
  // activeCommand had not moved yet, seen in CI).
  const { plan, nodes, retriedBy, actions, devices, busy } = await snapshotRead(ctx.db, async (db) => {
    const plan = await db.plan.findUnique({ where: { id }, include: { commands: { orderBy: { index: "asc" } } } });
    if (!plan) throw notFound(`plan "${id}"`);
    const nodes = await db.planNode.findMany({ where: { planId: id }, orderBy: [{ commandIndex: "asc" }, { group: "asc" }, { position: "asc" }] });
    const retriedBy = await db.plan.findMany({ where: { retryOf: id }, select: { id: true }, orderBy: { createdAt: "asc" } });
    const actionIds = nodes.flatMap((n) => (n.actionId ? [n.actionId] : []));
    const deviceIds = [...new Set(nodes.flatMap((n) => (n.deviceId ? [n.deviceId] : [])))];
    const actions = await inChunks(actionIds, (chunk) => db.action.findMany({ where: { id: { in: chunk } }, select: { id: true, state: true, error: true, cancelRequestedBy: true } }));
    const devices = await inChunks(deviceIds, (chunk) => db.device.findMany({ where: { id: { in: chunk } }, select: planDeviceSelect }));
    const busy = await busyElsewhere(db, id, nodes.filter((n) => n.state === "SignalPending" && n.deviceId).map((n) => n.deviceId!));
    return { plan, nodes, retriedBy, actions, devices, busy };
  });
  const actionById = new Map(actions.map((a) => [a.id, { ...a, state: a.state as ActionState }]));
  const deviceById = new Map(devices.map((d) => [d.id, engineDevice(d)]));
  const spec = JSON.parse(plan.spec) as { commands: unknown[] } & Record<string, unknown>;
  const shapes = PlanInput.shape.spec.parse(spec).commands.map(commandShape);
  const state = plan.state as PlanState;
  const enginePlan = { state, message: plan.message, activeCommand: plan.activeCommand, requireApproval: plan.requireApproval, approvedBy: plan.approvedBy };
  const now = ctx.now();
  const total = emptyCounts();
  const commands = plan.commands.map((c) => {
    const shape = shapes[c.index]!;
    const own = nodes.filter((n) => n.commandIndex === c.index);
    const counts = emptyCounts();
    const grouped: Partial<Record<PlanGroup, PlanNodeView[]>> = {};
    const byGroup: GroupCounts = { controllers: {}, workers: {} };
    for (const n of own) byGroup[n.group as PlanGroup][n.state as PlanNodeState] = (byGroup[n.group as PlanGroup][n.state as PlanNodeState] ?? 0) + 1;
    const facts = groupFacts(byGroup, own.filter((n) => n.group === "controllers" && n.state === "SignalSent").map((n) => n.name));
    for (const n of own) {
      addCount(counts, n.state);
      addCount(total, n.state);
      const device = n.deviceId ? (deviceById.get(n.deviceId) ?? null) : null;
      const action = n.actionId ? (actionById.get(n.actionId) ?? null) : null;
      const view: PlanNodeView = {
        name: n.name,
        state: n.state as PlanNodeState,
        message: explainNode(
          { command: n.commandIndex, group: n.group as PlanGroup, state: n.state as PlanNodeState, message: n.message, device, action, busyIn: n.deviceId ? (busy.get(n.deviceId) ?? null) : null, name: n.name },
          { plan: enginePlan, command: { index: c.index, shape }, facts, now },
        ),
        lastUpdatedTimestamp: n.updatedAt.toISOString(),
        role: n.role,
        platform: n.platform,
        actionId: n.actionId,
        actionState: action?.state ?? null,
        deviceSummary: device?.summary ?? null,
      };
      (grouped[n.group as PlanGroup] ??= []).push(view);
    }
    for (const group of PLAN_GROUPS) if (shape.targets[group]) grouped[group] ??= [];
    return {
      id: c.index,
      ...commandWithNodes(c.kind as PlanCommandKind, grouped),
      state: c.state as PlanState,
      description: c.message,
      actionKind: shape.action?.kind ?? shape.kind,
      version: shape.version,
      concurrent: shape.targets.workers?.limits?.concurrent ?? 1,
      counts,
      startedAt: iso(c.startedAt),
      endedAt: iso(c.endedAt),
    };
  });
  const activeCounts = plan.activeCommand === null ? null : commands[plan.activeCommand]?.counts;
  return {
    apiVersion: plan.apiVersion,
    kind: "Plan",
    metadata: { id: plan.id, name: plan.name, createdBy: plan.createdBy, creationTimestamp: plan.createdAt.toISOString(), retryOf: plan.retryOf, retriedBy: retriedBy.map((r) => r.id) },
    spec,
    status: {
      state,
      message: explainPlan(enginePlan, { total: activeCounts?.total ?? 0, done: activeCounts?.SignalCompleted ?? 0, sent: activeCounts?.SignalSent ?? 0 }),
      activeCommand: plan.activeCommand,
      approval: { required: plan.requireApproval, approvedBy: plan.approvedBy, approvedAt: iso(plan.approvedAt), reason: plan.approvalReason },
      deadline: plan.deadline,
      deadlineAt: iso(plan.deadlineAt),
      cancelRequestedBy: plan.cancelRequestedBy,
      startedAt: iso(plan.startedAt),
      endedAt: iso(plan.endedAt),
      counts: total,
      commands,
    },
  };
}

export interface PlanFilter {
  state?: PlanState[] | undefined;
}

export async function listPlans(ctx: ServerContext, filter: PlanFilter, page: { limit: number; cursor?: string | undefined }) {
  const where: Prisma.PlanWhereInput = filter.state?.length ? { state: { in: filter.state } } : {};
  const [rows, total] = await Promise.all([
    ctx.db.plan.findMany({
      where,
      orderBy: [{ createdAt: "desc" }, { id: "desc" }],
      take: page.limit + 1,
      ...(page.cursor ? { cursor: { id: page.cursor }, skip: 1 } : {}),
      include: { commands: { orderBy: { index: "asc" }, select: { kind: true, state: true } } },
    }),
    ctx.db.plan.count({ where }),
  ]);
  const pageRows = rows.slice(0, page.limit);
  const groups = pageRows.length
    ? await ctx.db.planNode.groupBy({ by: ["planId", "state"], where: { planId: { in: pageRows.map((r) => r.id) } }, _count: { _all: true } })
    : [];
  const items: PlanSummaryView[] = pageRows.map((p) => {
    const counts = emptyCounts();
    for (const g of groups) if (g.planId === p.id) addCount(counts, g.state, g._count._all);
    const state = p.state as PlanState;
    return {
      id: p.id,
      name: p.name,
      specId: p.specId,
      apiVersion: p.apiVersion,
      state,
      message: explainPlan({ state, message: p.message, activeCommand: p.activeCommand, requireApproval: p.requireApproval, approvedBy: p.approvedBy }, { total: counts.total, done: counts.SignalCompleted, sent: counts.SignalSent }),
      commands: p.commands.map((c) => ({ kind: c.kind as PlanCommandKind, state: c.state as PlanState })),
      counts,
      approval: { required: p.requireApproval, approvedBy: p.approvedBy, approvedAt: iso(p.approvedAt), reason: p.approvalReason },
      createdBy: p.createdBy,
      createdAt: p.createdAt.toISOString(),
      endedAt: iso(p.endedAt),
      retryOf: p.retryOf,
    };
  });
  return { items, total, nextCursor: rows.length > page.limit ? (items[items.length - 1]?.id ?? null) : null };
}
