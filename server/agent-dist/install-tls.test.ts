/**
 * Issue 23: the install line the console shows, against a server on TLS with its own CA, run by
 * sh as an operator would (less sudo, into a temporary prefix, no service). Pinned to the
 * server's CA, it installs an agent that trusts that CA alone, which enrolls and later upgrades
 * itself through the same pin (an agentupgrade action); pinned to another, it stops before
 * fetching anything but the CA, and says why.
 */
import { execFile, execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { installCommands } from "@/lib/install-command";
import { AgentProcess, eventually, HEALTHY_HOST } from "@/agent/test-support/agent-process";
import { startTestServer, type TestServer } from "@/tests/helpers/server";
import { issueTestServerCertificate, makeTestCa, type TestCa } from "@/tests/helpers/tls";

const ROOT = path.resolve(import.meta.dirname, "../..");
const run = promisify(execFile);
let server: TestServer;
let dir: string;
let ca: TestCa;
let token: string;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "drover-install-tls-"));
  ca = makeTestCa(dir, "install-ca");
  const cert = issueTestServerCertificate(ca, dir);
  // Two builds: 1.0.0 current (what install.sh installs), 2.0.0 kept (an upgrade to go to).
  const dist = path.join(dir, "dist");
  for (const [version, keep] of [["2.0.0", false], ["1.0.0", true]] as const) {
    execFileSync(process.execPath, [path.join(ROOT, "scripts/build-agent.mjs"), "--out", dist, "--version", version, "--quiet", ...(keep ? ["--keep"] : [])], { cwd: ROOT, stdio: "pipe" });
  }
  server = await startTestServer({ DROVER_TLS_CERT: cert.certFile, DROVER_TLS_KEY: cert.keyFile, DROVER_TLS_CA: ca.caFile, DROVER_AGENT_DIST: dist, DROVER_HEARTBEAT_SECONDS: "2", LOG_LEVEL: "warn" });
  const created = await server.api<{ token: string }>("POST", "/enrollment-tokens", { name: "tls-install", autoApprove: true });
  expect(created.status).toBe(201);
  token = created.body.token;
});

afterAll(async () => {
  AgentProcess.killAll();
  await server?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** The console's service line, run without sudo and without a service, into `prefix`. */
function runLine(fingerprint: string, prefix: string, name: string) {
  const line = installCommands(server.url, token, fingerprint).service.replace(`| sudo sh -s -- --token ${token}`, `| sh -s -- --no-service --prefix ${prefix} --name ${name} --token ${token}`);
  expect(line).toContain("| sh -s -- --no-service");
  return run("sh", ["-c", line], { cwd: dir });
}

describe("the pinned install line", () => {
  it("pinned to the server's CA: installs an agent pinned to it, which enrolls and upgrades itself through the pin", async () => {
    const prefix = path.join(dir, "opt", "pinned");
    const { stdout } = await runLine(ca.fingerprint, prefix, "tls-installed");
    expect(stdout).toContain(`the server's CA pinned: sha256 ${ca.fingerprint}`);
    expect(fs.readFileSync(path.join(prefix, "ca.pem"), "utf8").trim()).toBe(ca.caPem.trim());
    const settings = fs.readFileSync(path.join(prefix, "agent.env"), "utf8");
    expect(settings).toContain(`DROVER_CA_FILE=${prefix}/ca.pem`);
    expect(settings).toContain(`DROVER_CA_FINGERPRINT=${ca.fingerprint}`);
    expect(stdout).toContain(`uninstall: curl -fsSL --cacert ${prefix}/ca.pem ${server.url}/install.sh`);

    const agent = new AgentProcess([], { command: path.join(prefix, "bin", "drover-agent"), cwd: prefix, env: { ...process.env, NODE_OPTIONS: `--import ${HEALTHY_HOST}` } });
    const started = await agent.waitFor("start");
    expect(started).toMatchObject({ caFile: `${prefix}/ca.pem`, caFingerprint: ca.fingerprint });
    await eventually(async () => {
      const d = await server.api<{ summary: string }>("GET", "/devices/tls-installed");
      return d.status === 200 && d.body.summary === "Online" ? d.body : undefined;
    }, 20_000, "the installed, pinned agent Online");
  
    // An upgrade: the build comes through the same pin (the transport's streamingFetch), the
    // agent exits 75 and bin/drover-agent, its own supervisor here, starts the new one.
    const created = await server.api<{ items: { id: string }[] }>("POST", "/actions", { device: "tls-installed", kind: "agentupgrade", args: { version: "2.0.0" } });
    expect(created.status).toBe(201);
    const done = await eventually(
      async () => {
        const a = await server.api<{ state: string; output: string | null; error: string | null }>("GET", `/actions/${created.body.items[0]!.id}`);
        return a.body.state === "DONE" || a.body.state === "FAILED" ? a.body : undefined;
      },
      30_000,
      "the agentupgrade action ending",
    );
    expect(done).toMatchObject({ state: "DONE", output: expect.stringContaining("upgraded from 1.0.0 to 2.0.0") });
    await eventually(async () => ((await server.api<{ agentVersion: string }>("GET", "/devices/tls-installed")).body.agentVersion === "2.0.0" ? true : undefined), 20_000, "the device on 2.0.0");
    agent.kill("SIGTERM");
    expect(await agent.exited).toBe(0);
  }, 90_000);

  it("pinned to another CA: stops after fetching /ca.pem, installs nothing, and says why", async () => {
    const other = makeTestCa(dir, "not-the-server");
    const prefix = path.join(dir, "opt", "refused");
    const failed = await runLine(other.fingerprint, prefix, "tls-refused").then(
      () => null,
      (error: { code: number; stderr: string }) => error,
    );
    expect(failed?.code).toBe(1);
    expect(failed?.stderr).toContain(`${server.url}/ca.pem is not the CA pinned here (sha256 ${other.fingerprint}): stopped`);
    expect(fs.existsSync(prefix)).toBe(false);
  }, 30_000);
});
