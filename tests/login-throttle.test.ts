/**
 * Password guessing (issue 6, finding 6; issue 22): the throttle's counts in the database,
 * shared by every server on it (two servers on one SQLite file or one PostgreSQL database count
 * the same guesses, and parallel attempts on both never take more tries than the limit), then,
 * on SQLite only (`overHttp` below), a real server's token route (REST and tRPC) and console
 * sign-in (better-auth) under a guessing loop, with and without trusted proxies; and the session
 * cookie's security from DROVER_PUBLIC_URL. The rules alone: server/auth/login-throttle-rules.test.ts.
 *
 * Cheap on purpose: a failed password is a scrypt hash (≈ 0.1 s of CPU) and a server start
 * costs seconds, so the rules run against the database without HTTP, and the HTTP tests share
 * four servers, each test with its own names and (behind the trusted proxy) its own addresses.
 */
import { Writable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pino } from "pino";
import { getIP } from "better-auth/api";
import { LoginThrottle, DEFAULT_LOGIN_THROTTLE } from "../server/auth/login-throttle";
import { CLIENT_ADDRESS_HEADER } from "../server/lib/client-address";
import { AppError } from "../server/errors";
import { createCallerFactory } from "../server/trpc/init";
import { appRouter } from "../server/trpc/router";
import { startTestServer, ADMIN_PASSWORD, testOnPostgres, type TestServer } from "./helpers/server";
import { uniqueName } from "./helpers/devices";

const { accountLimit, baseLockMs } = DEFAULT_LOGIN_THROTTLE;
// Each failed attempt costs a password hash: the address tests against a real server use a
// smaller address limit (DROVER_LOGIN_ADDRESS_LIMIT), which is what they test; the account tests
// guess from a new address each time, so the account's lock is the only one they meet.
const serverAddressLimit = 3;
const SMALL_ADDRESS_LIMIT = { DROVER_LOGIN_ADDRESS_LIMIT: String(serverAddressLimit) };

/** One, and a second on its database: behind a trusted proxy, so each test picks its client addresses. */
let one: TestServer;
let two: TestServer;
/** Without a trusted proxy: every request's address is 127.0.0.1. */
let direct: TestServer;

beforeAll(async () => {
  // No controllers' tick: on SQLite two servers in one process share its event loop, and one
  // server's transaction open across an await would stall the other's write for the busy timeout.
  const quiet = { DROVER_SWEEP_SECONDS: "600" };
  one = await startTestServer({ DROVER_TRUSTED_PROXIES: "127.0.0.1", ...SMALL_ADDRESS_LIMIT, ...quiet });
  [two, direct] = await Promise.all([
    startTestServer({ DROVER_TRUSTED_PROXIES: "127.0.0.1", ...SMALL_ADDRESS_LIMIT, ...quiet }, { sameDatabaseAs: one }),
    startTestServer({ ...SMALL_ADDRESS_LIMIT, DROVER_SIGN_IN_PER_MINUTE: "3" }),
  ]);
});
afterAll(async () => {
  await two?.close();
  await Promise.all([one?.close(), direct?.close()]);
});

let addresses = 0;
/** A client address no other test uses (behind the trusted proxy). */
const newAddress = () => `198.18.${Math.floor(++addresses / 250)}.${addresses % 250}`;

async function refusal(p: Promise<void>): Promise<AppError | null> {
  try {
    await p;
    return null;
  } catch (error) {
    if (error instanceof AppError) return error;
    throw error;
  }
}

