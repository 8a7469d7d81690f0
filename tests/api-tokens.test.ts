/**
 * Operator API tokens (issue 6): named at creation, listed without their hash, revoked by
 * their owner or an admin; a revoked token is refused (401) on REST and on tRPC like an
 * unknown one; lastUsedAt is written at most once a minute.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ActionEvent } from "./helpers/actions";
import { startTestServer, ADMIN_PASSWORD, type TestServer } from "./helpers/server";
import { expectError } from "./helpers/devices";
import { createUser } from "../server/auth/auth";
import { principalFromToken } from "../server/auth/auth";

let s: TestServer;
const PASSWORDS = { vera: "viewer-password-1", otto: "operator-password-1", vic: "viewer-password-2" };

interface TokenView {
  id: string;
  name: string | null;
  username: string;
  createdAt: string;
  expiresAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
  revokedBy: string | null;
  status: "Active" | "Expired" | "Revoked";
  current: boolean;
}
interface Created {
  id: string;
  token: string;
  username: string;
  role: string;
}

async function login(username: string, password: string, name?: string): Promise<Created> {
  const res = await s.api<Created>("POST", "/auth/token", { username, password, ...(name !== undefined ? { name } : {}) });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

/** A tRPC call over HTTP with a bearer token, as a script would make it. */
async function trpc(path: string, token: string, input?: unknown, method: "GET" | "POST" = "GET"): Promise<{ status: number; body: unknown }> {
  const url = new URL(`${s.url}/api/trpc/${path}`);
  if (method === "GET" && input !== undefined) url.searchParams.set("input", JSON.stringify(input));
  const res = await fetch(url, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(method === "POST" ? { "content-type": "application/json" } : {}) },
    body: method === "POST" ? JSON.stringify(input ?? {}) : undefined,
  });
  return { status: res.status, body: await res.json() };
}

const list = (token: string, query = "") => s.api<{ items: TokenView[] }>("GET", `/tokens${query}`, undefined, token);
const revoke = (id: string, token: string) => s.api<TokenView>("POST", `/tokens/${encodeURIComponent(id)}/revoke`, {}, token);

beforeAll(async () => {
  s = await startTestServer();
  await createUser(s.auth, s.ctx.db, { username: "vera", password: PASSWORDS.vera, role: "viewer" });
  await createUser(s.auth, s.ctx.db, { username: "otto", password: PASSWORDS.otto, role: "operator" });
  await createUser(s.auth, s.ctx.db, { username: "vic", password: PASSWORDS.vic, role: "viewer" });
});
afterAll(async () => {
  await s?.close();
});

