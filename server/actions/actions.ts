/**
 * Node actions, the operator side (seed 004, DESIGN.md §4): create for a device or a label
 * selector, approve or reject (one or many, exactly one transition wins), cancel, read.
 * Every transition is checked against lib/action-status.ts and written with its event.
 */
import { randomUUID } from "node:crypto";
import { actionMachine, canMove, FINAL_ACTION_STATES, type ActionState } from "../../lib/action-status";
import { assertTransition } from "../../lib/state-machine";
import { parseSelector } from "../../lib/label-selector";
import type { ServerContext } from "../context";
import type { Prisma, Tx } from "../db";
import { conflict, invalid, notFound } from "../errors";
import { publishEvents, recordEvents, type EventRow, type NewEvent } from "../events/events";
import { topics } from "../bus";
import { selectorWhere } from "../devices/queries";
import { inChunks } from "../lib/chunks";
import { Contended, lockRows, transaction } from "../lib/transactions";
import { wakeDevicesWithPendingActions } from "./scheduling";
import { actionNotes, capabilitiesIn, type ActionNotes } from "./waits";
import { agentRefusal } from "../../lib/action-capability";
import type { NewActionRow, NewRequestRow } from "../devices/agent-store";
import { newRequestRow, requestCreatedEvent } from "../requests/requests";
import { checkAgentUpgradeArgs } from "../agent-dist/versions";
import { DEFAULT_HEALTH_POLICY, type HealthPolicy } from "../../lib/health-policy";
import { assertNotOwnApproval } from "../approvals/four-eyes";
import type { IdempotencyClaim } from "../idempotency/idempotency";

export const actionSelect = {
  id: true,
  kind: true,
  args: true,
  origin: true,
  state: true,
  requireApproval: true,
  healthPolicy: true,
  createdBy: true,
  decision: true,
  decidedBy: true,
  decidedAt: true,
  decisionReason: true,
  offeredAt: true,
  cancelRequestedAt: true,
  cancelRequestedBy: true,
  startedAt: true,
  finishedAt: true,
  error: true,
  expiresAt: true,
  requestId: true,
  rerunOf: true,
  createdAt: true,
  updatedAt: true,
  deviceId: true,
  device: { select: { name: true, summary: true } },
} satisfies Prisma.ActionSelect;
type ActionRow = Prisma.ActionGetPayload<{ select: typeof actionSelect }>;

export function presentAction(row: ActionRow & { output?: string | null }, notes: ActionNotes | undefined = undefined) {
  const { device, args, deviceId: _, ...rest } = row;
  return {
    ...rest,
    state: row.state as ActionState,
    args: JSON.parse(args) as Record<string, unknown>,
    device: device.name,
    deviceSummary: device.summary,
    waiting: notes?.waiting ?? null,
    refusal: notes?.refusal ?? null,
  };
}
export type ActionView = ReturnType<typeof presentAction>;

/** The rows as views, each unfinished one with why it waits (waits.ts). */
export async function presentActions(ctx: ServerContext, rows: (ActionRow & { output?: string | null })[]): Promise<ActionView[]> {
  const waits = await actionNotes(ctx, rows);
  return rows.map((r) => presentAction(r, waits.get(r.id)));
}

export interface CreateActionInput {
  device?: string | undefined;
  labelSelector?: string | undefined;
  kind: string;
  args: Record<string, unknown>;
  requireApproval?: boolean | undefined;
  /** Not started (RUNNING) within this many seconds: cancelled by the server. */
  expiresInSeconds?: number | undefined;
  /** The least healthy device summary it goes to (lib/health-policy.ts): Degraded by default. */
  healthPolicy?: HealthPolicy | undefined;
  /** Server-side only (rerunAction): the ended action this one runs again. */
  rerunOf?: string | undefined;
}

