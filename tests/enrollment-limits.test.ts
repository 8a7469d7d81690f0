/**
 * The enrollment inbox cannot be flooded (issue 6, finding 7): pending requests are limited
 * per client address and in total (429 + Retry-After, nothing written), an idempotent re-send
 * and auto-approved requests are never limited, and an operator clears the inbox in bulk.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "./helpers/server";
import { enrollmentBody, expectError, newSecret, uniqueName } from "./helpers/devices";
import { createUser, issueOperatorToken } from "../server/auth/auth";
import { createEnrollment } from "../server/enrollments/enrollments";
import type { AppError } from "../server/errors";

interface Enrollment {
  id: string;
  deviceName: string;
  status: string;
  reason: string | null;
  decidedBy: string | null;
  clientAddress: string | null;
}
interface Created {
  enrollmentId: string;
  status: string;
}
interface EventRow {
  objectName: string;
  type: string;
  message: string;
  actor: string;
}

/** Sends an enrollment request as if from `address` (the test server trusts 127.0.0.1 as a proxy). */
function enrollFrom(s: TestServer, address: string | null, name = uniqueName("flood"), secret = newSecret(), labels: Record<string, string> = {}) {
  return s.agent<Created>("POST", "/enrollments", enrollmentBody(name, secret, labels), address ? { "x-forwarded-for": address } : {});
}

async function pendingFrom(s: TestServer, address: string): Promise<{ id: string; name: string; secret: string }> {
  const name = uniqueName("pend");
  const secret = newSecret();
  const res = await enrollFrom(s, address, name, secret);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  expect(res.body.status).toBe("Pending");
  return { id: res.body.enrollmentId, name, secret };
}

async function rowCount(s: TestServer) {
  return { requests: await s.ctx.db.enrollmentRequest.count(), events: await s.ctx.db.event.count() };
}

const pendingList = async (s: TestServer, address?: string) =>
  (await s.api<{ items: Enrollment[] }>("GET", `/enrollments?status=Pending&limit=1000${address ? `&clientAddress=${address}` : ""}`)).body.items;

describe("per-address limit", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({
      DROVER_TRUSTED_PROXIES: "127.0.0.1",
      DROVER_ENROLLMENT_PENDING_PER_ADDRESS: "3",
      DROVER_AUTO_APPROVE: "auto=yes",
    });
  });
  afterAll(async () => {
    await s?.close();
  });

  it("stores the client address on the request", async () => {
    const p = await pendingFrom(s, "10.1.0.1");
    expect((await pendingList(s)).find((e) => e.id === p.id)?.clientAddress).toBe("10.1.0.1");
    // Straight from the socket, without a forwarded header.
    const direct = await enrollFrom(s, null);
    expect((await pendingList(s)).find((e) => e.id === direct.body.enrollmentId)?.clientAddress).toBe("127.0.0.1");
  });

  it("the request past the limit is 429 with Retry-After, says which limit and what to do, and writes nothing", async () => {
    const address = "10.1.0.2";
    const first = await pendingFrom(s, address);
    await pendingFrom(s, address);
    await pendingFrom(s, address);
    const before = await rowCount(s);
    const name = uniqueName("over");
    const res = await s.agent("POST", "/enrollments", enrollmentBody(name, newSecret()), { "x-forwarded-for": address });
    expectError(res, 429, "RATE_LIMITED", /DROVER_ENROLLMENT_PENDING_PER_ADDRESS=3.*deny/);
    expect((res.body as { error: { message: string } }).error.message).toContain(address);
    expect(await rowCount(s)).toEqual(before);
    expect(await s.ctx.db.enrollmentRequest.findUnique({ where: { deviceName: name } })).toBeNull();

    const raw = await fetch(`${s.url}/api/agent/v1/enrollments`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-forwarded-for": address },
      body: JSON.stringify(enrollmentBody(uniqueName("over"), newSecret())),
    });
    expect(raw.status).toBe(429);
    expect(raw.headers.get("retry-after")).toBe("60");

    // Another address is not affected.
    await pendingFrom(s, "10.1.0.3");

    // An idempotent re-send of an existing request is never refused.
    const again = await enrollFrom(s, address, first.name, first.secret);
    expect(again.status).toBe(201);
    expect(again.body).toEqual({ enrollmentId: first.id, status: "Pending" });

    // Auto-approved at once: not limited, and not counted.
    const auto = await enrollFrom(s, address, uniqueName("auto"), newSecret(), { auto: "yes" });
    expect(auto.status).toBe(201);
    expect(auto.body.status).toBe("Approved");
    expect((await pendingList(s, address)).length).toBe(3);

    // Denying one makes room for one.
    expect((await s.api("POST", `/enrollments/${first.id}/deny`, {})).status).toBe(200);
    await pendingFrom(s, address);
    expectError(await enrollFrom(s, address), 429, "RATE_LIMITED");

    // A denied name asking again with a new secret would be Pending again: it is limited too,
    // and its denial stays as it was.
    const reAsk = await enrollFrom(s, address, first.name, newSecret());
    expectError(reAsk, 429, "RATE_LIMITED");
    expect((await s.ctx.db.enrollmentRequest.findUniqueOrThrow({ where: { id: first.id } })).status).toBe("Denied");
  });

  it("concurrent requests from one address cannot slip past the limit together", async () => {
    const address = "10.1.0.4";
    const results = await Promise.all(Array.from({ length: 12 }, () => enrollFrom(s, address)));
    expect(results.filter((r) => r.status === 201)).toHaveLength(3);
    expect(results.filter((r) => r.status === 429)).toHaveLength(9);
    expect(await s.ctx.db.enrollmentRequest.count({ where: { clientAddress: address } })).toBe(3);

    // In-process, all twelve are interleaved at every await: only the check inside the
    // transaction holds them to the limit.
    const other = "10.1.0.5";
    const settled = await Promise.allSettled(
      Array.from({ length: 12 }, () => createEnrollment(s.ctx, { ...enrollmentBody(uniqueName("race"), newSecret()), role: "worker" }, other)),
    );
    expect(settled.filter((r) => r.status === "fulfilled")).toHaveLength(3);
    expect(settled.every((r) => r.status === "fulfilled" || (r.reason as AppError).code === "RATE_LIMITED")).toBe(true);
    expect(await s.ctx.db.enrollmentRequest.count({ where: { clientAddress: other } })).toBe(3);
  });

  it("the limit is the cluster's: concurrent requests on two servers sharing the database stop at it together (issue 22)", async () => {
    // Counted from the database inside the transaction that writes the request, which takes
    // its turn across servers (SQLite's one writer; on PostgreSQL the transaction lock).
    const second = await startTestServer({ DROVER_TRUSTED_PROXIES: "127.0.0.1", DROVER_ENROLLMENT_PENDING_PER_ADDRESS: "3", DROVER_SWEEP_SECONDS: "600" }, { sameDatabaseAs: s });
    try {
      const address = "10.1.0.6";
      const results = await Promise.all(Array.from({ length: 8 }, (_, i) => enrollFrom(i % 2 ? second : s, address)));
      expect(results.map((r) => r.status).sort()).toEqual([201, 201, 201, 429, 429, 429, 429, 429]);
      expect(await s.ctx.db.enrollmentRequest.count({ where: { clientAddress: address } })).toBe(3);
    } finally {
      await second.close();
    }
  });
});

