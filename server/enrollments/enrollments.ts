/**
 * Enrollment (seed 003, DESIGN.md §2): a device asks to join; an operator or an auto-approve
 * rule decides; approval creates the Device, and its credential goes out once, on the
 * agent's next ask. Only hashes of the secret and the token are stored.
 */
import { matchesSelector, type Labels } from "../../lib/label-selector";
import { enrollmentMachine, type EnrollmentState } from "../../lib/enrollment-status";
import { assertTransition } from "../../lib/state-machine";
import type { EnrollmentDecision, EnrollmentRequestBody } from "../../lib/protocol";
import type { ServerContext } from "../context";
import type { Prisma, Tx } from "../db";
import { conflict, notFound, unauthenticated, invalid } from "../errors";
import { newToken, sameHash, sha256 } from "../lib/crypto";
import { publishEvents, recordEvents, type EventRow, type NewEvent } from "../events/events";
import { topics } from "../bus";
import { DEVICE_TOKEN_PREFIX } from "../devices/credentials";
import { inChunks } from "../lib/chunks";

export const enrollmentSelect = {
  id: true,
  deviceName: true,
  labels: true,
  platform: true,
  role: true,
  agentVersion: true,
  status: true,
  decidedBy: true,
  decidedAt: true,
  reason: true,
  tokenIssuedAt: true,
  createdAt: true,
} satisfies Prisma.EnrollmentRequestSelect;

type EnrollmentRow = Prisma.EnrollmentRequestGetPayload<{ select: typeof enrollmentSelect }>;

export function presentEnrollment(row: EnrollmentRow) {
  return { ...row, labels: JSON.parse(row.labels) as Labels, status: row.status as EnrollmentState };
}
export type EnrollmentView = ReturnType<typeof presentEnrollment>;

export async function createEnrollment(ctx: ServerContext, body: EnrollmentRequestBody): Promise<{ enrollmentId: string; status: EnrollmentState }> {
  const secretHash = sha256(body.secret);
  const existing = await ctx.db.enrollmentRequest.findUnique({ where: { deviceName: body.deviceName } });
  if (existing) {
    if (sameHash(existing.secretHash, secretHash)) {
      return { enrollmentId: existing.id, status: existing.status as EnrollmentState };
    }
    if (existing.status !== "Denied") {
      throw conflict(`device name "${body.deviceName}" is already ${existing.status === "Approved" ? "enrolled" : "pending with another secret"}`);
    }
  } else if (await ctx.db.device.findUnique({ where: { name: body.deviceName }, select: { id: true } })) {
    throw conflict(`device name "${body.deviceName}" is already enrolled`);
  }

  const actor = `device:${body.deviceName}`;
  const data = {
    labels: JSON.stringify(body.labels),
    platform: body.platform,
    role: body.role,
    agentVersion: body.agentVersion,
    secretHash,
    status: "Pending",
    decidedBy: null,
    decidedAt: null,
    reason: null,
  };
  const rule = ctx.env.DROVER_AUTO_APPROVE;
  const auto = rule && matchesSelector(rule.requirements, body.labels) ? rule.text : null;
  const { row, events } = await ctx.db.$transaction(async (tx) => {
    // A denied name may ask again with a new secret: the same request goes back to Pending.
    if (existing) assertTransition(enrollmentMachine, "Denied", "Pending");
    const row = existing
      ? await tx.enrollmentRequest.update({ where: { id: existing.id, status: "Denied" }, data, select: { id: true } })
      : await tx.enrollmentRequest.create({ data: { deviceName: body.deviceName, ...data }, select: { id: true } });
    const newEvents: NewEvent[] = [
      { objectKind: "EnrollmentRequest", objectName: body.deviceName, type: "EnrollmentRequested", reason: "Pending", actor },
    ];
    // An auto-approve rule decides in the same transaction: no window where it is Pending.
    if (auto) {
      newEvents.push(
        ...(await decideOne(tx, { id: row.id, deviceName: body.deviceName, ...data }, "Approved", `auto-approve:${auto}`, `labels match ${auto}`, ctx.now())),
      );
    }
    return { row, events: await recordEvents(tx, newEvents) };
  });
  publishEvents(ctx, events);
  return { enrollmentId: row.id, status: auto ? "Approved" : "Pending" };
}

type EnrollmentFacts = { id: string; deviceName: string; labels: string; platform: string; role: string; agentVersion: string; status: string };

/** One Pending request to a decision, inside the caller's transaction; returns its events. */
async function decideOne(tx: Tx, e: EnrollmentFacts, decision: "Approved" | "Denied", actor: string, reason: string | undefined, now: Date): Promise<NewEvent[]> {
  const from = e.status as EnrollmentState;
  if (from !== "Pending") throw conflict(`enrollment request for "${e.deviceName}" is already ${from}`);
  assertTransition(enrollmentMachine, from, decision);
  // The status guard makes concurrent decisions safe: exactly one of them moves the row.
  const { count } = await tx.enrollmentRequest.updateMany({
    where: { id: e.id, status: "Pending" },
    data: { status: decision, decidedBy: actor, decidedAt: now, reason: reason ?? null },
  });
  if (count !== 1) throw conflict(`enrollment request for "${e.deviceName}" was decided concurrently`);
  const events: NewEvent[] = [
    {
      objectKind: "EnrollmentRequest",
      objectName: e.deviceName,
      type: decision === "Approved" ? "EnrollmentApproved" : "EnrollmentDenied",
      reason: decision,
      message: reason ?? "",
      actor,
    },
  ];
  if (decision === "Approved") {
    await createDevice(tx, e);
    events.push({ objectKind: "Device", objectName: e.deviceName, type: "DeviceEnrolled", reason: "Enrolled", actor });
  }
  return events;
}

