/**
 * The plan controller (issue 8, DESIGN.md §5): the one writer of a plan's status after NewPlan
 * (the plan's and its commands' states and messages, its nodes' states). A pass reads the plan,
 * its active command's nodes and every node still SignalSent (with their actions and devices),
 * asks the pure engine (`decidePass`, lib/plan.ts) and applies the decision in the caller's
 * transaction:
 *
 * - node moves, grouped by (state, message), one UPDATE each;
 * - signals: one action per node through the action engine's rules (origin `plan`; approval by
 *   DROVER_APPROVAL_KINDS unless the whole plan was approved, then the actions are created
 *   approved by that operator; offered to the devices its command's health policy admits,
 *   Online and Degraded by default; cancel; LOST). The action's id
 *   is the node's id, so the node points at it in the same statement that marks it SignalSent;
 * - the plan's unfinished actions cancelled when it is cancelled or runs out of time;
 * - events on `Plan/<id>` by `plan-controller`, and `ActionCreated` per action.
 *
 * After commit (`afterPass`): events published, the signalled devices' held polls woken, agents
 * told of cancels.
 *
 * When it runs: inside the transaction of a create, an approval or a cancel (the answer shows
 * the result); 100 ms after a plan's action ended (`watchPlans`, debounced: a burst is one pass
 * per plan); and on every controllers' tick for every open plan (deadlines, devices that came
 * Online or stopped qualifying). A pass that would change nothing is found outside any
 * transaction first and writes nothing. Passes run one at a time per server; with PostgreSQL
 * one leader runs the controllers (server/controllers.ts).
 */
import type { ServerContext } from "../context";
import { Prisma, type Db, type Tx } from "../db";
import { publishEvents, recordEvents, type EventRow, type NewEvent } from "../events/events";
import { topics } from "../bus";
import { inChunks } from "../lib/chunks";
import { Contended, locks, transaction } from "../lib/transactions";
import { afterCancel, cancelActionInTx, insertActionRowsInTx, needsApproval, type CancelOutcome } from "../actions/actions";
import { watchEndedActions } from "../actions/ended-watch";
import { inheritedDecision, requestForRef } from "../requests/requests";
import { decidePass, type EngineDevice, type EngineNode, type GroupCounts, type PassDecision } from "../../lib/plan";
import { commandShape, PLAN_GROUPS, PlanSpec, type PlanGroup, type PlanSignalArgs } from "../../lib/plan-spec";
import { isTerminalPlanState, type PlanNodeState, type PlanState } from "../../lib/plan-status";
import { FINAL_ACTION_STATES, type ActionState } from "../../lib/action-status";

export const PLAN_CONTROLLER = "plan-controller";
const TX = { timeout: 60_000, maxWait: 30_000 } as const;

export interface PassEffects {
  events: EventRow[];
  /** Devices with a new PENDING_SCHEDULE action: their held polls are woken. */
  wake: string[];
  cancels: Pick<CancelOutcome, "events" | "deviceId" | "outcome">[];
}

export function afterPass(ctx: ServerContext, effects: PassEffects): void {
  publishEvents(ctx, effects.events);
  afterCancel(ctx, effects.cancels);
  for (const id of new Set(effects.wake)) ctx.bus.publish(topics.device(id), { at: Date.now() });
}

// ---------------------------------------------------------------------------------------
// Reading what a pass needs

/** What the engine reads of a device (lib/plan.ts EngineDevice). */
export const planDeviceSelect = {
  id: true,
  name: true,
  role: true,
  platform: true,
  lifecycle: true,
  decommissionRequestedAt: true,
  summary: true,
  lastSeen: true,
} satisfies Prisma.DeviceSelect;
type PlanDeviceRow = Prisma.DeviceGetPayload<{ select: typeof planDeviceSelect }>;

export function engineDevice(d: PlanDeviceRow, labels: Record<string, string> = {}): EngineDevice {
  return {
    id: d.id,
    name: d.name,
    role: d.role,
    platform: d.platform,
    lifecycle: d.lifecycle,
    decommissionRequested: d.decommissionRequestedAt !== null,
    labels,
    summary: d.summary,
    lastSeen: d.lastSeen?.toISOString() ?? null,
  };
}

interface Loaded {
  plan: Prisma.PlanGetPayload<{ include: { commands: true } }>;
  shapes: ReturnType<typeof commandShape>[];
  nodes: EngineNode[];
  decision: PassDecision;
}

const nodeSelect = { id: true, commandIndex: true, group: true, position: true, name: true, state: true, message: true, deviceId: true, actionId: true } satisfies Prisma.PlanNodeSelect;
type NodeRow = Prisma.PlanNodeGetPayload<{ select: typeof nodeSelect }>;

