/**
 * Enrollment (seed 003, DESIGN.md §2): a device asks to join; an operator or an auto-approve
 * rule decides; approval creates the Device, and its credential goes out on the agent's next
 * ask (or in the answer to the request itself, when a rule or token approves it at once). Only
 * hashes of the secret and the token are stored, and the credential sealed under the secret.
 */
import { randomUUID } from "node:crypto";
import { matchesSelector, type Labels } from "../../lib/label-selector";
import { enrollmentMachine, type EnrollmentState } from "../../lib/enrollment-status";
import { assertTransition } from "../../lib/state-machine";
import type { EnrollmentCreated, EnrollmentDecision, EnrollmentRequestBody, SystemFacts } from "../../lib/protocol";
import type { ServerContext } from "../context";
import type { Prisma, Tx } from "../db";
import { locks, transaction, type TransactionOptions } from "../lib/transactions";
import { AppError, conflict, notFound, unauthenticated, invalid } from "../errors";
import { newToken, sameHash, sha256 } from "../lib/crypto";
import { publishEvents, recordEvents, type EventRow, type NewEvent } from "../events/events";
import { topics } from "../bus";
import { DEVICE_TOKEN_PREFIX } from "../devices/credentials";
import { certificateColumns, checkCsr, signDeviceCertificate } from "../devices/certificates";
import { inChunks } from "../lib/chunks";
import { afterCommit, finishEffects, newEffects, type Effects } from "../fleets/render";
import { reconcileMembership } from "../fleets/membership";
import { refreshFleetStatus } from "../fleets/controller";
import { checkEnrollmentToken, claimEnrollmentToken, labelsWithToken } from "../enrollment-tokens/tokens";
import { openCredential, sealCredential, type Credential } from "./sealed-credential";

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
  clientAddress: true,
  firstSeenAt: true,
  lastSeenAt: true,
  lastSeenAddress: true,
  system: true,
  approvedLabels: true,
  tokenId: true,
  createdAt: true,
} satisfies Prisma.EnrollmentRequestSelect;

type EnrollmentRow = Prisma.EnrollmentRequestGetPayload<{ select: typeof enrollmentSelect }>;

/**
 * `clientAddress` is where the request first came from (at `firstSeenAt`); `lastSeen*` is the
 * agent's latest contact about it. Rows from before these columns read as seen once, at
 * creation. `approvedLabels`: what the approving operator added over the requested `labels`.
 */
export function presentEnrollment(row: EnrollmentRow) {
  const firstSeenAt = row.firstSeenAt ?? row.createdAt;
  return {
    ...row,
    labels: JSON.parse(row.labels) as Labels,
    status: row.status as EnrollmentState,
    firstSeenAt,
    lastSeenAt: row.lastSeenAt ?? firstSeenAt,
    lastSeenAddress: row.lastSeenAddress ?? row.clientAddress,
    system: row.system === null ? null : (JSON.parse(row.system) as SystemFacts),
    approvedLabels: row.approvedLabels === null ? null : (JSON.parse(row.approvedLabels) as Labels),
  };
}
export type EnrollmentView = ReturnType<typeof presentEnrollment>;

/** Pending requests only clear when an operator decides: tell the agent to come back in a minute. */
export const ENROLLMENT_RETRY_AFTER_SECONDS = 60;

/**
 * How stale "last seen" may get before an agent's look at its decision writes it again: a
 * waiting agent looks every 30 s or so, and a write per look is not worth a clock this fine.
 */
export const LAST_SEEN_RESOLUTION_MS = 60_000;

/** At most 64 labels on a device, as LabelsSchema allows an agent or an operator to set. */
const MAX_LABELS = 64;

/**
 * Refuses (429) a request that would stay Pending when its address, or the server, already
 * has as many Pending requests as allowed: one client must not be able to fill the inbox.
 * Run it outside the transaction to turn a flood away cheaply, and inside to be exact.
 */
