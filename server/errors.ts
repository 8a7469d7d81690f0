/**
 * One error type with a code (STYLE.md), mapped once to HTTP statuses and tRPC codes.
 */
import type { ErrorCode } from "../lib/protocol";
import { TransitionError } from "../lib/state-machine";
import { SelectorError } from "../lib/label-selector";
import { isDatabaseUnreachable, unavailableRetryAfterSeconds } from "./database-health";

export const HTTP_STATUS: Record<ErrorCode, number> = {
  INVALID_REQUEST: 400,
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  RATE_LIMITED: 429,
  INTERNAL: 500,
  UNAVAILABLE: 503,
};

export const TRPC_CODE = {
  INVALID_REQUEST: "BAD_REQUEST",
  UNAUTHENTICATED: "UNAUTHORIZED",
  FORBIDDEN: "FORBIDDEN",
  NOT_FOUND: "NOT_FOUND",
  CONFLICT: "CONFLICT",
  TOO_LARGE: "PAYLOAD_TOO_LARGE",
  UNSUPPORTED_MEDIA_TYPE: "UNSUPPORTED_MEDIA_TYPE",
  RATE_LIMITED: "TOO_MANY_REQUESTS",
  INTERNAL: "INTERNAL_SERVER_ERROR",
  UNAVAILABLE: "SERVICE_UNAVAILABLE",
} as const satisfies Record<ErrorCode, string>;

export const CODE_FROM_TRPC: Record<string, ErrorCode> = Object.fromEntries(
  Object.entries(TRPC_CODE).map(([code, trpc]) => [trpc, code as ErrorCode]),
);

export class AppError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = "AppError";
  }
  get status(): number {
    return HTTP_STATUS[this.code];
  }
}

export const invalid = (message: string) => new AppError("INVALID_REQUEST", message);
export const notFound = (what: string) => new AppError("NOT_FOUND", `${what} not found`);
export const conflict = (message: string) => new AppError("CONFLICT", message);
export const forbidden = (message: string) => new AppError("FORBIDDEN", message);
export const unauthenticated = (message = "missing, unknown or revoked token") => new AppError("UNAUTHENTICATED", message);

/** The database could not be asked (database-health.ts): the driver's own words stay in the log. */
export const databaseUnavailable = () => new AppError("UNAVAILABLE", "the database is unreachable; try again shortly", unavailableRetryAfterSeconds());

/** Normalises anything thrown by domain code into an AppError. */
export function toAppError(error: unknown): AppError {
  if (error instanceof AppError) return error;
  if (isDatabaseUnreachable(error)) return databaseUnavailable();
  if (error instanceof TransitionError) return new AppError("CONFLICT", error.message);
  if (error instanceof SelectorError) return new AppError("INVALID_REQUEST", `labelSelector: ${error.message}`);
  return new AppError("INTERNAL", "internal error");
}