/**
 * What one pass needs and no more, so a pass costs the same for 10 nodes as for 10,000: the
 * nodes still SignalSent with their actions, the active command's counts by group and state,
 * and the few waiting nodes that could be signalled now (Online devices first, then the listed
 * order, never a device another plan is updating: one query), with their devices (and labels
 * where they were discovered by selector, to check them again).
 */
async function load(db: Db | Tx, planId: string, now: Date): Promise<Loaded | null> {
  const plan = await db.plan.findUnique({ where: { id: planId }, include: { commands: { orderBy: { index: "asc" } } } });
  if (!plan) return null;
  const state = plan.state as PlanState;
  const active = isTerminalPlanState(state) ? null : plan.activeCommand;
  const shapes = PlanSpec.parse(JSON.parse(plan.spec)).commands.map(commandShape);
  const [sentRows, grouped] = await Promise.all([
    db.planNode.findMany({ where: { planId, state: "SignalSent" }, select: nodeSelect }),
    active === null ? Promise.resolve([]) : db.planNode.groupBy({ by: ["group", "state"], where: { planId, commandIndex: active }, _count: { _all: true } }),
  ]);
  if (sentRows.length === 0 && active === null) return null;
  const actions = await inChunks(
    sentRows.flatMap((r) => (r.actionId ? [r.actionId] : [])),
    (chunk) => db.action.findMany({ where: { id: { in: chunk } }, select: { id: true, state: true, error: true, cancelRequestedBy: true } }),
  );
  const actionById = new Map(actions.map((a) => [a.id, { ...a, state: a.state as ActionState }]));
  const counts: GroupCounts = { controllers: {}, workers: {} };
  for (const g of grouped) counts[g.group as PlanGroup][g.state as PlanNodeState] = g._count._all;

  // The waiting nodes that could be signalled now: one controller, and as many workers as the
  // slots this pass could free (sent workers whose action has ended free theirs).
  const candidateRows: Record<PlanGroup, NodeRow[]> = { controllers: [], workers: [] };
  if (active !== null && !plan.cancelRequestedBy) {
    const shape = shapes[active]!;
    const ending = sentRows.filter((r) => r.commandIndex === active && r.group === "workers" && FINAL.has(actionById.get(r.actionId ?? "")?.state ?? "")).length;
    const limits: Record<PlanGroup, number> = {
      controllers: (counts.controllers.SignalPending ?? 0) > 0 ? 1 : 0,
      workers: (counts.workers.SignalPending ?? 0) > 0 ? Math.max(0, (shape.targets.workers?.limits?.concurrent ?? 1) - (counts.workers.SignalSent ?? 0) + ending) : 0,
    };
    for (const group of PLAN_GROUPS) {
      if (limits[group] === 0) continue;
      const ids = await db.$queryRaw<{ id: string }[]>(Prisma.sql`
        SELECT n."id" FROM "PlanNode" n LEFT JOIN "Device" d ON d."id" = n."deviceId"
        WHERE n."planId" = ${planId} AND n."commandIndex" = ${active} AND n."group" = ${group} AND n."state" = 'SignalPending'
          AND NOT EXISTS (SELECT 1 FROM "PlanNode" o WHERE o."deviceId" = n."deviceId" AND o."state" = 'SignalSent' AND o."planId" <> n."planId")
        ORDER BY CASE d."summary" WHEN 'Online' THEN 0 WHEN 'Degraded' THEN 1 ELSE 2 END, n."position"
        LIMIT ${limits[group]}`);
      const rows = await db.planNode.findMany({ where: { id: { in: ids.map((r) => r.id) } }, select: nodeSelect });
      const order = new Map(ids.map((r, i) => [r.id, i]));
      candidateRows[group] = rows.sort((a, b) => order.get(a.id)! - order.get(b.id)!);
    }
  }
  const candidateList = [...candidateRows.controllers, ...candidateRows.workers];
  const deviceIds = [...new Set([...sentRows, ...candidateList].flatMap((r) => (r.deviceId ? [r.deviceId] : [])))];
  // Labels only where a candidate was discovered by a selector (it is checked again before it is signalled).
  const labelled = candidateList.filter((r) => r.deviceId && shapes[r.commandIndex]?.targets[r.group as PlanGroup]?.discovery.selector).map((r) => r.deviceId!);
  const [devices, labels] = await Promise.all([
    inChunks(deviceIds, (chunk) => db.device.findMany({ where: { id: { in: chunk } }, select: planDeviceSelect })),
    inChunks(labelled, (chunk) => db.deviceLabel.findMany({ where: { deviceId: { in: chunk } } })),
  ]);
  const labelsOf = new Map<string, Record<string, string>>();
  for (const l of labels) (labelsOf.get(l.deviceId) ?? labelsOf.set(l.deviceId, {}).get(l.deviceId)!)[l.key] = l.value;
  const deviceById = new Map(devices.map((d) => [d.id, d]));
  const toNode = (r: NodeRow): EngineNode => {
    const d = r.deviceId ? deviceById.get(r.deviceId) : undefined;
    return {
      id: r.id,
      command: r.commandIndex,
      group: r.group as PlanGroup,
      position: r.position,
      name: r.name,
      state: r.state as PlanNodeState,
      message: r.message,
      device: d ? engineDevice(d, labelsOf.get(d.id)) : null,
      action: r.actionId ? (actionById.get(r.actionId) ?? null) : null,
      actionId: r.actionId,
      busyIn: null,
    };
  };
  const signalled = sentRows.map(toNode);
  const candidates = { controllers: candidateRows.controllers.map(toNode), workers: candidateRows.workers.map(toNode) };
  const decision = decidePass({
    plan: {
      id: plan.id,
      state,
      message: plan.message,
      activeCommand: plan.activeCommand,
      requireApproval: plan.requireApproval,
      approvedBy: plan.approvedBy,
      cancel: plan.cancelRequestedBy ? { by: plan.cancelRequestedBy, reason: plan.cancelReason } : null,
      deadline: plan.deadline,
      deadlineAt: plan.deadlineAt,
    },
    commands: plan.commands.map((c) => ({ index: c.index, state: c.state as PlanState, message: c.message, shape: shapes[c.index]! })),
    signalled,
    candidates,
    counts,
    now,
  });
  return { plan, shapes, nodes: [...signalled, ...candidates.controllers, ...candidates.workers], decision };
}

