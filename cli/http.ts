/**
 * A small typed client for the operator REST API (/api/v1): JSON in and out, the protocol's
 * error body `{"error": {"code", "message"}}` turned into an ApiError, and every failure
 * carrying the exit code the CLI ends with. `call` is typed by the types generated from the
 * server's OpenAPI document (operator-api.d.ts): a route, a parameter, a body field or an
 * answer's field that the server renames breaks `tsc` here.
 */
import { randomUUID } from "node:crypto";
import type { paths } from "./operator-api";

type Method = "get" | "post" | "put" | "patch" | "delete";
/** The routes that take `method`. */
export type PathOf<M extends Method> = { [P in keyof paths]: paths[P][M] extends { responses: unknown } ? P : never }[keyof paths];
type Operation<P extends keyof paths, M extends Method> = Extract<paths[P][M], { responses: unknown }>;
type JsonOf<R> = R extends { content: { "application/json": infer J } } ? J : never;
/** A route's success answer as the document describes it. */
export type Answer<P extends PathOf<M>, M extends Method = "get"> = Operation<P, M>["responses"] extends infer R
  ? JsonOf<R[Extract<keyof R, 200 | 201>]>
  : never;
type ParametersOf<P extends keyof paths, M extends Method> = Operation<P, M>["parameters"];
type PathParams<P extends keyof paths, M extends Method> = NonNullable<ParametersOf<P, M>["path"]>;
type QueryParams<P extends keyof paths, M extends Method> = NonNullable<ParametersOf<P, M>["query"]>;
type BodyOf<P extends keyof paths, M extends Method> = Operation<P, M>["requestBody"] extends infer B ? (B extends { content: { "application/json": infer J } } ? J : never) : never;

/** What a call sends: the path's parameters, the query, the body (as the document types them). */
export type CallOptions<P extends PathOf<M>, M extends Method> = ([PathParams<P, M>] extends [never] ? { path?: never } : { path: PathParams<P, M> }) &
  ([QueryParams<P, M>] extends [never] ? { query?: never } : { query?: { [K in keyof QueryParams<P, M>]?: QueryParams<P, M>[K] | undefined } }) &
  ([BodyOf<P, M>] extends [never] ? { body?: never } : { body?: BodyOf<P, M> }) & {
    /** A body sent as is with its media type (a YAML file's own text), instead of `body` as JSON. */
    raw?: { text: string; contentType: string };
    signal?: AbortSignal;
  };

/** `/devices/{name}` with `{name: "a b"}` → `/devices/a%20b`. */
function fillPath(template: string, params: Record<string, string> | undefined): string {
  return template.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = params?.[name];
    if (value === undefined) throw new Error(`${template}: no value for {${name}}`);
    return encodeURIComponent(value);
  });
}

/** Exit codes: what a person (or a script) expects from a command-line tool. */
export const EXIT = {
  OK: 0,
  /** The server refused: validation, conflict, not found, forbidden. */
  REFUSED: 1,
  /** Usage errors (commander's own, and ours). */
  USAGE: 2,
  /** Not logged in, or the server answered 401. */
  AUTH: 3,
  /** The server could not be reached. */
  UNREACHABLE: 4,
} as const;

export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
    this.name = "CliError";
  }
}

/** The server answered with an error status; `code` is the protocol's error code. */
export class ApiError extends CliError {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly detail: string,
  ) {
    super(`${code}: ${detail}`, status === 401 ? EXIT.AUTH : EXIT.REFUSED);
    this.name = "ApiError";
  }
}

export type Query = Record<string, string | number | boolean | undefined>;

export interface ApiOptions {
  /** Base URL of the server, e.g. http://localhost:3000. */
  server: string;
  token?: string | undefined;
  timeoutMs?: number;
}

export interface RequestOptions {
  query?: Query;
  body?: unknown;
  /** A body sent as is with its media type (a YAML file's own text), instead of `body` as JSON. */
  raw?: { text: string; contentType: string };
  /** Aborts the request (e.g. on SIGINT); an abort rejects with the signal's reason. */
  signal?: AbortSignal;
  /** The request's Idempotency-Key; a POST without one gets a fresh one (a retry of the same create passes the first's). */
  idempotencyKey?: string;
}

export class Api {
  readonly server: string;
  private readonly token: string | undefined;
  private readonly timeoutMs: number;

  constructor(options: ApiOptions) {
    this.server = options.server;
    this.token = options.token;
    this.timeoutMs = options.timeoutMs ?? 30_000;
  }

