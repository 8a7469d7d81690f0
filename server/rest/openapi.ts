/**
 * The operator API as OpenAPI, from the REST table: request bodies and query parameters from
 * the procedures' own zod inputs (or the route's `body`), answers from each route's
 * `response` (server/rest/responses.ts). The CLI's types (cli/operator-api.d.ts) are
 * generated from this document.
 */
import type { z } from "zod";
import { appRouter } from "../trpc/router";
import { restRoutes, type RestRoute } from "./routes";
import { errorResponses, jsonContent, jsonSchema } from "../lib/openapi";

let cached: Record<string, unknown> | null = null;

const IDEMPOTENCY_PARAMETER = {
  name: "Idempotency-Key",
  in: "header",
  description:
    "1–255 visible ASCII characters, e.g. a UUID, new for each create. The same key with the same request (body, query, path) within 24 h answers the first answer (status and body) instead of creating again; " +
    "with a different request, or while the first is still running, 409. Keys are per caller. Only successes are kept: after a 4xx the same key may be used again. " +
    "An enrollment token's answer holds its secret and is never kept: a repeat is 409 naming the token",
  schema: { type: "string", minLength: 1, maxLength: 255, pattern: "^[\\x21-\\x7e]+$" },
};

function procedureInput(path: string): z.ZodType | undefined {
  const procedures = appRouter._def.procedures as unknown as Record<string, { _def: { inputs: z.ZodType[] } }>;
  return procedures[path]?._def.inputs[0];
}

type JsonSchema = Record<string, unknown> & { properties?: Record<string, Record<string, unknown>>; required?: string[] };

/** The input's schema less the properties the path gives (`{id}` is not in the body or the query). */
function withoutPathParams(schema: JsonSchema, pathParams: string[]): JsonSchema {
  if (!schema.properties) return schema;
  const properties = Object.fromEntries(Object.entries(schema.properties).filter(([name]) => !pathParams.includes(name)));
  const required = schema.required?.filter((name) => !pathParams.includes(name));
  return { ...schema, properties, ...(required ? { required } : {}) };
}

/** A body that takes nothing: the route reads no body, and the document shows none. */
const isEmptyObject = (schema: JsonSchema) => schema.type === "object" && Object.keys(schema.properties ?? {}).length === 0 && !schema.additionalProperties;

function successResponse(route: RestRoute) {
  if (route.response === null) return { [String(route.status ?? 204)]: { description: "No content" } };
  return { [String(route.status ?? 200)]: { description: "OK", content: jsonContent(route.response) } };
}

export function operatorOpenApi(): Record<string, unknown> {
  if (cached) return cached;
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of restRoutes) {
    const pathParams = [...route.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1] as string);
    const params: Record<string, unknown>[] = pathParams.map((name) => ({ name, in: "path", required: true, schema: { type: "string" } }));
    const input = route.body ?? procedureInput(route.procedure);
    // The idempotency key is a header on the REST routes, never a body field.
    const schema = input ? withoutPathParams(jsonSchema(input, "input") as JsonSchema, route.body ? [] : [...pathParams, "idempotencyKey"]) : undefined;
    const op: Record<string, unknown> = {
      summary: route.summary,
      operationId: route.procedure + (route.path.includes("{") ? "One" : ""),
      parameters: params,
      responses: {
        ...successResponse(route),
        ...errorResponses(400, 401, 403, 404, 409, 429, ...(route.method === "GET" ? [] : [413, 415])),
      },
    };
    if (route.public) op.security = [];
    if (route.method === "GET") {
      const required = schema?.required ?? [];
      op.parameters = [
        ...params,
        ...Object.entries(schema?.properties ?? {}).map(([name, s]) => ({
          name,
          in: "query",
          ...(required.includes(name) ? { required: true } : {}),
          schema: s,
          // Lists are one comma-separated value (?state=A,B), not the parameter repeated.
          ...(s.type === "array" ? { style: "form", explode: false } : {}),
        })),
      ];
    } else {
      if (route.query) op.parameters = [...params, ...route.query.map((q) => ({ ...q, in: "query" }))];
      if (route.idempotent) op.parameters = [...(op.parameters as unknown[]), IDEMPOTENCY_PARAMETER];
      if (schema && !isEmptyObject(schema)) {
        op.requestBody = { required: (schema.required ?? []).length > 0, content: { "application/json": { schema }, ...(route.yaml ? { "application/yaml": { schema } } : {}) } };
      }
    }
    (paths[route.path] ??= {})[route.method.toLowerCase()] = op;
  }
  cached = {
    openapi: "3.1.0",
    info: { title: "Drover operator API", version: "1" },
    servers: [{ url: "/api/v1" }],
    components: { securitySchemes: { operator: { type: "http", scheme: "bearer" } } },
    security: [{ operator: [] }],
    paths,
  };
  return cached;
}
