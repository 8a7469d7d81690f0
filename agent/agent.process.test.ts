/**
 * The real agent, as a child process (the agent built for the run, AgentProcess), against the real
 * server (server/main.ts, API only) on a random port with a fresh SQLite file, driven
 * through the operator REST API (../shared/OPERATOR_API.md).
 */
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../tests/helpers/server";
import { AGENT_API_BASE } from "../lib/protocol";
import { AgentProcess, eventually } from "./test-support/agent-process";

let server: TestServer;
let tmp: string;
let operatorToken: string;

async function api(method: string, route: string, body?: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(`${server.url}/api/v1${route}`, {
    method,
    headers: { authorization: `Bearer ${operatorToken}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, json: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

async function device(name: string) {
  const { status, json } = await api("GET", `/devices/${name}`);
  return status === 200 ? json : null;
}

beforeAll(async () => {
  server = await startTestServer({ DROVER_HEARTBEAT_SECONDS: "2", LOG_LEVEL: "warn" });
  // State dirs live in the server's temp folder, removed with it.
  tmp = server.dir;
  operatorToken = server.adminToken;
});

afterAll(async () => {
  AgentProcess.killAll();
  await server?.close();
});

describe("the agent process against the real server", () => {
  it("enrolls, is approved, heartbeats, survives a restart, and decommissions", async () => {
    const stateDir = path.join(tmp, "worker-a");
    const args = ["--server", server.url, "--name", "worker-a", "--labels", "site=lab,tier=edge", "--state-dir", stateDir, "--role", "worker"];

    // Enroll, then wait for an operator.
    const first = new AgentProcess(args);
    const enrolled = await first.waitFor("enrolled");
    const enrollmentId = String(enrolled.enrollmentId);
    const pending = await api("GET", "/enrollments?status=Pending");
    expect((pending.json.items as { id: string; deviceName: string; labels: unknown }[]).find((e) => e.id === enrollmentId)).toMatchObject({
      deviceName: "worker-a",
      labels: { site: "lab", tier: "edge" },
    });
    expect((await fs.stat(path.join(stateDir, "identity.json"))).mode & 0o777).toBe(0o600);

    // Approve: the agent gets its token and reports at once; the device is Online.
    expect((await api("POST", `/enrollments/${enrollmentId}/approve`, {})).status).toBe(200);
    await first.waitFor("approved");
    const online = await eventually(async () => {
      const d = await device("worker-a");
      return d?.summary === "Online" || d?.summary === "Degraded" || d?.summary === "Error" ? d : undefined;
    }, 20_000, "device reporting");
    // This host's real resource health; on a quiet machine that is Online.
    expect(online).toMatchObject({ lifecycle: "Enrolled", applicationSummary: "NoApplications" });
    expect((online.reported as { config: unknown }).config).toEqual({ renderedVersion: 0 });
    // This host's facts, from the process's own readings (system-facts.ts), in its first heartbeat.
    const inventory = online.inventory as { system: Record<string, unknown>; usage: { memory: { totalBytes: number } } };
    expect(inventory.system).toMatchObject({ hostname: os.hostname(), kernel: os.release(), arch: os.machine(), cpus: os.availableParallelism() });
    expect(inventory.usage.memory.totalBytes).toBe(os.totalmem());
    const seenBefore = String(online.lastSeen);

    // SIGTERM: stops within a second or so, exit 0.
    const killedAt = Date.now();
    first.kill("SIGTERM");
    expect(await first.exited).toBe(0);
    expect(Date.now() - killedAt).toBeLessThan(2_500);
    expect(first.events()).toContain("stopped");

    // Restart with the same state directory: no new enrollment, same device, reporting again.
    const second = new AgentProcess(args);
    await second.waitFor("resumed");
    await eventually(async () => {
      const d = await device("worker-a");
      return d && String(d.lastSeen) !== seenBefore ? d : undefined;
    }, 20_000, "a heartbeat after the restart");
    expect(second.events()).not.toContain("enrolled");
    const all = await api("GET", "/enrollments");
    expect((all.json.items as { deviceName: string }[]).filter((e) => e.deviceName === "worker-a")).toHaveLength(1);
    const token = (JSON.parse(await fs.readFile(path.join(stateDir, "identity.json"), "utf8")) as { token: string }).token;
    expect(token).toBeTruthy();

    // Decommission: Started → Completed, exit 0, token wiped and refused.
    expect((await api("POST", "/devices/worker-a/decommission")).status).toBe(200);
    expect(await second.exited).toBe(0);
    const events = second.events();
    expect(events.indexOf("decommission.started")).toBeGreaterThan(-1);
    expect(events.indexOf("decommission.completed")).toBeGreaterThan(events.indexOf("decommission.started"));
    expect(events).toContain("decommission.credential-wiped");
    const gone = await device("worker-a");
    expect(gone).toMatchObject({ lifecycle: "Decommissioned", decommissioning: "Completed" });
    const identity = JSON.parse(await fs.readFile(path.join(stateDir, "identity.json"), "utf8")) as Record<string, unknown>;
    expect(identity).toMatchObject({ deviceName: "worker-a", decommissioned: true });
    expect(identity.token).toBeUndefined();
    await expect(fs.access(path.join(stateDir, "spec.json"))).rejects.toThrow();

    const work = await fetch(`${server.url}${AGENT_API_BASE}/work?wait=0`, { headers: { authorization: `Bearer ${token}` } });
    expect(work.status).toBe(401);
    const status = await fetch(`${server.url}${AGENT_API_BASE}/status`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ resources: { cpu: "Healthy", memory: "Healthy", disk: "Healthy" }, config: { renderedVersion: 0 } }),
    });
    expect(status.status).toBe(401);

    // Started again on that state directory, it does nothing and says why.
    const third = new AgentProcess(args);
    expect(await third.exited).toBe(0);
    expect(third.lines.some((l) => l.event === "decommissioned" && /clear the state directory/.test(String(l.msg)))).toBe(true);
  });

  it("exits 1 with a clear error when the name is taken", async () => {
    const stateDir = path.join(tmp, "worker-b-1");
    const owner = new AgentProcess(["--server", server.url, "--name", "worker-b", "--state-dir", stateDir]);
    await owner.waitFor("enrolled");
    const intruder = new AgentProcess(["--server", server.url, "--name", "worker-b", "--state-dir", path.join(tmp, "worker-b-2")]);
    expect(await intruder.exited).toBe(1);
    expect(intruder.lines.find((l) => l.event === "enrollment.conflict")?.msg).toMatch(/"worker-b" is taken/);
    owner.kill("SIGTERM");
    expect(await owner.exited).toBe(0);
  });

  it("exits 1 when the credential is revoked behind its back (401 on /work)", async () => {
    const stateDir = path.join(tmp, "worker-c");
    const agent = new AgentProcess(["--server", server.url, "--name", "worker-c", "--state-dir", stateDir]);
    const enrolled = await agent.waitFor("enrolled");
    await api("POST", `/enrollments/${String(enrolled.enrollmentId)}/approve`, {});
    await agent.waitFor("approved");
    await eventually(async () => (await device("worker-c"))?.lastSeen ?? undefined, 20_000, "first heartbeat");
    // Revoke the credential directly, as a server-side revocation would.
    await server.ctx.db.device.update({ where: { name: "worker-c" }, data: { credentialRevokedAt: new Date() } });
    expect(await agent.exited).toBe(1);
    expect(agent.events()).toContain("revoked");
  });

  it("exits 2 on bad arguments, with the usage", async () => {
    const agent = new AgentProcess(["--server", "not a url", "--name", "x"]);
    expect(await agent.exited).toBe(2);
    expect(agent.stderr.join("")).toMatch(/--server: must be an http.*Usage:/s);
  });
});