async function createDevice(tx: Tx, enrollment: { id: string; deviceName: string; labels: string; platform: string; role: string; agentVersion: string }) {
  const labels = JSON.parse(enrollment.labels) as Labels;
  await tx.device.create({
    data: {
      name: enrollment.deviceName,
      platform: enrollment.platform,
      role: enrollment.role,
      agentVersion: enrollment.agentVersion,
      enrollmentId: enrollment.id,
      lifecycle: "Enrolled",
      labels: { create: Object.entries(labels).map(([key, value]) => ({ key, value })) },
    },
  });
}

/**
 * Approves or denies one or many Pending requests, all or nothing: if any id is unknown
 * or already decided, nothing changes (404 / 409).
 */
export async function decideEnrollments(
  ctx: ServerContext,
  ids: string[],
  decision: "Approved" | "Denied",
  actor: string,
  reason?: string,
): Promise<EnrollmentView[]> {
  if (ids.length === 0) throw invalid("ids: at least one enrollment id");
  const now = ctx.now();
  const unique = [...new Set(ids)];
  const { rows, events } = await ctx.db.$transaction(async (tx) => {
    const found = await inChunks(unique, (chunk) => tx.enrollmentRequest.findMany({ where: { id: { in: chunk } } }));
    const missing = unique.filter((id) => !found.some((f) => f.id === id));
    if (missing.length) throw notFound(`enrollment request ${missing.join(", ")}`);
    const newEvents: NewEvent[] = [];
    for (const e of found) newEvents.push(...(await decideOne(tx, e, decision, actor, reason, now)));
    const events: EventRow[] = await recordEvents(tx, newEvents);
    const rows = await inChunks(unique, (chunk) => tx.enrollmentRequest.findMany({ where: { id: { in: chunk } }, select: enrollmentSelect }));
    return { rows, events };
  });
  publishEvents(ctx, events);
  for (const id of unique) ctx.bus.publish(topics.enrollment(id));
  return rows.map(presentEnrollment);
}

/** The agent's view of its request. The token appears in the first answer after approval only. */
async function readDecision(ctx: ServerContext, id: string, secret: string): Promise<EnrollmentDecision & { pending: boolean }> {
  const row = await ctx.db.enrollmentRequest.findUnique({ where: { id } });
  if (!row) throw notFound(`enrollment request "${id}"`);
  if (!sameHash(row.secretHash, sha256(secret))) throw unauthenticated("wrong enrollment secret");
  const status = row.status as EnrollmentState;
  if (status !== "Approved" || row.tokenIssuedAt !== null) return { status, pending: status === "Pending" };

  const token = newToken(DEVICE_TOKEN_PREFIX);
  const issued = await ctx.db.$transaction(async (tx) => {
    const { count } = await tx.enrollmentRequest.updateMany({ where: { id, tokenIssuedAt: null }, data: { tokenIssuedAt: ctx.now() } });
    if (count !== 1) return false; // another request of this agent got it first
    await tx.device.update({ where: { enrollmentId: id }, data: { tokenHash: sha256(token) } });
    return true;
  });
  return issued ? { status, token, pending: false } : { status, pending: false };
}

export async function awaitDecision(
  ctx: ServerContext,
  id: string,
  secret: string,
  waitSeconds: number,
  signal: AbortSignal,
): Promise<EnrollmentDecision> {
  // Listen before the first read, so a decision landing in between still wakes us.
  let decided = false;
  let wake: (() => void) | null = null;
  const unsubscribe = ctx.bus.subscribe(topics.enrollment(id), () => {
    decided = true;
    wake?.();
  });
  try {
    const first = await readDecision(ctx, id, secret);
    if (!first.pending || waitSeconds <= 0) return strip(first);
    if (!decided) {
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          signal.removeEventListener("abort", done);
          resolve();
        };
        const timer = setTimeout(done, waitSeconds * 1000);
        wake = done;
        signal.addEventListener("abort", done);
      });
    }
    return strip(await readDecision(ctx, id, secret));
  } finally {
    unsubscribe();
  }
}

function strip(d: EnrollmentDecision & { pending: boolean }): EnrollmentDecision {
  return d.token ? { status: d.status, token: d.token } : { status: d.status };
}

export async function listEnrollments(ctx: ServerContext, q: { status?: EnrollmentState | undefined; limit: number }) {
  const rows = await ctx.db.enrollmentRequest.findMany({
    where: { status: q.status },
    orderBy: { createdAt: "desc" },
    take: q.limit,
    select: enrollmentSelect,
  });
  return rows.map(presentEnrollment);
}