/** The devices an action request targets: one by name, or every Enrolled device a selector matches. */
export async function resolveTargets(ctx: ServerContext, input: Pick<CreateActionInput, "device" | "labelSelector">, limit = 10_000) {
  if ((input.device === undefined) === (input.labelSelector === undefined)) {
    throw invalid("give either device or labelSelector");
  }
  if (input.device !== undefined) {
    const found = await ctx.db.device.findUnique({
      where: { name: input.device },
      select: { id: true, name: true, lifecycle: true, summary: true, credentialRevokedAt: true },
    });
    if (!found) throw notFound(`device "${input.device}"`);
    const { credentialRevokedAt, ...d } = found;
    if (d.lifecycle !== "Enrolled") throw conflict(`device "${d.name}" is ${d.lifecycle}: actions go to Enrolled devices only`);
    if (credentialRevokedAt !== null) throw conflict(`device "${d.name}" had its credential revoked: its agent cannot take actions`);
    return [d];
  }
  // Issue 23: a device whose credential is revoked is left out, as a Decommissioning one.
  return ctx.db.device.findMany({
    where: { AND: [...selectorWhere(parseSelector(input.labelSelector ?? "")), { lifecycle: "Enrolled", credentialRevokedAt: null }] },
    select: { id: true, name: true, lifecycle: true, summary: true },
    orderBy: { name: "asc" },
    take: limit,
  });
}

/** Which of these devices' agents will refuse `kind` with `args` (lib/action-capability.ts): the count and the first 20, with why. */
export async function refusalsFor(ctx: ServerContext, targets: { id: string }[], kind: string, args: Record<string, unknown>): Promise<{ total: number; devices: { name: string; reason: string }[] }> {
  const rows = await inChunks(
    targets.map((t) => t.id),
    (chunk) => ctx.db.device.findMany({ where: { id: { in: chunk } }, select: { name: true, reported: true }, orderBy: { name: "asc" } }),
  );
  const refused = rows.flatMap((d) => {
    const reason = agentRefusal(capabilitiesIn(d.reported), kind, args);
    return reason ? [{ name: d.name, reason }] : [];
  });
  return { total: refused.length, devices: refused.slice(0, 20) };
}

export function needsApproval(ctx: ServerContext, kind: string, requested: boolean | undefined): boolean {
  return requested === true || ctx.env.DROVER_APPROVAL_KINDS.includes(kind);
}

/** `claim`: the request's idempotency key (issue 22), written in the same commit as the request and its actions. */
export async function createActions(ctx: ServerContext, input: CreateActionInput, actor: string, claim?: IdempotencyClaim): Promise<ActionView[]> {
  const origin = "user";
  // agentupgrade names a build this server must hold (issue 12).
  await checkAgentUpgradeArgs(ctx, input.kind, input.args);
  const targets = await resolveTargets(ctx, input);
  if (targets.length === 0) throw invalid(`labelSelector "${input.labelSelector}" matches no Enrolled device`);
  const approval = needsApproval(ctx, input.kind, input.requireApproval);
  const state: ActionState = approval ? "PENDING_APPROVE" : "PENDING_SCHEDULE";
  const now = ctx.now();
  const args = JSON.stringify(input.args);
  const expiresAt = input.expiresInSeconds ? new Date(now.getTime() + input.expiresInSeconds * 1000) : null;
  // One request per create call (issue 10), whatever the number of devices: decided as a unit.
  const request = newRequestRow(
    {
      kind: input.kind,
      args,
      origin,
      ref: null,
      targetKind: input.device !== undefined ? "device" : "selector",
      target: input.device ?? input.labelSelector ?? "",
      createdBy: actor,
      requireApproval: approval,
    },
    now,
  );
  const rows: NewActionRow[] = targets.map((d, i) => ({
    id: randomUUID(),
    deviceId: d.id,
    kind: input.kind,
    args,
    origin,
    state,
    requireApproval: approval,
    createdBy: actor,
    // Distinct, ordered creation times keep "oldest createdAt first" well defined.
    createdAt: new Date(now.getTime() + i),
    expiresAt,
    requestId: request.id,
    rerunOf: input.rerunOf ?? null,
    healthPolicy: input.healthPolicy ?? DEFAULT_HEALTH_POLICY,
  }));
  const newEvents: NewEvent[] = rows.map((r, i) => ({
    objectKind: "Action",
    objectName: r.id,
    type: "ActionCreated",
    reason: state,
    message: `${input.kind} on ${targets[i]!.name}${input.rerunOf ? `, a rerun of ${input.rerunOf}` : ""}${approval ? ", waiting for approval" : ""}${expiresAt ? `, expires ${expiresAt.toISOString()}` : ""}`,
    actor,
  }));
  newEvents.unshift(requestCreatedEvent(request, rows.length, actor));
  // SQLite: prepared inserts in one group commit (1,000 actions ≈ 20 ms; through Prisma ≈ 500 ms).
  const idempotency = claim ? { ...claim, ref: `ActionRequest/${request.id}` } : undefined;
  const events = await ctx.fast.insertActions(rows, newEvents, now, request, idempotency);
  publishEvents(ctx, events);
  if (!approval) for (const d of targets) ctx.bus.publish(topics.device(d.id), { at: Date.now() });
  // The rows as written: nothing else has touched them yet that the answer should show.
  return presentActions(
    ctx,
    rows.map((r, i) => ({
      ...r,
      expiresAt: r.expiresAt ?? null,
      requestId: request.id,
      rerunOf: r.rerunOf ?? null,
      healthPolicy: r.healthPolicy ?? DEFAULT_HEALTH_POLICY,
      decision: null,
      decidedBy: null,
      decidedAt: null,
      decisionReason: null,
      offeredAt: null,
      cancelRequestedAt: null,
      cancelRequestedBy: null,
      startedAt: null,
      finishedAt: null,
      error: null,
      updatedAt: now,
      device: { name: targets[i]!.name, summary: targets[i]!.summary },
    })),
  );
}

