/**
 * Password guessing (issue 6, finding 6): the throttle's rules alone, then a real server's
 * token route (REST and tRPC) and console sign-in (better-auth) under a guessing loop, with
 * and without trusted proxies; and the session cookie's security from DROVER_PUBLIC_URL.
 *
 * Runs once (the unit project, on SQLite): the throttle counts in the server's memory, so it
 * cannot differ between the databases, and sign-in itself runs on both in tests/front-door.
 * When the throttle's counts move into the database (cluster-wide limits, issue 22), this file
 * moves back to tests/.
 */
import { Writable } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { pino } from "pino";
import { getIP } from "better-auth/api";
import { LoginThrottle, DEFAULT_LOGIN_THROTTLE } from "./login-throttle";
import { isLoopbackHost, secureCookies } from "./sign-in-guard";
import { CLIENT_ADDRESS_HEADER } from "../lib/client-address";
import { AppError } from "../errors";
import { createCallerFactory } from "../trpc/init";
import { appRouter } from "../trpc/router";
import { startTestServer, ADMIN_PASSWORD, type TestServer } from "../../tests/helpers/server";

const { accountLimit, addressLimit, baseLockMs } = DEFAULT_LOGIN_THROTTLE;
// Each failed attempt costs a password hash (scrypt, ≈ 0.1 s of CPU): the address tests against a
// real server use a smaller address limit (DROVER_LOGIN_ADDRESS_LIMIT), which is what they test.
const serverAddressLimit = 6;
const SMALL_ADDRESS_LIMIT = { DROVER_LOGIN_ADDRESS_LIMIT: String(serverAddressLimit) };

function refusal(fn: () => void): AppError | null {
  try {
    fn();
    return null;
  } catch (error) {
    if (error instanceof AppError) return error;
    throw error;
  }
}