async function assertRoomForPending(ctx: ServerContext, db: Tx | ServerContext["db"], clientAddress: string | undefined): Promise<void> {
  const perAddress = ctx.env.DROVER_ENROLLMENT_PENDING_PER_ADDRESS;
  const max = ctx.env.DROVER_ENROLLMENT_PENDING_MAX;
  if (clientAddress) {
    const fromAddress = await db.enrollmentRequest.count({ where: { status: "Pending", clientAddress } });
    if (fromAddress >= perAddress) {
      throw new AppError(
        "RATE_LIMITED",
        `${clientAddress} already has ${fromAddress} enrollment requests Pending, the most one address may have ` +
          `(DROVER_ENROLLMENT_PENDING_PER_ADDRESS=${perAddress}); an operator must approve or deny them first ` +
          `(drover deny enrollments --all-pending --address ${clientAddress})`,
        ENROLLMENT_RETRY_AFTER_SECONDS,
      );
    }
  }
  const pending = await db.enrollmentRequest.count({ where: { status: "Pending" } });
  if (pending >= max) {
    throw new AppError(
      "RATE_LIMITED",
      `the server already has ${pending} enrollment requests Pending, the most it keeps ` +
        `(DROVER_ENROLLMENT_PENDING_MAX=${max}); an operator must approve or deny them first (drover deny enrollments --all-pending)`,
      ENROLLMENT_RETRY_AFTER_SECONDS,
    );
  }
}

/** The Device columns that hold a credential: a token's hash, or a certificate's (issue 23). */
type CredentialColumns = { tokenHash: string } | ReturnType<typeof certificateColumns>;

/**
 * A new credential for a device: its certificate when the request has a csr and the server a CA
 * to sign it, else a token. `device` is read only for a certificate (it names the device).
 */
async function newCredential(ctx: ServerContext, csr: string | null, device: () => Promise<{ id: string; name: string }>): Promise<{ credential: Credential; columns: CredentialColumns }> {
  if (csr !== null && ctx.deviceCa) {
    const certificate = await signDeviceCertificate(ctx, await device(), csr);
    return { credential: { certificate: certificate.certPem }, columns: certificateColumns(certificate) };
  }
  const token = newToken(DEVICE_TOKEN_PREFIX);
  return { credential: { token }, columns: { tokenHash: sha256(token) } };
}

/**
 * A device asks to join. `clientAddress` is who sent it (server/lib/client-address.ts), kept
 * on the request (the first address, with when) and counted against the pending limits, with
 * the host facts it sent (`system`) for the operator to check the machine. Sending the same
 * request again (same name and secret) answers its current state and is never refused; it
 * moves "last seen" (address and time) and the facts, never the first address.
 *
 * A new request approved at once (an auto-approve rule, an auto-approving token) is answered with
 * its credential, issued in the same transaction: the agent needs no `GET /enrollments/{id}`
 * (one request and one transaction fewer a device: a third of an enrollment's cost, issue 22).
 * Sent again before the device is first seen, the same request answers the same credential, as
 * the GET does (readDecision).
 */
export async function createEnrollment(
  ctx: ServerContext,
  body: EnrollmentRequestBody,
  clientAddress?: string,
): Promise<EnrollmentCreated> {
  try {
    return await createEnrollmentOnce(ctx, body, clientAddress);
  } catch (error) {
    // The same request twice at once (an agent retrying while its first try waits for its
    // turn): both found no row and the second create lost on the unique name. Asked again, it
    // finds the first one's row: the same name and secret answer as before, another is 409.
    if (!isUniqueViolation(error)) throw error;
    return createEnrollmentOnce(ctx, body, clientAddress);
  }
}

function isUniqueViolation(error: unknown): boolean {
  return typeof error === "object" && error !== null && (error as { code?: unknown }).code === "P2002";
}

