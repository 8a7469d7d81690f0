/**
 * The real agent process applying specs, against the real server (API only, fresh SQLite,
 * auto-approved by label). Each device's spec is written straight into its row, as the
 * fleet controller would render it, and its held poll woken. The applications are a tiny
 * node program; the artifact comes from a local HTTP server.
 */
import { createHash } from "node:crypto";
import fs from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { topics } from "../server/bus";
import { startTestServer, type TestServer } from "../tests/helpers/server";
import type { RenderedSpec, StatusReport } from "../lib/protocol";
import { AgentProcess, HEALTHY_HOST, eventually, type LogLine } from "./test-support/agent-process";

let server: TestServer;
let files: http.Server;
let filesUrl: string;
let appScript: string;

const ARTIFACT = Buffer.from("release 1.0.0\n");
const ARTIFACT_SHA = createHash("sha256").update(ARTIFACT).digest("hex");

/** The application: logs what it sees, records its pid, then runs, crashes after a while, or exits at once (MODE). */
const APP = `
const fs = require("node:fs");
const path = require("node:path");
let conf = "(none)";
try { conf = fs.readFileSync(path.join(process.env.DROVER_ROOT_DIR, "etc/app.conf"), "utf8"); } catch {}
const artifact = process.env.DROVER_ARTIFACT ? fs.readFileSync(process.env.DROVER_ARTIFACT, "utf8") : "(none)";
console.log("app " + process.env.DROVER_APP + " pid " + process.pid + " config " + JSON.stringify(conf) + " artifact " + JSON.stringify(artifact) + " secret " + (process.env.SECRET_OF_THE_AGENT ?? "(unset)"));
fs.appendFileSync(process.env.PIDS, process.pid + "\\n");
const mode = process.env.MODE ?? "run";
if (mode === "exit") { console.error("cannot start: bad config"); process.exit(3); }
if (mode.startsWith("crash:")) setTimeout(() => process.exit(1), Number(mode.slice(6)));
setInterval(() => {}, 1000);
`;

