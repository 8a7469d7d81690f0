/**
 * Checking a device before approving it (issue 10): an enrollment request keeps the host facts
 * its agent sent and where it first came from (and when), a repeat moves only "last seen";
 * approving may add labels over the requested ones, and the device's fleet follows them.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "./helpers/server";
import { enrollmentBody, expectError, newSecret, uniqueName } from "./helpers/devices";
import { tokenFor } from "./helpers/actions";

interface Enrollment {
  id: string;
  deviceName: string;
  status: string;
  labels: Record<string, string>;
  approvedLabels: Record<string, string> | null;
  clientAddress: string | null;
  firstSeenAt: string;
  lastSeenAt: string;
  lastSeenAddress: string | null;
  system: Record<string, unknown> | null;
}

const SYSTEM = {
  hostname: "rack4-node7",
  os: { name: "Debian GNU/Linux", version: "12" },
  kernel: "6.1.0-18-amd64",
  arch: "x86_64",
  ips: ["10.0.4.7", "fe80::1"],
  bootTime: "2026-11-20T08:00:00Z",
  cpus: 8,
  usage: { memory: { usedBytes: 1e9, totalBytes: 16e9 }, disk: { usedBytes: 2e10, totalBytes: 5e11 } },
};

let s: TestServer;
beforeAll(async () => {
  // Trusting the loopback proxy lets a test speak from any address through X-Forwarded-For.
  s = await startTestServer({ DROVER_TRUSTED_PROXIES: "127.0.0.1" });
});
afterAll(async () => {
  await s?.close();
});

function ask(name: string, secret: string, extra: Record<string, unknown> = {}, address?: string) {
  return s.agent<{ enrollmentId: string; status: string }>("POST", "/enrollments", { ...enrollmentBody(name, secret), ...extra }, address ? { "x-forwarded-for": address } : {});
}
const get = async (id: string) => {
  const res = await s.api<Enrollment>("GET", `/enrollments/${id}`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
};
const look = (id: string, secret: string, address: string) =>
  s.agent<{ status: string }>("GET", `/enrollments/${id}?wait=0`, undefined, { "x-enrollment-secret": secret, "x-forwarded-for": address });

describe("host facts and first-seen address", () => {
  it("stores the facts and the address it came from, on GET /enrollments/{id} and in the list", async () => {
    const name = uniqueName("facts");
    const before = Date.now();
    const created = await ask(name, newSecret(), { system: SYSTEM }, "198.51.100.7");
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const e = await get(created.body.enrollmentId);
    expect(e).toMatchObject({ deviceName: name, status: "Pending", clientAddress: "198.51.100.7", lastSeenAddress: "198.51.100.7", system: SYSTEM, approvedLabels: null });
    expect(Date.parse(e.firstSeenAt)).toBeGreaterThanOrEqual(before - 1000);
    expect(e.lastSeenAt).toBe(e.firstSeenAt);
    const listed = (await s.api<{ items: Enrollment[] }>("GET", "/enrollments?status=Pending&limit=1000")).body.items.find((x) => x.deviceName === name);
    expect(listed?.system).toEqual(SYSTEM);
  });

  it("an agent without facts: system is null", async () => {
    const created = await ask(uniqueName("facts"), newSecret());
    expect((await get(created.body.enrollmentId)).system).toBeNull();
  });

  it("a repeat with the same secret keeps the first address and moves last seen (address, time) and the facts", async () => {
    const name = uniqueName("facts");
    const secret = newSecret();
    const first = await ask(name, secret, { system: SYSTEM }, "198.51.100.8");
    const before = await get(first.body.enrollmentId);
    await new Promise((r) => setTimeout(r, 20));
    const again = await ask(name, secret, { system: { ...SYSTEM, hostname: "renamed" } }, "203.0.113.9");
    expect(again.status).toBe(201);
    expect(again.body.enrollmentId).toBe(first.body.enrollmentId);
    const after = await get(first.body.enrollmentId);
    expect(after).toMatchObject({ clientAddress: "198.51.100.8", firstSeenAt: before.firstSeenAt, lastSeenAddress: "203.0.113.9" });
    expect(after.system?.hostname).toBe("renamed");
    expect(Date.parse(after.lastSeenAt)).toBeGreaterThan(Date.parse(before.lastSeenAt));
    // A repeat without facts keeps the ones it had.
    await ask(name, secret, {}, "203.0.113.9");
    expect((await get(first.body.enrollmentId)).system?.hostname).toBe("renamed");
  });

  it("the agent's look at its decision from another address moves last seen; from the same one, within a minute, writes nothing", async () => {
    const name = uniqueName("facts");
    const secret = newSecret();
    const created = await ask(name, secret, {}, "198.51.100.10");
    const id = created.body.enrollmentId;
    const first = await get(id);
    expect((await look(id, secret, "198.51.100.10")).status).toBe(200);
    expect((await get(id)).lastSeenAt).toBe(first.lastSeenAt);
    expect((await look(id, secret, "198.51.100.11")).status).toBe(200);
    expect(await get(id)).toMatchObject({ clientAddress: "198.51.100.10", lastSeenAddress: "198.51.100.11" });
    // A wrong secret is refused and moves nothing.
    expect((await look(id, newSecret(), "192.0.2.99")).status).toBe(401);
    expect((await get(id)).lastSeenAddress).toBe("198.51.100.11");
  });

  it("a denied name asking again with a new secret is a new request: first seen from its new address", async () => {
    const name = uniqueName("facts");
    const created = await ask(name, newSecret(), {}, "198.51.100.12");
    expect((await s.api("POST", `/enrollments/${created.body.enrollmentId}/deny`, {})).status).toBe(200);
    const again = await ask(name, newSecret(), { system: SYSTEM }, "198.51.100.13");
    expect(again.body).toEqual({ enrollmentId: created.body.enrollmentId, status: "Pending" });
    expect(await get(created.body.enrollmentId)).toMatchObject({ clientAddress: "198.51.100.13", lastSeenAddress: "198.51.100.13", system: SYSTEM });
  });

  it("bad facts are 400 naming the field, and nothing is created", async () => {
    const bad: Record<string, unknown>[] = [{ cpus: -1 }, { ips: "10.0.0.1" }, { hostname: "x".repeat(300) }, { usage: { memory: { usedBytes: "lots" } } }];
    for (const system of bad) {
      const name = uniqueName("badfacts");
      const res = await ask(name, newSecret(), { system });
      expectError(res, 400, "INVALID_REQUEST", /system/);
      expect(await s.ctx.db.enrollmentRequest.count({ where: { deviceName: name } })).toBe(0);
    }
  });

  it("an unknown enrollment id is 404", async () => {
    expectError(await s.api("GET", "/enrollments/no-such-id"), 404, "NOT_FOUND");
  });
});

describe("labels at approval", () => {
  const deviceLabels = async (name: string) => (await s.api<{ labels: Record<string, string>; fleet: string | null }>("GET", `/devices/${name}`)).body;

  it("merged over the requested ones, the operator winning; recorded on the request and in the device's event; the fleet follows at once", async () => {
    const fleet = uniqueName("approved-fleet");
    const fleetBody = { metadata: { name: fleet }, spec: { selector: { matchLabels: { site: fleet } }, template: { spec: { version: "1.0.0" } } } };
    expect((await s.api("POST", "/fleets", fleetBody)).status).toBe(201);

    const name = uniqueName("labelled");
    const created = await s.agent<{ enrollmentId: string }>("POST", "/enrollments", enrollmentBody(name, newSecret(), { rack: "4", site: "unknown" }));
    const approved = await s.api<Enrollment>("POST", `/enrollments/${created.body.enrollmentId}/approve`, { labels: { site: fleet, owner: "ops" } });
    expect(approved.status, JSON.stringify(approved.body)).toBe(200);
    expect(approved.body).toMatchObject({ status: "Approved", labels: { rack: "4", site: "unknown" }, approvedLabels: { site: fleet, owner: "ops" } });

    const device = await deviceLabels(name);
    expect(device.labels).toEqual({ rack: "4", site: fleet, owner: "ops" });
    expect(device.fleet).toBe(fleet);
    const events = (await s.api<{ items: { type: string; message: string }[] }>("GET", `/events?kind=Device&name=${name}&limit=20`)).body.items;
    expect(events.find((e) => e.type === "DeviceEnrolled")?.message).toBe(`labels added at approval: owner=ops,site=${fleet}`);
    expect(events.map((e) => e.type)).toContain("FleetJoined");
  });

  it("bulk approve puts the labels on every device", async () => {
    const names = [uniqueName("bulk"), uniqueName("bulk")];
    const ids: string[] = [];
    for (const n of names) ids.push((await s.agent<{ enrollmentId: string }>("POST", "/enrollments", enrollmentBody(n, newSecret(), { rack: "1" }))).body.enrollmentId);
    const res = await s.api<{ items: Enrollment[] }>("POST", "/enrollments/approve", { ids, labels: { batch: "b7", rack: "2" } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    for (const n of names) expect((await deviceLabels(n)).labels).toEqual({ batch: "b7", rack: "2" });
  });

  it("without labels: the requested ones, approvedLabels null", async () => {
    const name = uniqueName("plain");
    const created = await s.agent<{ enrollmentId: string }>("POST", "/enrollments", enrollmentBody(name, newSecret(), { rack: "1" }));
    const res = await s.api<Enrollment>("POST", `/enrollments/${created.body.enrollmentId}/approve`, {});
    expect(res.body.approvedLabels).toBeNull();
    expect((await deviceLabels(name)).labels).toEqual({ rack: "1" });
  });

  it("an invalid label, or too many together, is 400 and the request stays Pending with no device", async () => {
    const name = uniqueName("badlabel");
    const requested = Object.fromEntries(Array.from({ length: 60 }, (_, i) => [`k${i}`, "v"]));
    const created = await s.agent<{ enrollmentId: string }>("POST", "/enrollments", enrollmentBody(name, newSecret(), requested));
    const id = created.body.enrollmentId;
    for (const labels of [{ "bad key!": "x" }, { ok: "not valid value!" }, { ok: "x".repeat(64) }, "site=lab", { ok: 7 }]) {
      expectError(await s.api("POST", `/enrollments/${id}/approve`, { labels }), 400, "INVALID_REQUEST", /labels/);
    }
    expectError(await rawApprove(id, '{"labels": {"__proto__": "x"}}'), 400, "INVALID_REQUEST");
    const many = Object.fromEntries(Array.from({ length: 5 }, (_, i) => [`extra${i}`, "v"]));
    expectError(await s.api("POST", `/enrollments/${id}/approve`, { labels: many }), 400, "INVALID_REQUEST", `"${name}" would carry 65 labels`);
    // Bulk: one device over the limit and nothing is approved, not even the other.
    const other = uniqueName("badlabel");
    const otherId = (await s.agent<{ enrollmentId: string }>("POST", "/enrollments", enrollmentBody(other, newSecret()))).body.enrollmentId;
    expectError(await s.api("POST", "/enrollments/approve", { ids: [otherId, id], labels: many }), 400, "INVALID_REQUEST");

    for (const x of [id, otherId]) expect((await get(x)).status).toBe("Pending");
    expect(await s.ctx.db.device.count({ where: { name: { in: [name, other] } } })).toBe(0);
  });

  it("a viewer may read a request but not approve it", async () => {
    const viewer = await tokenFor(s, "viewer");
    const created = await ask(uniqueName("viewer"), newSecret(), { system: SYSTEM });
    const id = created.body.enrollmentId;
    expect((await s.api<Enrollment>("GET", `/enrollments/${id}`, undefined, viewer.token)).body.system).toEqual(SYSTEM);
    expectError(await s.api("POST", `/enrollments/${id}/approve`, { labels: { a: "b" } }, viewer.token), 403, "FORBIDDEN");
    expect((await get(id)).status).toBe("Pending");
  });
});

async function rawApprove(id: string, body: string) {
  const res = await fetch(`${s.url}/api/v1/enrollments/${id}/approve`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${s.adminToken}` },
    body,
  });
  return { status: res.status, body: (await res.json()) as unknown };
}