describe("the counts in the database, shared by every server", () => {
  async function fail(t: LoginThrottle, attempt: { account?: string; address?: string }, now: number) {
    await t.begin(attempt, now);
    await t.failed(attempt, now);
  }

  it("an account locks after its limit whichever server saw the failures, for a doubled delay after each further one", async () => {
    const t1 = new LoginThrottle(one.ctx.db);
    const t2 = new LoginThrottle(two.ctx.db);
    const who = { account: uniqueName("alice"), address: newAddress() };
    for (let i = 0; i < accountLimit; i++) await fail(i % 2 ? t2 : t1, who, 1000 + i);
    const end = 1000 + accountLimit - 1 + baseLockMs;
    for (const t of [t1, t2]) {
      const locked = await refusal(t.begin(who, 2000));
      expect(locked?.code).toBe("RATE_LIMITED");
      expect(locked?.retryAfterSeconds).toBe(Math.ceil((end - 2000) / 1000));
      expect(await refusal(t.begin(who, end - 1000))).not.toBeNull();
    }
    expect(await refusal(t2.begin(who, end))).toBeNull();
    await t2.failed(who, end);
    expect((await refusal(t1.begin(who, end + 1)))?.retryAfterSeconds).toBe((2 * baseLockMs) / 1000);
  });

  it("parallel attempts on two servers take no more tries than the limit (the in-flight count is shared)", async () => {
    const t1 = new LoginThrottle(one.ctx.db);
    const t2 = new LoginThrottle(two.ctx.db);
    const who = { account: uniqueName("burst") };
    const tries = await Promise.all(Array.from({ length: 4 * accountLimit }, (_, i) => refusal((i % 2 ? t2 : t1).begin(who, 0))));
    expect(tries.filter((r) => r === null)).toHaveLength(accountLimit);
    expect(tries.filter((r) => r?.code === "RATE_LIMITED")).toHaveLength(3 * accountLimit);
    // Their outcomes come: the failures lock the account on both.
    for (let i = 0; i < accountLimit; i++) await (i % 2 ? t2 : t1).failed(who, 1);
    for (const t of [t1, t2]) expect((await refusal(t.begin(who, 2)))?.code).toBe("RATE_LIMITED");
    // A refused attempt left nothing counted: the address of a refused try is not in flight.
    const address = newAddress();
    expect((await refusal(t1.begin({ account: who.account, address }, 3)))?.code).toBe("RATE_LIMITED");
    expect(await one.ctx.db.loginThrottleEntry.findUnique({ where: { kind_key: { kind: "address", key: address } } })).toBeNull();
  });

  it("a success clears the account's count but not the address's; per address across names", async () => {
    const t = new LoginThrottle(one.ctx.db, { accountLimit: 3, addressLimit: 5 });
    const other = new LoginThrottle(two.ctx.db, { accountLimit: 3, addressLimit: 5 });
    const who = { account: uniqueName("carol"), address: newAddress() };
    await fail(t, who, 0);
    await fail(other, who, 0);
    await t.begin(who, 0);
    await t.succeeded(who, 0);
    await fail(t, who, 1);
    await fail(other, who, 1);
    expect(await refusal(t.begin(who, 2))).toBeNull();
    await t.failed(who, 2);
    // 5 failures from the address in all: locked, whatever the account.
    expect((await refusal(other.begin({ account: uniqueName("bob"), address: who.address }, 3)))?.code).toBe("RATE_LIMITED");
    expect(await refusal(other.begin({ account: uniqueName("bob"), address: newAddress() }, 3))).toBeNull();
  });

  it("in flight until an outcome, or until the outcome is overdue; failures forgotten a quiet window after the lock", async () => {
    const t1 = new LoginThrottle(one.ctx.db, { windowMs: 60_000 });
    const t2 = new LoginThrottle(two.ctx.db, { windowMs: 60_000 });
    const who = { account: uniqueName("dave") };
    for (let i = 0; i < accountLimit; i++) await t1.begin(who, 0);
    expect((await refusal(t2.begin(who, 0)))?.retryAfterSeconds).toBe(1);
    await t2.settled(who, 0);
    expect(await refusal(t2.begin(who, 0))).toBeNull();
    expect(await refusal(t2.begin(who, 1))).not.toBeNull();
    expect(await refusal(t2.begin(who, DEFAULT_LOGIN_THROTTLE.pendingTimeoutMs + 1))).toBeNull();

    const eve = { account: uniqueName("eve") };
    for (let i = 0; i < accountLimit; i++) await fail(t1, eve, 0);
    // Open after the lock, but the count is still there; a quiet window after the lock, forgotten.
    expect(await refusal(t2.begin(eve, baseLockMs))).toBeNull();
    await t2.settled(eve, baseLockMs);
    expect(await refusal(t1.begin(eve, baseLockMs + 60_000))).toBeNull();
    await t1.failed(eve, baseLockMs + 60_000);
    expect(await refusal(t2.begin(eve, baseLockMs + 60_001))).toBeNull();
  });

  it("stays bounded under a flood of names and addresses", async () => {
    const t = new LoginThrottle(direct.ctx.db, { maxEntries: 20 });
    for (let i = 0; i < 60; i++) await fail(t, { account: `flood-${i}`, address: `10.9.0.${i}` }, i);
    const size = await t.size();
    expect(size.accounts).toBeLessThanOrEqual(20);
    expect(size.addresses).toBeLessThanOrEqual(20);
    expect(size.accounts).toBeGreaterThan(0);
  });
});