describe("creating and listing", () => {
  it("a token gets an optional name; the list shows it, newest first, without the hash or the token", async () => {
    const a = await login("vera", PASSWORDS.vera, "laptop");
    const b = await login("vera", PASSWORDS.vera, "ci-pipeline");
    const res = await list(b.token);
    expect(res.status).toBe(200);
    const mine = res.body.items;
    expect(mine.map((t) => t.id).slice(0, 2)).toEqual([b.id, a.id]);
    expect(mine[0]).toMatchObject({ id: b.id, name: "ci-pipeline", username: "vera", status: "Active", current: true, revokedAt: null, revokedBy: null });
    expect(mine[1]).toMatchObject({ id: a.id, name: "laptop", current: false });
    expect(Object.keys(mine[0]!).sort()).toEqual(
      ["id", "name", "username", "createdAt", "expiresAt", "lastUsedAt", "revokedAt", "revokedBy", "status", "current"].sort(),
    );
    const text = JSON.stringify(res.body);
    expect(text).not.toContain(a.token);
    expect(text).not.toMatch(/tokenHash|[0-9a-f]{64}/);
  });

  it("a name is optional, trimmed, at most 64 characters, no control characters", async () => {
    const unnamed = await login("vera", PASSWORDS.vera);
    expect((await list(unnamed.token)).body.items[0]).toMatchObject({ id: unnamed.id, name: null });
    const trimmed = await login("vera", PASSWORDS.vera, "  build-7  ");
    expect((await list(trimmed.token)).body.items[0]!.name).toBe("build-7");
    const before = await s.ctx.db.apiToken.count();
    for (const name of ["x".repeat(65), "", "a\nb", 42]) {
      expectError(await s.api("POST", "/auth/token", { username: "vera", password: PASSWORDS.vera, name }), 400, "INVALID_REQUEST", /name/);
    }
    expect(await s.ctx.db.apiToken.count()).toBe(before);
  });

  it("a user sees only their own tokens; an admin sees everyone's and can narrow by username", async () => {
    const otto = await login("otto", PASSWORDS.otto, "otto-cli");
    const ottoList = (await list(otto.token)).body.items;
    expect(ottoList.length).toBeGreaterThan(0);
    expect(ottoList.every((t) => t.username === "otto")).toBe(true);

    const all = (await list(s.adminToken)).body.items;
    expect(new Set(all.map((t) => t.username))).toEqual(new Set(["admin", "vera", "otto"]));
    expect(all.find((t) => t.username === "admin" && t.current)).toBeDefined();
    const times = all.map((t) => Date.parse(t.createdAt));
    expect(times).toEqual([...times].sort((x, y) => y - x));

    const vera = (await list(s.adminToken, "?username=vera")).body.items;
    expect(vera.length).toBeGreaterThan(0);
    expect(vera.every((t) => t.username === "vera")).toBe(true);

    expectError(await list(otto.token, "?username=vera"), 403, "FORBIDDEN");
    expect((await list(otto.token, "?username=otto")).status).toBe(200);
  });

  it("without a token: 401", async () => {
    expectError(await s.api("GET", "/tokens", undefined, "drvo_nope"), 401, "UNAUTHENTICATED");
  });
});

