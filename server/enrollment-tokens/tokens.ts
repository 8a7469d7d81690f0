/**
 * Enrollment tokens (issue 12): a secret an operator hands to the machines they install, so a
 * device enrolls with the operator's labels and, with autoApprove, approved at once. The
 * secret is shown once, at creation; only its SHA-256 is stored, with its first characters
 * (`prefix`) to recognise it by. Tokens are revoked, never deleted: every enrollment request
 * keeps the id of the token it used (`EnrollmentRequest.tokenId`).
 *
 * Enrollment (server/enrollments/enrollments.ts) calls `checkEnrollmentToken` before it writes
 * anything, then `claimEnrollmentToken` inside its own transaction: the use is counted by a
 * conditional UPDATE, so two enrollments racing for a token's last use cannot both have it,
 * and a refused or failed enrollment counts nothing (its transaction rolls back).
 */
import type { Labels } from "../../lib/label-selector";
import type { ServerContext } from "../context";
import type { Prisma, Tx } from "../db";
import { AppError, invalid, notFound } from "../errors";
import { newToken, sha256 } from "../lib/crypto";
import { publishEvents, recordEvents } from "../events/events";
import { claimInTx, type IdempotencyClaim } from "../idempotency/idempotency";
import { transaction } from "../lib/transactions";

/** `drvt_<43 base64url characters>`: URL-safe, and only the characters install.sh accepts. */
export const ENROLLMENT_TOKEN_PREFIX = "drvt";
/** How much of the secret is kept in the clear: the type prefix and 6 random characters. */
const SHOWN_PREFIX_LENGTH = ENROLLMENT_TOKEN_PREFIX.length + 1 + 6;
/** The labels a device may carry (LabelsSchema). */
const MAX_LABELS = 64;

export const ENROLLMENT_TOKEN_STATUSES = ["Active", "Expired", "UsedUp", "Revoked"] as const;
export type EnrollmentTokenStatus = (typeof ENROLLMENT_TOKEN_STATUSES)[number];

const tokenSelect = {
  id: true,
  name: true,
  description: true,
  prefix: true,
  labels: true,
  expiresAt: true,
  maxUses: true,
  uses: true,
  autoApprove: true,
  createdBy: true,
  createdAt: true,
  revokedAt: true,
  revokedBy: true,
} satisfies Prisma.EnrollmentTokenSelect;
type TokenRow = Prisma.EnrollmentTokenGetPayload<{ select: typeof tokenSelect }>;

/** Whether a token can be used now, and if not why. Revoked first: it is the operator's own word. */
function tokenStatus(row: Pick<TokenRow, "revokedAt" | "expiresAt" | "maxUses" | "uses">, now: Date): EnrollmentTokenStatus {
  if (row.revokedAt) return "Revoked";
  if (row.expiresAt && row.expiresAt <= now) return "Expired";
  if (row.maxUses !== null && row.uses >= row.maxUses) return "UsedUp";
  return "Active";
}

function presentToken(row: TokenRow, now: Date) {
  return { ...row, labels: JSON.parse(row.labels) as Labels, status: tokenStatus(row, now) };
}
export type EnrollmentTokenView = ReturnType<typeof presentToken>;

export interface NewEnrollmentToken {
  name: string;
  description?: string | undefined;
  labels: Labels;
  expiresInSeconds?: number | undefined;
  maxUses?: number | undefined;
  autoApprove: boolean;
}

/** Creates a token; the answer is the only place its secret (`token`) ever appears. */
/** `claim`: the request's idempotency key (issue 22), written with the token (its answer, holding the secret, is never kept). */
export async function createEnrollmentToken(ctx: ServerContext, input: NewEnrollmentToken, actor: string, claim?: IdempotencyClaim): Promise<EnrollmentTokenView & { token: string }> {
  const token = newToken(ENROLLMENT_TOKEN_PREFIX);
  const now = ctx.now();
  const { row, events } = await transaction(ctx.db, async (tx) => {
    const row = await tx.enrollmentToken.create({
      data: {
        name: input.name,
        description: input.description ?? null,
        hash: sha256(token),
        prefix: token.slice(0, SHOWN_PREFIX_LENGTH),
        labels: JSON.stringify(input.labels),
        expiresAt: input.expiresInSeconds === undefined ? null : new Date(now.getTime() + input.expiresInSeconds * 1000),
        maxUses: input.maxUses ?? null,
        autoApprove: input.autoApprove,
        createdBy: actor,
        createdAt: now,
      },
      select: tokenSelect,
    });
    await claimInTx(tx, claim, `EnrollmentToken/${row.id}`);
    const events = await recordEvents(tx, [
      {
        objectKind: "User",
        objectName: actor.replace(/^user:/, ""),
        type: "EnrollmentTokenCreated",
        reason: "Created",
        message: `enrollment token "${row.name}" (${row.prefix}…)${row.autoApprove ? ", approving devices at once" : ""}`,
        actor,
      },
    ]);
    return { row, events };
  });
  publishEvents(ctx, events);
  return { ...presentToken(row, now), token };
}