/**
 * The devices about to get actions, locked until the caller commits (PostgreSQL: their rows;
 * lib/transactions.ts) and checked again: actions go to Enrolled devices only, and a
 * decommission committed after the caller read them would otherwise never see these actions
 * to cancel. When one has moved, the caller's transaction runs again (`Contended`) and decides
 * on what it reads then.
 */
async function holdTargets(tx: Tx, deviceIds: string[]): Promise<boolean> {
  const held = await lockRows(tx, "Device", deviceIds, "id", ["name", "lifecycle", "decommissionRequestedAt", "credentialRevokedAt"]);
  if (!held) return false;
  const gone = held.find((d) => d.lifecycle !== "Enrolled" || d.decommissionRequestedAt !== null || d.credentialRevokedAt !== null);
  if (gone) throw new Contended(`device ${String(gone.name)} is no longer Enrolled (or its credential was revoked)`);
  return true;
}

/**
 * Action rows written inside the caller's transaction, their devices held first
 * (`holdTargets`): the one place action rows are inserted through Prisma (the agent store
 * has its prepared inserts). Answers whether the devices' rows are locked until the caller
 * commits (PostgreSQL), so the caller may check more of them (a plan: no other plan signals them).
 */
export async function insertActionRowsInTx(tx: Tx, rows: Prisma.ActionCreateManyInput[]): Promise<boolean> {
  if (rows.length === 0) return false;
  const held = await holdTargets(tx, rows.map((r) => r.deviceId));
  await tx.action.createMany({ data: rows });
  return held;
}

/**
 * A request and its actions written inside the caller's transaction (`insertActionRowsInTx`).
 * The caller records the events (ActionCreated per action, RequestCreated) with its own.
 */
export async function insertActionsInTx(tx: Tx, request: NewRequestRow, rows: NewActionRow[], now: Date): Promise<void> {
  if (rows.length === 0) return;
  await tx.actionRequest.create({ data: request });
  await insertActionRowsInTx(tx, rows.map((r) => ({ ...r, updatedAt: now })));
}

export interface ActionForDevice {
  device: { id: string; name: string };
  kind: string;
  args: Record<string, unknown>;
  origin: "workflow";
  requireApproval: boolean | undefined;
  healthPolicy: HealthPolicy | undefined;
  /** The action this one runs again (a rerun). */
  rerunOf: string | null;
  /** Who the action belongs to (Action.createdBy), e.g. workflow:<name>; the events' actor is the caller. */
  createdBy: string;
  /** The request's ref, e.g. workflow/<name>/<step>/run/<n>/attempt/<k>. */
  ref: string;
  /** The ActionCreated event's message after "<kind> on <device>". */
  note: string;
}

/**
 * One action for one Enrolled device inside the caller's transaction, by the rules createActions
 * applies (its own request, the approval policy, the health policy, agentupgrade's build held):
 * a workflow target retried by an operator (issue 21). Answers its id, its events (not yet
 * recorded) and whether the device's poll must be woken after commit.
 */