describe("revoking", () => {
  it("revoked: the next REST call and the next tRPC call with it are 401, like an unknown token", async () => {
    const t = await login("otto", PASSWORDS.otto, "to-revoke");
    const other = await login("otto", PASSWORDS.otto, "keeps-working");
    expect((await s.api("GET", "/me", undefined, t.token)).status).toBe(200);
    expect((await trpc("auth.me", t.token)).status).toBe(200);

    const res = await revoke(t.id, t.token);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: t.id, status: "Revoked", revokedBy: "user:otto", name: "to-revoke" });
    expect(Date.parse(res.body.revokedAt!)).not.toBeNaN();

    const rest = await s.api("GET", "/me", undefined, t.token);
    const unknown = await s.api("GET", "/me", undefined, "drvo_never-issued");
    expectError(rest, 401, "UNAUTHENTICATED");
    expect(rest.body).toEqual(unknown.body);
    expectError(await s.api("GET", "/devices", undefined, t.token), 401, "UNAUTHENTICATED");
    const viaTrpc = await trpc("auth.me", t.token);
    expect(viaTrpc.status).toBe(401);
    expect((await trpc("auth.revokeToken", t.token, { id: other.id }, "POST")).status).toBe(401);
    expect(await principalFromToken(s.ctx.db, t.token, new Date())).toBeNull();

    // The user's other token is untouched.
    expect((await s.api("GET", "/me", undefined, other.token)).status).toBe(200);
  });

  it("revoking through tRPC works the same", async () => {
    const t = await login("otto", PASSWORDS.otto);
    const res = await trpc("auth.revokeToken", s.adminToken, { id: t.id }, "POST");
    expect(res.status).toBe(200);
    expect((await trpc("auth.me", t.token)).status).toBe(401);
  });

  it("revoking again is a no-op: 200, the first record kept, one event", async () => {
    const t = await login("vera", PASSWORDS.vera, "twice");
    const first = await revoke(t.id, s.adminToken);
    expect(first.body.revokedBy).toBe("user:admin");
    const vera = await login("vera", PASSWORDS.vera);
    const second = await revoke(t.id, vera.token);
    expect(second.status).toBe(200);
    expect(second.body).toMatchObject({ status: "Revoked", revokedAt: first.body.revokedAt, revokedBy: "user:admin" });
    const events = (await s.api<{ items: ActionEvent[] }>("GET", "/events?kind=User&name=vera&limit=1000")).body.items.filter((e) => e.message.includes(t.id));
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ type: "ApiTokenRevoked", reason: "Revoked", actor: "user:admin", message: `API token "twice" (${t.id}) revoked` });
  });

  it("a viewer may revoke their own token but gets 403 for someone else's, and nothing changes", async () => {
    const vic = await login("vic", PASSWORDS.vic);
    const victim = await login("otto", PASSWORDS.otto, "not-yours");
    const eventsBefore = await s.ctx.db.event.count();
    expectError(await revoke(victim.id, vic.token), 403, "FORBIDDEN", /admin/);
    // An operator is not an admin either.
    const otto = await login("otto", PASSWORDS.otto);
    const adminTokenId = (await list(s.adminToken)).body.items.find((t) => t.current)!.id;
    expectError(await revoke(adminTokenId, otto.token), 403, "FORBIDDEN");
    expect(await s.ctx.db.event.count()).toBe(eventsBefore);
    expect((await s.api("GET", "/me", undefined, victim.token)).status).toBe(200);
    expect((await s.api("GET", "/me", undefined, s.adminToken)).status).toBe(200);

    const own = await login("vic", PASSWORDS.vic, "own");
    expect((await revoke(own.id, vic.token)).status).toBe(200);
    expect((await s.api("GET", "/me", undefined, own.token)).status).toBe(401);
  });

  it("an admin revokes anyone's token; an unknown id is 404", async () => {
    const t = await login("vera", PASSWORDS.vera);
    expect((await revoke(t.id, s.adminToken)).status).toBe(200);
    expect((await s.api("GET", "/me", undefined, t.token)).status).toBe(401);
    expectError(await revoke("00000000-0000-0000-0000-000000000000", s.adminToken), 404, "NOT_FOUND");
  });

  it("the revocation is in the event log, under the token's owner", async () => {
    const t = await login("otto", PASSWORDS.otto, "audited");
    await revoke(t.id, s.adminToken);
    const events = (await s.api<{ items: ActionEvent[] }>("GET", "/events?kind=User&name=otto&limit=1000")).body.items;
    expect(events.find((e) => e.message.includes(t.id))).toMatchObject({ objectKind: "User", objectName: "otto", type: "ApiTokenRevoked", actor: "user:admin" });
  });
});

describe("lastUsedAt", () => {
  it("is set on first use and then written at most once a minute", async () => {
    const t = await login("vera", PASSWORDS.vera, "usage");
    const row = () => s.ctx.db.apiToken.findUniqueOrThrow({ where: { id: t.id }, select: { lastUsedAt: true } });
    expect((await row()).lastUsedAt).toBeNull();
    // Within the token's 30 days, clear of the wall clock.
    const t0 = new Date(Date.now() + 86_400_000);
    expect(await principalFromToken(s.ctx.db, t.token, t0)).toMatchObject({ username: "vera", tokenId: t.id });
    expect((await row()).lastUsedAt).toEqual(t0);
    // Within the minute: no write.
    await principalFromToken(s.ctx.db, t.token, new Date(t0.getTime() + 59_000));
    expect((await row()).lastUsedAt).toEqual(t0);
    // A minute on: written again.
    const t1 = new Date(t0.getTime() + 60_000);
    await principalFromToken(s.ctx.db, t.token, t1);
    expect((await row()).lastUsedAt).toEqual(t1);
  });

  it("a real request records it and the list shows it", async () => {
    const t = await login("vera", PASSWORDS.vera, "seen");
    await s.api("GET", "/me", undefined, t.token);
    const mine = (await list(t.token)).body.items.find((x) => x.id === t.id)!;
    expect(mine.lastUsedAt).not.toBeNull();
  });
});

it("the admin's own login still works after all this", async () => {
  expect((await login("admin", ADMIN_PASSWORD)).role).toBe("admin");
});
