/**
 * Small helpers for the lean node:http handlers (agent API, operator REST): JSON bodies with
 * a size limit, JSON answers, and the protocol's error shape.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import YAML from "yaml";
import { MAX_BODY_BYTES, type ErrorBody } from "../../lib/protocol";
import { AppError, invalid, toAppError } from "../errors";
import type { Logger } from "../logger";

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.headersSent || res.destroyed) return;
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json; charset=utf-8", "content-length": Buffer.byteLength(text), ...headers });
  res.end(text);
}

export function sendError(res: ServerResponse, error: unknown, log?: Logger): number {
  const app = toAppError(error);
  if (app.code === "INTERNAL") log?.error({ err: error }, "request failed");
  const body: ErrorBody = { error: { code: app.code, message: app.message } };
  const headers: Record<string, string> = {};
  if (app.retryAfterSeconds !== undefined) headers["retry-after"] = String(Math.ceil(app.retryAfterSeconds));
  sendJson(res, app.status, body, headers);
  return app.status;
}

/** A path segment, %-decoded; a malformed escape is the client's error (400), not ours. */
export function decodePathSegment(segment: string, what: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw invalid(`${what}: malformed %-escape in the path`);
  }
}

/** `application/json`, `application/merge-patch+json`…, with or without parameters. */
export function isJsonContentType(value: string | undefined): boolean {
  const type = value?.split(";")[0]?.trim().toLowerCase() ?? "";
  return type === "application/json" || (type.startsWith("application/") && type.endsWith("+json"));
}

/** `application/yaml` (RFC 9512) or the older `application/x-yaml`, with or without parameters. */
export function isYamlContentType(value: string | undefined): boolean {
  const type = value?.split(";")[0]?.trim().toLowerCase() ?? "";
  return type === "application/yaml" || type === "application/x-yaml";
}

/** Whether the request carries a body at all (a declared length above 0, or chunks). */
export function hasBody(req: IncomingMessage): boolean {
  const length = req.headers["content-length"];
  if (length !== undefined) return Number(length) > 0;
  return req.headers["transfer-encoding"] !== undefined;
}

/**
 * JSON.parse keeps `"__proto__"` as an own key, which later object spreads and zod records
 * turn into a prototype or drop: refuse it outright. Only texts that could spell the key
 * (plainly or through \u escapes) pay for the reviver.
 */
function parseJson(text: string): unknown {
  if (!text.includes("__proto__") && !text.includes("\\u")) return JSON.parse(text);
  return JSON.parse(text, (key, value: unknown) => {
    if (key === "__proto__") throw invalid('body: the key "__proto__" is not allowed');
    return value;
  });
}

/**
 * One YAML document as plain JSON data (the operator API's object shapes, OPERATOR_API.md).
 * Limits what YAML adds over JSON: few aliases (no "billion laughs"), unique keys, no
 * `__proto__` key (as for JSON), and only JSON's value types (the core schema: no dates,
 * no custom tags).
 */
export function parseYaml(text: string): unknown {
  let doc;
  try {
    doc = YAML.parseDocument(text, { schema: "core", uniqueKeys: true, merge: false, prettyErrors: false });
  } catch (error) {
    throw invalid(`body: not valid YAML: ${(error as Error).message.split("\n")[0]}`);
  }
  const error = doc.errors[0] ?? doc.warnings[0];
  if (error) throw invalid(`body: not valid YAML: ${error.message.split("\n")[0]}`);
  try {
    return doc.toJS({
      maxAliasCount: 50,
      reviver: (key: unknown, value: unknown) => {
        if (key === "__proto__") throw invalid('body: the key "__proto__" is not allowed');
        return value;
      },
    }) as unknown;
  } catch (error) {
    if (error instanceof AppError) throw error;
    throw invalid(`body: not valid YAML: ${(error as Error).message.split("\n")[0]}`);
  }
}

/**
 * Reads a body of at most 1 MiB (413 beyond): JSON, or YAML where `yaml` allows it (415 for
 * any other media type). An empty body reads as undefined.
 */
export async function readBody(req: IncomingMessage, options: { yaml?: boolean; limit?: number } = {}): Promise<unknown> {
  const limit = options.limit ?? MAX_BODY_BYTES;
  const declared = Number(req.headers["content-length"] ?? "0");
  if (declared > limit) throw new AppError("TOO_LARGE", `body over ${limit} bytes`);
  const type = req.headers["content-type"];
  const yaml = options.yaml === true && isYamlContentType(type);
  if (hasBody(req) && !yaml && !isJsonContentType(type)) {
    throw new AppError(
      "UNSUPPORTED_MEDIA_TYPE",
      `body: Content-Type must be application/json${options.yaml ? " or application/yaml" : ""} (got ${type ?? "none"})`,
    );
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) throw new AppError("TOO_LARGE", `body over ${limit} bytes`);
    chunks.push(chunk as Buffer);
  }
  if (size === 0) return undefined;
  if (yaml) return parseYaml(Buffer.concat(chunks).toString("utf8"));
  try {
    return parseJson(Buffer.concat(chunks).toString("utf8"));
  } catch (error) {
    if (error instanceof AppError) throw error;
    throw new AppError("INVALID_REQUEST", "body: not valid JSON");
  }
}

/** Reads a JSON body of at most 1 MiB (413 beyond); an empty body reads as undefined. */
export function readJson(req: IncomingMessage, limit = MAX_BODY_BYTES): Promise<unknown> {
  return readBody(req, { limit });
}

/** Drains an oversized body without buffering so the 413 reaches the client. */
export function discardBody(req: IncomingMessage): void {
  req.resume();
}

export function queryObject(url: URL): Record<string, string> {
  return Object.fromEntries(url.searchParams.entries());
}

/** A token bucket per key: `rate` per second, bursts of `burst`. In memory, per process. */
export class RateLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  constructor(
    private readonly rate: number,
    private readonly burst: number,
  ) {}

  take(key: string, now = Date.now()): void {
    const b = this.buckets.get(key) ?? { tokens: this.burst, at: now };
    b.tokens = Math.min(this.burst, b.tokens + ((now - b.at) / 1000) * this.rate);
    b.at = now;
    if (b.tokens < 1) {
      this.buckets.set(key, b);
      throw new AppError("RATE_LIMITED", "too many requests", (1 - b.tokens) / this.rate);
    }
    b.tokens -= 1;
    this.buckets.set(key, b);
    if (this.buckets.size > 100_000) this.prune(now);
  }

  private prune(now: number): void {
    for (const [k, b] of this.buckets) if (now - b.at > 60_000) this.buckets.delete(k);
  }
}
