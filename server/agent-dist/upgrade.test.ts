/**
 * Issue 12, "Upgrading agents": the server holds several builds (build:agent --keep), serves
 * any by ?version=, and refuses (400) a version it does not hold where one is named; an
 * installed agent told another version by its fleet's template downloads it, checks it,
 * replaces itself, exits 75 and, started again by a supervisor as systemd would, reports the
 * new version with its spec Updated; a build whose file is corrupted on the server fails the
 * sha256 check and the agent keeps running, the failure in its spec's condition; an
 * agentupgrade action moves it again and is DONE across the restart.
 */
import { execFile, execFileSync, spawn, type ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { buildSync } from "esbuild";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually } from "@/agent/test-support/agent-process";
import { startTestServer, type TestServer } from "@/tests/helpers/server";

const ROOT = path.resolve(import.meta.dirname, "../..");
const run = promisify(execFile);
let server: TestServer;
let dist: string;
let healthyHost: string;

const buildAgent = (version: string, keep: boolean) =>
  execFileSync(process.execPath, [path.join(ROOT, "scripts/build-agent.mjs"), "--out", dist, "--version", version, "--quiet", ...(keep ? ["--keep"] : [])], { cwd: ROOT, stdio: "pipe" });
const sha256 = (file: string) => createHash("sha256").update(fs.readFileSync(file)).digest("hex");

beforeAll(async () => {
  dist = fs.mkdtempSync(path.join(os.tmpdir(), "drover-dist-"));
  // The current build (what install.sh installs) is the last one: 1.0.0; 1.1.0 and 1.2.0 kept.
  buildAgent("1.2.0", false);
  buildAgent("1.1.0", true);
  buildAgent("1.0.0", true);
  // 1.2.0's file corrupted on the server, its size unchanged: only the sha256 tells.
  const corrupt = path.join(dist, "versions", "1.2.0", "drover-agent.mjs");
  const bytes = fs.readFileSync(corrupt);
  const middle = Math.floor(bytes.length / 2);
  bytes[middle] = bytes[middle]! ^ 0x20;
  fs.writeFileSync(corrupt, bytes);
  server = await startTestServer({ DROVER_AGENT_DIST: dist, DROVER_HEARTBEAT_SECONDS: "1", DROVER_MIN_AGENT_VERSION: "1.1.0", LOG_LEVEL: "warn" });
  healthyHost = path.join(dist, "healthy-host.mjs");
  buildSync({ entryPoints: [path.join(ROOT, "agent/test-support/healthy-host.ts")], outfile: healthyHost, format: "esm", platform: "node", logLevel: "error" });
}, 120_000);

afterAll(async () => {
  supervisor?.stop();
  await supervisor?.done;
  await server?.close();
  fs.rmSync(dist, { recursive: true, force: true });
});