async function createEnrollmentOnce(
  ctx: ServerContext,
  body: EnrollmentRequestBody,
  clientAddress?: string,
): Promise<EnrollmentCreated> {
  const secretHash = sha256(body.secret);
  // Issue 23: a CSR is checked before anything is written; without one, a server that refuses tokens has nothing to give.
  if (body.csr !== undefined) await checkCsr(ctx, body.csr);
  else if (ctx.env.DROVER_DEVICE_TOKENS === "refuse") throw invalid("this server identifies devices by certificate (DROVER_DEVICE_TOKENS=refuse): send a csr with the enrollment request");
  const findRequest = () => ctx.db.enrollmentRequest.findUnique({ where: { deviceName: body.deviceName } });
  let existing = await findRequest();
  if (!existing && (await ctx.db.device.findUnique({ where: { name: body.deviceName }, select: { id: true } }))) {
    // A request and its device commit together: a device found where no request was, a moment
    // ago, is most likely this request's twin (an agent's retry) approved meanwhile. Read again.
    existing = await findRequest();
    if (!existing) throw conflict(`device name "${body.deviceName}" is already enrolled`);
  }
  if (existing) {
    if (sameHash(existing.secretHash, secretHash)) {
      await ctx.db.enrollmentRequest.update({
        where: { id: existing.id },
        data: {
          lastSeenAt: ctx.now(),
          lastSeenAddress: clientAddress ?? existing.lastSeenAddress,
          ...(body.system ? { system: JSON.stringify(body.system) } : {}),
          // An agent that lost its key before approval asks again with a new one.
          ...(body.csr !== undefined && existing.tokenIssuedAt === null ? { csr: body.csr } : {}),
        },
        select: { id: true },
      });
      const given = existing.status === "Approved" && existing.tokenIssuedAt !== null ? await givenAgain(ctx, existing.id, body.secret, existing.credentialSealed) : {};
      return { enrollmentId: existing.id, status: existing.status as EnrollmentState, ...given };
    }
    if (existing.status !== "Denied") {
      throw conflict(`device name "${body.deviceName}" is already ${existing.status === "Approved" ? "enrolled" : "pending with another secret"}`);
    }
  }

  // An enrollment token (issue 12) is checked before anything is written: refused (401/403), nothing is.
  const grant = body.enrollmentToken === undefined ? null : await checkEnrollmentToken(ctx, body.enrollmentToken);
  const labels = grant ? labelsWithToken(body.deviceName, body.labels, grant) : body.labels;
  const actor = `device:${body.deviceName}`;
  const seenAt = ctx.now();
  // A denied name asking again with a new secret is a new request: seen first from here, now.
  const data = {
    clientAddress: clientAddress ?? null,
    firstSeenAt: seenAt,
    lastSeenAt: seenAt,
    lastSeenAddress: clientAddress ?? null,
    system: body.system ? JSON.stringify(body.system) : null,
    approvedLabels: null,
    labels: JSON.stringify(labels),
    tokenId: grant?.id ?? null,
    platform: body.platform,
    role: body.role,
    agentVersion: body.agentVersion,
    secretHash,
    csr: body.csr ?? null,
    status: "Pending",
    decidedBy: null,
    decidedAt: null,
    reason: null,
  };
  const rule = ctx.env.DROVER_AUTO_APPROVE;
  // An auto-approving token, else the rule (on the labels with the token's), decides at once.
  const approver = grant?.autoApprove
    ? { actor: `enrollment-token:${grant.name}`, reason: `approved by enrollment token "${grant.name}" (${grant.prefix}…)` }
    : rule && matchesSelector(rule.requirements, labels)
      ? { actor: `auto-approve:${rule.text}`, reason: `labels match ${rule.text}` }
      : null;
  // Approved at once by a rule or a token, it never sits in the inbox: the pending limits do not apply.
  if (!approver) await assertRoomForPending(ctx, ctx.db, clientAddress);
  // A new request approved at once (and only such a one has `issued`): written decided, with its
  // device and the device's credential.
  const deviceId = randomUUID();
  const issued = approver && !existing ? await newCredential(ctx, body.csr ?? null, () => Promise.resolve({ id: deviceId, name: body.deviceName })) : null;
  // Approved at once, its writes are guarded by its own rows (the unique name, the token's use
  // counted in its UPDATE, the device it creates) and it settles the device's fleet against the
  // fleets' selectors (shared: such approvals run side by side). One left Pending counts the
  // inbox, an invariant over every Pending row: it locks the inbox, so two at once never both fit.
  const options: TransactionOptions = approver ? { sharedLocks: [locks.fleetSelectors] } : { locks: [locks.enrollmentInbox] };
  const { row, events, effects } = await transaction(ctx.db, async (tx: Tx) => {
    const effects = newEffects(ctx.statusSettings);
    // Again inside: concurrent requests from one address must not all slip under the limit.
    if (!approver) await assertRoomForPending(ctx, tx, clientAddress);
    // The use is counted here, so a request refused or rolled back counts none.
    if (grant) await claimEnrollmentToken(tx, grant, seenAt);
    // A denied name may ask again with a new secret: the same request goes back to Pending.
    if (existing) assertTransition(enrollmentMachine, "Denied", "Pending");
    // A new request an auto-approve rule decides is written decided, in the same transaction:
    // no window where it is Pending (Pending → Approved, as its two events say).
    const now = ctx.now();
    if (issued) assertTransition(enrollmentMachine, "Pending", "Approved");
    const decidedColumns =
      approver && issued
        ? { status: "Approved", decidedBy: approver.actor, decidedAt: now, reason: approver.reason, tokenIssuedAt: now, credentialSealed: sealCredential(body.secret, issued.credential) }
        : {};
    const row = existing
      ? await tx.enrollmentRequest.update({ where: { id: existing.id, status: "Denied" }, data, select: { id: true } })
      : await tx.enrollmentRequest.create({ data: { deviceName: body.deviceName, ...data, ...decidedColumns }, select: { id: true } });
    const newEvents: NewEvent[] = [
      { objectKind: "EnrollmentRequest", objectName: body.deviceName, type: "EnrollmentRequested", reason: "Pending", actor, ...(grant ? { message: `with enrollment token "${grant.name}" (${grant.prefix}…)` } : {}) },
    ];
    if (approver) {
      const created: string[] = [];
      const facts = { id: row.id, deviceName: body.deviceName, ...data };
      newEvents.push(
        ...(issued
          ? await decided(tx, facts, "Approved", approver.actor, approver.reason, created, {}, { id: deviceId, columns: issued.columns })
          : await decideOne(tx, facts, "Approved", approver.actor, approver.reason, now, created)),
      );
      await joinFleets(tx, ctx, created, now, approver.actor, effects);
      return { row, events: [...(await recordEvents(tx, newEvents)), ...(await finishEffects(tx, effects, now, approver.actor))], effects };
    }
    return { row, events: await recordEvents(tx, newEvents), effects };
  }, options);
  afterCommit(ctx, effects, events);
  if (effects.fleets.size) await refreshFleetStatus(ctx, [...effects.fleets]);
  return { enrollmentId: row.id, status: approver ? "Approved" : "Pending", ...issued?.credential };
}

