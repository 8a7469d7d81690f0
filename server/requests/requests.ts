/**
 * Action requests (issue 10): an operator's request over many devices (one create call, a plan
 * command, a workflow step attempt) is one object, approved or rejected as a unit, with the
 * per-device actions underneath. Its progress is counted from those actions when read (one
 * GROUP BY), never stored, so it cannot drift from them. Single-action approval
 * (actions.approve) is untouched: an action decided alone is simply no longer pending here.
 */
import { randomUUID } from "node:crypto";
import { actionMachine, type ActionState } from "../../lib/action-status";
import { assertTransition } from "../../lib/state-machine";
import { WAIT_REASONS, type WaitReason } from "../../lib/action-wait";
import type { ServerContext } from "../context";
import { Prisma, type Tx } from "../db";
import { conflict, notFound } from "../errors";
import { publishEvents, type NewEvent } from "../events/events";
import { topics } from "../bus";
import type { NewRequestRow } from "../devices/agent-store";
import { sqlDate } from "../lib/dialect-sql";
import { inChunks } from "../lib/chunks";
import { assertNotOwnApproval } from "../approvals/four-eyes";
import { waitsOf } from "../actions/waits";
import { outputGroups, type OutputGroupsPage, type OutputGroupsView } from "../actions/output-groups";

export const REQUEST_ORIGINS = ["user", "plan", "workflow", "rollout"] as const;
export type RequestOrigin = (typeof REQUEST_ORIGINS)[number];

/** device | selector | devices (names) | nodes (a plan command's). */
export type RequestTargetKind = "device" | "selector" | "devices" | "nodes";

export interface NewRequest {
  kind: string;
  args: string;
  origin: RequestOrigin;
  ref: string | null;
  targetKind: RequestTargetKind;
  target: string;
  createdBy: string;
  requireApproval: boolean;
}

export function newRequestRow(r: NewRequest, now: Date): NewRequestRow {
  return { id: randomUUID(), ...r, createdAt: now };
}

export function requestCreatedEvent(row: NewRequestRow, actions: number, actor: string): NewEvent {
  return {
    objectKind: "ActionRequest",
    objectName: row.id,
    type: "RequestCreated",
    reason: row.requireApproval ? "PendingApproval" : "Created",
    message: `${row.kind} on ${describeTarget(row.targetKind, row.target, actions)}`,
    actor,
  };
}

/** "1,996 devices matching site=lab", "dev-1", "3 devices: a, b, c". */
export function describeTarget(targetKind: string, target: string, total: number): string {
  const n = `${total.toLocaleString("en-US")} device${total === 1 ? "" : "s"}`;
  switch (targetKind) {
    case "device":
      return target;
    case "selector":
      return `${n} matching ${target || "(every device)"}`;
    default:
      return `${n} (${target})`;
  }
}

export interface RequestDecision {
  id: string;
  decision: string | null;
  decidedBy: string | null;
  decidedAt: Date | null;
  decisionReason: string | null;
}

/**
 * The request a controller adds actions to under `ref` (a plan command signals its nodes in
 * waves: all of them join one request), created on first use inside the caller's transaction.
 * `created` is its RequestCreated event to record with the rest.
 */
export async function requestForRef(tx: Tx, r: NewRequest & { ref: string }, now: Date, decided?: Omit<RequestDecision, "id">): Promise<RequestDecision & { created: NewEvent | null }> {
  const select = { id: true, decision: true, decidedBy: true, decidedAt: true, decisionReason: true } as const;
  const found = await tx.actionRequest.findFirst({ where: { ref: r.ref }, select, orderBy: { createdAt: "desc" } });
  if (found) return { ...found, created: null };
  const row = newRequestRow(r, now);
  const made = await tx.actionRequest.create({ data: { ...row, ...(decided ?? {}) }, select });
  return { ...made, created: requestCreatedEvent(row, 0, r.createdBy) };
}

/**
 * What a new action of an already decided request starts as: a request approved as a unit
 * covers the actions that join it later (a plan's next wave), and a rejected one refuses them.
 * Null: decided by no one yet, the action waits as its kind says.
 */
export function inheritedDecision(req: RequestDecision, now: Date): { state: ActionState; data: Record<string, unknown> } | null {
  const decided = { decidedBy: req.decidedBy, decidedAt: req.decidedAt ?? now };
  if (req.decision === "Approved") return { state: "PENDING_SCHEDULE", data: { decision: "Approved", ...decided, decisionReason: `approved with request ${req.id}` } };
  if (req.decision === "Rejected") return { state: "CANCELLED", data: { decision: "Rejected", ...decided, decisionReason: `rejected with request ${req.id}`, finishedAt: now } };
  return null;
}

// ---------------------------------------------------------------------------------------
// Reading

export const requestSelect = {
  id: true,
  kind: true,
  args: true,
  origin: true,
  ref: true,
  targetKind: true,
  target: true,
  createdBy: true,
  createdAt: true,
  requireApproval: true,
  decision: true,
  decidedBy: true,
  decidedAt: true,
  decisionReason: true,
} satisfies Prisma.ActionRequestSelect;
type RequestRow = Prisma.ActionRequestGetPayload<{ select: typeof requestSelect }>;

