/**
 * What better-auth's sign-in needs from Drover: the password-guessing throttle around its
 * password checks (its own limiter counts requests per address, not failures per account),
 * the client address the server decided (never a header the client chose), whether session
 * cookies are Secure, and a warning when someone signs in where the cookie is unsafe or lost.
 */
import { APIError, createAuthMiddleware, isAPIError } from "better-auth/api";
import type { ServerContext } from "../context";
import { CLIENT_ADDRESS_HEADER } from "../lib/client-address";
import { AppError } from "../errors";
import type { LoginAttempt, LoginThrottle } from "./login-throttle";

/** better-auth's routes that check a password without a session. */
const SIGN_IN_PATHS = new Set(["/sign-in/username", "/sign-in/email"]);

/** Drover users' better-auth emails are `<username>@` this (createUser). */
export const USER_EMAIL_DOMAIN = "users.drover.local";

/** The server settings the guard reads, each time (tests move `now` and swap `log`). */
export type GuardServer = Pick<ServerContext, "env" | "log" | "now">;

/**
 * Secure cookies only when the console is reached over https: its public address is https, or
 * the server itself speaks TLS (issue 23: `tlsOn`, DROVER_TLS_CERT; plain HTTP to its port is only
 * ever redirected). Over plain http a browser drops `Secure` (and `__Secure-`) cookies from any
 * host but localhost, so signing in would silently fail; better-auth's default (Secure whenever
 * NODE_ENV is production) assumes TLS.
 */
export function secureCookies(publicUrl: string | undefined, tlsOn = false): boolean {
  return tlsOn || (publicUrl !== undefined && new URL(publicUrl).protocol === "https:");
}

/** Hosts a browser treats as secure even over http (Secure cookies work there). */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/^\[|\]$/g, "");
  return host === "localhost" || host.endsWith(".localhost") || host === "::1" || /^127(\.\d{1,3}){3}$/.test(host);
}

interface SignInContext {
  path?: string;
  body?: unknown;
  headers?: Headers;
}

/** The account and address of a sign-in attempt, or null for other routes and bodies without a password. */
function signInAttempt(ctx: SignInContext): LoginAttempt | null {
  if (!ctx.path || !SIGN_IN_PATHS.has(ctx.path)) return null;
  const body = (ctx.body ?? {}) as { username?: unknown; email?: unknown; password?: unknown };
  const name = ctx.path === "/sign-in/username" ? body.username : body.email;
  // better-auth refuses these before hashing anything: nothing to throttle.
  if (typeof name !== "string" || name.trim() === "" || typeof body.password !== "string" || body.password === "") return null;
  const lower = name.trim().toLowerCase();
  // The same account by email or by username counts once.
  const account = lower.endsWith(`@${USER_EMAIL_DOMAIN}`) ? lower.slice(0, -USER_EMAIL_DOMAIN.length - 1) : lower;
  return { account, address: ctx.headers?.get(CLIENT_ADDRESS_HEADER) ?? undefined };
}

export function signInHooks(throttle: LoginThrottle, server: GuardServer | undefined) {
  const secure = secureCookies(server?.env.DROVER_PUBLIC_URL, server?.env.DROVER_TLS_CERT !== undefined);
  let warned = false;

  /** Once per process: a browser signed in over http from a host that is not loopback. */
  function warnIfPlainHttp(headers: Headers | undefined): void {
    if (warned || !server) return;
    // The browser's Origin says which scheme and host it used (the server itself only ever
    // sees plain HTTP, from the browser or from a TLS proxy).
    const origin = headers?.get("origin") ?? headers?.get("referer");
    let url: URL;
    try {
      url = new URL(origin ?? "");
    } catch {
      return;
    }
    if (url.protocol !== "http:" || isLoopbackHost(url.hostname)) return;
    warned = true;
    const fix = "serve Drover over HTTPS behind a reverse proxy, set DROVER_PUBLIC_URL=https://<its address> and DROVER_TRUSTED_PROXIES=<the proxy's address>";
    if (secure) {
      server.log.warn(
        { origin: url.origin, publicUrl: server.env.DROVER_PUBLIC_URL },
        `a browser signed in over plain HTTP at ${url.origin} while DROVER_PUBLIC_URL is https: it drops the Secure session cookie, so the sign-in does not stick; open the console at DROVER_PUBLIC_URL`,
      );
    } else {
      server.log.warn(
        { origin: url.origin },
        `signed in over plain HTTP at ${url.origin}: the session cookie is not Secure, so anyone on the network between the browser and Drover can read and reuse it; ${fix}`,
      );
    }
  }

  return {
    before: createAuthMiddleware(async (ctx) => {
      const attempt = signInAttempt(ctx);
      if (!attempt) return;
      try {
        await throttle.begin(attempt);
      } catch (error) {
        if (!(error instanceof AppError) || error.code !== "RATE_LIMITED") throw error;
        const seconds = error.retryAfterSeconds ?? 1;
        throw new APIError(
          "TOO_MANY_REQUESTS",
          { code: "RATE_LIMITED", message: error.message, retryAfter: seconds },
          { "Retry-After": String(seconds) },
        );
      }
    }),
    after: createAuthMiddleware(async (ctx) => {
      const attempt = signInAttempt(ctx);
      if (!attempt) return;
      const returned: unknown = ctx.context.returned;
      if (isAPIError(returned)) {
        // 401 is a wrong name or password (better-auth answers both alike); anything else
        // (a malformed name, 422) was refused before a password was tried.
        if (returned.statusCode === 401) await throttle.failed(attempt);
        else await throttle.settled(attempt);
        return;
      }
      await throttle.succeeded(attempt);
      warnIfPlainHttp(ctx.headers);
    }),
  };
}