  /** One route of the operator API, typed by its OpenAPI document: path, parameters, body and answer. */
  call<M extends Method, P extends PathOf<M>>(method: M, path: P, ...[options]: Record<never, never> extends CallOptions<P, M> ? [CallOptions<P, M>?] : [CallOptions<P, M>]): Promise<Answer<P, M>> {
    const o = (options ?? {}) as { path?: Record<string, string>; query?: Query; body?: unknown; raw?: { text: string; contentType: string }; signal?: AbortSignal };
    return this.request<Answer<P, M>>(method.toUpperCase(), fillPath(path, o.path), {
      ...(o.query ? { query: o.query } : {}),
      ...(o.raw ? { raw: o.raw } : o.body !== undefined ? { body: o.body } : method === "get" ? {} : { body: {} }),
      ...(o.signal ? { signal: o.signal } : {}),
    });
  }

  get<T>(path: string, query?: Query, signal?: AbortSignal): Promise<T> {
    return this.request<T>("GET", path, { ...(query ? { query } : {}), ...(signal ? { signal } : {}) });
  }

  post<T>(path: string, body: unknown = {}, query?: Query): Promise<T> {
    return this.request<T>("POST", path, { body, ...(query ? { query } : {}) });
  }

  /** POST a text as is, e.g. a YAML file, so the server's messages point at the file's own lines. */
  postText<T>(path: string, text: string, contentType: string, query?: Query): Promise<T> {
    return this.request<T>("POST", path, { raw: { text, contentType }, ...(query ? { query } : {}) });
  }

  put<T>(path: string, body: unknown = {}): Promise<T> {
    return this.request<T>("PUT", path, { body });
  }

  url(path: string, query: Query = {}): string {
    const url = new URL(this.server.replace(/\/+$/, "") + "/api/v1" + path);
    for (const [key, value] of Object.entries(query)) if (value !== undefined && value !== "") url.searchParams.set(key, String(value));
    return url.toString();
  }

  async request<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    const headers: Record<string, string> = { accept: "application/json" };
    if (this.token) headers.authorization = `Bearer ${this.token}`;
    // Every POST carries a key of its own (issue 22): the creating routes answer a repeat of
    // it with the first answer instead of creating twice; the others ignore it.
    if (method === "POST") headers["idempotency-key"] = options.idempotencyKey ?? randomUUID();
    const body = options.raw ? options.raw.text : options.body === undefined ? undefined : JSON.stringify(options.body);
    if (options.raw) headers["content-type"] = options.raw.contentType;
    else if (options.body !== undefined) headers["content-type"] = "application/json";
    const timeout = AbortSignal.timeout(this.timeoutMs);
    const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
    let res: Response;
    let text: string;
    try {
      res = await fetch(this.url(path, options.query), {
        method,
        headers,
        body,
        signal,
      });
      text = await res.text();
    } catch (error) {
      if (options.signal?.aborted) throw options.signal.reason;
      throw new CliError(`cannot reach the server at ${this.server}: ${describeNetworkError(error, timeout.aborted)}`, EXIT.UNREACHABLE);
    }
    const answer = parseJson(text);
    if (!res.ok) throw toApiError(res, answer, text);
    if (answer === undefined && text !== "") {
      throw new CliError(`unexpected answer from ${this.server} (${method} ${path}): not JSON; is this a Drover server?`, EXIT.REFUSED);
    }
    return answer as T;
  }
}

function parseJson(text: string): unknown {
  if (text === "") return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function toApiError(res: Response, body: unknown, text: string): ApiError {
  const error = (body as { error?: { code?: unknown; message?: unknown } } | undefined)?.error;
  if (error && typeof error.code === "string") {
    return new ApiError(res.status, error.code, typeof error.message === "string" ? error.message : res.statusText);
  }
  // Not the protocol's shape: a proxy, or not a Drover server at all.
  const snippet = text.replace(/\s+/g, " ").trim().slice(0, 200);
  return new ApiError(res.status, `HTTP_${res.status}`, snippet || res.statusText || "no message");
}

function describeNetworkError(error: unknown, timedOut: boolean): string {
  if (timedOut) return "timed out";
  const cause = (error as { cause?: { code?: string; message?: string } } | undefined)?.cause;
  if (cause?.code) return cause.code;
  if (cause?.message) return cause.message;
  return error instanceof Error ? error.message : String(error);
}