export interface RequestProgress {
  total: number;
  byState: Partial<Record<ActionState, number>>;
  done: number;
  /** FAILED and LOST. */
  failed: number;
  cancelled: number;
  running: number;
  /** PENDING_APPROVE, PENDING_SCHEDULE and NEW: not started yet. */
  waiting: number;
  pendingApproval: number;
  /** The waiting ones counted by why they wait (lib/action-wait.ts), most first; only on `get`. */
  waitingBy: { reason: WaitReason; count: number; message: string }[] | null;
}

function progressOf(byState: Partial<Record<ActionState, number>>): RequestProgress {
  const n = (s: ActionState) => byState[s] ?? 0;
  return {
    total: Object.values(byState).reduce<number>((a, b) => a + (b ?? 0), 0),
    byState,
    done: n("DONE"),
    failed: n("FAILED") + n("LOST"),
    cancelled: n("CANCELLED"),
    running: n("RUNNING"),
    waiting: n("PENDING_APPROVE") + n("PENDING_SCHEDULE") + n("NEW"),
    pendingApproval: n("PENDING_APPROVE"),
    waitingBy: null,
  };
}

/** Counts by state for many requests: one GROUP BY (the (requestId, state) index). */
async function countsOf(ctx: ServerContext, ids: string[]): Promise<Map<string, Partial<Record<ActionState, number>>>> {
  const out = new Map<string, Partial<Record<ActionState, number>>>(ids.map((id) => [id, {}]));
  const groups = await inChunks(ids, (chunk) =>
    ctx.db.action.groupBy({ by: ["requestId", "state"], where: { requestId: { in: chunk } }, _count: { _all: true } }),
  );
  for (const g of groups) {
    const m = out.get(g.requestId!);
    if (m) m[g.state as ActionState] = g._count._all;
  }
  return out;
}

/** Why the request's unfinished actions wait, grouped by reason (waits.ts, one row per action read). */
async function waitingByReason(ctx: ServerContext, requestId: string): Promise<NonNullable<RequestProgress["waitingBy"]>> {
  const open = await ctx.db.action.findMany({
    where: { requestId, state: { in: ["PENDING_APPROVE", "PENDING_SCHEDULE", "NEW", "RUNNING"] } },
    select: { id: true, deviceId: true, kind: true, args: true, state: true, offeredAt: true, cancelRequestedAt: true, expiresAt: true, healthPolicy: true, createdAt: true },
  });
  const waits = await waitsOf(ctx, open);
  const by = new Map<WaitReason, { count: number; message: string }>();
  for (const w of waits.values()) {
    const g = by.get(w.reason);
    if (g) g.count++;
    else by.set(w.reason, { count: 1, message: w.message });
  }
  return [...by.entries()]
    .map(([reason, g]) => ({ reason, ...g }))
    .sort((a, b) => b.count - a.count || WAIT_REASONS.indexOf(a.reason) - WAIT_REASONS.indexOf(b.reason));
}

function present(row: RequestRow, progress: RequestProgress) {
  return {
    ...row,
    args: JSON.parse(row.args) as Record<string, unknown>,
    origin: row.origin as RequestOrigin,
    /** "exec on 1,996 devices matching site=lab". */
    summary: `${row.kind} on ${describeTarget(row.targetKind, row.target, progress.total)}`,
    progress,
  };
}
export type RequestView = ReturnType<typeof present>;

export interface RequestFilter {
  /** Only requests with at least one action still waiting for approval. */
  pendingApproval?: boolean | undefined;
  origin?: RequestOrigin | undefined;
}

/** Newest first, a page at a time (`cursor`: the last id of the previous page). */
export async function listRequests(ctx: ServerContext, filter: RequestFilter, page: { limit: number; cursor?: string | undefined }) {
  const where: Prisma.Sql[] = [];
  if (filter.pendingApproval) where.push(Prisma.sql`EXISTS (SELECT 1 FROM "Action" a WHERE a."requestId" = r."id" AND a."state" = 'PENDING_APPROVE')`);
  if (filter.origin) where.push(Prisma.sql`r."origin" = ${filter.origin}`);
  const cond = where.length ? Prisma.sql`WHERE ${Prisma.join(where, " AND ")}` : Prisma.empty;
  let after = Prisma.empty;
  if (page.cursor) {
    const c = await ctx.db.actionRequest.findUnique({ where: { id: page.cursor }, select: { createdAt: true } });
    if (!c) throw notFound(`cursor: request "${page.cursor}"`);
    const at = sqlDate(ctx.db, c.createdAt);
    after = Prisma.sql`${where.length ? Prisma.sql`AND` : Prisma.sql`WHERE`} (r."createdAt" < ${at} OR (r."createdAt" = ${at} AND r."id" < ${page.cursor}))`;
  }
  const [ids, [count]] = await Promise.all([
    ctx.db.$queryRaw<{ id: string }[]>`SELECT r."id" FROM "ActionRequest" r ${cond} ${after} ORDER BY r."createdAt" DESC, r."id" DESC LIMIT ${page.limit + 1}`,
    ctx.db.$queryRaw<{ n: number | bigint }[]>`SELECT COUNT(*) AS n FROM "ActionRequest" r ${cond}`,
  ]);
  const pageIds = ids.slice(0, page.limit).map((r) => r.id);
  const rows = await ctx.db.actionRequest.findMany({ where: { id: { in: pageIds } }, select: requestSelect });
  const byId = new Map(rows.map((r) => [r.id, r]));
  const counts = await countsOf(ctx, pageIds);
  const items = pageIds.map((id) => present(byId.get(id)!, progressOf(counts.get(id) ?? {})));
  return { items, total: Number(count?.n ?? 0), nextCursor: ids.length > page.limit ? (pageIds[pageIds.length - 1] ?? null) : null };
}