type EnrollmentFacts = { id: string; deviceName: string; labels: string; platform: string; role: string; agentVersion: string; status: string };

export type DenyManyInput = { ids: string[] } | { allPending: true; clientAddress?: string | undefined };

/**
 * Clears the inbox: denies the given Pending requests (all or nothing, as `decideEnrollments`),
 * or every request Pending right now, optionally only those from one client address. One
 * transaction; one EnrollmentDenied event per request, so each device's history says why;
 * every agent waiting on a denied request is woken.
 */
export async function denyEnrollments(
  ctx: ServerContext,
  input: DenyManyInput,
  actor: string,
  reason?: string,
): Promise<{ count: number; items: EnrollmentView[] }> {
  if ("ids" in input) {
    const items = await decideEnrollments(ctx, input.ids, "Denied", actor, reason);
    return { count: items.length, items };
  }
  assertTransition(enrollmentMachine, "Pending", "Denied");
  const now = ctx.now();
  const where = { status: "Pending", ...(input.clientAddress !== undefined ? { clientAddress: input.clientAddress } : {}) };
  const { rows, events } = await transaction(ctx.db, async (tx) => {
    const targets = await tx.enrollmentRequest.findMany({ where, select: { id: true }, orderBy: { createdAt: "asc" } });
    const ids = targets.map((t) => t.id);
    // Inside one transaction nothing else decides these rows meanwhile; the status guard stays
    // anyway, so the rows written are exactly the rows read.
    await inChunks(ids, async (chunk) => {
      await tx.enrollmentRequest.updateMany({
        where: { id: { in: chunk }, status: "Pending" },
        data: { status: "Denied", decidedBy: actor, decidedAt: now, reason: reason ?? null },
      });
      return [];
    });
    const rows = await inChunks(ids, (chunk) => tx.enrollmentRequest.findMany({ where: { id: { in: chunk } }, select: enrollmentSelect }));
    const newEvents: NewEvent[] = rows.map((e) => ({
      objectKind: "EnrollmentRequest",
      objectName: e.deviceName,
      type: "EnrollmentDenied",
      reason: "Denied",
      message: reason ?? "",
      actor,
    }));
    // Seven columns an event: keep each insert under SQLite's bound-parameter limit.
    const events = await inChunks(newEvents, (chunk) => recordEvents(tx, chunk), 100);
    return { rows, events };
  });
  publishEvents(ctx, events);
  for (const row of rows) ctx.bus.publish(topics.enrollment(row.id));
  return { count: rows.length, items: rows.map(presentEnrollment) };
}