describe("LoginThrottle (pure, time injected)", () => {
  const who = { account: "alice", address: "10.0.0.1" };

  function fail(t: LoginThrottle, attempt: { account?: string; address?: string }, now: number) {
    t.begin(attempt, now);
    t.failed(attempt, now);
  }

  it("locks an account after its limit, refuses even the right password, then lets it try again with a doubled lock", () => {
    const t = new LoginThrottle();
    for (let i = 0; i < accountLimit; i++) fail(t, who, 1000 + i);
    const locked = refusal(() => t.begin(who, 2000));
    expect(locked?.code).toBe("RATE_LIMITED");
    expect(locked?.retryAfterSeconds).toBe(Math.ceil((1000 + accountLimit - 1 + baseLockMs - 2000) / 1000));
    // Still locked one second before the end; open at the end.
    const end = 1000 + accountLimit - 1 + baseLockMs;
    expect(refusal(() => t.begin(who, end - 1000))).not.toBeNull();
    expect(refusal(() => t.begin(who, end))).toBeNull();
    // The next failure locks twice as long.
    t.failed(who, end);
    expect(refusal(() => t.begin(who, end + 1))?.retryAfterSeconds).toBe((2 * baseLockMs) / 1000);
  });

  it("tells who locked, once per lock", () => {
    const locks: unknown[] = [];
    const t = new LoginThrottle({ accountLimit: 2, addressLimit: 3 }, () => 0, (lock) => locks.push(lock));
    fail(t, who, 0);
    fail(t, who, 0);
    expect(locks).toEqual([{ kind: "account", key: "alice", failures: 2, seconds: baseLockMs / 1000 }]);
  });

  it("a success clears the account's count but not the address's", () => {
    const t = new LoginThrottle({ accountLimit: 3, addressLimit: 5 });
    fail(t, who, 0);
    fail(t, who, 0);
    t.begin(who, 0);
    t.succeeded(who, 0);
    fail(t, who, 1);
    fail(t, who, 1);
    expect(refusal(() => t.begin(who, 2))).toBeNull();
    t.failed(who, 2);
    // 5 failures from the address in all: locked, whatever the account.
    expect(refusal(() => t.begin({ account: "bob", address: who.address }, 3))?.code).toBe("RATE_LIMITED");
    expect(refusal(() => t.begin({ account: "bob", address: "10.0.0.2" }, 3))).toBeNull();
  });

  it("counts per address across names, and per name across addresses", () => {
    const t = new LoginThrottle();
    for (let i = 0; i < addressLimit; i++) fail(t, { account: `name-${i}`, address: "10.0.0.9" }, i);
    expect(refusal(() => t.begin({ account: "another", address: "10.0.0.9" }, 100))?.code).toBe("RATE_LIMITED");
    for (let i = 0; i < accountLimit; i++) fail(t, { account: "Root", address: `10.1.0.${i}` }, i);
    expect(refusal(() => t.begin({ account: "root", address: "10.2.0.1" }, 100))?.code).toBe("RATE_LIMITED");
  });

  it("attempts in flight count, so a parallel burst cannot all pass before the first failure", () => {
    const t = new LoginThrottle();
    for (let i = 0; i < accountLimit; i++) t.begin(who, 0);
    const err = refusal(() => t.begin(who, 0));
    expect(err?.code).toBe("RATE_LIMITED");
    expect(err?.retryAfterSeconds).toBe(1);
    t.settled(who, 0);
    expect(refusal(() => t.begin(who, 0))).toBeNull();
    // An outcome that never comes stops counting after pendingTimeoutMs.
    expect(refusal(() => t.begin(who, 1))).not.toBeNull();
    expect(refusal(() => t.begin(who, DEFAULT_LOGIN_THROTTLE.pendingTimeoutMs + 1))).toBeNull();
  });

  it("forgets failures after a quiet window counted from the end of the lock", () => {
    const t = new LoginThrottle({ windowMs: 60_000 });
    for (let i = 0; i < accountLimit; i++) fail(t, who, 0);
    const lockEnd = baseLockMs;
    // Open after the lock, but the count is still there: one more failure locks again.
    expect(refusal(() => t.begin(who, lockEnd))).toBeNull();
    t.settled(who, lockEnd);
    expect(refusal(() => t.begin(who, lockEnd + 60_000))).toBeNull();
    t.failed(who, lockEnd + 60_000);
    expect(refusal(() => t.begin(who, lockEnd + 60_001))).toBeNull();
    expect(t.size().accounts).toBe(1);
  });

  it("stays bounded under a flood of names and addresses", () => {
    const t = new LoginThrottle({ maxEntries: 100 });
    for (let i = 0; i < 5000; i++) fail(t, { account: `n${i}`, address: `10.${i >> 8}.${i & 255}.1` }, i);
    expect(t.size().accounts).toBeLessThanOrEqual(100);
    expect(t.size().addresses).toBeLessThanOrEqual(100);
  });

  it("decides cookie security from the public URL, and knows loopback hosts", () => {
    expect(secureCookies(undefined)).toBe(false);
    expect(secureCookies("http://drover.example:3000")).toBe(false);
    expect(secureCookies("https://drover.example")).toBe(true);
    for (const host of ["localhost", "app.localhost", "127.0.0.1", "127.1.2.3", "[::1]"]) expect(isLoopbackHost(host)).toBe(true);
    for (const host of ["drover.test", "10.0.0.1", "[fd00::1]", "localhost.example.com"]) expect(isLoopbackHost(host)).toBe(false);
  });
});

// ---------------------------------------------------------------------------------------
// A real server

let s: TestServer | undefined;
afterEach(async () => {
  await s?.close();
  s = undefined;
});

interface Answer {
  status: number;
  headers: Headers;
  body: { error?: { code: string; message: string }; code?: string; message?: string; retryAfter?: number } & Record<string, unknown>;
}

async function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : {} };
}

/** The operator token route (REST). */
const token = (server: TestServer, username: string, password: string, headers?: Record<string, string>) =>
  post(`${server.url}/api/v1/auth/token`, { username, password }, headers);

/** The console's sign-in, as the login form sends it (same origin). */
const signIn = (server: TestServer, username: string, password: string, headers?: Record<string, string>) =>
  post(`${server.url}/api/auth/sign-in/username`, { username, password }, { origin: server.url, ...headers });

type Route = (server: TestServer, username: string, password: string, headers?: Record<string, string>) => Promise<Answer>;
const routes: [string, Route, number][] = [
  ["REST POST /api/v1/auth/token", token, 201],
  ["console POST /api/auth/sign-in/username", signIn, 200],
];