/** One request with its progress, the waiting ones by reason included. */
export async function getRequest(ctx: ServerContext, id: string): Promise<RequestView> {
  const row = await ctx.db.actionRequest.findUnique({ where: { id }, select: requestSelect });
  if (!row) throw notFound(`request "${id}"`);
  const [counts, waitingBy] = await Promise.all([countsOf(ctx, [id]), waitingByReason(ctx, id)]);
  return present(row, { ...progressOf(counts.get(id) ?? {}), waitingBy });
}

/** The request's actions grouped by identical (state, error, output), largest group first (server/actions/output-groups.ts). */
export async function requestOutputs(ctx: ServerContext, id: string, page: OutputGroupsPage): Promise<OutputGroupsView & { request: string }> {
  const row = await ctx.db.actionRequest.findUnique({ where: { id }, select: { id: true } });
  if (!row) throw notFound(`request "${id}"`);
  return { request: id, ...(await outputGroups(ctx, { requestId: id }, page)) };
}

// ---------------------------------------------------------------------------------------
// Deciding

export interface RequestDecisionResult {
  request: RequestView;
  /** How many actions this decision moved (those already decided one by one are left as they are). */
  moved: number;
}

/**
 * Approve (→ PENDING_SCHEDULE) or reject (→ CANCELLED) every PENDING_APPROVE action of the
 * request as a unit: one transaction, one guarded UPDATE … RETURNING (so an action another
 * operator decided alone a moment before is not touched, and two operators deciding the same
 * request at once move each action exactly once), one event per action moved as a single
 * approval writes, and one on the request. 409 when none waits for approval: nothing changes.
 * The answer's progress has the counts only (why the rest wait is a `get` away).
 */
export async function decideRequest(ctx: ServerContext, id: string, decision: "Approved" | "Rejected", actor: string, reason?: string): Promise<RequestDecisionResult> {
  const to: ActionState = decision === "Approved" ? "PENDING_SCHEDULE" : "CANCELLED";
  // Every row moved makes this one move (the UPDATE takes PENDING_APPROVE rows only): checked once against the table.
  assertTransition(actionMachine, "PENDING_APPROVE", to);
  const now = ctx.now();
  const why = reason ?? null;
  const req = await ctx.db.actionRequest.findUnique({ where: { id }, select: { kind: true, createdBy: true } });
  if (!req) throw notFound(`request "${id}"`);
  // Before any write; who made a request never changes, so checking outside the commit is safe.
  if (decision === "Approved") await assertNotOwnApproval(ctx, ctx.db, actor, [{ what: `request ${id}`, owner: req.createdBy }]);
  const actionEvent = (actionId: string): NewEvent => ({
    objectKind: "Action",
    objectName: actionId,
    type: decision === "Approved" ? "ActionApproved" : "ActionRejected",
    reason: to,
    message: reason ? `with request ${id}: ${reason}` : `with request ${id}`,
    actor,
  });
  const requestEvent = (moved: number): NewEvent => ({
    objectKind: "ActionRequest",
    objectName: id,
    type: decision === "Approved" ? "RequestApproved" : "RequestRejected",
    reason: to,
    message: `${moved} ${req.kind} action${moved === 1 ? "" : "s"} ${decision === "Approved" ? "approved" : "rejected"}${reason ? `: ${reason}` : ""}`,
    actor,
  });
  // One commit of the agent store (prepared statements).
  const { moved, events } = await ctx.fast.decideRequest({ requestId: id, to, decision, actor, reason: why, actionEvent, requestEvent }, now);
  if (moved.length === 0) throw conflict(`request ${id} has no action waiting for approval: it was already decided`);
  publishEvents(ctx, events);
  if (decision === "Approved") for (const d of new Set(moved.map((m) => m.deviceId))) ctx.bus.publish(topics.device(d), { at: Date.now() });
  const row = await ctx.db.actionRequest.findUniqueOrThrow({ where: { id }, select: requestSelect });
  const counts = await countsOf(ctx, [id]);
  return { request: present(row, progressOf(counts.get(id) ?? {})), moved: moved.length };
}