/**
 * Reverts denials (issue 10: a mistaken Deny could not be undone): the given Denied requests go
 * back to Pending, all or nothing (404 / 409 naming the first that is not Denied). The agent
 * keeps the same request and looks at it again (at most every 5 minutes while denied, at once
 * if it is waiting), so it finds it Pending and waits for the operator's approval as before.
 * An operator's deliberate act: the inbox limits do not apply.
 */
export async function reopenEnrollments(ctx: ServerContext, ids: string[], actor: string, reason?: string): Promise<EnrollmentView[]> {
  if (ids.length === 0) throw invalid("ids: at least one enrollment id");
  assertTransition(enrollmentMachine, "Denied", "Pending");
  const unique = [...new Set(ids)];
  const { rows, events } = await transaction(ctx.db, async (tx) => {
    const found = await inChunks(unique, (chunk) => tx.enrollmentRequest.findMany({ where: { id: { in: chunk } }, select: { id: true, deviceName: true, status: true } }));
    const missing = unique.filter((id) => !found.some((f) => f.id === id));
    if (missing.length) throw notFound(`enrollment request ${missing.join(", ")}`);
    const notDenied = found.find((f) => f.status !== "Denied");
    if (notDenied) throw conflict(`enrollment request for "${notDenied.deviceName}" is ${notDenied.status}: only a Denied request can be reopened`);
    await inChunks(unique, async (chunk) => {
      const { count } = await tx.enrollmentRequest.updateMany({
        where: { id: { in: chunk }, status: "Denied" },
        data: { status: "Pending", decidedBy: null, decidedAt: null, reason: null },
      });
      if (count !== chunk.length) throw conflict("an enrollment request was decided concurrently; nothing was reopened");
      return [];
    });
    const newEvents: NewEvent[] = found.map((f) => ({ objectKind: "EnrollmentRequest", objectName: f.deviceName, type: "EnrollmentReopened", reason: "Pending", message: reason ?? "", actor }));
    const events = await inChunks(newEvents, (chunk) => recordEvents(tx, chunk), 100);
    const rows = await inChunks(unique, (chunk) => tx.enrollmentRequest.findMany({ where: { id: { in: chunk } }, select: enrollmentSelect }));
    return { rows, events };
  });
  publishEvents(ctx, events);
  for (const id of unique) ctx.bus.publish(topics.enrollment(id));
  return rows.map(presentEnrollment);
}

/**
 * A device approved joins the fleet its labels select, in the approval's transaction: it gets
 * its fleet's spec before its agent first asks for work.
 */