export async function createActionInTx(tx: Tx, ctx: ServerContext, input: ActionForDevice, actor: string, now: Date): Promise<{ id: string; events: NewEvent[]; wake: string | null }> {
  await checkAgentUpgradeArgs(ctx, input.kind, input.args);
  const approval = needsApproval(ctx, input.kind, input.requireApproval);
  const state: ActionState = approval ? "PENDING_APPROVE" : "PENDING_SCHEDULE";
  const args = JSON.stringify(input.args);
  const request = newRequestRow(
    { kind: input.kind, args, origin: input.origin, ref: input.ref, targetKind: "device", target: input.device.name, createdBy: input.createdBy, requireApproval: approval },
    now,
  );
  const row: NewActionRow = {
    id: randomUUID(),
    deviceId: input.device.id,
    kind: input.kind,
    args,
    origin: input.origin,
    state,
    requireApproval: approval,
    createdBy: input.createdBy,
    createdAt: now,
    requestId: request.id,
    rerunOf: input.rerunOf,
    healthPolicy: input.healthPolicy ?? DEFAULT_HEALTH_POLICY,
  };
  await insertActionsInTx(tx, request, [row], now);
  const events: NewEvent[] = [
    requestCreatedEvent(request, 1, actor),
    {
      objectKind: "Action",
      objectName: row.id,
      type: "ActionCreated",
      reason: state,
      message: `${input.kind} on ${input.device.name}${input.note}${input.rerunOf ? `, a rerun of ${input.rerunOf}` : ""}${approval ? ", waiting for approval" : ""}`,
      actor,
    },
  ];
  return { id: row.id, events, wake: approval ? null : input.device.id };
}

/**
 * Approve (→ PENDING_SCHEDULE) or reject (→ CANCELLED) PENDING_APPROVE actions, all or
 * nothing. Each row moves only if it is still PENDING_APPROVE, so when operators click at
 * once exactly one transition happens and the others get 409.
 */
export async function decideActions(ctx: ServerContext, ids: string[], decision: "Approved" | "Rejected", actor: string, reason?: string): Promise<ActionView[]> {
  if (ids.length === 0) throw invalid("ids: at least one action id");
  const unique = [...new Set(ids)];
  const to: ActionState = decision === "Approved" ? "PENDING_SCHEDULE" : "CANCELLED";
  // Every row moved makes this one move (the UPDATE takes PENDING_APPROVE rows only): checked once against the table.
  assertTransition(actionMachine, "PENDING_APPROVE", to);
  const now = ctx.now();
  if (decision === "Approved" && ctx.env.DROVER_FOUR_EYES) {
    // Before any write; who asked for an action never changes, so checking outside the commit is safe.
    const found = await inChunks(unique, (chunk) => ctx.db.action.findMany({ where: { id: { in: chunk } }, select: { id: true, createdBy: true } }));
    const missing = unique.filter((id) => !found.some((f) => f.id === id));
    if (missing.length) throw notFound(`action ${missing.join(", ")}`);
    await assertNotOwnApproval(ctx, ctx.db, actor, found.map((a) => ({ what: `action ${a.id}`, owner: a.createdBy })));
  }
  const event = (id: string): NewEvent => ({
    objectKind: "Action",
    objectName: id,
    type: decision === "Approved" ? "ActionApproved" : "ActionRejected",
    reason: to,
    message: reason ?? "",
    actor,
  });
  // One commit of the agent store (prepared statements): read and locked, checked, moved by guarded UPDATEs, with their events.
  // Locked in one order (by id), so two decisions over the same actions wait for each other rather than deadlock.
  const { moved, events } = await ctx.fast.decideActions({ ids: [...unique].sort(), to, decision, actor, reason: reason ?? null, event }, now);
  const deviceIds = moved.map((m) => m.deviceId);
  publishEvents(ctx, events);
  if (decision === "Approved") for (const id of new Set(deviceIds)) ctx.bus.publish(topics.device(id), { at: Date.now() });
  const rows = await inChunks(unique, (chunk) => ctx.db.action.findMany({ where: { id: { in: chunk } }, select: actionSelect, orderBy: { createdAt: "asc" } }));
  return presentActions(ctx, rows);
}

/**
 * Cancel: a pending action is CANCELLED at once; a NEW or RUNNING one is flagged, the agent is
 * told in its long-poll and reports CANCELLED itself.
 */