describe("total limit", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({
      DROVER_TRUSTED_PROXIES: "127.0.0.1",
      DROVER_ENROLLMENT_PENDING_MAX: "4",
      DROVER_AUTO_APPROVE: "auto=yes",
    });
  });
  afterAll(async () => {
    await s?.close();
  });

  it("past the server's total: 429 whatever the address; auto-approved still pass; clearing makes room", async () => {
    const held = [];
    for (let i = 0; i < 4; i++) held.push(await pendingFrom(s, `10.2.0.${i + 1}`));
    const before = await rowCount(s);
    const res = await enrollFrom(s, "10.2.0.99");
    expectError(res, 429, "RATE_LIMITED", /DROVER_ENROLLMENT_PENDING_MAX=4.*deny enrollments --all-pending/);
    expect(await rowCount(s)).toEqual(before);

    const again = await enrollFrom(s, "10.2.0.1", held[0]!.name, held[0]!.secret);
    expect(again.status).toBe(201);
    expect(again.body).toEqual({ enrollmentId: held[0]!.id, status: "Pending" });
    expect((await enrollFrom(s, "10.2.0.99", uniqueName("auto"), newSecret(), { auto: "yes" })).body.status).toBe("Approved");

    const cleared = await s.api<{ count: number }>("POST", "/enrollments/deny", { allPending: true, reason: "flood" });
    expect(cleared.status).toBe(200);
    expect(cleared.body.count).toBe(4);
    await pendingFrom(s, "10.2.0.99");
  });
});