async function joinFleets(tx: Tx, ctx: ServerContext, deviceIds: string[], now: Date, actor: string, effects: Effects): Promise<void> {
  if (deviceIds.length === 0) return;
  await reconcileMembership(tx, { deviceIds }, now, actor, effects);
}

const showLabels = (labels: Labels) =>
  Object.entries(labels)
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([k, v]) => `${k}=${v}`)
    .join(",");

/**
 * The device's labels at approval: the requested ones with the operator's over them (the
 * operator wins on a key both give). 400 when together they pass the limit a device may carry.
 */
function approvalLabels(e: { deviceName: string; labels: string }, added: Labels): Labels {
  const labels = { ...(JSON.parse(e.labels) as Labels), ...added };
  const count = Object.keys(labels).length;
  if (count > MAX_LABELS) throw invalid(`labels: "${e.deviceName}" would carry ${count} labels (requested and added), at most ${MAX_LABELS}`);
  return labels;
}

/**
 * One Pending request to a decision, inside the caller's transaction; returns its events. The
 * id of a device it creates goes into `created` (for joinFleets, once for all of them).
 * `added`: labels the approving operator puts on the device over the requested ones.
 */
async function decideOne(
  tx: Tx,
  e: EnrollmentFacts,
  decision: "Approved" | "Denied",
  actor: string,
  reason: string | undefined,
  now: Date,
  created: string[] = [],
  added: Labels = {},
): Promise<NewEvent[]> {
  const from = e.status as EnrollmentState;
  if (from !== "Pending") throw conflict(`enrollment request for "${e.deviceName}" is already ${from}`);
  assertTransition(enrollmentMachine, from, decision);
  const hasAdded = decision === "Approved" && Object.keys(added).length > 0;
  // The status guard makes concurrent decisions safe: exactly one of them moves the row.
  const { count } = await tx.enrollmentRequest.updateMany({
    where: { id: e.id, status: "Pending" },
    data: { status: decision, decidedBy: actor, decidedAt: now, reason: reason ?? null, approvedLabels: hasAdded ? JSON.stringify(added) : null },
  });
  if (count !== 1) throw conflict(`enrollment request for "${e.deviceName}" was decided concurrently`);
  return decided(tx, e, decision, actor, reason, created, added);
}

/**
 * What follows a request's move to its decision, in the same transaction: its events, and on
 * approval its device (with the labels requested and `added` over them; with `credential`, that
 * id and credential, issued with the approval).
 */
async function decided(
  tx: Tx,
  e: EnrollmentFacts,
  decision: "Approved" | "Denied",
  actor: string,
  reason: string | undefined,
  created: string[],
  added: Labels = {},
  credential?: { id: string; columns: CredentialColumns },
): Promise<NewEvent[]> {
  const hasAdded = decision === "Approved" && Object.keys(added).length > 0;
  const labels = decision === "Approved" ? approvalLabels(e, hasAdded ? added : {}) : {};
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
    created.push(await createDevice(tx, e, labels, credential));
    const message = hasAdded ? `labels added at approval: ${showLabels(added)}` : "";
    events.push({ objectKind: "Device", objectName: e.deviceName, type: "DeviceEnrolled", reason: "Enrolled", message, actor });
  }
  return events;
}

async function createDevice(
  tx: Tx,
  enrollment: { id: string; deviceName: string; platform: string; role: string; agentVersion: string },
  labels: Labels,
  credential?: { id: string; columns: CredentialColumns },
): Promise<string> {
  // Two statements: a nested create of the labels would insert them one by one and read the device back.
  const { id } = await tx.device.create({
    data: {
      ...(credential ? { id: credential.id, ...credential.columns } : {}),
      name: enrollment.deviceName,
      platform: enrollment.platform,
      role: enrollment.role,
      agentVersion: enrollment.agentVersion,
      enrollmentId: enrollment.id,
      lifecycle: "Enrolled",
    },
    select: { id: true },
  });
  const entries = Object.entries(labels);
  if (entries.length) await tx.deviceLabel.createMany({ data: entries.map(([key, value]) => ({ deviceId: id, key, value })) });
  return id;
}

