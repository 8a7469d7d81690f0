import { z } from "zod";
import { TRPCError } from "@trpc/server";
import { router, publicProcedure, adminProcedure } from "../trpc/init";
import { createUser, issueOperatorToken, verifyPassword } from "./auth";
import { ROLES } from "./roles";

export const Credentials = z.object({ username: z.string().min(1).max(64), password: z.string().min(1).max(256) });

export const authRouter = router({
  /** Who am I: the console's header and role-aware controls read this. */
  me: publicProcedure.query(({ ctx }) => {
    if (!ctx.principal) throw new TRPCError({ code: "UNAUTHORIZED", message: "sign in first" });
    return { username: ctx.principal.username, role: ctx.principal.role };
  }),
  /** An operator API token for this user's role (REST `POST /api/v1/auth/token`). */
  createToken: publicProcedure.input(Credentials).mutation(async ({ ctx, input }) => {
    const user = await verifyPassword(ctx.auth, ctx.server.db, input.username, input.password);
    const { token, expiresAt } = await issueOperatorToken(ctx.server.db, user.userId, ctx.server.now());
    return { token, expiresAt, username: user.username, role: user.role };
  }),
  users: adminProcedure.query(({ ctx }) =>
    ctx.server.db.user.findMany({ select: { id: true, username: true, role: true, createdAt: true }, orderBy: { createdAt: "asc" } }),
  ),
  createUser: adminProcedure
    .input(z.object({ username: z.string().regex(/^[a-z0-9_.]{3,30}$/, "3 to 30 lowercase letters, digits, '_' or '.'"), password: z.string().min(8).max(256), role: z.enum(ROLES) }))
    .mutation(({ ctx, input }) => createUser(ctx.auth, ctx.server.db, input)),
});