const FINAL = new Set<string>(FINAL_ACTION_STATES);

/** Devices another plan has SignalSent now: device id → that plan's id (two plans never signal one device at once). */
export async function busyElsewhere(db: Db | Tx, planId: string, deviceIds: string[]): Promise<Map<string, string>> {
  if (deviceIds.length === 0) return new Map();
  const rows = await inChunks([...new Set(deviceIds)], (chunk) =>
    db.planNode.findMany({ where: { deviceId: { in: chunk }, state: "SignalSent", planId: { not: planId } }, select: { deviceId: true, planId: true } }),
  );
  return new Map(rows.map((r) => [r.deviceId!, r.planId]));
}

/**
 * Two plans never signal one device: the candidate query's NOT EXISTS may have read before
 * another plan's pass committed its signal. Checked again once the devices' rows are locked
 * (`insertActionRowsInTx`, which also checks they are still Enrolled): when one was signalled
 * meanwhile, the pass runs again (`Contended`) and picks another.
 */
async function assertNotSignalledElsewhere(tx: Tx, planId: string, deviceIds: string[]): Promise<void> {
  const busy = await busyElsewhere(tx, planId, deviceIds);
  for (const [deviceId, other] of busy) throw new Contended(`device ${deviceId} was signalled by plan ${other}`);
}

const changes = (d: PassDecision) => d.plan !== null || d.commands.length > 0 || d.nodes.length > 0 || d.signals.length > 0 || d.cancelActions.length > 0;

// ---------------------------------------------------------------------------------------
// Applying a pass

