/**
 * Plans with real agents against a real server (issue 8): the agent processes enrol by
 * DROVER_AUTO_APPROVE and take the plan's signals end to end (download through
 * --download-mirror from a local file server, sha256, --update-command), and the simulator's
 * agents, in-process, for ordering and concurrency at a size no hand-driven test reaches.
 *
 * - Seed 000's plan, verbatim (research/engines.md A.6 Plan-2), run to Completed by
 *   `controller0` and `worker0` in the seed's sequence, seen in the update commands' own log.
 * - A wrong sha256 in a real agent: ApplyFailed with both checksums, the command never run.
 * - 2 simulated controllers and 20 workers, `limits.concurrent: 5`: one controller at a time,
 *   at most 5 workers, none before every controller completed (sampled while it runs, and
 *   replayed exactly from the plan's events); a failed download ends the plan ApplyFailed.
 */
import { createHash } from "node:crypto";
import fs from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "./helpers/server";
import { eventually } from "./helpers/devices";
import { AgentProcess, HEALTHY_HOST } from "../agent/test-support/agent-process";
import { startSimulation, type SimulationHandle } from "../agent/simulate";
import { commandNodes, type PlanNodeView, type PlanView } from "../lib/plan-status";
import { SEED_000_PLAN } from "./helpers/seed-plans";

/** Every agent of this file enrols with it and is approved without a click. */
const AUTO = "test=plans-agents";

let s: TestServer;
let mirror: http.Server;
let mirrorUrl = "";
/** Paths the mirror was asked for, in order. */
const hits: string[] = [];
const simulations: SimulationHandle[] = [];
const agents: AgentProcess[] = [];

/** What the mirror serves for a path: some bytes that depend on it (their sha256 is known). */
const served = (route: string) => Buffer.from(`drover test file ${route}\n`.repeat(100));
const sha256 = (b: Buffer) => createHash("sha256").update(b).digest("hex");

beforeAll(async () => {
  s = await startTestServer({ DROVER_AUTO_APPROVE: AUTO, DROVER_HEARTBEAT_SECONDS: "1", DROVER_SWEEP_SECONDS: "0.5", LOG_LEVEL: "warn" });
  mirror = http.createServer((req, res) => {
    const route = (req.url ?? "").split("?")[0] ?? "";
    hits.push(route);
    const body = served(route);
    res.writeHead(200, { "content-length": body.length }).end(body);
  });
  await new Promise<void>((resolve) => mirror.listen(0, "127.0.0.1", resolve));
  mirrorUrl = `http://127.0.0.1:${(mirror.address() as AddressInfo).port}`;
}, 60_000);

/** Stops the agents started so far: each describe's stop with it, so they do not heartbeat through the next one's tests. */
async function stopAgents(): Promise<void> {
  const stopping = agents.splice(0);
  for (const a of stopping) a.kill("SIGTERM");
  await Promise.race([Promise.all(stopping.map((a) => a.exited)), new Promise((r) => setTimeout(r, 10_000))]);
  await Promise.all(simulations.splice(0).map((sim) => sim.stop()));
}

afterAll(async () => {
  await stopAgents();
  AgentProcess.killAll();
  mirror?.closeAllConnections();
  await new Promise((resolve) => (mirror ? mirror.close(resolve) : resolve(undefined)));
  await s?.close();
}, 30_000);

// ---------------------------------------------------------------------------------------
// Helpers