async function addUser(server: TestServer, username: string, password: string) {
  const admin = await server.ctx.db.user.findUniqueOrThrow({ where: { username: "admin" }, select: { id: true } });
  const caller = createCallerFactory(appRouter)({ server: server.ctx, auth: server.auth, principal: { userId: admin.id, username: "admin", role: "admin", via: "token" } });
  await caller.auth.createUser({ username, password, role: "viewer" });
}

function expectLimited(answer: Answer) {
  expect(answer.status).toBe(429);
  const code = answer.body.error?.code ?? answer.body.code;
  expect(code).toBe("RATE_LIMITED");
  const retryAfter = Number(answer.headers.get("retry-after"));
  expect(retryAfter).toBeGreaterThan(0);
  return retryAfter;
}

describe.each(routes)("%s", (_name, route, okStatus) => {
  it("locks the account after a guessing loop, refuses the right password while locked, lets it in after the delay", async () => {
    s = await startTestServer();
    await addUser(s, "mallory", "mallory-password");
    for (let i = 0; i < accountLimit; i++) expect((await route(s, "mallory", `guess-${i}`)).status).toBe(401);
    const wait = expectLimited(await route(s, "mallory", `guess-x`));
    expect(wait).toBe(baseLockMs / 1000);
    expectLimited(await route(s, "MALLORY", "mallory-password"));
    // Another account from the same address is not locked.
    expect((await route(s, "admin", ADMIN_PASSWORD)).status).toBe(okStatus);
    s.advanceClock(wait * 1000);
    expect((await route(s, "mallory", "mallory-password")).status).toBe(okStatus);
    // The success cleared the account's count.
    expect((await route(s, "mallory", "wrong")).status).toBe(401);
  });

  it("limits one address across many (unknown) usernames, whatever X-Forwarded-For says", async () => {
    s = await startTestServer(SMALL_ADDRESS_LIMIT);
    for (let i = 0; i < serverAddressLimit; i++) {
      const answer = await route(s, `nobody_${i}`, "guess", { "x-forwarded-for": `203.0.113.${i}` });
      expect(answer.status).toBe(401);
    }
    expectLimited(await route(s, "nobody_new", "guess", { "x-forwarded-for": "198.51.100.7" }));
    expectLimited(await route(s, "admin", ADMIN_PASSWORD, { "x-forwarded-for": "198.51.100.8" }));
  });

  it("with DROVER_TRUSTED_PROXIES, the forwarded address is the key", async () => {
    s = await startTestServer({ DROVER_TRUSTED_PROXIES: "127.0.0.1", ...SMALL_ADDRESS_LIMIT });
    // Many clients behind the proxy: none is limited by the others' failures.
    for (let i = 0; i < serverAddressLimit + 5; i++) {
      expect((await route(s, `someone_${i}`, "guess", { "x-forwarded-for": `203.0.113.${i}` })).status).toBe(401);
    }
    // One client behind it guessing: limited, while another client still gets in.
    for (let i = 0; i < serverAddressLimit; i++) {
      expect((await route(s, `other_${i}`, "guess", { "x-forwarded-for": "198.51.100.1" })).status).toBe(401);
    }
    expectLimited(await route(s, "other_x", "guess", { "x-forwarded-for": "198.51.100.1" }));
    expect((await route(s, "admin", ADMIN_PASSWORD, { "x-forwarded-for": "198.51.100.2" })).status).toBe(okStatus);
  });
});