/** One pass over a plan inside the caller's transaction; null when nothing changed. */
export async function passInTx(tx: Tx, ctx: ServerContext, planId: string, now: Date): Promise<PassEffects | null> {
  const loaded = await load(tx, planId, now);
  if (!loaded || !changes(loaded.decision)) return null;
  const { plan, shapes, nodes, decision } = loaded;
  const nodeById = new Map(nodes.map((n) => [n.id, n]));

  // Node moves (signals are marked below with their action).
  const signalled = new Set(decision.signals.map((s) => s.nodeId));
  const groups = new Map<string, { state: string; message: string; ids: string[] }>();
  for (const c of decision.nodes) {
    if (signalled.has(c.id) && c.state === "SignalSent") continue;
    const key = `${c.state}\u0000${c.message}`;
    (groups.get(key) ?? groups.set(key, { state: c.state, message: c.message, ids: [] }).get(key)!).ids.push(c.id);
  }
  for (const g of groups.values()) {
    await inChunks(g.ids, async (chunk) => [await tx.planNode.updateMany({ where: { id: { in: chunk } }, data: { state: g.state, message: g.message, updatedAt: now } })]);
  }

  // Signals: one action per node, its id the node's.
  const newEvents: NewEvent[] = [];
  const wake: string[] = [];
  if (decision.signals.length > 0) {
    const approvedBy = plan.requireApproval ? plan.approvedBy : null;
    // One request per plan command (issue 10): its waves of signals all join it, decided as a unit.
    const requests = new Map<number, Awaited<ReturnType<typeof requestForRef>>>();
    for (const { command } of decision.signals) {
      if (requests.has(command)) continue;
      const shape = shapes[command]!;
      const kind = shape.action?.kind ?? shape.kind;
      const req = await requestForRef(
        tx,
        {
          kind,
          args: JSON.stringify(shape.action?.args ?? { planId: plan.id, command, version: shape.version }),
          origin: "plan",
          ref: `plan/${plan.id}/command/${command}`,
          targetKind: "nodes",
          target: `plan ${plan.id} command ${command}`,
          createdBy: `plan:${plan.id}`,
          requireApproval: approvedBy !== null || needsApproval(ctx, kind, false),
        },
        now,
        approvedBy ? { decision: "Approved", decidedBy: approvedBy, decidedAt: plan.approvedAt ?? now, decisionReason: `approved with plan ${plan.id}${plan.approvalReason ? `: ${plan.approvalReason}` : ""}` } : undefined,
      );
      requests.set(command, req);
      if (req.created) newEvents.push({ ...req.created, actor: PLAN_CONTROLLER });
    }
    const rows = decision.signals.map((s, i) => {
      const shape = shapes[s.command]!;
      const node = nodeById.get(s.nodeId)!;
      const kind = shape.action?.kind ?? shape.kind;
      let args: Record<string, unknown>;
      if (shape.action) args = shape.action.args;
      else {
        const file = shape.platforms![node.device!.platform]!;
        const signal: PlanSignalArgs = {
          planId: plan.id,
          command: s.command,
          version: shape.version!,
          platform: node.device!.platform,
          url: file.url,
          ...(file.sha256 ? { sha256: file.sha256.toLowerCase() } : {}),
          ...(shape.forceupdate ? { forceupdate: true } : {}),
        };
        args = signal;
      }
      const request = requests.get(s.command)!;
      // A request already decided as a unit decides the nodes that join it later.
      const inherited = !approvedBy && needsApproval(ctx, kind, false) ? inheritedDecision(request, now) : null;
      const approval = !approvedBy && !inherited && needsApproval(ctx, kind, false);
      const state: ActionState = inherited?.state ?? (approval ? "PENDING_APPROVE" : "PENDING_SCHEDULE");
      if (state === "PENDING_SCHEDULE") wake.push(s.deviceId);
      newEvents.push({
        objectKind: "Action",
        objectName: s.nodeId,
        type: "ActionCreated",
        reason: state,
        message: `${kind} on ${s.name} for plan ${plan.id} (command ${s.command})${approval ? ", waiting for approval" : ""}`,
        actor: PLAN_CONTROLLER,
      });
      return {
        id: s.nodeId,
        deviceId: s.deviceId,
        kind,
        args: JSON.stringify(args),
        origin: "plan",
        state,
        requireApproval: approval || inherited !== null || approvedBy !== null,
        healthPolicy: shape.healthPolicy,
        createdBy: `plan:${plan.id}`,
        ...(approvedBy ? { decision: "Approved", decidedBy: approvedBy, decidedAt: plan.approvedAt ?? now, decisionReason: `approved with plan ${plan.id}${plan.approvalReason ? `: ${plan.approvalReason}` : ""}` } : {}),
        ...inherited?.data,
        requestId: request.id,
        // Distinct, ordered creation times keep "oldest createdAt first" well defined.
        createdAt: new Date(now.getTime() + i),
        updatedAt: now,
      };
    });
    if (await insertActionRowsInTx(tx, rows)) await assertNotSignalledElsewhere(tx, plan.id, rows.map((r) => r.deviceId));
    await inChunks([...signalled], async (chunk) => [
      await tx.planNode.updateMany({ where: { id: { in: chunk }, state: "SignalPending" }, data: { state: "SignalSent", message: "", updatedAt: now } }),
    ]);
    // The node's action id is its own id (one signal per node, ever).
    await inChunks([...signalled], async (chunk) => [await tx.$executeRaw(Prisma.sql`UPDATE "PlanNode" SET "actionId" = "id" WHERE "id" IN (${Prisma.join(chunk)})`)]);
  }

  // Commands and the plan.
  for (const c of decision.commands) {
    const terminal = isTerminalPlanState(c.state);
    await tx.planCommandStatus.update({
      where: { planId_index: { planId: plan.id, index: c.index } },
      data: { state: c.state, message: c.message, ...(terminal ? { endedAt: now } : {}) },
    });
  }
  if (decision.plan) {
    const p = decision.plan;
    const terminal = isTerminalPlanState(p.state);
    await tx.plan.update({ where: { id: plan.id }, data: { state: p.state, message: p.message, activeCommand: p.activeCommand, ...(terminal ? { endedAt: now } : {}) } });
    if (p.activeCommand !== null && p.activeCommand !== plan.activeCommand) {
      await tx.planCommandStatus.update({ where: { planId_index: { planId: plan.id, index: p.activeCommand } }, data: { startedAt: now } });
    }
  }

  // The plan ended by cancel or deadline: its unfinished actions are cancelled.
  const cancels: CancelOutcome[] = [];
  const why = plan.cancelRequestedBy ? `plan ${plan.id} cancelled` : `plan ${plan.id} passed its deadline`;
  for (const id of decision.cancelActions) cancels.push(await cancelActionInTx(tx, id, plan.cancelRequestedBy ?? PLAN_CONTROLLER, why, now));

  const events = await recordEvents(tx, [
    ...decision.events.map((e): NewEvent => ({ objectKind: "Plan", objectName: plan.id, type: e.type, reason: e.reason, message: e.message, actor: PLAN_CONTROLLER })),
    ...newEvents,
  ]);
  const effects: PassEffects = { events: [...events, ...cancels.flatMap((c) => c.events)], wake, cancels: cancels.map((c) => ({ ...c, events: [] })) };
  // Pass again at once when the next command became active (its nodes are signalled in the
  // same transaction), or when actions were cancelled (their nodes end in the same one).
  if (!decision.advanced && !cancels.some((c) => c.outcome === "cancelled")) return effects;
  const more = await passInTx(tx, ctx, planId, now);
  return more ? { events: [...effects.events, ...more.events], wake: [...effects.wake, ...more.wake], cancels: [...effects.cancels, ...more.cancels] } : effects;
}

