/**
 * Accounts and sessions with better-auth (username + password, scrypt, httpOnly session
 * cookies, origin checks on its own mutations). Drover adds roles, the first admin, and
 * operator API tokens (stored as SHA-256 hashes) for scripts and the CLI.
 */
import { randomBytes } from "node:crypto";
import { betterAuth } from "better-auth";
import { isAPIError } from "better-auth/api";
import { prismaAdapter } from "better-auth/adapters/prisma";
import { username } from "better-auth/plugins";
import type { Db } from "../db";
import type { Logger } from "../logger";
import { newToken, sha256 } from "../lib/crypto";
import { dialectOfDb, queryRaw } from "../lib/dialect-sql";
import { AppError, unauthenticated } from "../errors";
import { asRole, type Principal, type Role } from "./roles";
import { LoginThrottle, type LoginThrottleOptions } from "./login-throttle";
import { secureCookies, signInHooks, type GuardServer } from "./sign-in-guard";
import { CLIENT_ADDRESS_HEADER } from "../lib/client-address";

export const OPERATOR_TOKEN_PREFIX = "drvo";
const TOKEN_TTL_DAYS = 30;

/**
 * `server` (the ServerContext) gives the public URL (cookie security), the logger and the
 * clock; it is read at each sign-in, so tests can move `now`. One throttle guards both the
 * console's sign-in and the token route (`verifyPassword`).
 */
export function createAuth(db: Db, secret: string, server?: GuardServer, throttleOptions?: Partial<LoginThrottleOptions>) {
  const loginThrottle = new LoginThrottle(
    db,
    throttleOptions,
    () => (server ? server.now() : new Date()).getTime(),
    (lock) => server?.log.warn(lock, `sign-in locked for ${lock.seconds} s after ${lock.failures} failed attempts (${lock.kind} ${lock.key})`),
    (what) => server?.log.warn(`sign-in throttle: ${what}`),
  );
  const auth = betterAuth({
    secret,
    basePath: "/api/auth",
    database: prismaAdapter(db, { provider: dialectOfDb(db) }),
    emailAndPassword: { enabled: true, disableSignUp: true, minPasswordLength: 8 },
    user: { additionalFields: { role: { type: "string", defaultValue: "viewer", input: false } } },
    plugins: [username()],
    // The console is served by this same process under whatever host the operator uses.
    trustedOrigins: (request) => {
      const host = request?.headers.get("host");
      return host ? [`http://${host}`, `https://${host}`] : [];
    },
    advanced: {
      useSecureCookies: secureCookies(server?.env.DROVER_PUBLIC_URL, server?.env.DROVER_TLS_CERT !== undefined),
      // The address server/main.ts decided for this request: its own limiter can no longer be
      // walked past with a new X-Forwarded-For on each try.
      ipAddress: { ipAddressHeaders: [CLIENT_ADDRESS_HEADER] },
    },
    hooks: signInHooks(loginThrottle, server),
    // Guessing is the LoginThrottle's job (failures per account and address). better-auth's
    // own default (3 sign-ins per 10 s per address, successes included) would lock out an
    // office of operators behind one address at nine o'clock: keep it as a coarse wall only.
    rateLimit: { customRules: { "/sign-in/*": { window: 60, max: server?.env.DROVER_SIGN_IN_PER_MINUTE ?? 30 } } },
    // Refusals (a wrong password, a locked account) are answers, not errors: only failures
    // of the server reach the log, through Drover's logger.
    onAPIError: { onError: (error) => logAuthError(server, error) },
    telemetry: { enabled: false },
    logger: { disabled: process.env.NODE_ENV === "test", level: "error" },
  });
  return Object.assign(auth, { loginThrottle });
}
export type Auth = ReturnType<typeof createAuth>;

function logAuthError(server: GuardServer | undefined, error: unknown): void {
  const status = isAPIError(error) ? error.statusCode : 500;
  if (status < 500) return;
  if (server) server.log.error({ err: error }, "sign-in service failed");
  else console.error(error);
}

/** The session-signing secret: from the environment, else generated once and kept. */
export async function authSecret(db: Db, fromEnv: string | undefined): Promise<string> {
  if (fromEnv) return fromEnv;
  const row = await db.serverState.findUnique({ where: { key: "authSecret" } });
  if (row) return row.value;
  const value = randomBytes(32).toString("base64url");
  // Servers starting at once on one fresh database: the first write wins, every server reads it.
  // (Prisma's upsert is a read then an insert on PostgreSQL, so the loser's insert fails.)
  await db.serverState.create({ data: { key: "authSecret", value } }).catch(() => undefined);
  return (await db.serverState.findUniqueOrThrow({ where: { key: "authSecret" } })).value;
}

export async function createUser(auth: Auth, db: Db, input: { username: string; password: string; role: Role; name?: string }) {
  const ctx = await auth.$context;
  if (input.password.length < 8) throw new AppError("INVALID_REQUEST", "password: at least 8 characters");
  const name = input.username.toLowerCase();
  if (await db.user.findUnique({ where: { username: name }, select: { id: true } })) {
    throw new AppError("CONFLICT", `user "${name}" already exists`);
  }
  const user = await ctx.internalAdapter.createUser({
    email: `${name}@users.drover.local`,
    name: input.name ?? name,
    emailVerified: true,
    username: name,
    displayUsername: input.username,
    role: input.role,
  }, { method: "admin" });
  await ctx.internalAdapter.linkAccount({
    userId: user.id,
    providerId: "credential",
    accountId: user.id,
    password: await ctx.password.hash(input.password),
  });
  return { id: user.id, username: name, role: input.role };
}

