/**
 * Issue 12: the one-line install with an enrollment token. install.sh, piped to sh as the
 * "Add devices" page shows it (with --no-service into a temporary prefix), installs the built
 * agent with `--token`; the installed agent enrolls approved at once with the token's labels.
 * A revoked or expired token is refused: the agent logs why (event "enrollment.rejected",
 * the server's message) and exits with status 1, which its systemd unit does not restart
 * (RestartPreventExitStatus=1 2); nothing is created on the server.
 */
import { execFile, execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { buildSync } from "esbuild";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AgentProcess, eventually } from "@/agent/test-support/agent-process";
import { startTestServer, type TestServer } from "@/tests/helpers/server";
import { sleep } from "@/tests/helpers/actions";
import { parseAgentArgs } from "@/agent/env";

const ROOT = path.resolve(import.meta.dirname, "../..");
const run = promisify(execFile);
let server: TestServer;
let dist: string;
let healthyHost: string;

beforeAll(async () => {
  dist = fs.mkdtempSync(path.join(os.tmpdir(), "drover-dist-token-"));
  execFileSync(process.execPath, [path.join(ROOT, "scripts/build-agent.mjs"), "--out", dist, "--version", "7.0.2", "--quiet"], { cwd: ROOT, stdio: "pipe" });
  server = await startTestServer({ DROVER_AGENT_DIST: dist, DROVER_HEARTBEAT_SECONDS: "2", LOG_LEVEL: "warn" });
  healthyHost = path.join(dist, "healthy-host.mjs");
  buildSync({ entryPoints: [path.join(ROOT, "agent/test-support/healthy-host.ts")], outfile: healthyHost, format: "esm", platform: "node", logLevel: "error" });
}, 120_000);

afterAll(async () => {
  AgentProcess.killAll();
  await server?.close();
  fs.rmSync(dist, { recursive: true, force: true });
});

async function createToken(body: Record<string, unknown>): Promise<{ id: string; token: string }> {
  const res = await server.api<{ id: string; token: string }>("POST", "/enrollment-tokens", { name: `install ${Math.random()}`, ...body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

/** `curl … | sh -s -- --token T …` into a prefix under the test server's folder; the installed agent started. */
async function installAndStart(name: string, token: string, labels = "") {
  const prefix = path.join(server.dir, "opt", name);
  const { stdout } = await run("sh", ["-c", `curl -fsSL ${server.url}/install.sh | sh -s -- --no-service --prefix ${prefix} --name ${name} --token ${token}${labels ? ` --labels ${labels}` : ""}`]);
  expect(stdout).toContain("with an enrollment token");
  expect(fs.readFileSync(path.join(prefix, "agent.env"), "utf8")).toContain(`DROVER_ENROLLMENT_TOKEN=${token}`);
  return new AgentProcess([], { command: path.join(prefix, "bin", "drover-agent"), cwd: prefix, env: { ...process.env, NODE_OPTIONS: `--import ${healthyHost}` } });
}

describe("install.sh --token", () => {
  it("the installed agent enrolls approved at once, with the token's labels over its own, and reports", async () => {
    const t = await createToken({ labels: { site: "factory", line: "3" }, autoApprove: true, maxUses: 5 });
    const agent = await installAndStart("token-1", t.token, "site=home,rack=r2");
    const enrolled = await agent.waitFor("enrolled");
    expect(enrolled.status).toBe("Approved");
    await agent.waitFor("approved");
    const device = await eventually(async () => {
      const d = await server.api<{ summary: string; agentVersion: string; labels: Record<string, string>; lifecycle: string }>("GET", "/devices/token-1");
      return d.status === 200 && d.body.summary === "Online" ? d.body : undefined;
    }, 20_000, "the installed agent Online");
    expect(device).toMatchObject({ agentVersion: "7.0.2", lifecycle: "Enrolled", labels: { site: "factory", line: "3", rack: "r2" } });
    const request = await server.api<{ tokenId: string; decidedBy: string }>("GET", `/enrollments/${String(enrolled.enrollmentId)}`);
    expect(request.body.tokenId).toBe(t.id);
    expect((await server.api<{ uses: number }>("GET", `/enrollment-tokens/${t.id}`)).body.uses).toBe(1);
    agent.kill("SIGTERM");
    expect(await agent.exited).toBe(0);
  }, 60_000);

  it("a revoked or an expired token: the agent says why and exits 1; nothing is created", async () => {
    const revoked = await createToken({ autoApprove: true });
    expect((await server.api("DELETE", `/enrollment-tokens/${revoked.id}`)).status).toBe(200);
    const expired = await createToken({ autoApprove: true, expiresInSeconds: 1 });
    await sleep(1100);
    for (const [name, t, why] of [
      ["token-revoked", revoked, /was revoked/],
      ["token-expired", expired, /has expired/],
    ] as const) {
      const agent = await installAndStart(name, t.token);
      expect(await agent.exited, name).toBe(1);
      const line = agent.lines.find((l) => l.event === "enrollment.rejected");
      expect(line, JSON.stringify(agent.lines)).toBeDefined();
      expect(String(line?.message)).toMatch(why);
      expect(await server.ctx.db.enrollmentRequest.findUnique({ where: { deviceName: name } })).toBeNull();
      expect((await server.api("GET", `/devices/${name}`)).status).toBe(404);
    }
  }, 60_000);
});

describe("the agent's --enrollment-token", () => {
  const base = ["--server", "http://localhost:3000", "--name", "d1", "--state-dir", "/tmp/x"];
  const token = (argv: string[], env: Record<string, string> = {}) => {
    const parsed = parseAgentArgs(argv, env);
    return typeof parsed === "object" ? parsed.enrollmentToken : parsed;
  };
  it("is read from the option, else DROVER_ENROLLMENT_TOKEN; empty is none", () => {
    expect(token([...base, "--enrollment-token", "drvt_a"])).toBe("drvt_a");
    expect(token(base, { DROVER_ENROLLMENT_TOKEN: "drvt_env" })).toBe("drvt_env");
    expect(token([...base, "--enrollment-token", "drvt_a"], { DROVER_ENROLLMENT_TOKEN: "drvt_env" })).toBe("drvt_a");
    expect(token(base, { DROVER_ENROLLMENT_TOKEN: "" })).toBeUndefined();
    expect(token(base)).toBeUndefined();
    expect(() => token([...base, "--enrollment-token", "x".repeat(300)])).toThrow(/--enrollment-token/);
  });
});