describe("several builds on the server", () => {
  it("build:agent --keep keeps the previous build; /download?version= serves any held build; unknown is 404 naming what is held", async () => {
    expect(fs.readdirSync(path.join(dist, "versions")).sort()).toEqual(["1.1.0", "1.2.0"]);
    const current = await (await fetch(`${server.url}/api/agent/v1/download/manifest`)).json();
    expect(current).toMatchObject({ version: "1.0.0", url: "/api/agent/v1/download" });

    const kept = await fetch(`${server.url}/api/agent/v1/download/manifest?version=1.1.0`);
    expect(kept.status).toBe(200);
    const manifest = (await kept.json()) as { version: string; sha256: string; url: string };
    expect(manifest).toMatchObject({ version: "1.1.0", url: "/api/agent/v1/download?version=1.1.0", sha256: sha256(path.join(dist, "versions", "1.1.0", "drover-agent.mjs")) });
    const file = await fetch(`${server.url}${manifest.url}`);
    expect(file.headers.get("x-drover-agent-version")).toBe("1.1.0");
    expect(createHash("sha256").update(Buffer.from(await file.arrayBuffer())).digest("hex")).toBe(manifest.sha256);
    // The current one by its version too.
    expect((await (await fetch(`${server.url}/api/agent/v1/download/manifest?version=1.0.0`)).json()) as object).toMatchObject({ version: "1.0.0", url: "/api/agent/v1/download?version=1.0.0" });

    const unknown = await fetch(`${server.url}/api/agent/v1/download?version=9.9.9`);
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ error: { code: "NOT_FOUND", message: 'no agent version "9.9.9" on this server (held: 1.0.0 (current), 1.2.0, 1.1.0)' } });
    expect((await fetch(`${server.url}/api/agent/v1/download?version=..%2F..%2Fetc`)).status).toBe(400);
  });

  it("refuses (400) a version it does not hold in a fleet template, an agentupgrade action and a plan command", async () => {
    const fleet = await server.api<{ error: { message: string } }>("POST", "/fleets", fleetBody("9.9.9"));
    expect(fleet.status).toBe(400);
    expect(fleet.body.error.message).toContain('spec.template.spec.agent.version: agent version "9.9.9" is not on this server (held: 1.0.0 (current), 1.2.0, 1.1.0');
    expect((await server.api("GET", "/fleets/upgraders")).status).toBe(404);

    const action = await server.api<{ error: { message: string } }>("POST", "/actions", { labelSelector: "upgrade=yes", kind: "agentupgrade", args: { version: "9.9.9" } });
    expect(action.status).toBe(400);
    expect(action.body.error.message).toContain('args.version: agent version "9.9.9" is not on this server');
    const shape = await server.api<{ error: { message: string } }>("POST", "/actions", { labelSelector: "upgrade=yes", kind: "agentupgrade", args: { to: "1.1.0" } });
    expect(shape.status).toBe(400);
    expect(shape.body.error.message).toContain("agentupgrade takes {version}");

    const plan = await server.api<{ error: { message: string } }>("POST", "/plans", {
      apiVersion: "drover/v1",
      kind: "Plan",
      spec: { commands: [{ action: { kind: "agentupgrade", args: { version: "9.9.9" }, targets: { workers: { discovery: { selector: { labels: "upgrade=yes" } } } } } }] },
    });
    expect(plan.status).toBe(400);
    expect(plan.body.error.message).toContain('spec.commands[0].action.args.version: agent version "9.9.9" is not on this server');
  });
});