/**
 * Approves or denies one or many Pending requests, all or nothing: if any id is unknown
 * or already decided, nothing changes (404 / 409). Approving may add `labels` (already
 * validated by LabelsSchema) to every device it creates, over the requested ones; fleet
 * membership follows them in the same transaction.
 */
export async function decideEnrollments(
  ctx: ServerContext,
  ids: string[],
  decision: "Approved" | "Denied",
  actor: string,
  reason?: string,
  labels: Labels = {},
): Promise<EnrollmentView[]> {
  if (ids.length === 0) throw invalid("ids: at least one enrollment id");
  const now = ctx.now();
  const unique = [...new Set(ids)];
  const { rows, events, effects } = await transaction(ctx.db, async (tx) => {
    const effects = newEffects(ctx.statusSettings);
    const found = await inChunks(unique, (chunk) => tx.enrollmentRequest.findMany({ where: { id: { in: chunk } } }));
    const missing = unique.filter((id) => !found.some((f) => f.id === id));
    if (missing.length) throw notFound(`enrollment request ${missing.join(", ")}`);
    const newEvents: NewEvent[] = [];
    const created: string[] = [];
    for (const e of found) newEvents.push(...(await decideOne(tx, e, decision, actor, reason, now, created, labels)));
    await joinFleets(tx, ctx, created, now, actor, effects);
    const events: EventRow[] = [...(await recordEvents(tx, newEvents)), ...(await finishEffects(tx, effects, now, actor))];
    const rows = await inChunks(unique, (chunk) => tx.enrollmentRequest.findMany({ where: { id: { in: chunk } }, select: enrollmentSelect }));
    return { rows, events, effects };
    // Approved devices join fleets by the fleets' selectors (server/fleets/membership.ts).
  }, { sharedLocks: [locks.fleetSelectors] });
  afterCommit(ctx, effects, events);
  for (const id of unique) ctx.bus.publish(topics.enrollment(id));
  if (effects.fleets.size) await refreshFleetStatus(ctx, [...effects.fleets]);
  return rows.map(presentEnrollment);
}

/**
 * The agent looked at its request: "last seen" moves when the address changed or when it is
 * older than LAST_SEEN_RESOLUTION_MS, so a waiting agent costs a write a minute at most, and
 * none right after its POST (an agent approved at once by a rule writes nothing here).
 */
async function touchLastSeen(
  ctx: ServerContext,
  row: { id: string; lastSeenAt: Date | null; lastSeenAddress: string | null },
  clientAddress: string | undefined,
): Promise<void> {
  const now = ctx.now();
  const moved = clientAddress !== undefined && clientAddress !== row.lastSeenAddress;
  if (!moved && row.lastSeenAt && now.getTime() - row.lastSeenAt.getTime() < LAST_SEEN_RESOLUTION_MS) return;
  await ctx.db.enrollmentRequest.updateMany({ where: { id: row.id }, data: { lastSeenAt: now, ...(clientAddress !== undefined ? { lastSeenAddress: clientAddress } : {}) } });
}

/**
 * The agent's view of its request. After approval the answer carries the credential (a token,
 * or the certificate for a request with a csr), issued on the first ask after approval and
 * given again, the same, to every later ask with the secret until the device is first seen
 * (sealed-credential.ts): an agent whose answer was lost (its own timeout under load, a cut
 * connection, a state directory it could not write) asks again and gets it, where it used to
 * give up for good (`token.lost`; 965 of 10,000 simulated agents in one bench ramp on
 * PostgreSQL, still some at 19,000 on SQLite after an asker that hung up gave it back). Once the
 * device has been seen, its credential has arrived and the answer carries none.
 */
