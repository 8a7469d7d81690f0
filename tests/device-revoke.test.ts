/**
 * Issue 23, item 3, on both databases: an operator revokes a device's credential without its
 * cooperation (POST /api/v1/devices/{name}/revoke {reason}). Over real TLS (DROVER_TLS=auto):
 * its held poll ends at once with 401 saying an operator revoked it (a certificate's and a
 * token's alike), the built agent holding a poll stops and says why, every later request is
 * 401; a second revoke changes nothing; a viewer, bad input and an unknown device change
 * nothing; actions no longer go to it; those it held (NEW, RUNNING) are LOST at the revoke, saying
 * why, and a workflow waiting on one moves on; a decommission of it completes at once on the
 * server, ending any it still held the same way; so does the agent's own report that completes
 * its decommission, for what it still held however recently updated.
 */
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AgentProcess, HEALTHY_HOST } from "../agent/test-support/agent-process";
import { certificateRequest, newDeviceKey } from "../agent/device-certificate";
import { REVOKED, REVOKED_BY_OPERATOR } from "../server/devices/certificates";
import { actionEvents, createAction, getAction, report, reportAll, setHealth, tokenFor, work } from "./helpers/actions";
import { REVOKED_OUTCOME_UNKNOWN } from "../server/devices/agent-store";
import type { WorkflowObject } from "../server/workflows/workflows";
import { enrollDevice, enrollmentBody, eventually, expectError, heartbeat, heartbeatBody, newSecret, uniqueName } from "./helpers/devices";
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

  it("ends the actions it held: RUNNING and NEW are LOST saying why, a workflow waiting on one moves on, a DONE one stays DONE; a second revoke changes nothing", async () => {
    const d = await enrollDevice(s);
    await setHealth(s, d, {});
    // One it finished, one a workflow waits on (RUNNING), one it only confirmed (NEW).
    const done = await createAction(s, d.name);
    expect((await work(s, d, 0)).body.actions.map((a) => a.id)).toEqual([done.id]);
    await reportAll(s, d, done.id, "NEW", "RUNNING", "DONE");
    const wf = uniqueName("wf");
    const created = await s.api<WorkflowObject>("POST", "/workflows", { metadata: { name: wf }, spec: { steps: { A: { jobTemplate: { kind: "noop", targets: { devices: [d.name] } } } } } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const running = created.body.status.statuses.A!.actions[0]!;
    const confirmed = await createAction(s, d.name);
    const offered = await work(s, d, 0);
    expect(offered.body.actions.map((a) => a.id).sort()).toEqual([running, confirmed.id].sort());
    await reportAll(s, d, running, "NEW", "RUNNING");
    await reportAll(s, d, confirmed.id, "NEW");

    expect((await revoke(d.name, { reason: "disk image leaked" })).status).toBe(200);
    // Ended in the revoke's own transaction: read at once, no waiting.
    for (const id of [running, confirmed.id]) {
      const a = await getAction(s, id);
      expect(a).toMatchObject({ state: "LOST", error: REVOKED_OUTCOME_UNKNOWN, finishedAt: expect.any(String) });
      const lost = (await actionEvents(s, id)).filter((e) => e.reason === "LOST");
      expect(lost).toEqual([expect.objectContaining({ type: "ActionStateChanged", actor: "server" })]);
      expect(lost[0]!.message).toBe(`${id === running ? "RUNNING" : "NEW"} → LOST: ${REVOKED_OUTCOME_UNKNOWN} (${d.name})`);
    }
    expect(await getAction(s, done.id)).toMatchObject({ state: "DONE", error: null });
    // The workflow sees its target end as it sees a LOST from a heartbeat: the step fails, the run ends.
    const ended = await eventually(async () => {
      const w = (await s.api<WorkflowObject>("GET", `/workflows/${wf}`)).body;
      return w.status.phase === "Failed" ? w : undefined;
    });
    expect(ended.status.statuses.A).toMatchObject({ phase: "Failed" });
    expect(ended.status.statuses.A!.message).toContain(`${d.name}: LOST: ${REVOKED_OUTCOME_UNKNOWN}`);
    // A late report of the agent (were it let in) could not revive it: LOST is final.
    expectError(await report(s, d, running, { state: "DONE" }), 401, "UNAUTHENTICATED", OPERATOR);

    const before = await s.ctx.db.action.findMany({ where: { id: { in: [running, confirmed.id, done.id] } }, orderBy: { id: "asc" } });
    const events = await s.ctx.db.event.count();
    expect((await revoke(d.name, { reason: "once more" })).status).toBe(200);
    expect(await s.ctx.db.action.findMany({ where: { id: { in: [running, confirmed.id, done.id] } }, orderBy: { id: "asc" } })).toEqual(before);
    expect(await s.ctx.db.event.count()).toBe(events);
  });

  it("a decommission completing without the agent ends the actions it still held as LOST (one and in bulk)", async () => {
    const one = await enrollDevice(s);
    const many = await enrollDevice(s);
    const held: string[] = [];
    for (const d of [one, many]) {
      await setHealth(s, d, {});
      const a = await createAction(s, d.name);
      expect((await work(s, d, 0)).body.actions.map((x) => x.id)).toEqual([a.id]);
      await reportAll(s, d, a.id, "NEW", "RUNNING");
      expect((await revoke(d.name, { reason: "stolen" })).status).toBe(200);
      expect((await getAction(s, a.id)).state).toBe("LOST");
      // What a device revoked before its actions were ended at the revoke left behind (a release
      // earlier): still RUNNING, with no agent to report it.
      await s.ctx.db.action.update({ where: { id: a.id }, data: { state: "RUNNING", finishedAt: null, error: null } });
      held.push(a.id);
    }
    expect((await s.api("POST", `/devices/${one.name}/decommission`, {})).status).toBe(200);
    const bulk = await s.api<{ changed: number }>("POST", "/devices/decommission", { names: [many.name] });
    expect(bulk.status, JSON.stringify(bulk.body)).toBe(200);
    expect(bulk.body.changed).toBe(1);
    for (const [i, d] of [one, many].entries()) {
      expect(await stored(d.name)).toMatchObject({ lifecycle: "Decommissioned", decommissioning: "CredentialRevoked" });
      expect(await getAction(s, held[i]!)).toMatchObject({ state: "LOST", error: REVOKED_OUTCOME_UNKNOWN });
    }
  });

  it("the report that completes a decommission ends what the agent still held as LOST, one updated a moment before included", async () => {
    const d = await enrollDevice(s);
    await setHealth(s, d, {});
    const a = await createAction(s, d.name);
    expect((await work(s, d, 0)).body.actions.map((x) => x.id)).toEqual([a.id]);
    await reportAll(s, d, a.id, "NEW", "RUNNING");
    expect((await s.api("POST", `/devices/${d.name}/decommission`, {})).status).toBe(200);
    // Its last report lists the action as still running, updated within the heartbeat's LOST grace:
    // no later report can end it (every request is 401 from now on), so this one does.
    const last = await heartbeat(s, d, { decommissioning: { state: "Completed" }, actions: [{ id: a.id, state: "RUNNING" }] });
    expect(last.status, JSON.stringify(last.body)).toBe(200);
    expect(await stored(d.name)).toMatchObject({ lifecycle: "Decommissioned" });
    expect(await getAction(s, a.id)).toMatchObject({ state: "LOST", error: REVOKED_OUTCOME_UNKNOWN, finishedAt: expect.any(String) });
    const lost = (await actionEvents(s, a.id)).filter((e) => e.reason === "LOST");
    expect(lost).toEqual([expect.objectContaining({ actor: "server", message: `RUNNING → LOST: ${REVOKED_OUTCOME_UNKNOWN} (${d.name})` })]);
    expectError(await report(s, d, a.id, { state: "DONE" }), 401, "UNAUTHENTICATED", /revoked|decommissioned/);
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