async function get(id: string): Promise<PlanView> {
  const res = await s.api<PlanView>("GET", `/plans/${id}`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

async function create(plan: unknown): Promise<PlanView> {
  const res = await s.api<PlanView>("POST", "/plans", plan);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

const untilEnded = (id: string, timeoutMs: number) =>
  eventually(async () => {
    const p = await get(id);
    return p.status.endedAt !== null ? p : undefined;
  }, timeoutMs, 100);

const nodesOf = (p: PlanView, command: number, group: "controllers" | "workers"): PlanNodeView[] => commandNodes(p.status.commands[command]!)[group] ?? [];
const nodeOf = (p: PlanView, command: number, group: "controllers" | "workers", name: string) => nodesOf(p, command, group).find((n) => n.name === name)!;

interface EventItem {
  id: number;
  type: string;
  reason: string;
  message: string;
}
async function planEvents(id: string): Promise<EventItem[]> {
  const res = await s.api<{ items: EventItem[] }>("GET", `/events?kind=Plan&name=${id}&limit=1000`);
  expect(res.status).toBe(200);
  return [...res.body.items].sort((a, b) => a.id - b.id);
}

/** Waits until `count` devices matching `selector` are Enrolled and Online (the plan signals Online ones first). */
async function online(selector: string, count: number, timeoutMs = 30_000): Promise<void> {
  await eventually(async () => {
    const res = await s.api<{ items: { lifecycle: string; summary: string }[] }>("GET", `/devices?labelSelector=${encodeURIComponent(selector)}&summary=Online&lifecycle=Enrolled&limit=500`);
    return res.body.items.length === count ? true : undefined;
  }, timeoutMs, 100);
}

// ---------------------------------------------------------------------------------------

describe("real agent processes", () => {
  let tmp = "";
  let updatesLog = "";
  const readUpdates = async () => (await fs.readFile(updatesLog, "utf8").catch(() => "")).split("\n").filter(Boolean);
  const byName = new Map<string, AgentProcess>();

  beforeAll(async () => {
    tmp = path.join(s.dir, "real");
    await fs.mkdir(tmp, { recursive: true });
    updatesLog = path.join(tmp, "updates.log");
    for (const [name, role] of [
      ["controller0", "controller"],
      ["worker0", "worker"],
    ] as const) {
      // The update command: appends "<name> <file basename> <version>" to the shared log.
      const script = path.join(tmp, `apply-${name}.sh`);
      await fs.writeFile(script, `#!/bin/sh\necho "${name} $(basename "$1") $2" >> "${updatesLog}"\n`, { mode: 0o755 });
      const args = ["--server", s.url, "--name", name, "--role", role, "--state-dir", path.join(tmp, name), "--labels", `${AUTO},site=real`, "--platform", "linux-amd64"];
      args.push("--update-command", script, "--download-mirror", mirrorUrl);
      const agent = new AgentProcess(args, { preload: [HEALTHY_HOST] });
      agents.push(agent);
      byName.set(name, agent);
    }
    await online("site=real", 2, 40_000);
  }, 60_000);
  afterAll(stopAgents, 30_000);

  it("seed 000's plan, POSTed as YAML verbatim, runs to Completed in the seed's sequence: worker0's airgap bundle, then controller0's k0s, then worker0's", async () => {
    const res = await fetch(`${s.url}/api/v1/plans`, { method: "POST", headers: { authorization: `Bearer ${s.adminToken}`, "content-type": "application/yaml" }, body: SEED_000_PLAN });
    const created = (await res.json()) as PlanView;
    expect(res.status, JSON.stringify(created)).toBe(201);
    expect(created.spec.id).toBe("id123");
    const id = created.metadata.id;

    const done = await untilEnded(id, 40_000);
    expect(done.status.state, done.status.message).toBe("Completed");
    expect(done.status.commands.map((c) => [c.kind, c.state])).toEqual([
      ["airgapupdate", "Completed"],
      ["k0supdate", "Completed"],
    ]);
    for (const [command, group, name] of [
      [0, "workers", "worker0"],
      [1, "controllers", "controller0"],
      [1, "workers", "worker0"],
    ] as const) {
      expect(nodeOf(done, command, group, name), `${name} in command ${command}`).toMatchObject({ state: "SignalCompleted", actionState: "DONE" });
    }
    expect(done.status.counts).toMatchObject({ total: 3, SignalCompleted: 3 });

    // The update commands themselves, in the order they ran.
    expect(await readUpdates()).toEqual([
      "worker0 airgapupdate-k0s-airgap-bundle-v1.24.12+k0s.0-amd64 v1.24.12+k0s.0",
      "controller0 k0supdate-k0s-v1.24.12+k0s.0-amd64 v1.24.12+k0s.0",
      "worker0 k0supdate-k0s-v1.24.12+k0s.0-amd64 v1.24.12+k0s.0",
    ]);
    // Every file came from the mirror, by the name in the plan's github.com URL.
    expect(hits).toEqual(["/k0s-airgap-bundle-v1.24.12+k0s.0-amd64", "/k0s-v1.24.12+k0s.0-amd64", "/k0s-v1.24.12+k0s.0-amd64"]);
    expect(byName.get("worker0")!.lines.find((l) => l.event === "update.mirror")).toMatchObject({
      url: "https://github.com/k0sproject/k0s/releases/download/v1.24.12+k0s.0/k0s-airgap-bundle-v1.24.12+k0s.0-amd64",
      mirror: `${mirrorUrl}/k0s-airgap-bundle-v1.24.12+k0s.0-amd64`,
    });
    const action = await s.api<{ output: string }>("GET", `/actions/${nodeOf(done, 1, "controllers", "controller0").actionId}`);
    expect(action.body.output).toContain(`from ${mirrorUrl}/k0s-v1.24.12+k0s.0-amd64 (mirror of https://github.com/k0sproject/k0s/releases/download/v1.24.12+k0s.0/k0s-v1.24.12+k0s.0-amd64)`);

    // The plan's own record: signalled in the seed's order, each node completed before the next was signalled.
    const events = await planEvents(id);
    const story = events.filter((e) => e.type === "PlanNodesSignalled" || (e.type === "PlanNodeStateChanged" && e.reason === "SignalCompleted") || e.type === "PlanStateChanged");
    expect(story.map((e) => e.message.replace(/: action \S+ DONE$/, ""))).toEqual([
      "NewPlan → SchedulableWait",
      "command 0 (airgapupdate): signalled worker0",
      "worker0 (command 0, workers): SignalSent → SignalCompleted",
      "command 1 (k0supdate): signalled controller0",
      "controller0 (command 1, controllers): SignalSent → SignalCompleted",
      "command 1 (k0supdate): signalled worker0",
      "worker0 (command 1, workers): SignalSent → SignalCompleted",
      "SchedulableWait → Completed: 2 command(s) completed",
    ]);
  }, 60_000);

  it("a sha256 mismatch in the agent: the node SignalApplyFailed with both checksums, the plan ApplyFailed, the update command never run", async () => {
    const before = await readUpdates();
    const hitsBefore = hits.length;
    const url = "https://github.com/k0sproject/k0s/releases/download/v1.30.1+k0s.0/k0s-v1.30.1+k0s.0-amd64";
    const wrong = "ab".repeat(32);
    const actual = sha256(served("/k0s-v1.30.1+k0s.0-amd64"));
    const created = await create({
      apiVersion: "drover/v1",
      kind: "Plan",
      spec: { commands: [{ k0supdate: { version: "v1.30.1+k0s.0", platforms: { "linux-amd64": { url, sha256: wrong } }, targets: { workers: { discovery: { static: { nodes: ["worker0"] } } } } } }] },
    });
    const failed = await untilEnded(created.metadata.id, 30_000);
    expect(failed.status.state).toBe("ApplyFailed");
    const node = nodeOf(failed, 0, "workers", "worker0");
    expect(node).toMatchObject({ state: "SignalApplyFailed", actionState: "FAILED" });
    expect(node.message).toContain(`sha256 mismatch: expected ${wrong}, got ${actual}`);
    expect(failed.status.message).toContain(`worker0: action ${node.actionId} FAILED: sha256 mismatch: expected ${wrong}, got ${actual}`);
    // The file was fetched (from the mirror), refused, and the command never ran.
    expect(hits.slice(hitsBefore)).toEqual(["/k0s-v1.30.1+k0s.0-amd64"]);
    expect(await readUpdates()).toEqual(before);
    expect(await fs.readdir(path.join(tmp, "worker0", "downloads"))).toEqual([]);
  }, 40_000);
});

describe("simulated agents", () => {
  const simulate = (prefix: string, role: "controller" | "worker", agentsCount: number, group: string, failDownloadNodes?: string[]) =>
    simulations.push(
      startSimulation({
        server: s.url,
        agents: agentsCount,
        prefix,
        role,
        labels: { test: "plans-agents", group },
        degraded: 0,
        error: 0,
        restarts: 0,
        flap: 0,
        silent: 0,
        seed: 8,
        planApplySeconds: 0.3,
        ...(failDownloadNodes ? { failDownloadNodes } : {}),
      }),
    );
  const k0sPlan = (group: string, targets: Record<string, unknown>) => ({
    apiVersion: "autopilot.k0sproject.io/v1beta2",
    kind: "Plan",
    metadata: { name: "autopilot" },
    spec: {
      id: group,
      timestamp: "now",
      commands: [{ k0supdate: { version: "v1.31.0+k0s.0", platforms: { "linux-amd64": { url: "https://github.com/k0sproject/k0s/releases/download/v1.31.0+k0s.0/k0s-v1.31.0+k0s.0-amd64" } }, targets } }],
    },
  });
  const bySelector = (labels: string, concurrent?: number) => ({ discovery: { selector: { labels } }, ...(concurrent ? { limits: { concurrent } } : {}) });
  afterEach(stopAgents, 30_000);

  it("2 controllers and 20 workers, limits.concurrent 5: one controller at a time, then at most 5 workers at once, none before every controller completed", async () => {
    simulate("c1-ctl", "controller", 2, "c1");
    simulate("c1-wrk", "worker", 20, "c1");
    await online("group=c1", 22);

    const created = await create(k0sPlan("c1", { controllers: bySelector("group=c1"), workers: bySelector("group=c1", 5) }));
    const id = created.metadata.id;
    expect(nodesOf(created, 0, "controllers")).toHaveLength(2);
    expect(nodesOf(created, 0, "workers")).toHaveLength(20);

    // Sample the plan every ~50 ms while it runs.
    const max = { controllers: 0, workers: 0 };
    const early: string[] = [];
    let samples = 0;
    let last = created;
    const startedAt = Date.now();
    while (last.status.endedAt === null) {
      if (Date.now() - startedAt > 40_000) throw new Error(`plan ${id} did not end in 40 s: ${last.status.state} ${JSON.stringify(last.status.counts)}`);
      await new Promise((r) => setTimeout(r, 50));
      last = await get(id);
      samples++;
      const controllers = nodesOf(last, 0, "controllers");
      const workers = nodesOf(last, 0, "workers");
      max.controllers = Math.max(max.controllers, controllers.filter((n) => n.state === "SignalSent").length);
      max.workers = Math.max(max.workers, workers.filter((n) => n.state === "SignalSent").length);
      const started = workers.filter((n) => n.state !== "SignalPending");
      if (started.length > 0 && !controllers.every((n) => n.state === "SignalCompleted")) early.push(`${started.map((n) => n.name).join(",")} while controllers ${controllers.map((n) => n.state).join(",")}`);
    }
    console.log(`[plans-agents] 2 controllers + 20 workers: Completed in ${Date.now() - startedAt} ms, ${samples} samples, max SignalSent ${JSON.stringify(max)}`);
    expect(last.status.state, last.status.message).toBe("Completed");
    expect(last.status.counts).toMatchObject({ total: 22, SignalCompleted: 22 });
    expect(early).toEqual([]);
    expect(max.controllers).toBe(1);
    expect(max.workers).toBeLessThanOrEqual(5);
    expect(max.workers).toBeGreaterThanOrEqual(2);

    // Exactly, from the plan's events (each node's SignalSent and its end, in commit order).
    const events = await planEvents(id);
    const sent = { controllers: 0, workers: 0 };
    const exact = { controllers: 0, workers: 0 };
    let controllersDone = 0;
    for (const e of events.filter((x) => x.type === "PlanNodeStateChanged")) {
      const group = /\(command 0, (controllers|workers)\)/.exec(e.message)?.[1] as "controllers" | "workers";
      if (e.reason === "SignalSent") {
        if (group === "workers") expect(controllersDone, `${e.message} before every controller completed`).toBe(2);
        sent[group]++;
        exact[group] = Math.max(exact[group], sent[group]);
      } else if (e.message.includes("SignalSent → ")) {
        sent[group]--;
        if (group === "controllers" && e.reason === "SignalCompleted") controllersDone++;
      }
    }
    expect(exact).toEqual({ controllers: 1, workers: 5 });
  }, 60_000);

  it("a worker whose download fails: the plan ApplyFailed, that node's message says download failed", async () => {
    simulate("c2-wrk", "worker", 3, "c2", ["c2-wrk-00002"]);
    await online("group=c2", 3);
    const created = await create(k0sPlan("c2", { workers: bySelector("group=c2") }));
    const failed = await untilEnded(created.metadata.id, 30_000);
    expect(failed.status.state).toBe("ApplyFailed");
    expect(nodesOf(failed, 0, "workers").map((n) => [n.name, n.state])).toEqual([
      ["c2-wrk-00001", "SignalCompleted"],
      ["c2-wrk-00002", "SignalApplyFailed"],
      ["c2-wrk-00003", "SignalPending"],
    ]);
    const node = nodeOf(failed, 0, "workers", "c2-wrk-00002");
    expect(node.message).toContain("download failed");
    expect(node.message).toContain("simulated failure for c2-wrk-00002");
    expect(failed.status.message).toContain("c2-wrk-00002: action");
  }, 40_000);
});

