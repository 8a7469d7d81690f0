import { z } from "zod";
import { TRPCError } from "@trpc/server";
import { router, publicProcedure, adminProcedure, viewerProcedure } from "../trpc/init";
import { createUser, issueOperatorToken, verifyPassword } from "./auth";
import { ROLES } from "./roles";
import { listTokens, revokeToken } from "./tokens";

export const Credentials = z.object({ username: z.string().min(1).max(64), password: z.string().min(1).max(256) });

/** What the token is for, shown in token lists: "ci-pipeline", or the host `drover login` ran on. */
const TokenName = z
  .string()
  .trim()
  .min(1)
  .max(64)
  .regex(/^[^\p{Cc}]+$/u, "no control characters");

export const authRouter = router({
  /** Who am I: the console's header and role-aware controls read this. */
  me: publicProcedure.query(({ ctx }) => {
    if (!ctx.principal) throw new TRPCError({ code: "UNAUTHORIZED", message: "sign in first" });
    return { username: ctx.principal.username, role: ctx.principal.role };
  }),
  /** An operator API token for this user's role (REST `POST /api/v1/auth/token`). */
  createToken: publicProcedure.input(Credentials.extend({ name: TokenName.optional() })).mutation(async ({ ctx, input }) => {
    const user = await verifyPassword(ctx.auth, ctx.server.db, input.username, input.password, ctx.clientAddress);
    const { id, token, expiresAt } = await issueOperatorToken(ctx.server.db, user.userId, ctx.server.now(), input.name);
    return { id, token, expiresAt, username: user.username, role: user.role };
  }),
  /** API tokens, newest first: the caller's own, or everyone's for an admin. Never the hash. */
  tokens: viewerProcedure
    .input(z.object({ username: z.string().min(1).max(64).optional(), limit: z.coerce.number().int().min(1).max(1000).default(200) }).default({ limit: 200 }))
    .query(({ ctx, input }) => listTokens(ctx.server, ctx.principal, input)),
  /** Revoke one token (own, or anyone's for an admin); already revoked is a no-op. */
  revokeToken: viewerProcedure
    .input(z.object({ id: z.string().min(1).max(64) }))
    .mutation(({ ctx, input }) => revokeToken(ctx.server, ctx.principal, input.id)),
  users: adminProcedure.query(({ ctx }) =>
    ctx.server.db.user.findMany({ select: { id: true, username: true, role: true, createdAt: true }, orderBy: { createdAt: "asc" } }),
  ),
  createUser: adminProcedure
    .input(z.object({ username: z.string().regex(/^[a-z0-9_.]{3,30}$/, "3 to 30 lowercase letters, digits, '_' or '.'"), password: z.string().min(8).max(256), role: z.enum(ROLES) }))
    .mutation(({ ctx, input }) => createUser(ctx.auth, ctx.server.db, input)),
});