describe("one throttle for every password check", () => {
  it("failures on the token route and the console sign-in add up; tRPC createToken is refused too", async () => {
    s = await startTestServer();
    const log = captureLog(s);
    await addUser(s, "trudy", "trudy-password");
    for (let i = 0; i < accountLimit; i++) {
      const route = i % 2 === 0 ? token : signIn;
      expect((await route(s, "trudy", `guess-${i}`)).status).toBe(401);
    }
    expectLimited(await signIn(s, "trudy", "trudy-password"));
    expectLimited(await token(s, "trudy", "trudy-password"));
    // The email sign-in reaches the same account.
    expectLimited(await post(`${s.url}/api/auth/sign-in/email`, { email: "trudy@users.drover.local", password: "trudy-password" }, { origin: s.url }));
    const trpc = await post(`${s.url}/api/trpc/auth.createToken`, { username: "trudy", password: "trudy-password" });
    expect(trpc.status).toBe(429);
    expect(JSON.stringify(trpc.body)).toMatch(/try again in \d+ s/);
    expect(Number(trpc.headers.get("retry-after"))).toBeGreaterThan(0);
    // The operator learns someone is guessing, once per lock.
    const locks = log.map((l) => JSON.parse(l) as { msg: string; kind: string; key: string }).filter((l) => /sign-in locked/.test(l.msg));
    expect(locks).toEqual([expect.objectContaining({ kind: "account", key: "trudy" })]);
  });

  it("better-auth's own wall is DROVER_SIGN_IN_PER_MINUTE sign-ins a minute per address (30 by default)", async () => {
    // better-auth enforces it in production only (the e2e suite runs the production server and raises it).
    s = await startTestServer({ DROVER_SIGN_IN_PER_MINUTE: "3" });
    expect(s.auth.options.rateLimit?.customRules?.["/sign-in/*"]).toEqual({ window: 60, max: 3 });
    const defaults = await startTestServer();
    try {
      expect(defaults.auth.options.rateLimit?.customRules?.["/sign-in/*"]).toEqual({ window: 60, max: 30 });
    } finally {
      await defaults.close();
    }
  });

  it("better-auth's own limiter reads the server's address, not X-Forwarded-For", async () => {
    s = await startTestServer();
    const request = new Request(`${s.url}/api/auth/sign-in/username`, {
      method: "POST",
      headers: { "x-forwarded-for": "203.0.113.9", [CLIENT_ADDRESS_HEADER]: "192.0.2.44" },
    });
    expect(getIP(request, s.auth.options)).toBe("192.0.2.44");
  });
});

// ---------------------------------------------------------------------------------------
// Session cookies

function sessionCookie(answer: Answer): { name: string; attributes: string; pair: string } {
  const cookie = answer.headers.getSetCookie().find((c) => /session_token=/.test(c));
  if (!cookie) throw new Error(`no session cookie in ${JSON.stringify(answer.headers.getSetCookie())}`);
  const pair = cookie.split(";")[0]!;
  return { name: pair.split("=")[0]!, attributes: cookie, pair };
}

async function me(server: TestServer, cookie: string) {
  const res = await fetch(`${server.url}/api/trpc/auth.me`, { headers: { cookie } });
  return res.status;
}

function captureLog(server: TestServer): string[] {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  server.ctx.log = pino({ level: "warn" }, stream);
  return lines;
}

describe("session cookies", () => {
  it("are not Secure without an https DROVER_PUBLIC_URL, and the session reads back", async () => {
    s = await startTestServer();
    const answer = await signIn(s, "admin", ADMIN_PASSWORD);
    expect(answer.status).toBe(200);
    const cookie = sessionCookie(answer);
    expect(cookie.name).toBe("better-auth.session_token");
    expect(cookie.attributes).not.toMatch(/;\s*Secure/i);
    expect(await me(s, cookie.pair)).toBe(200);
  });

  it("are __Secure- and Secure with an https DROVER_PUBLIC_URL, and the session reads back", async () => {
    s = await startTestServer({ DROVER_PUBLIC_URL: "https://drover.example" });
    const answer = await signIn(s, "admin", ADMIN_PASSWORD);
    expect(answer.status).toBe(200);
    const cookie = sessionCookie(answer);
    expect(cookie.name).toBe("__Secure-better-auth.session_token");
    expect(cookie.attributes).toMatch(/;\s*Secure/i);
    expect(await me(s, cookie.pair)).toBe(200);
  });

  it("warns once when someone signs in over plain HTTP from a host that is not loopback", async () => {
    s = await startTestServer();
    const lines = captureLog(s);
    expect((await signIn(s, "admin", ADMIN_PASSWORD, { origin: s.url })).status).toBe(200);
    expect(lines).toHaveLength(0);
    const remote = s.url.replace("localhost", "drover.test");
    for (let i = 0; i < 2; i++) {
      expect((await signIn(s, "admin", ADMIN_PASSWORD, { origin: remote, host: new URL(remote).host })).status).toBe(200);
    }
    expect(lines).toHaveLength(1);
    const line = JSON.parse(lines[0]!) as { level: number; msg: string };
    expect(line.level).toBe(40);
    expect(line.msg).toMatch(/not Secure/);
    expect(line.msg).toMatch(/DROVER_PUBLIC_URL=https:\/\//);
    expect(line.msg).toMatch(/DROVER_TRUSTED_PROXIES/);
  });
});
