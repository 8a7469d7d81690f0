/**
 * Events: every state change writes one row (object, type, reason, actor, time). The rows
 * are the audit log; publishing them after commit drives the console's live updates.
 */
import type { ServerContext } from "../context";
import type { Prisma, Tx } from "../db";
import { topics } from "../bus";

export const OBJECT_KINDS = ["Device", "EnrollmentRequest", "Action", "ActionRequest", "Fleet", "Plan", "Workflow", "User", "Server"] as const;
export type ObjectKind = (typeof OBJECT_KINDS)[number];

export interface NewEvent {
  objectKind: ObjectKind;
  objectName: string;
  type: string;
  reason: string;
  message?: string;
  actor: string;
}

export const eventSelect = {
  id: true,
  time: true,
  objectKind: true,
  objectName: true,
  type: true,
  reason: true,
  message: true,
  actor: true,
} satisfies Prisma.EventSelect;
export type EventRow = Prisma.EventGetPayload<{ select: typeof eventSelect }>;

/** Writes events inside the caller's transaction; publish the result after commit. */
export async function recordEvents(tx: Tx, events: NewEvent[]): Promise<EventRow[]> {
  if (events.length === 0) return [];
  // One statement for all of them; ids come back in insertion order.
  const rows = await tx.event.createManyAndReturn({ data: events.map((e) => ({ ...e, message: e.message ?? "" })), select: eventSelect });
  return rows.sort((a, b) => a.id - b.id);
}

export function publishEvents(ctx: ServerContext, rows: EventRow[]): void {
  for (const row of rows) ctx.bus.publish(topics.events, row);
}

export interface EventQuery {
  kind?: string | undefined;
  name?: string | undefined;
  since?: Date | undefined;
  afterId?: number | undefined;
  /** Pagination backwards: events older than this id. */
  beforeId?: number | undefined;
  limit: number;
}

export async function listEvents(ctx: ServerContext, q: EventQuery): Promise<EventRow[]> {
  const id: Prisma.IntFilter = {};
  if (q.afterId !== undefined) id.gt = q.afterId;
  if (q.beforeId !== undefined) id.lt = q.beforeId;
  return ctx.db.event.findMany({
    where: {
      objectKind: q.kind,
      objectName: q.name,
      time: q.since ? { gte: q.since } : undefined,
      id,
    },
    orderBy: { id: q.afterId !== undefined ? "asc" : "desc" },
    take: q.limit,
    select: eventSelect,
  });
}
