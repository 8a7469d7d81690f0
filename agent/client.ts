/**
 * A typed client for the agent protocol v1 (../shared/AGENT_PROTOCOL.md) over global fetch.
 * Request and response bodies go through the shared schemas of lib/protocol, so the agent
 * and the server hold to one contract. Errors come out as three kinds:
 *  - ProtocolError: the server answered with an error status (code, status, retryAfterMs);
 *  - InvalidResponseError: a success status whose body breaks the contract;
 *  - TransportError: no answer at all (refused, reset, DNS, timeout).
 * An abort through the caller's signal is rethrown as it is (an AbortError).
 */
import { z } from "zod";
import {
  ActionReport,
  AGENT_API_BASE,
  CertificateRequestBody,
  CertificateResponse,
  EnrollmentCreated,
  EnrollmentDecision,
  EnrollmentRequestBody,
  ERROR_CODES,
  ErrorBody,
  describeZodError,
  StatusReport,
  StatusResponse,
  WorkResponse,
  type ErrorCode,
} from "../lib/protocol";
import { linkedSignal } from "./timing";

/** The 200 answer to an action report, read loosely: the agent does not depend on its other fields. */
const RecordedAction = z.looseObject({ id: z.string(), state: z.string() });

const CODE_BY_STATUS: Record<number, ErrorCode> = {
  400: "INVALID_REQUEST",
  401: "UNAUTHENTICATED",
  403: "FORBIDDEN",
  404: "NOT_FOUND",
  409: "CONFLICT",
  413: "TOO_LARGE",
  415: "UNSUPPORTED_MEDIA_TYPE",
  429: "RATE_LIMITED",
  503: "UNAVAILABLE",
};

export class ProtocolError extends Error {
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    message: string,
    /** From `Retry-After`, when the server sent one. */
    readonly retryAfterMs?: number,
  ) {
    super(message);
    this.name = "ProtocolError";
  }
}

export class InvalidResponseError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = "InvalidResponseError";
  }
}

export class TransportError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "TransportError";
  }
}

/** Retry-After is either delta-seconds or an HTTP date. */
export function parseRetryAfter(value: string | null, now: number = Date.now()): number | undefined {
  if (value === null || value.trim() === "") return undefined;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000);
  const at = Date.parse(trimmed);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - now);
}

export interface ProtocolClientOptions {
  /** The server's base URL, e.g. `http://localhost:3000` (a path prefix is kept). */
  serverUrl: string;
  /** Defaults to global fetch; the simulator and tests may pass their own. */
  fetch?: typeof fetch;
  /** Timeout of ordinary requests, ms. Long-polls get their wait on top. */
  requestTimeoutMs?: number;
  userAgent?: string;
}

type EnrollmentRequestInput = z.input<typeof EnrollmentRequestBody>;
type StatusReportInput = z.input<typeof StatusReport>;
type ActionReportInput = z.input<typeof ActionReport>;

export class ProtocolClient {
  private readonly base: string;
  private readonly fetchImpl: typeof fetch;
  private readonly requestTimeoutMs: number;
  private readonly userAgent: string | undefined;

  constructor(options: ProtocolClientOptions) {
    this.base = options.serverUrl.replace(/\/+$/, "") + AGENT_API_BASE;
    this.fetchImpl = options.fetch ?? globalThis.fetch.bind(globalThis);
    this.requestTimeoutMs = options.requestTimeoutMs ?? 30_000;
    this.userAgent = options.userAgent;
  }

  /** POST /enrollments → {enrollmentId, status}. */
  async createEnrollment(body: EnrollmentRequestInput, signal?: AbortSignal) {
    return this.request(EnrollmentCreated, "POST", "/enrollments", {
      body: EnrollmentRequestBody.parse(body),
      signal,
    });
  }

  /** GET /enrollments/{id}?wait= → {status, token?}. Waits up to `waitSeconds` for a decision. */
  async getEnrollment(enrollmentId: string, secret: string, waitSeconds: number, signal?: AbortSignal) {
    return this.request(EnrollmentDecision, "GET", `/enrollments/${encodeURIComponent(enrollmentId)}?wait=${waitSeconds}`, {
      headers: { "x-enrollment-secret": secret },
      waitSeconds,
      signal,
    });
  }