describe("an installed agent upgrading itself", () => {
  it("follows its fleet's agent version (exit 75, restarted, reports it, Updated); a corrupted build fails its sha256 and the agent keeps running; an agentupgrade action is DONE across the restart", async () => {
    const prefix = path.join(server.dir, "opt", "drover-agent");
    await run("sh", ["-c", `curl -fsSL ${server.url}/install.sh | sh -s -- --no-service --prefix ${prefix} --name upgrader-1 --labels upgrade=yes`]);
    const file = path.join(prefix, "drover-agent.mjs");
    expect(sha256(file)).toBe(sha256(path.join(dist, "drover-agent.mjs")));

    supervisor = supervise(path.join(prefix, "bin", "drover-agent"), {
      ...process.env,
      NODE_OPTIONS: `--import ${healthyHost}`,
      // As under systemd: bin/drover-agent execs the agent, and this loop is the service manager.
      INVOCATION_ID: "agent-upgrade-test",
      DROVER_AGENT_UPGRADE_RETRY_SECONDS: "0.2",
    });
    const enrollmentId = await eventually(() => /"enrollmentId":"([^"]+)"/.exec(supervisor!.output())?.[1], 20_000, "the agent enrolling");
    expect((await server.api("POST", `/enrollments/${enrollmentId}/approve`, {})).status).toBe(200);
    await eventually(async () => (await device()).summary === "Online", 20_000, "the agent Online");
    expect((await device()).agentVersion).toBe("1.0.0");
    // The list shows it; the console flags it against the minimum this server supports.
    expect((await server.api<{ items: { name: string; agentVersion: string }[] }>("GET", "/devices?labelSelector=upgrade%3Dyes")).body.items).toEqual([expect.objectContaining({ name: "upgrader-1", agentVersion: "1.0.0" })]);
    const settings = await fetch(`${server.url}/api/trpc/system.settings`, { headers: { authorization: `Bearer ${server.adminToken}` } });
    expect(((await settings.json()) as { result: { data: { minAgentVersion: string } } }).result.data.minAgentVersion).toBe("1.1.0");

    // The fleet names 1.1.0.
    expect((await server.api("POST", "/fleets", fleetBody("1.1.0"))).status).toBe(201);
    const upgraded = await eventually(
      async () => {
        const d = await device();
        return d.agentVersion === "1.1.0" && d.updatedStatus === "UpToDate" && d.summary === "Online" ? d : undefined;
      },
      30_000,
      "the agent on 1.1.0 with its spec Updated",
    ).catch((e: unknown) => {
      console.log(supervisor?.output());
      throw e;
    });
    expect(upgraded.conditions.find((c) => c.type === "Updating")).toMatchObject({ status: "False", reason: "Updated" });
    expect(supervisor.exits).toEqual([75]);
    expect(sha256(file)).toBe(sha256(path.join(dist, "versions", "1.1.0", "drover-agent.mjs")));
    expect(sha256(`${file}.previous`)).toBe(sha256(path.join(dist, "drover-agent.mjs")));
    expect(fs.readdirSync(prefix).filter((f) => f.includes(".new") || f.endsWith(".part"))).toEqual([]);
    const events = await server.api<{ items: { type: string; reason: string; message: string }[] }>("GET", "/events?kind=Device&name=upgrader-1&limit=100");
    expect(events.body.items).toContainEqual(expect.objectContaining({ type: "AgentVersionChanged", reason: "Upgraded", message: "agent 1.0.0 → 1.1.0" }));

    // 1.2.0, corrupted on the server: three tries, then the spec's Error says why; no restart.
    expect((await server.api("PUT", "/fleets/upgraders", fleetBody("1.2.0"))).status).toBe(200);
    const failed = await eventually(
      async () => {
        const d = await device();
        return d.updatingReason === "Error" ? d : undefined;
      },
      30_000,
      "the upgrade to 1.2.0 failing",
    );
    expect(failed.conditions.find((c) => c.type === "Updating")?.message).toMatch(/^agent upgrade to 1\.2\.0 failed: sha256 mismatch: expected [0-9a-f]{64}, got [0-9a-f]{64} \(3 tries\)$/);
    expect(failed).toMatchObject({ agentVersion: "1.1.0", updatedStatus: "OutOfDate", summary: "Online" });
    expect(supervisor.exits).toEqual([75]);
    expect(sha256(file)).toBe(sha256(path.join(dist, "versions", "1.1.0", "drover-agent.mjs")));

    // An agentupgrade action back to 1.0.0: RUNNING, the restart, then DONE.
    const created = await server.api<{ items: { id: string }[] }>("POST", "/actions", { device: "upgrader-1", kind: "agentupgrade", args: { version: "1.0.0" } });
    expect(created.status).toBe(201);
    const id = created.body.items[0]!.id;
    const done = await eventually(
      async () => {
        const a = await server.api<{ state: string; output: string | null; error: string | null }>("GET", `/actions/${id}`);
        return a.body.state === "DONE" || a.body.state === "FAILED" ? a.body : undefined;
      },
      30_000,
      "the agentupgrade action ending",
    );
    expect(done).toMatchObject({ state: "DONE", output: expect.stringContaining("upgraded from 1.1.0 to 1.0.0; running 1.0.0 since the restart") });
    expect(supervisor.exits).toEqual([75, 75]);
    await eventually(async () => (await device()).agentVersion === "1.0.0", 20_000, "the device on 1.0.0");

    supervisor.stop();
    expect(await supervisor.done).toBe(0);

    // Uninstalling takes the kept previous build too; the state stays.
    await run("sh", ["-c", `curl -fsSL ${server.url}/install.sh | sh -s -- --uninstall --prefix ${prefix}`]);
    expect(fs.readdirSync(prefix)).toEqual(["state"]);
  }, 120_000);
});

