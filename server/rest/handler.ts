/**
 * Serves the REST table (routes.ts) by calling the tRPC procedures through a server-side
 * caller, and answers errors in the protocol's shape.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { TRPCError } from "@trpc/server";
import { z } from "zod";
import { describeZodError } from "../../lib/protocol";
import type { ServerContext } from "../context";
import type { Auth } from "../auth/auth";
import { principalFromToken } from "../auth/auth";
import { appRouter } from "../trpc/router";
import { createCallerFactory } from "../trpc/init";
import { AppError, CODE_FROM_TRPC, notFound, unauthenticated } from "../errors";
import { decodePathSegment, queryObject, readBody, sendError, sendJson } from "../lib/http";
import { restRoutes, type RestRoute } from "./routes";
import { operatorOpenApi } from "./openapi";
import { CLIENT_ADDRESS_HEADER } from "../lib/client-address";
import { IDEMPOTENCY_HEADER, IdempotencyKey } from "../idempotency/idempotency";

export const REST_BASE = "/api/v1";
const createCaller = createCallerFactory(appRouter);

const compiled = restRoutes.map((route) => ({
  route,
  pattern: new RegExp("^" + route.path.replace(/\{(\w+)\}/g, "(?<$1>[^/]+)") + "$"),
}));

function match(method: string, path: string): { route: RestRoute; params: Record<string, string> } | null {
  for (const { route, pattern } of compiled) {
    if (route.method !== method) continue;
    const m = pattern.exec(path);
    if (m) {
      const params = Object.fromEntries(Object.entries(m.groups ?? {}).map(([k, v]) => [k, decodePathSegment(v, k)]));
      return { route, params };
    }
  }
  return null;
}

function fromTrpc(error: unknown): unknown {
  if (error instanceof TRPCError) {
    const cause = error.cause;
    if (cause instanceof AppError) return cause;
    // A procedure's input refused: its fields and reasons, not zod's JSON (the caller skips tRPC's error formatter).
    if (cause instanceof z.ZodError) return new AppError("INVALID_REQUEST", describeZodError(cause));
    return new AppError(CODE_FROM_TRPC[error.code] ?? "INTERNAL", error.message);
  }
  return error;
}

/** The `Idempotency-Key` header, checked (400 naming it); none: undefined. */
function idempotencyKeyOf(req: IncomingMessage): string | undefined {
  const value = req.headers[IDEMPOTENCY_HEADER];
  if (value === undefined) return undefined;
  const parsed = IdempotencyKey.safeParse(value);
  if (!parsed.success) throw new AppError("INVALID_REQUEST", `Idempotency-Key: ${parsed.error.issues.map((i) => i.message).join("; ")}`);
  return parsed.data;
}

export function createRestApi(server: ServerContext, auth: Auth) {
  return async function handleRest(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    try {
      const path = url.pathname.slice(REST_BASE.length).replace(/\/+$/, "") || "/";
      const method = req.method ?? "GET";
      if (path === "/openapi.json" && method === "GET") return sendJson(res, 200, operatorOpenApi());
      const found = match(method, path);
      if (!found) throw notFound(`${method} ${url.pathname}`);
      const { route, params } = found;

      let principal = null;
      if (!route.public) {
        const m = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? "");
        if (!m?.[1]) throw unauthenticated("missing bearer token: POST /api/v1/auth/token first");
        principal = await principalFromToken(server.db, m[1], server.now());
        if (!principal) throw unauthenticated("unknown or expired token");
      }
      // JSON, or YAML on the routes that take it (fleets): the same objects either way.
      const rawBody = method === "GET" ? undefined : await readBody(req, { yaml: route.yaml === true });
      if (rawBody !== undefined && (typeof rawBody !== "object" || rawBody === null || Array.isArray(rawBody))) {
        throw new AppError("INVALID_REQUEST", `body: expected ${route.yaml ? "an object" : "a JSON object"}`);
      }
      const body = (rawBody ?? {}) as Record<string, unknown>;
      let input = route.input?.({ params, query: queryObject(url), body });
      // The key comes from the header only (a body's idempotencyKey is overwritten).
      if (route.idempotent) input = { ...(input as Record<string, unknown>), idempotencyKey: idempotencyKeyOf(req) };

      const caller = createCaller({ server, auth, principal, clientAddress: String(req.headers[CLIENT_ADDRESS_HEADER]) });
      const fn = route.procedure.split(".").reduce<unknown>((node, key) => (node as Record<string, unknown>)[key], caller) as (
        input: unknown,
      ) => Promise<unknown>;
      let result: unknown;
      try {
        result = await fn(input);
      } catch (error) {
        throw fromTrpc(error);
      }
      sendJson(res, route.status ?? 200, route.output ? route.output(result) : result);
    } catch (error) {
      server.database.noteError(error);
      sendError(res, error, server.log);
    }
  };
}
