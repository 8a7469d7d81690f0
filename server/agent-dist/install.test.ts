/**
 * Issue 12: the server hands out the agent (GET /api/agent/v1/download, its manifest) and an
 * install script (GET /install.sh). The script, piped to sh as the console tells operators to,
 * installs into a temporary prefix with --no-service, the installed agent enrolls and reports,
 * and --uninstall removes it (its state kept unless --purge).
 */
import { execFile, execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { buildSync } from "esbuild";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AGENT_MALLOC_ENV, AGENT_NODE_FLAGS } from "@/lib/agent-version";
import { AgentProcess, eventually } from "@/agent/test-support/agent-process";
import { startTestServer, type TestServer } from "@/tests/helpers/server";

const ROOT = path.resolve(import.meta.dirname, "../..");
const run = promisify(execFile);
let server: TestServer;
let dist: string;
let healthyHost: string;

beforeAll(async () => {
  dist = fs.mkdtempSync(path.join(os.tmpdir(), "drover-dist-"));
  execFileSync(process.execPath, [path.join(ROOT, "scripts/build-agent.mjs"), "--out", dist, "--version", "7.0.1", "--quiet", "--sea"], { cwd: ROOT, stdio: "pipe" });
  server = await startTestServer({ DROVER_AGENT_DIST: dist, DROVER_HEARTBEAT_SECONDS: "2", LOG_LEVEL: "warn" });
  healthyHost = path.join(dist, "healthy-host.mjs");
  buildSync({ entryPoints: [path.join(ROOT, "agent/test-support/healthy-host.ts")], outfile: healthyHost, format: "esm", platform: "node", logLevel: "error" });
}, 120_000);

afterAll(async () => {
  AgentProcess.killAll();
  await server?.close();
  fs.rmSync(dist, { recursive: true, force: true });
});

describe("the agent download", () => {
  it("serves the build with its version and sha256, its manifest, and 304 to a client that has it", async () => {
    const manifest = JSON.parse(fs.readFileSync(path.join(dist, "manifest.json"), "utf8")) as { sha256: string; size: number };
    const info = await fetch(`${server.url}/api/agent/v1/download/manifest`);
    expect(info.status).toBe(200);
    expect(await info.json()).toMatchObject({ name: "drover-agent", version: "7.0.1", sha256: manifest.sha256, size: manifest.size, url: "/api/agent/v1/download" });

    const res = await fetch(`${server.url}/api/agent/v1/download`);
    expect(res.status).toBe(200);
    expect(res.headers.get("x-drover-agent-version")).toBe("7.0.1");
    expect(res.headers.get("x-drover-agent-sha256")).toBe(manifest.sha256);
    const bytes = Buffer.from(await res.arrayBuffer());
    expect(createHash("sha256").update(bytes).digest("hex")).toBe(manifest.sha256);

    const again = await fetch(`${server.url}/api/agent/v1/download`, { headers: { "if-none-match": `"${manifest.sha256}"` } });
    expect(again.status).toBe(304);
  });

  it("serves a platform's single executable by ?platform=, and 404 for a platform it has none for", async () => {
    const info = await fetch(`${server.url}/api/agent/v1/download/manifest?platform=linux-amd64`);
    expect(info.status).toBe(200);
    const body = (await info.json()) as { sha256: string; platform: string; url: string };
    expect(body).toMatchObject({ version: "7.0.1", platform: "linux-amd64", url: "/api/agent/v1/download?platform=linux-amd64" });
    const head = await fetch(`${server.url}/api/agent/v1/download?platform=linux-amd64`, { method: "HEAD" });
    expect(head.headers.get("x-drover-agent-sha256")).toBe(body.sha256);
    expect(head.headers.get("content-type")).toBe("application/octet-stream");

    const none = await fetch(`${server.url}/api/agent/v1/download?platform=linux-riscv64`);
    expect(none.status).toBe(404);
    expect(await none.json()).toMatchObject({ error: { code: "NOT_FOUND", message: expect.stringContaining("built: linux-amd64") } });
    const bad = await fetch(`${server.url}/api/agent/v1/download?platform=..%2Fetc`);
    expect(bad.status).toBe(400);
  });

  it("answers 404 in the protocol's error shape when there is no build to serve", async () => {
    const empty = await startTestServer({ DROVER_AGENT_DIST: path.join(dist, "nothing-here") });
    try {
      const res = await fetch(`${empty.url}/api/agent/v1/download`);
      expect(res.status).toBe(404);
      expect(await res.json()).toMatchObject({ error: { code: "NOT_FOUND", message: expect.stringContaining("npm run build:agent") } });
    } finally {
      await empty.close();
    }
  });
});