describe("bin/drover-agent without systemd", () => {
  it("starts the agent again after exit 75, passes SIGTERM on, and exits with the agent's status", async () => {
    const prefix = path.join(server.dir, "opt", "wrapped");
    await run("sh", ["-c", `curl -fsSL ${server.url}/install.sh | sh -s -- --no-service --prefix ${prefix} --name wrapped-1`]);
    // A stand-in agent: the first run exits 75 (as after an upgrade), the second runs until SIGTERM.
    const counter = path.join(prefix, "runs");
    fs.writeFileSync(
      path.join(prefix, "drover-agent.mjs"),
      `import fs from "node:fs";
const n = (fs.existsSync(${JSON.stringify(counter)}) ? Number(fs.readFileSync(${JSON.stringify(counter)}, "utf8")) : 0) + 1;
fs.writeFileSync(${JSON.stringify(counter)}, String(n));
console.log("run " + n + " " + process.argv.slice(2, 4).join(" "));
if (n === 1) process.exit(75);
process.on("SIGTERM", () => { console.log("stopping"); setTimeout(() => process.exit(0), 200); });
setInterval(() => {}, 1000);
`,
    );
    const env = { ...process.env };
    delete env.INVOCATION_ID;
    const child = spawn(path.join(prefix, "bin", "drover-agent"), [], { env, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (b: Buffer) => (out += b.toString()));
    child.stderr.on("data", (b: Buffer) => (out += b.toString()));
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    await eventually(() => out.includes("run 2"), 10_000, "the second run");
    expect(out).toContain(`run 1 --server ${server.url}`);
    expect(out).toContain("the agent upgraded itself; starting it again");
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
    expect(out).toContain("stopping");
  }, 30_000);
});

interface DeviceView {
  summary: string;
  agentVersion: string;
  updatedStatus: string;
  updatingReason: string | null;
  conditions: { type: string; status: string; reason: string; message: string }[];
}
const device = async () => (await server.api<DeviceView>("GET", "/devices/upgrader-1")).body;

function fleetBody(agentVersion: string) {
  return {
    metadata: { name: "upgraders" },
    spec: {
      selector: { matchLabels: { upgrade: "yes" } },
      template: { spec: { version: `with-agent-${agentVersion}`, agent: { version: agentVersion } } },
    },
  };
}

/** A tiny service manager: runs `command`, starts it again when it exits 75 (as systemd's Restart=always would), else stops. */
interface Supervisor {
  exits: number[];
  output(): string;
  stop(): void;
  done: Promise<number | null>;
}
let supervisor: Supervisor | undefined;

function supervise(command: string, env: NodeJS.ProcessEnv): Supervisor {
  let out = "";
  let child: ChildProcess;
  let stopping = false;
  const exits: number[] = [];
  const done = new Promise<number | null>((resolve) => {
    const start = () => {
      child = spawn(command, [], { cwd: path.dirname(command), env, stdio: ["ignore", "pipe", "pipe"] });
      child.stdout!.on("data", (b: Buffer) => (out += b.toString()));
      child.stderr!.on("data", (b: Buffer) => (out += b.toString()));
      child.on("exit", (code) => {
        if (code === 75 && !stopping) {
          exits.push(code);
          start();
        } else resolve(code);
      });
    };
    start();
  });
  return {
    exits,
    output: () => out,
    stop: () => {
      stopping = true;
      child.kill("SIGTERM");
    },
    done,
  };
}