// ---------------------------------------------------------------------------------------
// A real server

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

const newUsername = (prefix: string) => uniqueName(prefix).replace(/-/g, "_");

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

const from = (address: string) => ({ "x-forwarded-for": address });

/**
 * The routes over HTTP run once, on SQLite: what they add to the describe above (the throttle's
 * own SQL, run on both databases) is the wiring of each route to it and better-auth's own
 * limiter, which do not differ between the databases, and each guessing loop is a password hash
 * a try (on PostgreSQL they were 25 s of the file's 39).
 */
const overHttp = describe.skipIf(testOnPostgres);

overHttp.each(routes)("%s", (_name, route, okStatus) => {
  it("locks the account after a guessing loop on either server, refuses the right password on both while locked, lets it in after the delay", async () => {
    const mallory = newUsername("mallory");
    const at = from(newAddress());
    await addUser(one, mallory, "mallory-password");
    for (let i = 0; i < accountLimit; i++) expect((await route(i % 2 ? two : one, mallory, `guess-${i}`, from(newAddress()))).status).toBe(401);
    const wait = expectLimited(await route(one, mallory, `guess-x`, at));
    expect(wait).toBe(baseLockMs / 1000);
    expectLimited(await route(one, mallory.toUpperCase(), "mallory-password", at));
    expectLimited(await route(two, mallory, "mallory-password", from(newAddress())));
    // Another account from an address refused for it is not locked.
    expect((await route(one, "admin", ADMIN_PASSWORD, at)).status).toBe(okStatus);
    // The cluster's clock: both servers' (a lock one server wrote is read with the other's clock).
    for (const s of [one, two]) s.advanceClock(wait * 1000);
    expect((await route(one, mallory, "mallory-password", at)).status).toBe(okStatus);
    // The success cleared the account's count.
    expect((await route(one, mallory, "wrong", at)).status).toBe(401);
  });

  it("with DROVER_TRUSTED_PROXIES, the forwarded address is the key", async () => {
    // Many clients behind the proxy: none is limited by the others' failures.
    for (let i = 0; i < serverAddressLimit + 1; i++) expect((await route(one, newUsername("someone"), "guess", from(newAddress()))).status).toBe(401);
    // One client behind it guessing, on both servers: limited on both, while another client still gets in.
    const guesser = from(newAddress());
    for (let i = 0; i < serverAddressLimit; i++) expect((await route(i % 2 ? two : one, newUsername("other"), "guess", guesser)).status).toBe(401);
    expectLimited(await route(one, newUsername("other"), "guess", guesser));
    expectLimited(await route(two, newUsername("other"), "guess", guesser));
    expect((await route(one, "admin", ADMIN_PASSWORD, from(newAddress()))).status).toBe(okStatus);
  });
});

