/** The operator API as OpenAPI, from the REST table and the procedures' own zod inputs. */
import type { z } from "zod";
import { appRouter } from "../trpc/router";
import { restRoutes } from "./routes";
import { errorResponses, jsonContent, jsonSchema } from "../lib/openapi";

let cached: Record<string, unknown> | null = null;

function procedureInput(path: string): z.ZodType | undefined {
  const procedures = appRouter._def.procedures as unknown as Record<string, { _def: { inputs: z.ZodType[] } }>;
  return procedures[path]?._def.inputs[0];
}

export function operatorOpenApi(): Record<string, unknown> {
  if (cached) return cached;
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of restRoutes) {
    const input = route.body ?? procedureInput(route.procedure);
    const schema = input ? jsonSchema(input, "input") : undefined;
    const params = [...route.path.matchAll(/\{(\w+)\}/g)].map((m) => ({ name: m[1], in: "path", required: true, schema: { type: "string" } }));
    const op: Record<string, unknown> = {
      summary: route.summary,
      operationId: route.procedure + (route.path.includes("{") ? "One" : ""),
      parameters: params,
      responses: {
        [String(route.status ?? 200)]: { description: "OK", ...(route.response ? { content: jsonContent(route.response) } : {}) },
        ...errorResponses(400, 401, 403, 404, 409, 429, ...(route.method === "GET" ? [] : [413, 415])),
      },
    };
    if (route.public) op.security = [];
    if (schema && route.method === "GET") {
      const props = (schema.properties ?? {}) as Record<string, unknown>;
      op.parameters = [
        ...params,
        ...Object.entries(props)
          .filter(([name]) => !params.some((p) => p.name === name))
          .map(([name, s]) => ({ name, in: "query", schema: s })),
      ];
    } else if (schema && route.method !== "GET") {
      if (route.query) op.parameters = [...params, ...route.query.map((q) => ({ ...q, in: "query" }))];
      op.requestBody = { content: { "application/json": { schema }, ...(route.yaml ? { "application/yaml": { schema } } : {}) } };
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
