/**
 * Issue 23, item 3, on both databases: an operator revokes a device's credential without its
 * cooperation (POST /api/v1/devices/{name}/revoke {reason}). Over real TLS (DROVER_TLS=auto):
 * its held poll ends at once with 401 saying an operator revoked it (a certificate's and a
 * token's alike), the built agent holding a poll stops and says why, every later request is
 * 401; a second revoke changes nothing; a viewer, bad input and an unknown device change
 * nothing; actions no longer go to it; a decommission of it completes at once on the server.
 */
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AgentProcess, HEALTHY_HOST } from "../agent/test-support/agent-process";
import { certificateRequest, newDeviceKey } from "../agent/device-certificate";
import { REVOKED, REVOKED_BY_OPERATOR } from "../server/devices/certificates";
import { tokenFor } from "./helpers/actions";
import { enrollDevice, enrollmentBody, eventually, expectError, heartbeatBody, newSecret, uniqueName } from "./helpers/devices";
import { startTestServer, type TestServer } from "./helpers/server";
import { httpsRequest } from "./helpers/tls";

let s: TestServer;
let viewer: string;

beforeAll(async () => {
  s = await startTestServer({ DROVER_TLS: "auto" });
  viewer = (await tokenFor(s, "viewer")).token;
});

afterAll(async () => {
  AgentProcess.killAll();
  await s?.close();
});

interface Credential {
  cert?: string;
  key?: string;
  token?: string;
}

