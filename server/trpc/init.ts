/**
 * tRPC setup: the request context (who is calling), role-checked procedures, and one
 * mapping of domain errors (AppError) to tRPC codes.
 */
import { initTRPC, TRPCError } from "@trpc/server";
import { z } from "zod";
import type { ServerContext } from "../context";
import type { Auth } from "../auth/auth";
import { hasRole, type Principal, type Role } from "../auth/roles";
import { AppError, CODE_FROM_TRPC, TRPC_CODE, toAppError } from "../errors";

export interface RequestContext {
  server: ServerContext;
  auth: Auth;
  principal: Principal | null;
  /** The caller's address (server/lib/client-address.ts), for per-address limits. */
  clientAddress?: string;
}

const t = initTRPC.context<RequestContext>().create({
  errorFormatter({ shape, error }) {
    const zod = error.cause instanceof z.ZodError ? z.flattenError(error.cause) : null;
    return {
      ...shape,
      // A fault of ours says no more than that: Prisma's and PostgreSQL's own words (a query, a
      // source path) stay in the log.
      message: zod ? describeFlattened(zod) : shape.data.code === "INTERNAL_SERVER_ERROR" ? "internal error" : shape.message,
      data: { ...shape.data, appCode: CODE_FROM_TRPC[shape.data.code] ?? "INTERNAL", zodError: zod, stack: undefined },
    };
  },
});

function describeFlattened(f: { formErrors: string[]; fieldErrors: Record<string, string[] | undefined> }): string {
  const parts = [...f.formErrors, ...Object.entries(f.fieldErrors).map(([k, v]) => `${k}: ${(v ?? []).join(", ")}`)];
  return parts.join("; ") || "invalid input";
}

/** Domain errors thrown below a procedure become tRPC errors with the matching code. */
const domainErrors = t.middleware(async ({ ctx, next }) => {
  const result = await next();
  if (!result.ok && !(result.error.cause instanceof z.ZodError) && result.error.code === "INTERNAL_SERVER_ERROR") {
    ctx.server.database.noteError(result.error.cause);
    const app = toAppError(result.error.cause ?? result.error);
    if (app.code === "INTERNAL") return result;
    throw new TRPCError({ code: TRPC_CODE[app.code], message: app.message, cause: app });
  }
  return result;
});

export const router = t.router;
export const createCallerFactory = t.createCallerFactory;
export const publicProcedure = t.procedure.use(domainErrors);

function requireRole(role: Role) {
  return publicProcedure.use(({ ctx, next }) => {
    if (!ctx.principal) throw new TRPCError({ code: "UNAUTHORIZED", message: "sign in first" });
    if (!hasRole(ctx.principal.role, role)) {
      throw new TRPCError({ code: "FORBIDDEN", message: `needs the ${role} role; you are ${ctx.principal.role}` });
    }
    return next({ ctx: { ...ctx, principal: ctx.principal, actor: `user:${ctx.principal.username}` } });
  });
}

export const viewerProcedure = requireRole("viewer");
export const operatorProcedure = requireRole("operator");
export const adminProcedure = requireRole("admin");

export { AppError };
