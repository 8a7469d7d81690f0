/**
 * A mistaken Deny can be undone (issue 10, finding 3): an operator reopens a Denied request,
 * it is Pending again with its history kept, and the same agent, which kept its request and
 * looks at it again while denied, is approved and enrolls without touching its state folder.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "./helpers/server";
import { createEnrollment } from "../server/enrollments/enrollments";
import { EnrollmentRequestBody } from "../lib/protocol";
import { enrollmentBody, expectError, newSecret, uniqueName } from "./helpers/devices";
import { tokenFor } from "./helpers/actions";
import { startSimulation, type SimulationHandle } from "../agent/simulate";

interface Enrollment {
  id: string;
  deviceName: string;
  status: string;
  decidedBy: string | null;
}

let s: TestServer;
const simulations: SimulationHandle[] = [];
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await Promise.all(simulations.map((h) => h.stop()));
  await s?.close();
});

async function deniedRequest(): Promise<{ id: string; name: string; secret: string }> {
  const name = uniqueName("reopen");
  const secret = newSecret();
  const created = await s.agent<{ enrollmentId: string }>("POST", "/enrollments", enrollmentBody(name, secret));
  expect(created.status).toBe(201);
  const id = created.body.enrollmentId;
  expect((await s.api("POST", `/enrollments/${id}/deny`, { reason: "looked wrong" })).status).toBe(200);
  return { id, name, secret };
}

const events = async (name: string) =>
  (await s.api<{ items: { type: string; actor: string; message: string }[] }>("GET", `/events?kind=EnrollmentRequest&name=${name}&limit=20`)).body.items.map((e) => e.type).reverse();

describe("reopen a denied enrollment request", () => {
  it("Denied → Pending with an event; the agent's next look says Pending; approving then issues its token", async () => {
    const r = await deniedRequest();
    const reopened = await s.api<Enrollment>("POST", `/enrollments/${r.id}/reopen`, { reason: "denied by mistake" });
    expect(reopened.status, JSON.stringify(reopened.body)).toBe(200);
    expect(reopened.body).toMatchObject({ id: r.id, status: "Pending", decidedBy: null });
    expect(await events(r.name)).toEqual(["EnrollmentRequested", "EnrollmentDenied", "EnrollmentReopened"]);

    const look = await s.agent<{ status: string }>("GET", `/enrollments/${r.id}?wait=0`, undefined, { "x-enrollment-secret": r.secret });
    expect(look.body).toEqual({ status: "Pending" });
    expect((await s.api("POST", `/enrollments/${r.id}/approve`, {})).status).toBe(200);
    const approved = await s.agent<{ status: string; token?: string }>("GET", `/enrollments/${r.id}?wait=0`, undefined, { "x-enrollment-secret": r.secret });
    expect(approved.body.status).toBe("Approved");
    expect(approved.body.token).toBeTruthy();
  });

  it("only a Denied request: a Pending or Approved one is 409, an unknown one 404, a viewer 403; nothing changes", async () => {
    const name = uniqueName("reopen");
    const created = await s.agent<{ enrollmentId: string }>("POST", "/enrollments", enrollmentBody(name, newSecret()));
    const id = created.body.enrollmentId;
    expectError(await s.api("POST", `/enrollments/${id}/reopen`, {}), 409, "CONFLICT", /is Pending: only a Denied request can be reopened/);
    expect((await s.api("POST", `/enrollments/${id}/approve`, {})).status).toBe(200);
    expectError(await s.api("POST", `/enrollments/${id}/reopen`, {}), 409, "CONFLICT", /is Approved/);
    expectError(await s.api("POST", "/enrollments/no-such-id/reopen", {}), 404, "NOT_FOUND");

    const denied = await deniedRequest();
    const viewer = await tokenFor(s, "viewer");
    expectError(await s.api("POST", `/enrollments/${denied.id}/reopen`, {}, viewer.token), 403, "FORBIDDEN");
    const row = await s.ctx.db.enrollmentRequest.findUniqueOrThrow({ where: { id: denied.id }, select: { status: true } });
    expect(row.status).toBe("Denied");
    expect(await events(denied.name)).toEqual(["EnrollmentRequested", "EnrollmentDenied"]);
  });

  it("a real agent that was denied enrolls once reopened and approved, with the same request", async () => {
    const prefix = uniqueName("reagent");
    const sim = startSimulation({ server: s.url, agents: 1, prefix, labels: { test: "reopen" }, degraded: 0, error: 0, restarts: 0, flap: 0, silent: 0, seed: 3 });
    simulations.push(sim);
    const pending = async () => (await s.api<{ items: Enrollment[] }>("GET", "/enrollments?limit=1000")).body.items.find((e) => e.deviceName.startsWith(prefix));
    await expect.poll(async () => (await pending())?.status, { timeout: 15_000 }).toBe("Pending");
    const request = (await pending())!;
    expect((await s.api("POST", `/enrollments/${request.id}/deny`, {})).status).toBe(200);
    // The agent is told Denied and backs off (5 s at first); then the operator changes their mind.
    await new Promise((r) => setTimeout(r, 1_000));
    expect((await s.api("POST", `/enrollments/${request.id}/reopen`, {})).status).toBe(200);
    expect((await s.api("POST", `/enrollments/${request.id}/approve`, {})).status).toBe(200);
    await expect
      .poll(async () => (await s.api<{ summary: string }>("GET", `/devices/${request.deviceName}`)).body.summary, { timeout: 20_000, interval: 500 })
      .toBe("Online");
    // The same request all along: no second one was made.
    const all = (await s.api<{ items: Enrollment[] }>("GET", "/enrollments?limit=1000")).body.items.filter((e) => e.deviceName.startsWith(prefix));
    expect(all.map((e) => e.id)).toEqual([request.id]);
  }, 40_000);
});

describe("the same enrollment request sent several times at once (an agent retrying)", () => {
  it("every copy is 201 with one request's id, one EnrollmentRequested event; another secret at once is 409, never 500", async () => {
    const name = uniqueName("twice");
    const secret = newSecret();
    const same = await Promise.all(Array.from({ length: 6 }, () => s.agent<{ enrollmentId: string }>("POST", "/enrollments", enrollmentBody(name, secret))));
    expect(same.map((r) => r.status)).toEqual(Array(6).fill(201));
    expect(new Set(same.map((r) => r.body.enrollmentId)).size).toBe(1);
    expect(await events(name)).toEqual(["EnrollmentRequested"]);

    const other = uniqueName("twice");
    const mixed = await Promise.all([newSecret(), newSecret(), newSecret()].map((x) => s.agent("POST", "/enrollments", enrollmentBody(other, x))));
    expect(mixed.map((r) => r.status).sort()).toEqual([201, 409, 409]);
  });
});

describe("the same enrollment sent several times at once, approved at once by a rule", () => {
  let auto: TestServer;
  beforeAll(async () => {
    auto = await startTestServer({ DROVER_AUTO_APPROVE: "twin=auto" });
  });
  afterAll(async () => {
    await auto?.close();
  });

  it("a copy that misses the request, then finds the device its twin committed meanwhile, answers as the same request, not 409", async () => {
    // Approved requests commit side by side on PostgreSQL, and under load an agent's retry can
    // read "no request" just before its twin commits, then find the twin's device. The twin is
    // committed here at exactly that moment: inside the copy's look for the device.
    const name = uniqueName("twin");
    const body = EnrollmentRequestBody.parse(enrollmentBody(name, newSecret(), { twin: "auto" }));
    let twin: { enrollmentId: string; status: string; token?: string } | null = null;
    const device = auto.ctx.db.device;
    const db = new Proxy(auto.ctx.db, {
      get(target, prop, receiver) {
        if (prop !== "device") return Reflect.get(target, prop, receiver) as unknown;
        return new Proxy(device, {
          get(d, dprop, dreceiver) {
            const value = Reflect.get(d, dprop, dreceiver) as unknown;
            if (dprop !== "findUnique") return value;
            return async (args: Parameters<typeof device.findUnique>[0]) => {
              twin ??= await createEnrollment(auto.ctx, body, "127.0.0.1");
              return device.findUnique(args);
            };
          },
        });
      },
    });
    const copy = await createEnrollment({ ...auto.ctx, db }, body, "127.0.0.1");
    // Approved at once, with its token; the copy answers the same one.
    expect(twin).toEqual({ enrollmentId: expect.any(String), status: "Approved", token: expect.stringMatching(/^drvd/) });
    expect(copy).toEqual(twin);
  });
});