export async function cancelAction(ctx: ServerContext, id: string, actor: string, reason?: string): Promise<ActionView> {
  const now = ctx.now();
  const { events, deviceId, outcome } = await transaction(ctx.db, async (tx) => {
    const r = await cancelActionInTx(tx, id, actor, reason, now);
    if (r.outcome === "missing") throw notFound(`action "${id}"`);
    if (r.outcome === "finished") throw conflict(`action ${id} is ${r.state}: it has already finished`);
    return r;
  });
  afterCancel(ctx, [{ events, deviceId, outcome }]);
  if (outcome === "cancelled" && events.length > 0 && ctx.env.DROVER_ACTION_CONCURRENCY.length > 0) await wakeDevicesWithPendingActions(ctx);
  return getAction(ctx, id);
}

export interface CancelOutcome {
  /** cancelled: it was pending, now CANCELLED; requested: the agent is told (already told: no event); finished / missing: nothing done. */
  outcome: "cancelled" | "requested" | "finished" | "missing";
  state: ActionState | null;
  deviceId: string | null;
  events: EventRow[];
}

/** The cancel itself, inside the caller's transaction (a plan cancels its unfinished actions in its own). */
export async function cancelActionInTx(tx: Tx, id: string, actor: string, reason: string | undefined, now: Date): Promise<CancelOutcome> {
  const a = await tx.action.findUnique({ where: { id }, select: { state: true, deviceId: true, cancelRequestedAt: true } });
  if (!a) return { outcome: "missing", state: null, deviceId: null, events: [] };
  const from = a.state as ActionState;
  if (from === "PENDING_APPROVE" || from === "PENDING_SCHEDULE") {
    if (!canMove(from, "CANCELLED", "operator")) throw conflict(`action ${id} is ${from}: cannot cancel`);
    const { count } = await tx.action.updateMany({
      where: { id, state: from },
      data: { state: "CANCELLED", finishedAt: now, cancelRequestedAt: now, cancelRequestedBy: actor, ...(reason ? { error: reason } : {}) },
    });
    if (count !== 1) throw conflict(`action ${id} changed concurrently`);
    const events = await recordEvents(tx, [
      { objectKind: "Action", objectName: id, type: "ActionStateChanged", reason: "CANCELLED", message: `${from} → CANCELLED${reason ? `: ${reason}` : ""}`, actor },
    ]);
    return { outcome: "cancelled", state: "CANCELLED", deviceId: a.deviceId, events };
  }
  if (from === "NEW" || from === "RUNNING") {
    if (a.cancelRequestedAt) return { outcome: "requested", state: from, deviceId: a.deviceId, events: [] };
    await tx.action.update({ where: { id }, data: { cancelRequestedAt: now, cancelRequestedBy: actor } });
    const events = await recordEvents(tx, [
      { objectKind: "Action", objectName: id, type: "CancelRequested", reason: from, message: reason ?? "the agent is told in its long-poll", actor },
    ]);
    return { outcome: "requested", state: from, deviceId: a.deviceId, events };
  }
  return { outcome: "finished", state: from, deviceId: a.deviceId, events: [] };
}

/** After commit: publish the cancels' events and tell the agents holding a cancelled action. */
export function afterCancel(ctx: ServerContext, outcomes: Pick<CancelOutcome, "events" | "deviceId" | "outcome">[]): void {
  for (const o of outcomes) {
    publishEvents(ctx, o.events);
    if (o.outcome === "requested" && o.deviceId) ctx.bus.publish(topics.device(o.deviceId), { at: Date.now() });
  }
}

export async function getAction(ctx: ServerContext, id: string) {
  const row = await ctx.db.action.findUnique({ where: { id }, select: { ...actionSelect, output: true } });
  if (!row) throw notFound(`action "${id}"`);
  return (await presentActions(ctx, [row]))[0]!;
}

/** The reruns of an action, newest first, at most 20 (issue 10): links on its page. */
export async function actionReruns(ctx: ServerContext, id: string) {
  const rows = await ctx.db.action.findMany({ where: { rerunOf: id }, select: { id: true, state: true, createdAt: true, createdBy: true }, orderBy: { createdAt: "desc" }, take: 20 });
  return rows.map((r) => ({ ...r, state: r.state as ActionState }));
}