/** Newest first. */
export async function listEnrollmentTokens(ctx: ServerContext, q: { limit: number }): Promise<EnrollmentTokenView[]> {
  const rows = await ctx.db.enrollmentToken.findMany({ orderBy: [{ createdAt: "desc" }, { id: "asc" }], take: q.limit, select: tokenSelect });
  const now = ctx.now();
  return rows.map((row) => presentToken(row, now));
}

export async function getEnrollmentToken(ctx: ServerContext, id: string): Promise<EnrollmentTokenView> {
  const row = await ctx.db.enrollmentToken.findUnique({ where: { id }, select: tokenSelect });
  if (!row) throw notFound(`enrollment token "${id}"`);
  return presentToken(row, ctx.now());
}

/**
 * Revokes a token: enrollments with it are refused from now on (devices it already enrolled
 * stay). Revoking a revoked token changes nothing and answers it as it is, so scripts may retry.
 */
export async function revokeEnrollmentToken(ctx: ServerContext, id: string, actor: string): Promise<EnrollmentTokenView> {
  const now = ctx.now();
  const { row, events } = await transaction(ctx.db, async (tx) => {
    // Guarded on revokedAt: of two revocations at once, one writes the record and the event.
    const { count } = await tx.enrollmentToken.updateMany({ where: { id, revokedAt: null }, data: { revokedAt: now, revokedBy: actor } });
    const row = await tx.enrollmentToken.findUnique({ where: { id }, select: tokenSelect });
    if (!row) throw notFound(`enrollment token "${id}"`);
    const events =
      count === 1
        ? await recordEvents(tx, [
            {
              objectKind: "User",
              objectName: actor.replace(/^user:/, ""),
              type: "EnrollmentTokenRevoked",
              reason: "Revoked",
              message: `enrollment token "${row.name}" (${row.prefix}…) revoked after ${row.uses} use${row.uses === 1 ? "" : "s"}`,
              actor,
            },
          ])
        : [];
    return { row, events };
  });
  publishEvents(ctx, events);
  return presentToken(row, now);
}

// ---------------------------------------------------------------------------------------
// At enrollment

/** What an enrollment needs of a usable token. */
export interface TokenGrant {
  id: string;
  name: string;
  prefix: string;
  labels: Labels;
  autoApprove: boolean;
}

/**
 * The refusal for a token that cannot be used: an unknown secret is 401 (as any credential the
 * server does not know); a known token that is revoked, expired or used up is 403 and says
 * which, so whoever installs the device knows to ask the operator for a new one.
 */
function refusal(status: EnrollmentTokenStatus | "Unknown", row?: { name: string; prefix: string }): AppError {
  const which = row ? `enrollment token "${row.name}" (${row.prefix}…)` : "";
  switch (status) {
    case "Unknown":
      return new AppError("UNAUTHENTICATED", "unknown enrollment token: check it, or ask an operator for a new one");
    case "Revoked":
      return new AppError("FORBIDDEN", `${which} was revoked: ask an operator for a new one`);
    case "Expired":
      return new AppError("FORBIDDEN", `${which} has expired: ask an operator for a new one`);
    default:
      return new AppError("FORBIDDEN", `${which} has been used as many times as it may: ask an operator for a new one`);
  }
}

/** Finds the token a secret names and refuses it (401/403) unless it can be used now. Writes nothing. */
export async function checkEnrollmentToken(ctx: ServerContext, secret: string): Promise<TokenGrant> {
  const row = await ctx.db.enrollmentToken.findUnique({ where: { hash: sha256(secret) }, select: tokenSelect });
  if (!row) throw refusal("Unknown");
  const status = tokenStatus(row, ctx.now());
  if (status !== "Active") throw refusal(status, row);
  return { id: row.id, name: row.name, prefix: row.prefix, labels: JSON.parse(row.labels) as Labels, autoApprove: row.autoApprove };
}

/**
 * Counts one use inside the enrollment's transaction. The UPDATE itself checks that the token
 * is still usable (not revoked, not expired, a use left), so of two enrollments racing for the
 * last use exactly one moves the row; the other is refused (403) and its transaction rolls
 * back with nothing created.
 */
export async function claimEnrollmentToken(tx: Tx, grant: TokenGrant, now: Date): Promise<void> {
  const { count } = await tx.enrollmentToken.updateMany({
    where: {
      id: grant.id,
      revokedAt: null,
      AND: [{ OR: [{ expiresAt: null }, { expiresAt: { gt: now } }] }, { OR: [{ maxUses: null }, { uses: { lt: tx.enrollmentToken.fields.maxUses } }] }],
    },
    data: { uses: { increment: 1 } },
  });
  if (count === 1) return;
  const row = await tx.enrollmentToken.findUnique({ where: { id: grant.id }, select: tokenSelect });
  throw row ? refusal(tokenStatus(row, now), row) : refusal("Unknown");
}

/** The agent's labels with the token's over them (the operator's word wins); 400 past the limit a device may carry. */
export function labelsWithToken(deviceName: string, requested: Labels, grant: TokenGrant): Labels {
  const labels = { ...requested, ...grant.labels };
  const count = Object.keys(labels).length;
  if (count > MAX_LABELS) throw invalid(`labels: "${deviceName}" would carry ${count} labels (its own and its enrollment token's), at most ${MAX_LABELS}`);
  return labels;
}