beforeAll(async () => {
  // In every agent's environment, never in an application's (theirs is minimal).
  process.env.SECRET_OF_THE_AGENT = "leaked";
  server = await startTestServer({ DROVER_AUTO_APPROVE: "update=true", DROVER_HEARTBEAT_SECONDS: "1", LOG_LEVEL: "warn" });
  appScript = path.join(server.dir, "app.cjs");
  await fs.writeFile(appScript, APP);
  files = http.createServer((req, res) => {
    if (req.url === "/release.txt") res.writeHead(200, { "content-length": ARTIFACT.length }).end(ARTIFACT);
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => files.listen(0, "127.0.0.1", resolve));
  filesUrl = `http://127.0.0.1:${(files.address() as AddressInfo).port}`;
});

afterAll(async () => {
  AgentProcess.killAll();
  files?.closeAllConnections();
  await new Promise((resolve) => files?.close(resolve));
  await server?.close();
});

interface DeviceView {
  updatedStatus: string;
  updatingReason: string | null;
  applicationSummary: string;
  renderedVersion: number;
  reported: StatusReport | null;
}

async function device(name: string): Promise<DeviceView | null> {
  const { status, body } = await server.api<DeviceView>("GET", `/devices/${name}`);
  return status === 200 ? body : null;
}

/** Renders `spec` to the device, as the fleet controller does, and wakes its held poll. */
async function setSpec(name: string, spec: RenderedSpec): Promise<void> {
  const row = await server.ctx.db.device.update({
    where: { name },
    data: { spec: JSON.stringify(spec), renderedVersion: spec.renderedVersion, templateVersion: spec.templateVersion },
  });
  server.ctx.bus.publish(topics.device(row.id), { at: Date.now() });
}

function spec(renderedVersion: number, parts: Partial<RenderedSpec> = {}): RenderedSpec {
  return { renderedVersion, templateVersion: `t${renderedVersion}`, version: `${renderedVersion}.0.0`, config: { files: [] }, applications: [], hooks: {}, ...parts };
}

function webApp(pids: string, mode: string, env: Record<string, string> = {}) {
  return { name: "web", command: [process.execPath, appScript], env: { PIDS: pids, MODE: mode, ...env } };
}

function startAgent(name: string, extra: string[] = []): { agent: AgentProcess; stateDir: string; args: string[] } {
  const stateDir = path.join(server.dir, name);
  const args = ["--server", server.url, "--name", name, "--labels", "update=true", "--state-dir", stateDir, "--allow-apps", process.execPath, "--app-settle-seconds", "0.5", "--app-start-timeout-seconds", "4", ...extra];
  return { agent: new AgentProcess(args, { preload: [HEALTHY_HOST] }), stateDir, args };
}

async function ready(name: string, agent: AgentProcess): Promise<void> {
  await agent.waitFor("approved");
  await eventually(async () => (await device(name))?.reported ?? undefined, 20_000, `${name} reporting`);
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
const pidsIn = async (file: string) => (await fs.readFile(file, "utf8").catch(() => "")).split("\n").filter(Boolean).map(Number);
const states = (agent: AgentProcess, renderedVersion: number) => agent.lines.filter((l) => l.event === "update.state" && l.renderedVersion === renderedVersion).map((l) => l.state);

describe("the agent process applies specs", () => {
  it("a spec with an artifact, a config file and an application: Updated, Running with no restarts; stopping the agent stops it", async () => {
    const pids = path.join(server.dir, "a-pids");
    const { agent, stateDir } = startAgent("upd-a");
    await ready("upd-a", agent);
    await setSpec(
      "upd-a",
      spec(1, {
        artifact: { url: `${filesUrl}/release.txt`, sha256: ARTIFACT_SHA },
        config: { files: [{ path: "/etc/app.conf", content: "greeting=hello\n", mode: "0640" }] },
        applications: [webApp(pids, "run")],
      }),
    );
    const done = await eventually(async () => {
      const d = await device("upd-a");
      return d?.reported?.conditions.updating?.reason === "Updated" && d.reported.applications[0]?.status === "Running" ? d : undefined;
    }, 20_000, "Updated and Running");
    expect(done).toMatchObject({ updatedStatus: "UpToDate", updatingReason: "Updated", applicationSummary: "Healthy", renderedVersion: 1 });
    expect(done.reported?.applications).toEqual([{ name: "web", status: "Running", restarts: 0 }]);
    expect(done.reported?.config.renderedVersion).toBe(1);
    expect(states(agent, 1)).toEqual(["Preparing", "ReadyToUpdate", "ApplyingUpdate", "ActivatingConfig", "Updated"]);

    // The file under the root directory, with its mode; the application saw it and the artifact.
    const conf = path.join(stateDir, "root/etc/app.conf");
    expect(await fs.readFile(conf, "utf8")).toBe("greeting=hello\n");
    expect((await fs.stat(conf)).mode & 0o777).toBe(0o640);
    const log = await eventually(async () => {
      const text = await fs.readFile(path.join(stateDir, "logs/web.log"), "utf8").catch(() => "");
      return text.includes("app web pid") ? text : undefined;
    }, 5_000, "the application's output");
    expect(log).toContain(`config "greeting=hello\\n" artifact "release 1.0.0\\n" secret (unset)`);
    const [pid] = await pidsIn(pids);
    expect(pid && alive(pid)).toBe(true);

    agent.kill("SIGTERM");
    expect(await agent.exited).toBe(0);
    expect(alive(pid ?? 0)).toBe(false);
    expect(agent.events()).toContain("app.stopped");
  });

  it("a crash-looping application is restarted with a doubling backoff and its restarts are reported", async () => {
    const pids = path.join(server.dir, "b-pids");
    const { agent, args } = startAgent("upd-b");
    await ready("upd-b", agent);
    await setSpec("upd-b", spec(1, { applications: [webApp(pids, "crash:1200")] }));
    // It stays up past the settle time: the update is Updated, then the crashes count.
    const d = await eventually(async () => {
      const view = await device("upd-b");
      return view && (view.reported?.applications[0]?.restarts ?? 0) >= 2 ? view : undefined;
    }, 20_000, "two restarts reported");
    expect(d.reported?.conditions.updating).toMatchObject({ reason: "Updated" });
    expect(d.reported?.config.renderedVersion).toBe(1);
    const exits = agent.lines.filter((l) => l.event === "app.exited");
    expect(exits.slice(0, 2).map((l) => [l.code, l.restartInMs])).toEqual([
      [1, 1000],
      [1, 2000],
    ]);
    const starts = agent.lines.filter((l) => l.event === "app.started").map((l) => Date.parse(String(l.time)));
    expect((starts[2] ?? 0) - (starts[1] ?? 0)).toBeGreaterThan((starts[1] ?? 0) - (starts[0] ?? 0) + 500);
    // Three processes, by the pids the agent started: the pid file each writes once node has
    // booted can lag the restart the agent reported (CI on a loaded machine once read two).
    expect(new Set(agent.lines.filter((l) => l.event === "app.started").map((l) => l.pid)).size).toBeGreaterThanOrEqual(3);
    agent.kill("SIGTERM");
    expect(await agent.exited).toBe(0);

    // An agent restart is not an application restart: the count goes on from where it was.
    const counted = agent.lines.filter((l) => l.event === "app.started").length - 1;
    const again = new AgentProcess(args, { preload: [HEALTHY_HOST] });
    expect((await again.waitFor("app.started")).restarts).toBe(counted);
    again.kill("SIGTERM");
    expect(await again.exited).toBe(0);
  });

  it("a version whose application never comes up is rolled back: previous files and application back, Error with the reason, renderedVersion kept", async () => {
    const pids = path.join(server.dir, "c-pids");
    const { agent, stateDir } = startAgent("upd-c");
    await ready("upd-c", agent);
    await setSpec("upd-c", spec(1, { config: { files: [{ path: "/etc/app.conf", content: "v1" }] }, applications: [webApp(pids, "run")] }));
    await eventually(async () => (await device("upd-c"))?.reported?.conditions.updating?.reason === "Updated", 20_000, "v1 Updated");
    const [v1pid] = await pidsIn(pids);

    await setSpec(
      "upd-c",
      spec(2, {
        config: { files: [{ path: "/etc/app.conf", content: "v2" }, { path: "/etc/extra.conf", content: "new" }] },
        applications: [webApp(pids, "exit")],
      }),
    );
    // Patience, not a timing: the agent waits 4 s and restarts the application meanwhile; under a
    // loaded run (load average 19) that took more than 20 s once.
    const failed = await eventually(async () => {
      const view = await device("upd-c");
      return view?.reported?.conditions.updating?.reason === "Error" ? view : undefined;
    }, 45_000, "v2 Error");
    expect(states(agent, 2)).toEqual(["Preparing", "ReadyToUpdate", "ApplyingUpdate", "ActivatingConfig", "RollingBack", "Error"]);
    expect(failed.reported?.conditions.updating?.status).toBe(false);
    expect(failed.reported?.conditions.updating?.info).toMatch(
      /^application "web" did not come up within 4 s: exited with code 3, restarted \d+ times?; last output: .*cannot start: bad config; rolled back to renderedVersion 1$/,
    );
    expect(failed.reported?.config.renderedVersion).toBe(1);
    expect(failed).toMatchObject({ updatedStatus: "OutOfDate", updatingReason: "Error", renderedVersion: 2 });
    // v1 is back: its file, no v2-only file, its application running again.
    expect(await fs.readFile(path.join(stateDir, "root/etc/app.conf"), "utf8")).toBe("v1");
    await expect(fs.access(path.join(stateDir, "root/etc/extra.conf"))).rejects.toThrow();
    expect(alive(v1pid ?? 0)).toBe(false);
    const back = await eventually(async () => {
      const view = await device("upd-c");
      return view?.reported?.applications[0]?.status === "Running" ? view : undefined;
    }, 10_000, "v1's application running again");
    expect(back.reported?.applications).toEqual([{ name: "web", status: "Running", restarts: 0 }]);
    const running = (await pidsIn(pids)).filter(alive);
    expect(running).toHaveLength(1);
    // The failed version is not taken again.
    await new Promise((r) => setTimeout(r, 1_500));
    expect(states(agent, 2).filter((s) => s === "Preparing")).toHaveLength(1);
    agent.kill("SIGTERM");
    expect(await agent.exited).toBe(0);
  });

  it("a sha256 mismatch fails in Preparing, and a program not allowed fails with the way to allow it", async () => {
    const { agent } = startAgent("upd-d", ["--allow-apps", "/usr/bin/true"]);
    await ready("upd-d", agent);
    await setSpec("upd-d", spec(1, { artifact: { url: `${filesUrl}/release.txt`, sha256: "f".repeat(64) } }));
    const mismatch = await eventually(async () => {
      const view = await device("upd-d");
      return view?.reported?.conditions.updating?.reason === "Error" ? view : undefined;
    }, 20_000, "checksum Error");
    expect(mismatch.reported?.conditions.updating?.info).toBe(
      `artifact ${filesUrl}/release.txt: sha256 mismatch: expected ${"f".repeat(64)}, got ${ARTIFACT_SHA}`,
    );
    expect(states(agent, 1)).toEqual(["Preparing", "Error"]);
    expect(mismatch.reported?.config.renderedVersion).toBe(0);

    await setSpec("upd-d", spec(2, { applications: [{ name: "shell", command: ["/bin/sh", "-c", "echo hi"] }] }));
    const refused = await eventually(async () => {
      const info = (await device("upd-d"))?.reported?.conditions.updating?.info;
      return info?.startsWith('application "shell"') ? info : undefined;
    }, 20_000, "refusal");
    expect(refused).toBe(`application "shell": /bin/sh is not allowed; start the agent with --allow-apps /bin/sh (a comma-separated list of programs, matched exactly, or '*' for any)`);
    expect(states(agent, 2)).toEqual(["Preparing", "Error"]);
    agent.kill("SIGTERM");
    expect(await agent.exited).toBe(0);
  });

  it("killed mid-update, the agent restarts, stops the application the dead one left, and resumes to Updated", async () => {
    const pids = path.join(server.dir, "e-pids");
    const first = startAgent("upd-e", ["--app-settle-seconds", "3", "--app-start-timeout-seconds", "20"]);
    await ready("upd-e", first.agent);
    await setSpec("upd-e", spec(1, { config: { files: [{ path: "/etc/app.conf", content: "v1" }] }, applications: [webApp(pids, "run")] }));
    await first.agent.waitFor("app.started");
    expect(states(first.agent, 1).at(-1)).toBe("ActivatingConfig");
    const [orphan] = await eventually(async () => {
      const list = await pidsIn(pids);
      return list.length > 0 ? list : undefined;
    }, 5_000, "the application's pid");
    first.agent.kill("SIGKILL");
    await first.agent.exited;
    expect(alive(orphan ?? 0)).toBe(true); // outlived its agent

    const second = new AgentProcess(first.args, { preload: [HEALTHY_HOST] });
    await second.waitFor("update.resumed", 20_000, (l: LogLine) => l.state === "ActivatingConfig" && l.attempts === 1);
    await second.waitFor("app.leftover", 20_000, (l: LogLine) => l.pid === orphan);
    const d = await eventually(async () => {
      const view = await device("upd-e");
      return view?.reported?.conditions.updating?.reason === "Updated" && view.reported.applications[0]?.status === "Running" ? view : undefined;
    }, 30_000, "Updated after the restart");
    expect(d.reported?.config.renderedVersion).toBe(1);
    expect(alive(orphan ?? 0)).toBe(false);
    expect((await pidsIn(pids)).filter(alive)).toHaveLength(1);
    expect(states(second, 1)).toEqual(["ApplyingUpdate", "ActivatingConfig", "Updated"]);
    expect(second.lines.find((l) => l.event === "update.state" && l.state === "Updated")?.attempt).toBe(2);
    expect(await fs.readFile(path.join(first.stateDir, "root/etc/app.conf"), "utf8")).toBe("v1");
    second.kill("SIGTERM");
    expect(await second.exited).toBe(0);
  });
});