/**
 * Runs an ended action again (issue 10): a new action with the same device, kind, args and
 * approval requirement and health policy, made by createActions exactly as a new one is (its own request, the
 * approval policy, the device Enrolled, capability warnings, offered when Online), with
 * `rerunOf` set. An action that has not ended is 409: it may still run.
 */
export async function rerunAction(ctx: ServerContext, id: string, actor: string, claim?: IdempotencyClaim): Promise<ActionView> {
  const a = await ctx.db.action.findUnique({ where: { id }, select: { state: true, kind: true, args: true, requireApproval: true, healthPolicy: true, device: { select: { name: true } } } });
  if (!a) throw notFound(`action "${id}"`);
  if (!(FINAL_ACTION_STATES as readonly string[]).includes(a.state)) {
    throw conflict(`action ${id} is ${a.state}: only an ended action (${FINAL_ACTION_STATES.join(", ")}) can be run again`);
  }
  const [created] = await createActions(
    ctx,
    {
      device: a.device.name,
      kind: a.kind,
      args: JSON.parse(a.args) as Record<string, unknown>,
      requireApproval: a.requireApproval || undefined,
      healthPolicy: a.healthPolicy as HealthPolicy,
      rerunOf: id,
    },
    actor,
    claim,
  );
  return created!;
}

export interface ActionFilter {
  device?: string | undefined;
  state?: ActionState[] | undefined;
  kind?: string | undefined;
  labelSelector?: string | undefined;
  origin?: string | undefined;
  /** The operator's request (ActionRequest id) the actions belong to. */
  request?: string | undefined;
  /** Created at or after this moment (issue 10). */
  createdAfter?: Date | undefined;
  /** Created before this moment. */
  createdBefore?: Date | undefined;
}

export function actionWhere(f: ActionFilter): Prisma.ActionWhereInput {
  const and: Prisma.ActionWhereInput[] = [];
  if (f.device) and.push({ device: { name: f.device } });
  if (f.state?.length) and.push({ state: { in: f.state } });
  if (f.kind) and.push({ kind: f.kind });
  if (f.origin) and.push({ origin: f.origin });
  if (f.request) and.push({ requestId: f.request });
  // On the createdAt index, as the list's order is.
  if (f.createdAfter || f.createdBefore) and.push({ createdAt: { ...(f.createdAfter ? { gte: f.createdAfter } : {}), ...(f.createdBefore ? { lt: f.createdBefore } : {}) } });
  if (f.labelSelector) and.push({ device: { AND: selectorWhere(parseSelector(f.labelSelector)) } });
  return { AND: and };
}

/** Newest first, a page at a time: `cursor` is the last id of the previous page. */
export async function listActions(ctx: ServerContext, filter: ActionFilter, page: { limit: number; cursor?: string | undefined }) {
  const where = actionWhere(filter);
  const [rows, total] = await Promise.all([
    ctx.db.action.findMany({
      where,
      orderBy: [{ createdAt: "desc" }, { id: "desc" }],
      take: page.limit + 1,
      ...(page.cursor ? { cursor: { id: page.cursor }, skip: 1 } : {}),
      select: actionSelect,
    }),
    ctx.db.action.count({ where }),
  ]);
  const items = await presentActions(ctx, rows.slice(0, page.limit));
  return { items, total, nextCursor: rows.length > page.limit ? (items[items.length - 1]?.id ?? null) : null };
}

/**
 * Actions per state, and what waits for an operator: `pendingApprovals` actions, which are
 * `pendingDecisions` decisions (a request over many devices is decided at once, so it counts
 * once; an action made alone counts by itself).
 */
export async function actionCounts(ctx: ServerContext) {
  const [groups, waiting] = await Promise.all([
    ctx.db.action.groupBy({ by: ["state"], _count: { _all: true } }),
    ctx.db.action.groupBy({ by: ["requestId"], where: { state: "PENDING_APPROVE" }, _count: { _all: true } }),
  ]);
  const byState = Object.fromEntries(groups.map((g) => [g.state, g._count._all])) as Partial<Record<ActionState, number>>;
  const pendingDecisions = waiting.reduce((n, g) => n + (g.requestId === null ? g._count._all : 1), 0);
  return { byState, pendingApprovals: byState.PENDING_APPROVE ?? 0, pendingDecisions };
}
