/**
 * k0supdate / airgapupdate: a real download from a local HTTP server, a real update command
 * (a shell script that writes down its arguments and environment), then the same through
 * the Agent's queue against the fake server (FAILED / CANCELLED as reported), the agent as a
 * child process with --update-command, and the simulator's executors and knobs.
 */
import { createHash } from "node:crypto";
import fs from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import pino from "pino";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { PlanSignalArgs } from "../../lib/plan-spec";
import { Agent } from "../agent";
import { ProtocolClient } from "../client";
import { staticHealth } from "../health";
import { MemoryStateStore } from "../state";
import { AgentProcess } from "../test-support/agent-process";
import { eventually, FakeServer, type FakeAction } from "../test-support/fake-server";
import { FAST } from "../test-support/fast-timing";
import { ActionFailure, builtinExecutors, simulatedExecutors, type ActionContext, type ExecutorRegistry, type PlanUpdateOptions } from ".";
import { nodeMatcher } from "./simulated";
import { parseAgentArgs } from "../env";

/** The release file the plans point at, as the file server serves it. */
const release = { route: "/k0s-v1.30.1+k0s.0-amd64", body: Buffer.from("#!/bin/k0s pretend binary\n".repeat(4000)) };
const body = release.body;
const sha = createHash("sha256").update(body).digest("hex");
let files: http.Server;
let base: string;
/** Paths the file server was asked for, since the test began. */
let hits: string[] = [];
/** Per file: the temp dir; per test: the downloads dir, and where the apply script writes. */
let tmp = "";
let downloads = "";
let out = "";
let applyScript = "";
let failScript = "";

