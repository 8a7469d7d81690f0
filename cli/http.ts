/**
 * A small typed client for the operator REST API (/api/v1): JSON in and out, the protocol's
 * error body `{"error": {"code", "message"}}` turned into an ApiError, and every failure
 * carrying the exit code the CLI ends with.
 */

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