overHttp("one throttle for every password check", () => {
  it("limits one address across many (unknown) usernames and both routes, whatever X-Forwarded-For says", async () => {
    for (let i = 0; i < serverAddressLimit; i++) {
      const answer = await (i % 2 ? signIn : token)(direct, `nobody_${i}`, "guess", from(`203.0.113.${i}`));
      expect(answer.status).toBe(401);
    }
    for (const route of [token, signIn]) {
      expectLimited(await route(direct, "nobody_new", "guess", from("198.51.100.7")));
      expectLimited(await route(direct, "admin", ADMIN_PASSWORD, from("198.51.100.8")));
    }
  });

  it("failures on the token route and the console sign-in add up, on either server; tRPC createToken is refused too", async () => {
    const logs = [captureLog(one), captureLog(two)];
    const trudy = newUsername("trudy");
    const at = from(newAddress());
    await addUser(one, trudy, "trudy-password");
    for (let i = 0; i < accountLimit; i++) {
      const route = i % 2 === 0 ? token : signIn;
      expect((await route(i % 3 ? one : two, trudy, `guess-${i}`, from(newAddress()))).status).toBe(401);
    }
    expectLimited(await signIn(two, trudy, "trudy-password", at));
    expectLimited(await token(one, trudy, "trudy-password", at));
    // The email sign-in reaches the same account.
    expectLimited(await post(`${two.url}/api/auth/sign-in/email`, { email: `${trudy}@users.drover.local`, password: "trudy-password" }, { origin: two.url, ...at }));
    const trpc = await post(`${one.url}/api/trpc/auth.createToken`, { username: trudy, password: "trudy-password" }, at);
    expect(trpc.status).toBe(429);
    expect(JSON.stringify(trpc.body)).toMatch(/try again in \d+ s/);
    expect(Number(trpc.headers.get("retry-after"))).toBeGreaterThan(0);
    // The operator learns someone is guessing, once per lock (from the server that counted the last failure).
    const locks = logs.flat().map((l) => JSON.parse(l) as { msg: string; kind: string; key: string }).filter((l) => /sign-in locked/.test(l.msg));
    expect(locks).toEqual([expect.objectContaining({ kind: "account", key: trudy })]);
  });

  it("better-auth's own wall is DROVER_SIGN_IN_PER_MINUTE sign-ins a minute per address (30 by default)", () => {
    // better-auth enforces it in production only (the e2e suite runs the production server and raises it).
    expect(direct.auth.options.rateLimit?.customRules?.["/sign-in/*"]).toEqual({ window: 60, max: 3 });
    expect(one.auth.options.rateLimit?.customRules?.["/sign-in/*"]).toEqual({ window: 60, max: 30 });
  });

  it("better-auth's own limiter reads the server's address, not X-Forwarded-For", () => {
    const request = new Request(`${one.url}/api/auth/sign-in/username`, {
      method: "POST",
      headers: { "x-forwarded-for": "203.0.113.9", [CLIENT_ADDRESS_HEADER]: "192.0.2.44" },
    });
    expect(getIP(request, one.auth.options)).toBe("192.0.2.44");
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

overHttp("session cookies", () => {
  it("are not Secure without an https DROVER_PUBLIC_URL, and the session reads back", async () => {
    const answer = await signIn(one, "admin", ADMIN_PASSWORD, from(newAddress()));
    expect(answer.status).toBe(200);
    const cookie = sessionCookie(answer);
    expect(cookie.name).toBe("better-auth.session_token");
    expect(cookie.attributes).not.toMatch(/;\s*Secure/i);
    expect(await me(one, cookie.pair)).toBe(200);
  });

  it("are __Secure- and Secure with an https DROVER_PUBLIC_URL, and the session reads back", async () => {
    const s = await startTestServer({ DROVER_PUBLIC_URL: "https://drover.example" });
    try {
      const answer = await signIn(s, "admin", ADMIN_PASSWORD);
      expect(answer.status).toBe(200);
      const cookie = sessionCookie(answer);
      expect(cookie.name).toBe("__Secure-better-auth.session_token");
      expect(cookie.attributes).toMatch(/;\s*Secure/i);
      expect(await me(s, cookie.pair)).toBe(200);
    } finally {
      await s.close();
    }
  });

  it("warns once when someone signs in over plain HTTP from a host that is not loopback", async () => {
    const lines = captureLog(two);
    const at = from(newAddress());
    expect((await signIn(two, "admin", ADMIN_PASSWORD, { origin: two.url, ...at })).status).toBe(200);
    expect(lines).toHaveLength(0);
    const remote = two.url.replace("localhost", "drover.test");
    for (let i = 0; i < 2; i++) {
      expect((await signIn(two, "admin", ADMIN_PASSWORD, { origin: remote, host: new URL(remote).host, ...at })).status).toBe(200);
    }
    expect(lines).toHaveLength(1);
    const line = JSON.parse(lines[0]!) as { level: number; msg: string };
    expect(line.level).toBe(40);
    expect(line.msg).toMatch(/not Secure/);
    expect(line.msg).toMatch(/DROVER_PUBLIC_URL=https:\/\//);
    expect(line.msg).toMatch(/DROVER_TRUSTED_PROXIES/);
  });
});
