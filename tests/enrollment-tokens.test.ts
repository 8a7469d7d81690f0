/**
 * Enrollment tokens (issue 12): an operator creates one (the secret shown once, its hash
 * stored), lists and revokes it; an agent enrolling with it gets its labels and, with
 * autoApprove, is approved at once (device, fleet membership, events), the use counted in the
 * same transaction; a token that is unknown, revoked, expired or used up is refused with
 * nothing created and no use counted, and of two enrollments racing for the last use one wins.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHash } from "node:crypto";
import { startTestServer, type TestServer } from "./helpers/server";
import { enrollmentBody, newSecret, uniqueName } from "./helpers/devices";
import { tokenFor, sleep } from "./helpers/actions";
import { startSimulation } from "../agent/simulate";
import { parseSimulateArgs } from "../agent/env";

interface TokenView {
  id: string;
  name: string;
  description: string | null;
  prefix: string;
  labels: Record<string, string>;
  expiresAt: string | null;
  maxUses: number | null;
  uses: number;
  autoApprove: boolean;
  createdBy: string;
  revokedAt: string | null;
  revokedBy: string | null;
  status: string;
  token?: string;
}
interface Enrollment {
  id: string;
  deviceName: string;
  status: string;
  labels: Record<string, string>;
  tokenId: string | null;
  decidedBy: string | null;
}
type ErrorBody = { error: { code: string; message: string } };

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s?.close();
});

async function createToken(body: Record<string, unknown> = {}, token?: string): Promise<TokenView & { token: string }> {
  const res = await s.api<TokenView & { token: string }>("POST", "/enrollment-tokens", { name: uniqueName("tok"), ...body }, token);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

function enroll(name: string, enrollmentToken: string | undefined, labels: Record<string, string> = {}) {
  return s.agent<{ enrollmentId: string; status: string } & Partial<ErrorBody>>("POST", "/enrollments", {
    ...enrollmentBody(name, newSecret(), labels),
    ...(enrollmentToken === undefined ? {} : { enrollmentToken }),
  });
}

const uses = async (id: string) => (await s.api<TokenView>("GET", `/enrollment-tokens/${id}`)).body.uses;
const requestFor = (name: string) => s.ctx.db.enrollmentRequest.findUnique({ where: { deviceName: name } });

describe("enrollment tokens: the operator's side", () => {
  it("create answers the secret once; only its SHA-256 is stored; list and get never show it again", async () => {
    const created = await createToken({ name: "lab racks", description: "rack 3", labels: { site: "lab" }, maxUses: 5, expiresInSeconds: 3600, autoApprove: true });
    expect(created.token).toMatch(/^drvt_[A-Za-z0-9_-]{43}$/);
    expect(created).toMatchObject({ name: "lab racks", description: "rack 3", labels: { site: "lab" }, maxUses: 5, uses: 0, autoApprove: true, createdBy: "user:admin", status: "Active", revokedAt: null });
    expect(created.prefix).toBe(created.token.slice(0, 11));
    expect(Date.parse(created.expiresAt ?? "") - Date.now()).toBeGreaterThan(3500_000);

    const row = await s.ctx.db.enrollmentToken.findUniqueOrThrow({ where: { id: created.id } });
    expect(row.hash).toBe(createHash("sha256").update(created.token).digest("hex"));
    expect(JSON.stringify(row)).not.toContain(created.token);

    const list = await s.api<{ items: TokenView[] }>("GET", "/enrollment-tokens");
    expect(list.status).toBe(200);
    const listed = list.body.items.find((t) => t.id === created.id);
    expect(listed).toMatchObject({ name: "lab racks", prefix: created.prefix, status: "Active" });
    const one = await s.api<TokenView>("GET", `/enrollment-tokens/${created.id}`);
    expect(one.status).toBe(200);
    for (const body of [JSON.stringify(list.body), JSON.stringify(one.body)]) {
      expect(body).not.toContain(created.token);
      expect(body).not.toContain(row.hash);
      expect(body).not.toMatch(/"token"|"hash"/);
    }
  });

  it("revoke (DELETE) is idempotent: Revoked with who and when, one event; an unknown id is 404", async () => {
    const created = await createToken();
    const first = await s.api<TokenView>("DELETE", `/enrollment-tokens/${created.id}`);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ status: "Revoked", revokedBy: "user:admin" });
    const again = await s.api<TokenView>("DELETE", `/enrollment-tokens/${created.id}`);
    expect(again.status).toBe(200);
    expect(again.body.revokedAt).toBe(first.body.revokedAt);
    const events = await s.ctx.db.event.findMany({ where: { type: "EnrollmentTokenRevoked", message: { contains: created.prefix } } });
    expect(events).toHaveLength(1);
    expect((await s.api<ErrorBody>("DELETE", "/enrollment-tokens/no-such-token")).status).toBe(404);
    expect((await s.api<ErrorBody>("GET", "/enrollment-tokens/no-such-token")).status).toBe(404);
  });

  it("roles: a viewer lists and reads but cannot create or revoke (403); no token is 401", async () => {
    const viewer = await tokenFor(s, "viewer");
    const operator = await tokenFor(s, "operator");
    const made = await createToken({}, operator.token);
    expect(made.createdBy).toBe(`user:${operator.username}`);
    expect((await s.api("GET", "/enrollment-tokens", undefined, viewer.token)).status).toBe(200);
    expect((await s.api("GET", `/enrollment-tokens/${made.id}`, undefined, viewer.token)).status).toBe(200);
    const before = await s.ctx.db.enrollmentToken.count();
    const create = await s.api<ErrorBody>("POST", "/enrollment-tokens", { name: "nope" }, viewer.token);
    expect(create.status).toBe(403);
    expect(create.body.error.code).toBe("FORBIDDEN");
    expect(await s.ctx.db.enrollmentToken.count()).toBe(before);
    expect((await s.api("DELETE", `/enrollment-tokens/${made.id}`, undefined, viewer.token)).status).toBe(403);
    expect((await s.api<TokenView>("GET", `/enrollment-tokens/${made.id}`)).body.revokedAt).toBeNull();
    const anonymous = await fetch(`${s.url}/api/v1/enrollment-tokens`);
    expect(anonymous.status).toBe(401);
  });

  it("bad input is 400 naming the field, and nothing is created", async () => {
    const before = await s.ctx.db.enrollmentToken.count();
    const bad: [Record<string, unknown>, string][] = [
      [{}, "name"],
      [{ name: "" }, "name"],
      [{ name: "x", labels: { "bad key!": "v" } }, "labels"],
      [{ name: "x", maxUses: 0 }, "maxUses"],
      [{ name: "x", maxUses: 1.5 }, "maxUses"],
      [{ name: "x", expiresInSeconds: -5 }, "expiresInSeconds"],
      [{ name: "x", autoApprove: "yes" }, "autoApprove"],
      [{ name: "x", uses: 3 }, "uses"],
    ];
    for (const [body, field] of bad) {
      const res = await s.api<ErrorBody>("POST", "/enrollment-tokens", body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.code).toBe("INVALID_REQUEST");
      expect(res.body.error.message).toContain(field);
    }
    expect(await s.ctx.db.enrollmentToken.count()).toBe(before);
  });

  it("the operator OpenAPI document has the four routes; the agent's documents enrollmentToken and its refusals", async () => {
    const doc = (await (await fetch(`${s.url}/api/v1/openapi.json`)).json()) as { paths: Record<string, Record<string, unknown>> };
    expect(Object.keys(doc.paths["/enrollment-tokens"] ?? {}).sort()).toEqual(["get", "post"]);
    expect(Object.keys(doc.paths["/enrollment-tokens/{id}"] ?? {}).sort()).toEqual(["delete", "get"]);
    const agentDoc = JSON.stringify(await (await fetch(`${s.url}/api/agent/v1/openapi.json`)).json());
    expect(agentDoc).toContain("enrollmentToken");
    expect(agentDoc).toContain("revoked, expired or used up");
  });
});

describe("enrolling with a token", () => {
  it("auto-approve: Approved at once with the token's labels over the agent's, tokenId recorded, the use counted, the device in its fleet", async () => {
    const fleet = uniqueName("fleet-tok");
    const created = await s.api("POST", "/fleets", {
      metadata: { name: fleet },
      spec: { selector: { matchLabels: { batch: fleet } }, template: { spec: { version: "1.0.0" } } },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const t = await createToken({ labels: { batch: fleet, site: "token-site" }, autoApprove: true, maxUses: 3 });
    const name = uniqueName("tokdev");
    const res = await enroll(name, t.token, { site: "agent-site", rack: "r1" });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.status).toBe("Approved");

    const request = await s.api<Enrollment>("GET", `/enrollments/${res.body.enrollmentId}`);
    expect(request.body).toMatchObject({ status: "Approved", tokenId: t.id, labels: { site: "token-site", rack: "r1", batch: fleet }, decidedBy: `enrollment-token:${t.name}` });
    const device = await s.api<{ labels: Record<string, string>; fleet: string | null; lifecycle: string }>("GET", `/devices/${name}`);
    expect(device.status).toBe(200);
    expect(device.body).toMatchObject({ labels: { site: "token-site", rack: "r1", batch: fleet }, fleet, lifecycle: "Enrolled" });
    expect(await uses(t.id)).toBe(1);
    const types = (await s.ctx.db.event.findMany({ where: { objectName: name }, orderBy: { id: "asc" } })).map((e) => e.type);
    expect(types).toEqual(expect.arrayContaining(["EnrollmentRequested", "EnrollmentApproved", "DeviceEnrolled"]));
  });

  it("without autoApprove the request waits for an operator, with the token's labels and tokenId", async () => {
    const t = await createToken({ labels: { team: "ops" } });
    const name = uniqueName("tokpend");
    const res = await enroll(name, t.token);
    expect(res.body.status).toBe("Pending");
    const request = await s.api<Enrollment>("GET", `/enrollments/${res.body.enrollmentId}`);
    expect(request.body).toMatchObject({ status: "Pending", tokenId: t.id, labels: { team: "ops" } });
    expect(await uses(t.id)).toBe(1);
  });

  it("without a token nothing changes: Pending, no tokenId", async () => {
    const res = await enroll(uniqueName("notok"), undefined, { a: "b" });
    expect(res.body.status).toBe("Pending");
    expect((await s.api<Enrollment>("GET", `/enrollments/${res.body.enrollmentId}`)).body).toMatchObject({ status: "Pending", tokenId: null, labels: { a: "b" } });
  });

  it("refused with nothing created and no use counted: unknown (401), revoked, expired, used up (403)", async () => {
    const revoked = await createToken({ autoApprove: true });
    expect((await s.api("DELETE", `/enrollment-tokens/${revoked.id}`)).status).toBe(200);
    const expired = await createToken({ autoApprove: true, expiresInSeconds: 1 });
    const usedUp = await createToken({ autoApprove: true, maxUses: 1 });
    expect((await enroll(uniqueName("tokuse"), usedUp.token)).body.status).toBe("Approved");
    await sleep(1100);

    const cases: [string, string, number, RegExp][] = [
      ["unknown", "drvt_" + "x".repeat(43), 401, /unknown enrollment token/],
      ["revoked", revoked.token, 403, /was revoked/],
      ["expired", expired.token, 403, /has expired/],
      ["used up", usedUp.token, 403, /used as many times as it may/],
    ];
    for (const [what, secret, status, message] of cases) {
      const name = uniqueName("tokref");
      const devicesBefore = await s.ctx.db.device.count();
      const eventsBefore = await s.ctx.db.event.count();
      const res = await enroll(name, secret);
      expect(res.status, what).toBe(status);
      expect(res.body.error?.code, what).toBe(status === 401 ? "UNAUTHENTICATED" : "FORBIDDEN");
      expect(res.body.error?.message, what).toMatch(message);
      expect(await requestFor(name), what).toBeNull();
      expect(await s.ctx.db.device.count(), what).toBe(devicesBefore);
      expect(await s.ctx.db.event.count(), what).toBe(eventsBefore);
    }
    expect(await uses(revoked.id)).toBe(0);
    expect(await uses(expired.id)).toBe(0);
    expect(await uses(usedUp.id)).toBe(1);
    const statuses = (await s.api<{ items: TokenView[] }>("GET", "/enrollment-tokens")).body.items;
    expect(statuses.find((x) => x.id === revoked.id)?.status).toBe("Revoked");
    expect(statuses.find((x) => x.id === expired.id)?.status).toBe("Expired");
    expect(statuses.find((x) => x.id === usedUp.id)?.status).toBe("UsedUp");
  });

  it("a token longer than 256 characters is 400", async () => {
    const res = await enroll(uniqueName("toklong"), "x".repeat(257));
    expect(res.status).toBe(400);
  });

  it("the last use, raced: of two enrollments at once exactly one gets it; the other is 403 with nothing created", async () => {
    for (let round = 0; round < 3; round++) {
      const t = await createToken({ autoApprove: true, maxUses: 1 });
      const names = [uniqueName("race"), uniqueName("race")];
      const results = await Promise.all(names.map((n) => enroll(n, t.token)));
      const statuses = results.map((r) => r.status).sort();
      expect(statuses, JSON.stringify(results.map((r) => r.body))).toEqual([201, 403]);
      const loser = names[results.findIndex((r) => r.status === 403)] ?? "";
      expect(await requestFor(loser)).toBeNull();
      expect(await uses(t.id)).toBe(1);
    }
  });

  it("sending the same request again answers its state and counts no second use", async () => {
    const t = await createToken({ maxUses: 2 });
    const name = uniqueName("tokagain");
    const body = { ...enrollmentBody(name, newSecret()), enrollmentToken: t.token };
    const first = await s.agent<{ enrollmentId: string }>("POST", "/enrollments", body);
    const second = await s.agent<{ enrollmentId: string }>("POST", "/enrollments", body);
    expect(second.status).toBe(201);
    expect(second.body.enrollmentId).toBe(first.body.enrollmentId);
    expect(await uses(t.id)).toBe(1);
  });
});

describe("tRPC", () => {
  it("enrollmentTokens.create/list/get/revoke answer as REST does", async () => {
    const { appRouter } = await import("../server/trpc/router");
    const { createCallerFactory } = await import("../server/trpc/init");
    const admin = await s.ctx.db.user.findUniqueOrThrow({ where: { username: "admin" }, select: { id: true } });
    const caller = createCallerFactory(appRouter)({ server: s.ctx, auth: s.auth, principal: { userId: admin.id, username: "admin", role: "admin", via: "token" } });
    const made = await caller.enrollmentTokens.create({ name: "via trpc", labels: { x: "y" }, autoApprove: false });
    expect(made.token).toMatch(/^drvt_/);
    expect((await caller.enrollmentTokens.list({ limit: 10 })).some((t) => t.id === made.id && !("token" in t))).toBe(true);
    expect((await caller.enrollmentTokens.get({ id: made.id })).labels).toEqual({ x: "y" });
    expect((await caller.enrollmentTokens.revoke({ id: made.id })).status).toBe("Revoked");
  });
});

describe("the simulator's --enrollment-token", () => {
  it("every simulated agent enrolls with it: approved at once with its labels, one use each", async () => {
    const t = await createToken({ labels: { batch: "sim" }, autoApprove: true, maxUses: 2 });
    const parsed = parseSimulateArgs(["--server", s.url, "--agents", "2", "--enrollment-token", t.token]);
    expect(typeof parsed === "object" && parsed.enrollmentToken).toBe(t.token);
    const prefix = uniqueName("simtok");
    const sim = startSimulation({ server: s.url, agents: 2, prefix, labels: { simulated: "true" }, enrollmentToken: t.token, degraded: 0, error: 0, restarts: 0, flap: 0, silent: 0, seed: 5 });
    try {
      await expect
        .poll(async () => (await s.ctx.db.device.findMany({ where: { name: { startsWith: prefix } }, include: { labels: true } })).map((d) => d.labels.map((l) => `${l.key}=${l.value}`).sort().join(",")), { timeout: 20_000 })
        .toEqual(["batch=sim,simulated=true", "batch=sim,simulated=true"]);
      expect(await uses(t.id)).toBe(2);
    } finally {
      await sim.stop();
    }
  });
});
