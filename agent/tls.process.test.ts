/**
 * Issue 23, the agent's side: the real agent (a child process, the build of the run) against a
 * real server on TLS (a CA made for the test, tests/helpers/tls.ts). Pinned to another CA, by
 * fingerprint or by file, it sends nothing and says why; pinned to the server's CA by its
 * fingerprint alone, it finds that CA in the server's chain, enrolls and reports.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../tests/helpers/server";
import { issueTestServerCertificate, makeTestCa, type TestCa } from "../tests/helpers/tls";
import { AgentProcess, eventually, HEALTHY_HOST } from "./test-support/agent-process";

let server: TestServer;
let dir: string;
let ca: TestCa;
let other: TestCa;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "drover-agent-tls-"));
  ca = makeTestCa(dir, "server-ca");
  other = makeTestCa(dir, "someone-else");
  const cert = issueTestServerCertificate(ca, dir);
  server = await startTestServer({ DROVER_TLS_CERT: cert.certFile, DROVER_TLS_KEY: cert.keyFile, DROVER_TLS_CA: ca.caFile, DROVER_HEARTBEAT_SECONDS: "2", LOG_LEVEL: "warn" });
});

afterAll(async () => {
  AgentProcess.killAll();
  await server?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const agentArgs = (name: string, ...pin: string[]) => ["--server", server.url, "--name", name, "--state-dir", path.join(server.dir, name), ...pin];

async function enrollmentsOf(name: string): Promise<unknown[]> {
  const list = await server.api<{ items: { deviceName: string }[] }>("GET", "/enrollments");
  return list.body.items.filter((e) => e.deviceName === name);
}

describe("an agent pinned to its server's CA", () => {
  it("pinned to another CA (fingerprint or file), sends nothing and says why", async () => {
    for (const [name, pin] of [
      ["pinned-elsewhere", ["--ca-fingerprint", other.fingerprint]],
      ["trusts-elsewhere", ["--ca-file", other.caFile]],
    ] as const) {
      const agent = new AgentProcess(agentArgs(name, ...pin));
      const refused = await agent.waitFor("enrollment.failed");
      expect(JSON.stringify(refused.error), name).toContain(`server certificate is not signed by the pinned CA (sha256 ${other.fingerprint})`);
      agent.kill("SIGTERM");
      expect(await agent.exited).toBe(0);
      expect(await enrollmentsOf(name), name).toEqual([]);
    }
  }, 40_000);

  it("pinned by fingerprint alone, takes the CA from the server's chain, enrolls and reports", async () => {
    const agent = new AgentProcess(agentArgs("pinned-right", "--ca-fingerprint", ca.fingerprint.toUpperCase().replace(/(..)(?=.)/g, "$1:")), { preload: [HEALTHY_HOST] });
    // Issue 23: this server's certificate is the operator's (no CA key): it signs no device certificate, so the agent enrolls for a token.
    await agent.waitFor("certificate.unavailable");
    const enrolled = await agent.waitFor("enrolled");
    expect((await server.api("POST", `/enrollments/${String(enrolled.enrollmentId)}/approve`, {})).status).toBe(200);
    await eventually(async () => {
      const d = await server.api<{ summary: string }>("GET", "/devices/pinned-right");
      return d.status === 200 && d.body.summary === "Online" ? d.body : undefined;
    }, 20_000, "the pinned agent Online");
    agent.kill("SIGTERM");
    expect(await agent.exited).toBe(0);
  }, 40_000);

  it("refuses to start (status 2) on a CA file that is not the pinned CA, or a pin for a plain http server", async () => {
    const mismatch = new AgentProcess(agentArgs("mismatch", "--ca-file", ca.caFile, "--ca-fingerprint", other.fingerprint));
    expect(await mismatch.exited).toBe(2);
    expect(mismatch.stderr.join("")).toContain(`is not the pinned CA: its sha256 is ${ca.fingerprint}, --ca-fingerprint is ${other.fingerprint}`);
    const plain = new AgentProcess(["--server", "http://127.0.0.1:9", "--name", "plain", "--state-dir", path.join(server.dir, "plain"), "--ca-fingerprint", ca.fingerprint]);
    expect(await plain.exited).toBe(2);
    expect(plain.stderr.join("")).toContain("--server: --ca-file and --ca-fingerprint are for an https:// server");
  });
});