async function call<T = unknown>(method: string, p: string, credential: Credential, body?: unknown) {
  const res = await httpsRequest(`${s.url}/api/agent/v1${p}`, {
    ca: s.ctx.tls.caPem!,
    method,
    ...(credential.cert ? { cert: credential.cert, key: credential.key } : {}),
    headers: { ...(body !== undefined ? { "content-type": "application/json" } : {}), ...(credential.token ? { authorization: `Bearer ${credential.token}` } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  return { status: res.status, body: (res.text ? JSON.parse(res.text) : undefined) as T };
}

async function enrollByCsr(name = uniqueName("rv")): Promise<{ name: string; cert: string; key: string }> {
  const key = newDeviceKey();
  const secret = newSecret();
  const created = await call<{ enrollmentId: string }>("POST", "/enrollments", {}, { ...enrollmentBody(name, secret), csr: certificateRequest(key, name) });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  expect((await s.api("POST", `/enrollments/${created.body.enrollmentId}/approve`, {})).status).toBe(200);
  const decision = await s.agent<{ certificate?: string }>("GET", `/enrollments/${created.body.enrollmentId}`, undefined, { "x-enrollment-secret": secret });
  return { name, key, cert: decision.body.certificate! };
}

const revoke = (name: string, body: unknown, token?: string) => s.api<Record<string, unknown>>("POST", `/devices/${name}/revoke`, body, token);
const stored = (name: string) =>
  s.ctx.db.device.findUniqueOrThrow({ where: { name }, select: { credentialRevokedAt: true, lifecycle: true, decommissioning: true, summary: true } });
const revokedEvents = (name: string) => s.ctx.db.event.findMany({ where: { objectKind: "Device", objectName: name, type: "CredentialRevoked" } });
/** Polls parked in memory now (the metric's gauge). */
const heldPolls = async () => (await s.ctx.metrics.heldPolls.get()).values[0]?.value ?? 0;
const OPERATOR = new RegExp(REVOKED_BY_OPERATOR.replace(/[()]/g, "\\$&"));

describe("revoking a device's credential", () => {
  it("ends a certificate's held poll at once with 401 saying an operator revoked it; every later request is refused; it stays listed, shown revoked", async () => {
    const d = await enrollByCsr();
    expect((await call("POST", "/status", d, heartbeatBody())).status).toBe(200);
    const started = Date.now();
    const held = call("GET", "/work?wait=30&specVersion=0", d);
    // The poll parked (no work): then the revoke.
    await eventually(async () => ((await heldPolls()) > 0 ? true : undefined));
    const res = await revoke(d.name, { reason: "key found on a lost laptop" });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expectError(await held, 401, "UNAUTHENTICATED", OPERATOR);
    expect(Date.now() - started).toBeLessThan(10_000);
    expectError(await call("POST", "/status", d, heartbeatBody()), 401, "UNAUTHENTICATED", OPERATOR);
    expectError(await call("GET", "/work?wait=0", d), 401, "UNAUTHENTICATED", OPERATOR);
    expectError(await call("POST", "/certificate", d, { csr: certificateRequest(newDeviceKey(), d.name) }), 401, "UNAUTHENTICATED", OPERATOR);

    // Shown as revoked: when, by whom, why.
    expect(res.body.credentialRevokedAt).toEqual(expect.any(String));
    expect(res.body.lifecycle).toBe("Enrolled");
    expect(res.body.conditions).toContainEqual(
      expect.objectContaining({ type: "CredentialRevoked", status: "True", reason: "Revoked", message: "revoked by admin: key found on a lost laptop" }),
    );
    const list = await s.api<{ items: { name: string; credentialRevokedAt: string | null }[] }>("GET", `/devices?search=${d.name}`);
    expect(list.body.items).toEqual([expect.objectContaining({ name: d.name, credentialRevokedAt: res.body.credentialRevokedAt })]);
    const [event, ...more] = await revokedEvents(d.name);
    expect(more).toEqual([]);
    expect(event).toMatchObject({ reason: "Revoked", message: "key found on a lost laptop", actor: "user:admin" });

    // Silent from then on, it goes Offline by the sweep as any silent device.
    expect((await stored(d.name)).summary).toBe("Online");
    s.advanceClock(301_000);
    expect(await s.tick()).toBe(true);
    expect((await stored(d.name)).summary).toBe("Offline");
  }, 30_000);

  it("ends a token's held poll at once likewise; a second revoke is 200 with no change and no second event", async () => {
    const d = await enrollDevice(s);
    const held = s.agent("GET", "/work?wait=30&specVersion=0", undefined, { authorization: `Bearer ${d.token}` });
    await eventually(async () => ((await heldPolls()) > 0 ? true : undefined));
    expect((await revoke(d.name, { reason: "token leaked in a CI log" })).status).toBe(200);
    expectError(await held, 401, "UNAUTHENTICATED", OPERATOR);
    expectError(await s.agent("POST", "/status", heartbeatBody(), { authorization: `Bearer ${d.token}` }), 401, "UNAUTHENTICATED", OPERATOR);
    const first = (await stored(d.name)).credentialRevokedAt;

    const again = await revoke(d.name, { reason: "once more" });
    expect(again.status).toBe(200);
    expect((await stored(d.name)).credentialRevokedAt).toEqual(first);
    expect(await revokedEvents(d.name)).toHaveLength(1);
  });

  it("a viewer is 403, bad input 400, an unknown device 404: nothing changes", async () => {
    const d = await enrollDevice(s);
    const events = await s.ctx.db.event.count();
    expectError(await revoke(d.name, { reason: "x" }, viewer), 403, "FORBIDDEN");
    expectError(await revoke(d.name, {}), 400, "INVALID_REQUEST", /reason/);
    expectError(await revoke(d.name, { reason: "   " }), 400, "INVALID_REQUEST", /reason/);
    expectError(await revoke(d.name, { reason: "x".repeat(501) }), 400, "INVALID_REQUEST", /reason/);
    expectError(await revoke("no-such-device", { reason: "x" }), 404, "NOT_FOUND");
    expect((await stored(d.name)).credentialRevokedAt).toBeNull();
    expect(await s.ctx.db.event.count()).toBe(events);
    expect((await s.agent("POST", "/status", heartbeatBody(), { authorization: `Bearer ${d.token}` })).status).toBe(200);
  });

  it("no actions go to a revoked device: its waiting ones are cancelled, a new one for it is 409, a selector leaves it out", async () => {
    const label = uniqueName("grp");
    const d = await enrollDevice(s, uniqueName(), { grp: label });
    const other = await enrollDevice(s, uniqueName(), { grp: label });
    const waiting = await s.api<{ items: { id: string }[] }>("POST", "/actions", { device: d.name, kind: "noop", args: {}, requireApproval: true });
    expect(waiting.status, JSON.stringify(waiting.body)).toBe(201);
    expect((await revoke(d.name, { reason: "compromised" })).status).toBe(200);
    expect(await s.ctx.db.action.findUniqueOrThrow({ where: { id: waiting.body.items[0]!.id }, select: { state: true } })).toEqual({ state: "CANCELLED" });
    expectError(await s.api("POST", "/actions", { device: d.name, kind: "noop", args: {} }), 409, "CONFLICT", /credential revoked/);
    const bySelector = await s.api<{ items: { device: string }[] }>("POST", "/actions", { labelSelector: `grp=${label}`, kind: "noop", args: {} });
    expect(bySelector.status, JSON.stringify(bySelector.body)).toBe(201);
    expect(bySelector.body.items.map((a) => a.device)).toEqual([other.name]);
  });

  it("a decommission of a revoked device completes at once on the server, saying why", async () => {
    const d = await enrollDevice(s);
    expect((await revoke(d.name, { reason: "stolen" })).status).toBe(200);
    const res = await s.api<{ lifecycle: string; decommissioning: string }>("POST", `/devices/${d.name}/decommission`, {});
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ lifecycle: "Decommissioned", decommissioning: "CredentialRevoked" });
    const requested = await s.ctx.db.event.findFirstOrThrow({ where: { objectName: d.name, type: "DecommissionRequested" } });
    expect(requested.message).toMatch(/credential is revoked.*completes at once/);
    const changed = await s.ctx.db.event.findFirstOrThrow({ where: { objectName: d.name, type: "LifecycleChanged" } });
    expect(changed.message).toBe("lifecycle: Enrolled → Decommissioned");
    // Now it was decommissioned: the refusal says so; a revoke is a no-op.
    expectError(await s.agent("GET", "/work?wait=0", undefined, { authorization: `Bearer ${d.token}` }), 401, "UNAUTHENTICATED", REVOKED);
    expect((await revoke(d.name, { reason: "again" })).status).toBe(200);
    expect(await revokedEvents(d.name)).toHaveLength(1);
  });

  it("the built agent holding a poll with its certificate stops at the revoke, saying why, and does not retry", async () => {
    const name = uniqueName("agent");
    const agent = new AgentProcess(["--server", s.url, "--name", name, "--state-dir", path.join(s.dir, name), "--ca-fingerprint", s.ctx.tls.caFingerprint!], {
      preload: [HEALTHY_HOST],
    });
    const enrolled = await agent.waitFor("enrolled");
    expect((await s.api("POST", `/enrollments/${String(enrolled.enrollmentId)}/approve`, {})).status).toBe(200);
    await agent.waitFor("approved");
    await eventually(async () => ((await s.ctx.db.device.findUniqueOrThrow({ where: { name }, select: { lastSeen: true } })).lastSeen ? true : undefined), 20_000);
    expect((await revoke(name, { reason: "device stolen from the rack" })).status).toBe(200);
    expect(await agent.exited).toBe(1);
    const said = agent.lines.find((l) => l.event === "revoked");
    expect(String(said?.message)).toMatch(OPERATOR);
  }, 60_000);
});