  /** GET /work?specVersion=&wait= : the long-poll. */
  async getWork(token: string, specVersion: number, waitSeconds: number, signal?: AbortSignal) {
    return this.request(WorkResponse, "GET", `/work?specVersion=${specVersion}&wait=${waitSeconds}`, {
      token,
      waitSeconds,
      signal,
    });
  }

  /** POST /status : the heartbeat. */
  async postStatus(token: string, report: StatusReportInput, signal?: AbortSignal) {
    return this.request(StatusResponse, "POST", "/status", { token, body: StatusReport.parse(report), signal });
  }

  /**
   * PUT /actions/{id} : an action report. The answer is the action as the server now
   * records it; the agent needs only the 200, so it is read loosely.
   */
  async reportAction(token: string, actionId: string, report: ActionReportInput, signal?: AbortSignal) {
    return this.request(RecordedAction, "PUT", `/actions/${encodeURIComponent(actionId)}`, {
      token,
      body: ActionReport.parse(report),
      signal,
    });
  }

  /** POST /certificate (issue 23): a new client certificate for the key of `csr`. */
  async renewCertificate(token: string, csr: string, signal?: AbortSignal) {
    return this.request(CertificateResponse, "POST", "/certificate", { token, body: CertificateRequestBody.parse({ csr }), signal });
  }

  private async request<T extends z.ZodType | null>(
    schema: T,
    method: string,
    path: string,
    options: {
      token?: string;
      body?: unknown;
      headers?: Record<string, string>;
      waitSeconds?: number;
      signal?: AbortSignal | undefined;
    },
  ): Promise<T extends z.ZodType ? z.output<T> : unknown> {
    const headers: Record<string, string> = { accept: "application/json", ...options.headers };
    // An empty token: the connection's client certificate authenticates the device (issue 23).
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    if (options.body !== undefined) headers["content-type"] = "application/json";
    if (this.userAgent) headers["user-agent"] = this.userAgent;

    const timeoutMs = this.requestTimeoutMs + (options.waitSeconds ?? 0) * 1000;
    const linked = linkedSignal([options.signal], timeoutMs);

    let response: Response;
    let text: string;
    try {
      response = await this.fetchImpl(this.base + path, {
        method,
        headers,
        body: options.body === undefined ? undefined : JSON.stringify(options.body),
        signal: linked.signal,
      });
      text = await response.text();
    } catch (error) {
      if (options.signal?.aborted) throw error;
      if (linked.timedOut()) throw new TransportError(`${method} ${path}: no answer within ${timeoutMs} ms`, { cause: error });
      throw new TransportError(`${method} ${path}: ${describeFetchError(error)}`, { cause: error });
    } finally {
      linked.dispose();
    }

    let json: unknown = undefined;
    if (text !== "") {
      try {
        json = JSON.parse(text);
      } catch {
        json = undefined;
      }
    }

    if (!response.ok) {
      const parsed = ErrorBody.safeParse(json);
      const code: ErrorCode = parsed.success
        ? parsed.data.error.code
        : (CODE_BY_STATUS[response.status] ?? "INTERNAL");
      const message = parsed.success ? parsed.data.error.message : `HTTP ${response.status} ${response.statusText}`.trim();
      const retryAfterMs = parseRetryAfter(response.headers.get("retry-after"));
      throw new ProtocolError(response.status, ERROR_CODES.includes(code) ? code : "INTERNAL", message, retryAfterMs);
    }

    if (schema === null) return json as T extends z.ZodType ? z.output<T> : unknown;
    const parsed = schema.safeParse(json);
    if (!parsed.success) {
      throw new InvalidResponseError(response.status, `${method} ${path}: unexpected answer: ${describeZodError(parsed.error)}`);
    }
    return parsed.data as T extends z.ZodType ? z.output<T> : unknown;
  }
}

function describeFetchError(error: unknown): string {
  if (error instanceof Error) {
    const cause = (error as { cause?: unknown }).cause;
    if (cause instanceof Error) {
      const code = (cause as { code?: unknown }).code;
      return typeof code === "string" ? `${error.message} (${code}: ${cause.message})` : `${error.message} (${cause.message})`;
    }
    return error.message;
  }
  return String(error);
}

/** True when an error comes from the caller's own abort (agent stopping). */
export function isAbortError(error: unknown): boolean {
  return error instanceof Error && error.name === "AbortError";
}