// ---------------------------------------------------------------------------------------
// Running by itself: the tick and the watcher

const serial = new WeakMap<ServerContext, Promise<void>>();

/** Passes over every open plan (or those given): one not ended, or with a node still SignalSent. One run at a time per server. */
export function runPlans(ctx: ServerContext, ids?: string[], options: { look?: boolean } = {}): Promise<void> {
  const previous = serial.get(ctx) ?? Promise.resolve();
  const next = previous.catch(() => undefined).then(() => runOnce(ctx, ids, options.look ?? true));
  serial.set(ctx, next);
  return next;
}

const OPEN_STATES = ["NewPlan", "SchedulableWait", "Schedulable"];

async function runOnce(ctx: ServerContext, ids: string[] | undefined, look: boolean): Promise<void> {
  if (ids && ids.length === 0) return;
  const [open, settling] = await Promise.all([
    ctx.db.plan.findMany({ where: { state: { in: OPEN_STATES }, ...(ids ? { id: { in: ids } } : {}) }, select: { id: true }, orderBy: { createdAt: "asc" } }),
    ctx.db.planNode.findMany({ where: { state: "SignalSent", ...(ids ? { planId: { in: ids } } : {}) }, select: { planId: true }, distinct: ["planId"] }),
  ]);
  for (const id of new Set([...open.map((p) => p.id), ...settling.map((n) => n.planId)])) {
    try {
      await runOne(ctx, id, look);
    } catch (err) {
      ctx.log.error({ err, planId: id }, "plan controller failed");
    }
  }
}

async function runOne(ctx: ServerContext, id: string, look: boolean): Promise<void> {
  // A look without a transaction first: most ticks change nothing and hold no lock. (After an
  // action ended there is nearly always something to write: the watcher skips it.)
  if (look) {
    const first = await load(ctx.db, id, ctx.now());
    if (!first || !changes(first.decision)) return;
  }
  const effects = await transaction(ctx.db, (tx) => passInTx(tx, ctx, id, ctx.now()), { ...TX, locks: [locks.plan(id)] });
  if (effects) afterPass(ctx, effects);
}


/** Runs the plan controller shortly after one of its actions ended (a burst is one pass per plan). */
export function watchPlans(ctx: ServerContext, delayMs = 100): { stop(): void } {
  return watchEndedActions(
    ctx,
    "plan controller",
    async (ids) => {
      const nodes = await inChunks(ids, (chunk) => ctx.db.planNode.findMany({ where: { actionId: { in: chunk } }, select: { planId: true } }));
      await runPlans(ctx, [...new Set(nodes.map((n) => n.planId))], { look: false });
    },
    delayMs,
  );
}