describe("bulk deny", () => {
  let s: TestServer;
  let viewerToken: string;
  beforeAll(async () => {
    s = await startTestServer({ DROVER_TRUSTED_PROXIES: "127.0.0.1" });
    const vera = await createUser(s.auth, s.ctx.db, { username: "vera", password: "viewer-password-1", role: "viewer" });
    // Issued as the token route does once the password is checked (a scrypt hash: tests/api-tokens tests the route).
    viewerToken = (await issueOperatorToken(s.ctx.db, vera.id, s.ctx.now())).token;
  });
  afterAll(async () => {
    await s?.close();
  });

  it("by ids: all named requests denied with the reason, one event each; all or nothing", async () => {
    const [a, b, c] = [await pendingFrom(s, "10.3.0.1"), await pendingFrom(s, "10.3.0.1"), await pendingFrom(s, "10.3.0.2")];
    const res = await s.api<{ count: number; items: Enrollment[] }>("POST", "/enrollments/deny", { ids: [a.id, b.id], reason: "unknown hardware" });
    expect(res.status).toBe(200);
    expect(res.body.count).toBe(2);
    expect(res.body.items.map((e) => [e.id, e.status, e.reason, e.decidedBy])).toEqual(
      expect.arrayContaining([
        [a.id, "Denied", "unknown hardware", "user:admin"],
        [b.id, "Denied", "unknown hardware", "user:admin"],
      ]),
    );
    for (const p of [a, b]) {
      const events = (await s.api<{ items: EventRow[] }>("GET", `/events?kind=EnrollmentRequest&name=${p.name}`)).body.items;
      expect(events.filter((e) => e.type === "EnrollmentDenied")).toHaveLength(1);
    }
    // One of them already decided: 409 and c stays Pending.
    expectError(await s.api("POST", "/enrollments/deny", { ids: [c.id, a.id] }), 409, "CONFLICT");
    expect((await pendingList(s)).map((e) => e.id)).toContain(c.id);
  });

  it("allPending with an address: only that address's requests; the rest stay Pending; waiting agents are woken", async () => {
    const flood = [await pendingFrom(s, "10.3.1.1"), await pendingFrom(s, "10.3.1.1"), await pendingFrom(s, "10.3.1.1")];
    const keep = await pendingFrom(s, "10.3.1.2");
    // An agent of the flood is waiting for its decision.
    const waiting = s.agent<{ status: string }>("GET", `/enrollments/${flood[0]!.id}?wait=30`, undefined, { "x-enrollment-secret": flood[0]!.secret });
    await new Promise((r) => setTimeout(r, 200));
    const started = Date.now();
    const eventsBefore = await s.ctx.db.event.count();

    const res = await s.api<{ count: number; items: Enrollment[] }>("POST", "/enrollments/deny", { allPending: true, clientAddress: "10.3.1.1", reason: "flood" });
    expect(res.status).toBe(200);
    expect(res.body.count).toBe(3);
    expect(res.body.items.map((e) => e.id).sort()).toEqual(flood.map((f) => f.id).sort());
    expect(res.body.items.every((e) => e.status === "Denied" && e.reason === "flood" && e.clientAddress === "10.3.1.1")).toBe(true);
    expect(await s.ctx.db.event.count()).toBe(eventsBefore + 3);

    const woken = await waiting;
    expect(woken.body.status).toBe("Denied");
    expect(Date.now() - started).toBeLessThan(5_000);
    expect((await pendingList(s)).map((e) => e.id)).toContain(keep.id);

    // Nothing left from that address: count 0, not an error.
    const none = await s.api<{ count: number; items: unknown[] }>("POST", "/enrollments/deny", { allPending: true, clientAddress: "10.3.1.1" });
    expect(none.status).toBe(200);
    expect(none.body).toEqual({ count: 0, items: [] });
  });

  it("allPending alone denies every Pending request", async () => {
    await pendingFrom(s, "10.3.2.1");
    await pendingFrom(s, "10.3.2.2");
    const pending = (await pendingList(s)).length;
    expect(pending).toBeGreaterThanOrEqual(2);
    const res = await s.api<{ count: number }>("POST", "/enrollments/deny", { allPending: true });
    expect(res.body.count).toBe(pending);
    expect(await pendingList(s)).toEqual([]);
  });

  it("400 for a body naming neither or both, or an address without allPending; nothing changes", async () => {
    const p = await pendingFrom(s, "10.3.3.1");
    const before = await rowCount(s);
    for (const body of [{}, { reason: "x" }, { ids: [p.id], allPending: true }, { ids: [p.id], clientAddress: "10.3.3.1" }, { allPending: false }, { allPending: true, bogus: 1 }, { ids: [] }]) {
      expectError(await s.api("POST", "/enrollments/deny", body), 400, "INVALID_REQUEST");
    }
    expect(await rowCount(s)).toEqual(before);
    expect((await pendingList(s)).map((e) => e.id)).toContain(p.id);
  });

  it("a viewer gets 403 and nothing changes", async () => {
    const p = await pendingFrom(s, "10.3.4.1");
    const before = await rowCount(s);
    expectError(await s.api("POST", "/enrollments/deny", { allPending: true }, viewerToken), 403, "FORBIDDEN");
    expectError(await s.api("POST", "/enrollments/deny", { ids: [p.id] }, viewerToken), 403, "FORBIDDEN");
    expect(await rowCount(s)).toEqual(before);
    expect((await pendingList(s)).map((e) => e.id)).toContain(p.id);
  });

  it("tRPC enrollments.denyMany is the same procedure", async () => {
    const p = await pendingFrom(s, "10.3.5.1");
    const res = await fetch(`${s.url}/api/trpc/enrollments.denyMany`, {
      method: "POST",
      headers: { authorization: `Bearer ${s.adminToken}`, "content-type": "application/json" },
      body: JSON.stringify({ allPending: true, clientAddress: "10.3.5.1" }),
    });
    expect(res.status).toBe(200);
    expect((await s.ctx.db.enrollmentRequest.findUniqueOrThrow({ where: { id: p.id } })).status).toBe("Denied");
  });
});