async function readDecision(
  ctx: ServerContext,
  id: string,
  secret: string,
  clientAddress?: string,
  signal?: AbortSignal,
): Promise<EnrollmentDecision & { pending: boolean }> {
  const row = await ctx.db.enrollmentRequest.findUnique({ where: { id } });
  if (!row) throw notFound(`enrollment request "${id}"`);
  if (!sameHash(row.secretHash, sha256(secret))) throw unauthenticated("wrong enrollment secret");
  if (clientAddress !== undefined) await touchLastSeen(ctx, row, clientAddress);
  const status = row.status as EnrollmentState;
  // An asker that hung up is answered with nothing (no one would read it); its next ask gets the credential.
  if (status !== "Approved" || signal?.aborted) return { status, pending: status === "Pending" };
  if (row.tokenIssuedAt !== null) return { status, pending: false, ...(await givenAgain(ctx, id, secret, row.credentialSealed)) };

  const issuedAt = ctx.now();
  // Issue 23: the device's certificate rather than a token (tokenIssuedAt marks either as given out).
  const { credential, columns } = await newCredential(ctx, row.csr, async () => {
    const device = await ctx.db.device.findUnique({ where: { enrollmentId: id }, select: { id: true, name: true } });
    if (!device) throw notFound(`device of enrollment request "${id}"`);
    return device;
  });
  // Both writes are guarded (`tokenIssuedAt IS NULL`, the device of this request): it may run beside others like it.
  const issued = await transaction(ctx.db, async (tx: Tx) => {
    const { count } = await tx.enrollmentRequest.updateMany({
      where: { id, tokenIssuedAt: null },
      data: { tokenIssuedAt: issuedAt, credentialSealed: sealCredential(secret, credential) },
    });
    if (count !== 1) return false; // another ask of this agent issued it first
    await tx.device.update({ where: { enrollmentId: id }, data: columns });
    return true;
  });
  if (issued) return { status, pending: false, ...credential };
  // The other ask's credential, the one now on the device.
  const current = await ctx.db.enrollmentRequest.findUnique({ where: { id }, select: { credentialSealed: true } });
  return { status, pending: false, ...(await givenAgain(ctx, id, secret, current?.credentialSealed ?? null)) };
}

/** The credential given out before, again, while its device has never been seen; else nothing. */
async function givenAgain(ctx: ServerContext, id: string, secret: string, sealed: string | null): Promise<Credential | Record<string, never>> {
  if (sealed === null) return {};
  const device = await ctx.db.device.findUnique({ where: { enrollmentId: id }, select: { lastSeen: true } });
  if (!device || device.lastSeen !== null) return {};
  return openCredential(secret, sealed) ?? {};
}

export async function awaitDecision(
  ctx: ServerContext,
  id: string,
  secret: string,
  waitSeconds: number,
  signal: AbortSignal,
  clientAddress?: string,
): Promise<EnrollmentDecision> {
  // Listen before the first read, so a decision landing in between still wakes us.
  let decided = false;
  let wake: (() => void) | null = null;
  const unsubscribe = ctx.bus.subscribe(topics.enrollment(id), () => {
    decided = true;
    wake?.();
  });
  try {
    const first = await readDecision(ctx, id, secret, clientAddress, signal);
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
    return strip(await readDecision(ctx, id, secret, undefined, signal));
  } finally {
    unsubscribe();
  }
}

function strip(d: EnrollmentDecision & { pending: boolean }): EnrollmentDecision {
  return d.token ? { status: d.status, token: d.token } : d.certificate ? { status: d.status, certificate: d.certificate } : { status: d.status };
}

export async function getEnrollment(ctx: ServerContext, id: string): Promise<EnrollmentView> {
  const row = await ctx.db.enrollmentRequest.findUnique({ where: { id }, select: enrollmentSelect });
  if (!row) throw notFound(`enrollment request "${id}"`);
  return presentEnrollment(row);
}

export async function listEnrollments(ctx: ServerContext, q: { status?: EnrollmentState | undefined; clientAddress?: string | undefined; limit: number }) {
  const rows = await ctx.db.enrollmentRequest.findMany({
    where: { status: q.status, clientAddress: q.clientAddress },
    orderBy: { createdAt: "desc" },
    take: q.limit,
    select: enrollmentSelect,
  });
  return rows.map(presentEnrollment);
}