beforeAll(async () => {
  files = http.createServer((req, res) => {
    const route = (req.url ?? "").split("?")[0] ?? "";
    hits.push(route);
    if (route === release.route || route === `/mirror${release.route}`) {
      res.writeHead(200, { "content-length": body.length });
      res.end(body);
    } else if (route === "/latest") {
      res.writeHead(302, { location: release.route }).end();
    } else if (route === "/slow") {
      res.writeHead(200, { "content-length": 1_000_000 });
      res.write("x".repeat(1000)); // and the rest never comes
    } else {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => files.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(files.address() as AddressInfo).port}`;
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), "drover-plan-update-"));
  // Writes its argv and the DROVER_* environment to $OUT, keeps a copy of the file, says so.
  applyScript = path.join(tmp, "apply.sh");
  await fs.writeFile(
    applyScript,
    `#!/bin/sh
{ echo "$1"; echo "$2"; env | grep -E '^DROVER_(UPDATE|PLAN)_' | sort; } > "$OUT"
cp "$1" "$OUT.file"
echo "applied $2"
`,
    { mode: 0o755 },
  );
  failScript = path.join(tmp, "fail.sh");
  await fs.writeFile(failScript, `#!/bin/sh\necho partial\necho "k0s: no space left on device" >&2\nexit 3\n`, { mode: 0o755 });
});
afterAll(async () => {
  files.closeAllConnections();
  await new Promise((resolve) => files.close(resolve));
  await fs.rm(tmp, { recursive: true, force: true });
});
beforeEach(async () => {
  hits = [];
  const dir = await fs.mkdtemp(path.join(tmp, "case-"));
  downloads = path.join(dir, "downloads");
  out = path.join(dir, "out.txt");
});

const silent = pino({ level: "silent" });
const context = (signal: AbortSignal = new AbortController().signal): ActionContext => ({ signal, log: silent, setCondition: () => undefined });
const signalArgs = (over: Partial<PlanSignalArgs> = {}): PlanSignalArgs => ({
  planId: "plan-1",
  command: 0,
  version: "v1.30.1+k0s.0",
  platform: "linux-amd64",
  url: `${base}${release.route}`,
  sha256: sha,
  ...over,
});
const executors = (update: Partial<PlanUpdateOptions> = {}): ExecutorRegistry =>
  builtinExecutors({ killGraceMs: 300, update: { command: applyScript, downloadDir: downloads, platform: "linux-amd64", env: { ...process.env, OUT: out }, ...update } });

/** Runs one update action; its result, or the ActionFailure it ended with. */
async function run(kind: string, args: PlanSignalArgs, registry = executors(), signal?: AbortSignal): Promise<{ output: string } | ActionFailure> {
  const executor = registry.get(kind);
  if (!executor) throw new Error(`no ${kind}`);
  try {
    return await executor.run(executor.argsSchema.parse(args), context(signal));
  } catch (error) {
    if (error instanceof ActionFailure) return error;
    throw error;
  }
}
const failure = (result: unknown): ActionFailure => {
  expect(result).toBeInstanceOf(ActionFailure);
  return result as ActionFailure;
};
const exists = (file: string) => fs.access(file).then(() => true, () => false);
const leftInDownloads = async () => (await fs.readdir(downloads).catch(() => [])).sort();

describe("k0supdate / airgapupdate executors", () => {
  it("download, sha256 checked, then the command runs as COMMAND FILE VERSION with the DROVER_ env; the file is removed after", async () => {
    const result = await run("k0supdate", signalArgs({ forceupdate: true }));
    expect(result).not.toBeInstanceOf(ActionFailure);
    const file = path.join(downloads, "k0supdate-k0s-v1.30.1+k0s.0-amd64");
    const lines = (await fs.readFile(out, "utf8")).trim().split("\n");
    expect(lines).toEqual([
      file,
      "v1.30.1+k0s.0",
      "DROVER_PLAN_COMMAND=0",
      "DROVER_PLAN_ID=plan-1",
      `DROVER_UPDATE_FILE=${file}`,
      "DROVER_UPDATE_FORCE=true",
      "DROVER_UPDATE_KIND=k0supdate",
      "DROVER_UPDATE_PLATFORM=linux-amd64",
      `DROVER_UPDATE_SHA256=${sha}`,
      "DROVER_UPDATE_VERSION=v1.30.1+k0s.0",
    ]);
    expect((await fs.readFile(`${out}.file`)).equals(body)).toBe(true);
    expect((result as { output: string }).output).toBe(
      `downloaded ${body.length} bytes from ${base}${release.route}, sha256 ${sha} (matches the plan)\n` + `running ${applyScript} ${file} v1.30.1+k0s.0\n` + "applied v1.30.1+k0s.0\n",
    );
    expect(await leftInDownloads()).toEqual([]);
  });

  it("follows redirects; without a sha256 it applies what it got and says it did not check", async () => {
    const result = await run("airgapupdate", signalArgs({ url: `${base}/latest`, sha256: undefined }));
    expect((result as { output: string }).output).toMatch(/sha256 [0-9a-f]{64} \(not checked: the plan gives none\)\n/);
    expect(hits).toEqual(["/latest", release.route]);
    expect((await fs.readFile(out, "utf8")).split("\n")[0]).toBe(path.join(downloads, "airgapupdate-latest"));
    expect((await fs.readFile(`${out}.file`)).equals(body)).toBe(true);
  });

  it("a sha256 mismatch fails with both checksums; the command is not run and the file is gone", async () => {
    const wrong = "0".repeat(64);
    const result = failure(await run("k0supdate", signalArgs({ sha256: wrong })));
    expect(result.message).toBe(`sha256 mismatch: expected ${wrong}, got ${sha}`);
    expect(await exists(out)).toBe(false);
    expect(await leftInDownloads()).toEqual([]);
  });

  it("an HTTP error fails naming the status and the URL (without its query)", async () => {
    const result = failure(await run("k0supdate", signalArgs({ url: `${base}/missing?token=secret` })));
    expect(result.message).toBe(`download failed: HTTP 404 from ${base}/missing`);
    expect(await exists(out)).toBe(false);
  });

  it("without --update-command it fails before downloading anything", async () => {
    for (const registry of [builtinExecutors(), executors({ command: null })]) {
      for (const kind of ["k0supdate", "airgapupdate"]) {
        expect(failure(await run(kind, signalArgs(), registry)).message).toBe(`this agent has no --update-command: it cannot apply ${kind}`);
      }
    }
    expect(hits).toEqual([]);
  });

  it("an update command that cannot be run, or a file for another platform, fails before downloading", async () => {
    const missing = path.join(tmp, "no-such-apply");
    expect(failure(await run("k0supdate", signalArgs(), executors({ command: missing }))).message).toMatch(/^cannot run update command ".*no-such-apply": .*ENOENT/);
    expect(failure(await run("k0supdate", signalArgs({ platform: "linux-arm64" }))).message).toBe("the file is for linux-arm64, this agent runs on linux-amd64");
    expect(hits).toEqual([]);
  });

  it("a failing command fails with its exit code and the tail of its stderr, its output kept", async () => {
    const result = failure(await run("k0supdate", signalArgs(), executors({ command: failScript })));
    expect(result.message).toBe(`update command "${failScript}" exited with code 3: k0s: no space left on device`);
    expect(result.output).toMatch(/^downloaded .*\nrunning .*\npartial\nk0s: no space left on device\n$/);
    expect(await leftInDownloads()).toEqual([]);
  });

  it("a file over the size cap fails; so does a download past the timeout", async () => {
    expect(failure(await run("k0supdate", signalArgs(), executors({ maxBytes: 1000 }))).message).toBe(
      `${body.length} bytes, over the limit of 1000 from ${base}${release.route}`,
    );
    expect(failure(await run("k0supdate", signalArgs({ url: `${base}/slow` }), executors({ timeoutMs: 300 }))).message).toBe(
      `download failed: timed out after 0.3 s from ${base}/slow`,
    );
    expect(await leftInDownloads()).toEqual([]);
    expect(await exists(out)).toBe(false);
  });

  it("a cancel aborts a slow download at once, leaving no partial file", async () => {
    const controller = new AbortController();
    const running = run("k0supdate", signalArgs({ url: `${base}/slow` }), executors(), controller.signal);
    await eventually(() => hits.includes("/slow"), 5_000, "the download to start");
    await new Promise((r) => setTimeout(r, 100));
    const cancelledAt = Date.now();
    controller.abort();
    expect(failure(await running).message).toBe("cancelled");
    expect(Date.now() - cancelledAt).toBeLessThan(500);
    expect(await leftInDownloads()).toEqual([]);
    expect(await exists(out)).toBe(false);
  });

  it("clears what an earlier run left in the downloads directory", async () => {
    await fs.mkdir(downloads, { recursive: true });
    await fs.writeFile(path.join(downloads, "k0supdate-old.part"), "left by a killed agent");
    await run("k0supdate", signalArgs());
    expect(await leftInDownloads()).toEqual([]);
  });

  it("--download-mirror: fetched from <mirror>/<the URL's last segment>, said in the output; the sha256 is checked the same", async () => {
    const upstream = `https://github.com/k0sproject/k0s/releases/download/v1.30.1+k0s.0${release.route}`;
    const mirrored = executors({ mirror: `${base}/mirror` });
    const result = await run("k0supdate", signalArgs({ url: `${upstream}?token=secret` }), mirrored);
    expect(result).not.toBeInstanceOf(ActionFailure);
    expect(hits).toEqual([`/mirror${release.route}`]);
    expect((result as { output: string }).output.split("\n")[0]).toBe(
      `downloaded ${body.length} bytes from ${base}/mirror${release.route} (mirror of ${upstream}), sha256 ${sha} (matches the plan)`,
    );
    // The command gets the same file name as without a mirror.
    expect((await fs.readFile(out, "utf8")).split("\n")[0]).toBe(path.join(downloads, `k0supdate${release.route.replace("/", "-")}`));

    // Integrity holds: whatever the mirror serves must match the plan's sha256.
    const wrong = "1".repeat(64);
    expect(failure(await run("k0supdate", signalArgs({ url: upstream, sha256: wrong }), mirrored)).message).toBe(`sha256 mismatch: expected ${wrong}, got ${sha}`);
    expect(failure(await run("k0supdate", signalArgs({ url: "https://example.com/k0s/other" }), mirrored)).message).toBe(
      `download failed: HTTP 404 from ${base}/mirror/other (mirror of https://example.com/k0s/other)`,
    );
    expect(failure(await run("k0supdate", signalArgs({ url: "https://example.com/k0s/" }), mirrored)).message).toBe(
      `https://example.com/k0s/ names no file to fetch from the mirror ${base}/mirror`,
    );
    expect(hits).toEqual([`/mirror${release.route}`, `/mirror${release.route}`, "/mirror/other"]);
  });

  it("--download-mirror on the command line (trailing slashes dropped), else DROVER_AGENT_DOWNLOAD_MIRROR; a bad one is refused", () => {
    const argv = ["--server", "http://localhost:3000", "--name", "w", "--state-dir", "/tmp/x"];
    expect(parseAgentArgs([...argv, "--download-mirror", "http://mirror.lan/k0s//"], {})).toMatchObject({ downloadMirror: "http://mirror.lan/k0s" });
    expect(parseAgentArgs(argv, { DROVER_AGENT_DOWNLOAD_MIRROR: "https://m.lan" })).toMatchObject({ downloadMirror: "https://m.lan" });
    expect((parseAgentArgs(argv, {}) as { downloadMirror?: string }).downloadMirror).toBeUndefined();
    for (const bad of ["ftp://m.lan", "mirror.lan", "http://m.lan/?x=1"]) {
      expect(() => parseAgentArgs([...argv, "--download-mirror", bad], {})).toThrow(/^--download-mirror: an http:\/\/ or https:\/\/ base URL without a query/);
    }
  });

  it("are not idempotent", () => {
    expect(executors().get("k0supdate")?.idempotent).toBe(false);
    expect(executors().get("airgapupdate")?.idempotent).toBe(false);
  });
});

describe("against the fake server", () => {
  // One server for these tests; each test's agent has a name of its own.
  let server: FakeServer;
  const agents: Agent[] = [];
  let agentProcess: AgentProcess | null = null;
  beforeAll(async () => {
    server = await FakeServer.start();
    Object.assign(server, { autoApprove: true, heartbeatSeconds: 30 });
  });
  afterEach(async () => {
    agentProcess?.kill("SIGTERM");
    await Promise.all([agentProcess?.exited, ...agents.splice(0).map((a) => a.stop())]);
    agentProcess = null;
  });
  afterAll(() => server.close());

  const start = async (name: string, registry: ExecutorRegistry) => {
    const agent = new Agent({
      identity: { name, labels: {}, platform: "linux-amd64", role: "worker", agentVersion: "0.1.0" },
      client: new ProtocolClient({ serverUrl: server.url }),
      store: new MemoryStateStore(),
      health: staticHealth({ cpu: "Healthy", memory: "Healthy", disk: "Healthy" }),
      logger: silent,
      timing: FAST,
      executors: registry,
    });
    agents.push(agent);
    void agent.start();
    await eventually(() => server.devices.get(name)?.reports.length, 5_000, "first heartbeat");
  };
  const ended = (action: FakeAction, ms = 10_000) => eventually(() => ["DONE", "FAILED", "CANCELLED"].includes(action.state), ms, `${action.kind} to end (${action.state})`);

  it("through the queue: DONE with the command's output; FAILED with the mismatch or bad args", async () => {
    await start("worker-a", executors());
    const done = server.offerAction("worker-a", "k0supdate", { ...signalArgs() });
    await ended(done);
    expect(done).toMatchObject({ state: "DONE", output: expect.stringMatching(/applied v1\.30\.1\+k0s\.0\n$/) });

    const mismatch = server.offerAction("worker-a", "airgapupdate", { ...signalArgs({ sha256: "a".repeat(64) }) });
    await ended(mismatch);
    expect(mismatch).toMatchObject({ state: "FAILED", error: `sha256 mismatch: expected ${"a".repeat(64)}, got ${sha}` });

    const invalid = server.offerAction("worker-a", "k0supdate", { ...signalArgs(), url: "not a url" });
    await ended(invalid);
    expect(invalid).toMatchObject({ state: "FAILED", error: expect.stringMatching(/^invalid args for k0supdate: url: /) });
  });

  it("through the queue: a cancel during a slow download is CANCELLED", async () => {
    await start("worker-b", executors());
    const action = server.offerAction("worker-b", "k0supdate", { ...signalArgs({ url: `${base}/slow` }) });
    await eventually(() => action.state === "RUNNING" && hits.includes("/slow"), 5_000, "downloading");
    server.cancelAction(action.id);
    await ended(action);
    expect(action.state).toBe("CANCELLED");
    expect(await leftInDownloads()).toEqual([]);
    expect(await exists(out)).toBe(false);
  });

  it("through the queue: an agent with no --update-command reports FAILED, having downloaded nothing", async () => {
    await start("worker-c", builtinExecutors());
    const action = server.offerAction("worker-c", "k0supdate", { ...signalArgs() });
    await ended(action);
    expect(action).toMatchObject({ state: "FAILED", error: "this agent has no --update-command: it cannot apply k0supdate" });
    expect(hits).toEqual([]);
  });

  it("the agent process with --update-command downloads under <state-dir>/downloads and runs COMMAND FILE VERSION", async () => {
    const stateDir = path.join(tmp, "state-worker-d");
    // The script's $OUT comes from the agent's environment, which the command inherits.
    process.env.OUT = out;
    try {
      agentProcess = new AgentProcess(["--server", server.url, "--name", "worker-d", "--state-dir", stateDir, "--platform", "linux-amd64", "--update-command", applyScript, "--log-level", "warn"]);
    } finally {
      delete process.env.OUT;
    }
    await eventually(() => server.devices.get("worker-d")?.reports.length, 20_000, "first heartbeat");
    const action = server.offerAction("worker-d", "airgapupdate", { ...signalArgs({ version: "v1.31.0+k0s.0" }) });
    await ended(action, 20_000);
    expect(action).toMatchObject({ state: "DONE", output: expect.stringMatching(/applied v1\.31\.0\+k0s\.0\n$/) });
    const [file, version] = (await fs.readFile(out, "utf8")).split("\n");
    expect(file).toBe(path.join(stateDir, "downloads", `airgapupdate${release.route.replace("/", "-")}`));
    expect(version).toBe("v1.31.0+k0s.0");
    expect(await fs.readdir(path.join(stateDir, "downloads"))).toEqual([]);
  });
});

describe("simulated k0supdate / airgapupdate (the simulator)", () => {
  const simulated = (name: string, plan: Parameters<typeof simulatedExecutors>[0]["plan"] = {}) =>
    simulatedExecutors({ failure: 0, seconds: [0, 0], random: () => 0.5, name, plan: { applySeconds: 0.05, ...plan } });
  const knobs = { failDownloadNodes: ["worker-3"], badSha256Nodes: ["worker-1*"], failApplyNodes: ["db-?"] };

  it("download and apply nothing, take --plan-apply-seconds, and keep the real kinds' schema and idempotency", async () => {
    const started = Date.now();
    const result = await run("k0supdate", signalArgs(), simulated("worker-2", { applySeconds: 0.2 }));
    expect(Date.now() - started).toBeGreaterThanOrEqual(190);
    expect((result as { output: string }).output).toMatch(/^\[simulated\] downloaded .*\n\[simulated\] applying k0supdate v1\.30\.1\+k0s\.0\n\[simulated\] applied/);
    expect(hits).toEqual([]);
    for (const kind of ["k0supdate", "airgapupdate"]) {
      expect(simulated("x").get(kind)?.argsSchema).toBe(executors().get(kind)?.argsSchema);
      expect(simulated("x").get(kind)?.idempotent).toBe(false);
    }
  });

  it("fail on the chosen nodes as a real agent would: download, sha256, command", async () => {
    expect(failure(await run("k0supdate", signalArgs(), simulated("worker-3", knobs))).message).toBe(
      `download failed: simulated failure for worker-3 from ${base}${release.route}`,
    );
    expect(failure(await run("airgapupdate", signalArgs(), simulated("worker-12", knobs))).message).toMatch(new RegExp(`^sha256 mismatch: expected ${sha}, got [0-9a-f]{64}$`));
    expect(failure(await run("k0supdate", signalArgs(), simulated("db-1", knobs))).message).toBe(
      `update command "simulated" exited with code 1: simulated failure applying k0supdate v1.30.1+k0s.0 on db-1`,
    );
    for (const name of ["worker-30", "worker-2", "db-10"]) expect(await run("k0supdate", signalArgs(), simulated(name, knobs))).not.toBeInstanceOf(ActionFailure);
  });

  it("a cancel ends a simulated update at once", async () => {
    const controller = new AbortController();
    const running = run("k0supdate", signalArgs(), simulated("worker-2", { applySeconds: 30 }), controller.signal);
    setTimeout(() => controller.abort(), 50);
    expect(failure(await running).message).toBe("cancelled");
  });

  it("node globs: '*' any run, '?' one character, other characters literal", () => {
    const match = nodeMatcher(["worker-1*", "db-?", "a.b"]);
    expect(["worker-1", "worker-10", "db-1", "a.b"].every(match)).toBe(true);
    expect(["worker-2", "db-10", "axb", "xworker-1"].some(match)).toBe(false);
    expect(nodeMatcher()("anything")).toBe(false);
  });
});
