/**
 * Operator API tokens as their owners and admins see them: list and revoke. Every user
 * manages their own tokens; an admin manages everyone's (OPERATOR_API.md). The hash never
 * leaves the server.
 */
import type { ServerContext } from "../context";
import type { Prisma } from "../db";
import { forbidden, notFound } from "../errors";
import { publishEvents, recordEvents } from "../events/events";
import { hasRole, type Principal } from "./roles";
import { transaction } from "../lib/transactions";

export const TOKEN_STATUSES = ["Active", "Expired", "Revoked"] as const;
export type TokenStatus = (typeof TOKEN_STATUSES)[number];

const tokenSelect = {
  id: true,
  name: true,
  createdAt: true,
  expiresAt: true,
  lastUsedAt: true,
  revokedAt: true,
  revokedBy: true,
  user: { select: { username: true, id: true } },
} satisfies Prisma.ApiTokenSelect;
type TokenRow = Prisma.ApiTokenGetPayload<{ select: typeof tokenSelect }>;

function presentToken(row: TokenRow, caller: Principal, now: Date) {
  const status: TokenStatus = row.revokedAt ? "Revoked" : row.expiresAt <= now ? "Expired" : "Active";
  return {
    id: row.id,
    name: row.name,
    username: row.user.username ?? row.user.id,
    createdAt: row.createdAt,
    expiresAt: row.expiresAt,
    lastUsedAt: row.lastUsedAt,
    revokedAt: row.revokedAt,
    revokedBy: row.revokedBy,
    status,
    /** The token this very request came with (false for the console's session). */
    current: caller.tokenId === row.id,
  };
}
export type TokenView = ReturnType<typeof presentToken>;

const isAdmin = (p: Principal) => hasRole(p.role, "admin");

/** Newest first. Non-admins see only their own; `username` narrows an admin's list. */
export async function listTokens(ctx: ServerContext, caller: Principal, q: { username?: string | undefined; limit: number }): Promise<TokenView[]> {
  const username = q.username?.toLowerCase();
  if (!isAdmin(caller) && username !== undefined && username !== caller.username) {
    throw forbidden(`only an admin sees other users' tokens; you are ${caller.role}`);
  }
  const where: Prisma.ApiTokenWhereInput = isAdmin(caller) ? (username !== undefined ? { user: { username } } : {}) : { userId: caller.userId };
  const rows = await ctx.db.apiToken.findMany({ where, orderBy: [{ createdAt: "desc" }, { id: "asc" }], take: q.limit, select: tokenSelect });
  const now = ctx.now();
  return rows.map((row) => presentToken(row, caller, now));
}

/**
 * Revokes one token at once: the next request with it is 401. Revoking a token that is
 * already revoked changes nothing and answers it as it is (the caller wanted it revoked, and
 * it is), so scripts may retry.
 */
export async function revokeToken(ctx: ServerContext, caller: Principal, id: string): Promise<TokenView> {
  const found = await ctx.db.apiToken.findUnique({ where: { id }, select: { userId: true } });
  if (!found) throw notFound(`API token "${id}"`);
  if (found.userId !== caller.userId && !isAdmin(caller)) {
    throw forbidden(`only an admin revokes other users' tokens; you are ${caller.role}`);
  }
  const actor = `user:${caller.username}`;
  const now = ctx.now();
  const { row, events } = await transaction(ctx.db, async (tx) => {
    // Guarded on revokedAt: of two revocations at once, one writes the record and the event.
    const { count } = await tx.apiToken.updateMany({ where: { id, revokedAt: null }, data: { revokedAt: now, revokedBy: actor } });
    const row = await tx.apiToken.findUniqueOrThrow({ where: { id }, select: tokenSelect });
    const label = row.name ? `"${row.name}" (${row.id})` : row.id;
    const events =
      count === 1
        ? await recordEvents(tx, [
            {
              objectKind: "User",
              objectName: row.user.username ?? row.user.id,
              type: "ApiTokenRevoked",
              reason: "Revoked",
              message: `API token ${label} revoked`,
              actor,
            },
          ])
        : [];
    return { row, events };
  });
  publishEvents(ctx, events);
  return presentToken(row, caller, now);
}