describe("install.sh", () => {
  it("carries this server's URL, and refuses a Host header that is not a host", async () => {
    const res = await fetch(`${server.url}/install.sh`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/shellscript/);
    const text = await res.text();
    expect(text).toContain(`SERVER="${server.url}"`);
    expect(text).not.toContain("__DROVER_SERVER__");

    // fetch will not send a forged Host: node:http will.
    const status = await new Promise<number>((resolve, reject) => {
      const u = new URL(server.url);
      import("node:http").then(({ default: http }) =>
        http.get({ host: u.hostname, port: u.port, path: "/install.sh", headers: { host: 'evil";rm -rf /;"' } }, (r) => {
          r.resume();
          resolve(r.statusCode ?? 0);
        }).on("error", reject),
      );
    });
    expect(status).toBe(400);
  });

  it("installs with --no-service into a prefix; the installed agent enrolls and reports; --uninstall removes it", async () => {
    const prefix = path.join(server.dir, "opt", "drover-agent");
    const pipe = (args: string) => run("sh", ["-c", `curl -fsSL ${server.url}/install.sh | sh -s -- ${args}`], { env: { ...process.env, DROVER_SYSTEMD_DIR: path.join(server.dir, "units") } });

    const { stdout } = await pipe(`--no-service --prefix ${prefix} --name installed-1 --labels site=lab`);
    expect(stdout).toContain("installed drover-agent 7.0.1");
    expect(stdout).toContain(`${prefix}/bin/drover-agent`);
    expect(fs.readdirSync(prefix).sort()).toEqual(["agent.env", "bin", "drover-agent.mjs", "manifest.json", "state"]);
    expect(fs.statSync(path.join(prefix, "agent.env")).mode & 0o777).toBe(0o600);
    expect(fs.readFileSync(path.join(prefix, "agent.env"), "utf8")).toContain("DROVER_NAME=installed-1");
    // It runs as the footprint bench measures it (lib/agent-version.ts), and enrolls so below.
    const wrapper = fs.readFileSync(path.join(prefix, "bin", "drover-agent"), "utf8");
    expect(wrapper).toContain(`exec node ${AGENT_NODE_FLAGS.join(" ")} "${prefix}/drover-agent.mjs"`);
    expect(wrapper).toContain(`export ${Object.entries(AGENT_MALLOC_ENV).map(([k, v]) => `${k}=${v}`).join(" ")}`);

    // A bad option changes nothing and says why.
    await expect(pipe(`--no-service --prefix ${prefix} --labels 'a=b;reboot'`)).rejects.toMatchObject({ stderr: expect.stringContaining("--labels") });

    const started = startInstalled(prefix);
    const enrolled = await started.waitFor("enrolled");
    expect((await server.api("POST", `/enrollments/${String(enrolled.enrollmentId)}/approve`, {})).status).toBe(200);
    const device = await eventually(async () => {
      const d = await server.api<{ summary: string; agentVersion: string; labels: Record<string, string> }>("GET", "/devices/installed-1");
      return d.status === 200 && d.body.summary === "Online" ? d.body : undefined;
    }, 20_000, "the installed agent Online");
    expect(device).toMatchObject({ agentVersion: "7.0.1", labels: { site: "lab" } });
    started.kill("SIGTERM");
    expect(await started.exited).toBe(0);

    const removed = await pipe(`--uninstall --prefix ${prefix}`);
    expect(removed.stdout).toContain("state stays");
    expect(fs.readdirSync(prefix)).toEqual(["state"]);
    await pipe(`--uninstall --purge --prefix ${prefix}`);
    expect(fs.existsSync(prefix)).toBe(false);
  }, 60_000);
});

describe("install.sh --binary", () => {
  it("installs the single executable, which runs with no Node script and enrolls", async () => {
    const prefix = path.join(server.dir, "opt", "drover-bin");
    const { stdout } = await run("sh", ["-c", `curl -fsSL ${server.url}/install.sh | sh -s -- --binary --no-service --prefix ${prefix} --name binary-1`]);
    expect(stdout).toContain("single executable for linux-amd64");
    expect(fs.readdirSync(prefix).sort()).toEqual(["agent.env", "bin", "drover-agent", "manifest.json", "state"]);
    const started = new AgentProcess([], { command: path.join(prefix, "bin", "drover-agent"), cwd: prefix });
    const enrolled = await started.waitFor("enrolled");
    expect((await server.api("POST", `/enrollments/${String(enrolled.enrollmentId)}/approve`, {})).status).toBe(200);
    const device = await eventually(async () => {
      const d = await server.api<{ summary: string; agentVersion: string }>("GET", "/devices/binary-1");
      return d.status === 200 && d.body.summary !== "Offline" ? d.body : undefined;
    }, 20_000, "the single executable reporting");
    expect(device.agentVersion).toBe("7.0.1");
    started.kill("SIGTERM");
    expect(await started.exited).toBe(0);
  }, 60_000);
});

/** The installed wrapper (bin/drover-agent) as a process; the test's healthy-host preload through NODE_OPTIONS. */
function startInstalled(prefix: string) {
  return new AgentProcess([], { command: path.join(prefix, "bin", "drover-agent"), cwd: prefix, env: { ...process.env, NODE_OPTIONS: `--import ${healthyHost}` } });
}