/** First start: the `admin` user, with DROVER_ADMIN_PASSWORD or a generated password printed once. */
export async function ensureAdmin(auth: Auth, db: Db, password: string | undefined, log: Logger): Promise<void> {
  if ((await db.user.count()) > 0) return;
  const chosen = password ?? randomBytes(12).toString("base64url");
  try {
    await createUser(auth, db, { username: "admin", password: chosen, role: "admin", name: "Administrator" });
  } catch (error) {
    // Several servers starting at once on a fresh PostgreSQL database: another made it first.
    if (await db.user.findUnique({ where: { username: "admin" }, select: { id: true } })) return;
    throw error;
  }
  if (password) {
    log.info({ username: "admin" }, "created the admin user with DROVER_ADMIN_PASSWORD");
  } else {
    // Printed once, to the terminal, never logged as a field.
    process.stdout.write(`\n  Drover admin account created.\n  username: admin\n  password: ${chosen}\n  (shown once: keep it, or set DROVER_ADMIN_PASSWORD on a fresh database)\n\n`);
  }
}

/**
 * The token route's password check, behind the same throttle as the console's sign-in:
 * refused (RATE_LIMITED, with Retry-After) before any hash is computed while the account or
 * the client's address is locked.
 */
export async function verifyPassword(auth: Auth, db: Db, usernameInput: string, password: string, clientAddress?: string) {
  const attempt = { account: usernameInput, address: clientAddress };
  await auth.loginThrottle.begin(attempt);
  let user: Awaited<ReturnType<typeof checkPassword>>;
  try {
    user = await checkPassword(auth, db, usernameInput, password);
  } catch (error) {
    if (error instanceof AppError && error.code === "UNAUTHENTICATED") await auth.loginThrottle.failed(attempt);
    else await auth.loginThrottle.settled(attempt);
    throw error;
  }
  await auth.loginThrottle.succeeded(attempt);
  return user;
}

async function checkPassword(auth: Auth, db: Db, usernameInput: string, password: string) {
  const ctx = await auth.$context;
  const user = await db.user.findUnique({
    where: { username: usernameInput.toLowerCase() },
    select: { id: true, username: true, role: true, accounts: { where: { providerId: "credential" }, select: { password: true } } },
  });
  const hash = user?.accounts[0]?.password;
  // Verify against a dummy hash when the user is unknown, so timing does not tell.
  const ok = await ctx.password.verify({ hash: hash ?? DUMMY_HASH, password });
  if (!user || !hash || !ok) throw unauthenticated("wrong username or password");
  return { userId: user.id, username: user.username ?? usernameInput, role: asRole(user.role) };
}
const DUMMY_HASH = "00000000000000000000000000000000:" + "0".repeat(128);

export async function issueOperatorToken(db: Db, userId: string, now: Date, name?: string) {
  const token = newToken(OPERATOR_TOKEN_PREFIX);
  const expiresAt = new Date(now.getTime() + TOKEN_TTL_DAYS * 86_400_000);
  const row = await db.apiToken.create({ data: { tokenHash: sha256(token), userId, expiresAt, name: name ?? null }, select: { id: true } });
  return { id: row.id, token, expiresAt };
}

/** lastUsedAt is for people ("is this token still in use?"): a minute's precision is plenty. */
const LAST_USED_PRECISION_MS = 60_000;

export async function principalFromToken(db: Db, token: string, now: Date): Promise<Principal | null> {
  const stale = new Date(now.getTime() - LAST_USED_PRECISION_MS);
  // One statement on every API request: the token, its owner, and whether lastUsedAt is due. A
  // revoked or expired token is refused exactly like an unknown one: the caller learns nothing more.
  const [row] = await queryRaw<{ id: string; userId: string; username: string | null; role: string; due: unknown }[]>(
    db,
    `SELECT t."id", t."userId", u."username", u."role", (t."lastUsedAt" IS NULL OR t."lastUsedAt" <= ?) AS "due"
      FROM "ApiToken" t JOIN "user" u ON u."id" = t."userId"
      WHERE t."tokenHash" = ? AND t."revokedAt" IS NULL AND t."expiresAt" > ?`,
    stale,
    sha256(token),
    now,
  );
  if (!row) return null;
  // SQLite answers the comparison as 0/1 (a bigint through the adapter), PostgreSQL as a boolean.
  if (row.due === true || Number(row.due) === 1) {
    // At most one write a minute per token, however busy it is; the guard keeps concurrent
    // requests from all writing. Bookkeeping must never refuse a valid token.
    await db.apiToken
      .updateMany({ where: { id: row.id, OR: [{ lastUsedAt: null }, { lastUsedAt: { lte: stale } }] }, data: { lastUsedAt: now } })
      .catch(() => undefined);
  }
  return { userId: row.userId, username: row.username ?? row.userId, role: asRole(row.role), via: "token", tokenId: row.id };
}

export async function principalFromSession(auth: Auth, headers: Headers): Promise<Principal | null> {
  const session = await auth.api.getSession({ headers });
  if (!session) return null;
  const user = session.user as { id: string; username?: string | null; role?: string | null };
  return { userId: user.id, username: user.username ?? user.id, role: asRole(user.role), via: "session" };
}
