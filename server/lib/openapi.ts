/** OpenAPI 3.1 building blocks from zod schemas (zod 4's own JSON Schema output). */
import { z } from "zod";
import { ErrorBody } from "../../lib/protocol";

type JsonSchemaOverride = NonNullable<Parameters<typeof z.toJSONSchema>[1]>["override"];

/**
 * Where zod's input side has no JSON Schema of its own, the document shows what the API takes:
 * a `jsonRecord` (a custom check piped into a record) as the record, a coerced date as an
 * RFC 3339 string.
 */
const override: JsonSchemaOverride = (ctx) => {
  const def = (ctx.zodSchema as unknown as { _zod: { def: { type: string; in?: z.ZodType; out?: z.ZodType } } })._zod.def;
  if (def.type === "pipe" && def.in && def.out && (def.in as unknown as { _zod: { def: { type: string } } })._zod.def.type === "custom") {
    Object.assign(ctx.jsonSchema, jsonSchema(def.out, "input"));
  } else if (def.type === "date") {
    Object.assign(ctx.jsonSchema, { type: "string", format: "date-time" });
  }
};

export function jsonSchema(schema: z.ZodType, io: "input" | "output" = "output"): Record<string, unknown> {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: "any", override }) as Record<string, unknown>;
  return rest;
}

export function jsonContent(schema: z.ZodType, io: "input" | "output" = "output") {
  return { "application/json": { schema: jsonSchema(schema, io) } };
}

const ERROR_TEXT: Record<number, string> = {
  400: "INVALID_REQUEST: malformed or fails validation; the message names the field",
  401: "UNAUTHENTICATED: missing, unknown or revoked token",
  403: "FORBIDDEN",
  404: "NOT_FOUND",
  409: "CONFLICT: a transition the state machine does not allow",
  413: "TOO_LARGE: body over 1 MiB",
  415: "UNSUPPORTED_MEDIA_TYPE: a body that is not application/json",
  429: "RATE_LIMITED (see Retry-After)",
};

export function errorResponses(...statuses: number[]) {
  return Object.fromEntries(statuses.map((s) => [String(s), { description: ERROR_TEXT[s] ?? "error", content: jsonContent(ErrorBody) }]));
}
