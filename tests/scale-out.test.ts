/**
 * Several Drover servers on one PostgreSQL (issue 11, DESIGN.md §9): two server processes
 * (scripts/api-server.ts) on one database, agents held on the server other than the
 * one an operator talks to. (Three candidates for leadership, one of them killed, are
 * tests/leader.test.ts's, in process: a server process costs ≈ 2 CPU-s to start and more to keep.)
 *
 * - A change committed on server 1 answers a poll held on server 2: 40 actions created on
 *   server 1 for a device whose long-poll is parked on server 2, each timed from the create
 *   to the poll's answer, and server 2's own `drover_poll_wake_seconds` (commit → answer),
 *   logged (the 100 ms target is the bench's).
 * - An approve on server 1 reaches a real agent process whose poll is held on server 2.
 * - The console's live stream (events.live over SSE) on server 2 carries server 1's events.
 * - Exactly one server is the controller leader (drover_controller_leader, and its log);
 *   kill -9 it in the middle of a batched rollout of simulated agents (held on the other):
 *   the other server takes over within a few seconds, the rollout completes, and no
 *   device was updated twice (one SpecRendered for the new version per device, renderedVersion
 *   one more than before).
 *
 * Runs with DROVER_TEST_DATABASE=postgresql (npm run test:pg).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { ADMIN_PASSWORD, newPgDatabase, testOnPostgres } from "./helpers/server";
import { enrollmentBody, heartbeatBody } from "./helpers/devices";
import { AgentProcess, HEALTHY_HOST, eventually } from "../agent/test-support/agent-process";
import { startSimulation, type SimulationHandle } from "../agent/simulate";

const ROOT = path.resolve(import.meta.dirname, "..");
const AUTO = "scale=out";
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface ServerProc {
  n: number;
  url: string;
  child: ChildProcess;
  /** Its JSON log lines. */
  lines: Record<string, unknown>[];
  exited: Promise<number | null>;
}

async function freePort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((resolve) => srv.listen(0, "127.0.0.1", resolve));
  const port = (srv.address() as net.AddressInfo).port;
  await new Promise((resolve) => srv.close(resolve));
  return port;
}

async function startServerProcess(n: number, databaseUrl: string): Promise<ServerProc> {
  const port = await freePort();
  // scripts/api-server.ts as built for the run (tests/global-setup.ts): plain node, no tsx.
  const child = spawn(process.execPath, [inject("apiServerBundle")], {
    cwd: ROOT,
    stdio: ["ignore", "pipe", "pipe"],
    env: {
      ...process.env,
      PORT: String(port),
      HOST: "127.0.0.1",
      DATABASE_URL: databaseUrl,
      DROVER_ADMIN_PASSWORD: ADMIN_PASSWORD,
      DROVER_AUTO_APPROVE: AUTO,
      DROVER_HEARTBEAT_SECONDS: "1",
      DROVER_SWEEP_SECONDS: "0.5",
      LOG_LEVEL: "info",
    },
  });
  const lines: Record<string, unknown>[] = [];
  let buffer = "";
  let stderr = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    buffer += chunk.toString("utf8");
    for (let i = buffer.indexOf("\n"); i >= 0; i = buffer.indexOf("\n")) {
      try {
        lines.push(JSON.parse(buffer.slice(0, i)) as Record<string, unknown>);
      } catch {
        lines.push({ msg: buffer.slice(0, i) });
      }
      buffer = buffer.slice(i + 1);
    }
  });
  child.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  const ready = await eventually(() => (child.exitCode !== null ? Promise.reject(new Error(`server ${n} exited: ${stderr}`)) : lines.find((l) => typeof l.ready === "string")), 90_000, `server ${n} to start`);
  return { n, url: String(ready.ready), child, lines, exited };
}

let database: { url: string; drop(): Promise<void> };
const servers: ServerProc[] = [];
let token = "";
const simulations: SimulationHandle[] = [];
const agents: AgentProcess[] = [];
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "drover-scale-out-"));

async function api<T = unknown>(server: ServerProc, method: string, p: string, body?: unknown): Promise<{ status: number; body: T }> {
  const res = await fetch(`${server.url}/api/v1${p}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body !== undefined ? { "content-type": "application/json" } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : undefined) as T };
}

async function metric(server: ServerProc, name: string): Promise<string> {
  return (await (await fetch(`${server.url}/metrics`)).text())
    .split("\n")
    .filter((l) => l.startsWith(name))
    .join("\n");
}

async function leaders(): Promise<ServerProc[]> {
  const alive = servers.filter((s) => s.child.exitCode === null && s.child.signalCode === null);
  const flags = await Promise.all(alive.map(async (s) => /^drover_controller_leader 1$/m.test(await metric(s, "drover_controller_leader"))));
  return alive.filter((_, i) => flags[i]);
}

describe.runIf(testOnPostgres)("two servers on one PostgreSQL", () => {
  beforeAll(async () => {
    database = await newPgDatabase();
    // One after another: starts at once on two shared cores only time out together.
    for (const n of [1, 2]) servers.push(await startServerProcess(n, database.url));
    const res = await fetch(`${servers[0]!.url}/api/v1/auth/token`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ username: "admin", password: ADMIN_PASSWORD }),
    });
    token = ((await res.json()) as { token: string }).token;
  }, 300_000);

  afterAll(async () => {
    for (const a of agents) a.kill("SIGTERM");
    await Promise.race([Promise.all(agents.map((a) => a.exited)), sleep(5_000)]);
    AgentProcess.killAll();
    await Promise.all(simulations.map((sim) => sim.stop()));
    for (const s of servers) s.child.kill("SIGTERM");
    await Promise.race([Promise.all(servers.map((s) => s.exited)), sleep(10_000)]);
    for (const s of servers) s.child.kill("SIGKILL");
    await database?.drop();
    fs.rmSync(tmp, { recursive: true, force: true });
  }, 60_000);

  it("exactly one server is the controller leader, and says so in its log", async () => {
    const [leader, ...others] = await eventually(async () => {
      const l = await leaders();
      return l.length === 1 ? l : undefined;
    }, 10_000, "one leader");
    expect(others).toHaveLength(0);
    expect(leader!.lines.some((l) => String(l.msg).startsWith("leader: this server runs the controllers"))).toBe(true);
    for (const s of servers.filter((s) => s !== leader)) expect(s.lines.some((l) => String(l.msg).startsWith("leader: this server runs"))).toBe(false);
  });

  it("a change committed on server 1 answers a poll held on server 2, woken across servers", async () => {
    const [one, two] = [servers[0]!, servers[1]!];
    // A device driven by hand, enrolled on server 2 (auto-approved by label), Online.
    const secret = randomBytes(32).toString("base64url");
    const name = `hand-${process.pid}`;
    const agentCall = async <T>(method: string, p: string, body?: unknown, headers: Record<string, string> = {}) => {
      const res = await fetch(`${two.url}/api/agent/v1${p}`, {
        method,
        headers: { ...(body !== undefined ? { "content-type": "application/json" } : {}), ...headers },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json()) as T, at: performance.now() };
    };
    const created = await agentCall<{ enrollmentId: string }>("POST", "/enrollments", enrollmentBody(name, secret, { scale: "out" }));
    expect(created.status).toBe(201);
    const decision = await agentCall<{ token?: string }>("GET", `/enrollments/${created.body.enrollmentId}?wait=10`, undefined, { "x-enrollment-secret": secret });
    const auth = { authorization: `Bearer ${decision.body.token}` };
    expect((await agentCall("POST", "/status", heartbeatBody(), auth)).status).toBe(200);

    const before = await metric(two, "drover_poll_wake_seconds");
    const samples: number[] = [];
    // A few rounds prove the wake crosses servers every time; its latency is the bench's to
    // measure (bench/: wake p99), not a test's on a loaded machine (40 rounds were 22 s here).
    const ROUNDS = 5;
    for (let i = 0; i < ROUNDS; i++) {
      const poll = agentCall<{ actions: { id: string }[] }>("GET", "/work?wait=20", undefined, auth);
      // Parked on server 2 before server 1 commits (a held poll checks once, then waits);
      // four requests a round stay under the agent API's 10 a second per device.
      await sleep(400);
      const t0 = performance.now();
      const made = await api<{ items: { id: string }[] }>(one, "POST", "/actions", { device: name, kind: "noop" });
      expect(made.status, JSON.stringify(made.body)).toBe(201);
      const answered = await poll;
      expect(answered.status, JSON.stringify(answered.body)).toBe(200);
      expect(answered.body.actions.map((a) => a.id)).toContain(made.body.items[0]!.id);
      samples.push(answered.at - t0);
      for (const state of ["NEW", "RUNNING", "DONE"]) {
        const reported = await agentCall("PUT", `/actions/${made.body.items[0]!.id}`, { state }, auth);
        expect(reported.status, JSON.stringify(reported.body)).toBe(200);
      }
    }
    samples.sort((a, b) => a - b);
    console.log(`[scale-out] action created on server 1 → poll on server 2 answered (including the create request): ${samples.map((t) => t.toFixed(0)).join(", ")} ms`);
    // Server 2's own measure, commit (the wake's timestamp, set on server 1) → answer.
    const after = await metric(two, "drover_poll_wake_seconds");
    const value = (text: string, series: string) => Number(text.split("\n").find((l) => l.startsWith(`drover_poll_wake_seconds${series} `))?.split(" ")[1] ?? 0);
    const woke = value(after, "_count") - value(before, "_count");
    const within = value(after, '_bucket{le="0.1"}') - value(before, '_bucket{le="0.1"}');
    const within25 = value(after, '_bucket{le="0.025"}') - value(before, '_bucket{le="0.025"}');
    console.log(`[scale-out] server 2's drover_poll_wake_seconds (commit on server 1 → answer): ${within25} of ${woke} within 25 ms, ${within} within 100 ms`);
    // Every poll was answered by the wake across servers (each answer carried its action,
    // well before the 20 s wait). How fast (the protocol's 100 ms) is the bench's to measure: the
    // figures are logged above; a test on a loaded machine cannot hold a latency target.
    expect(woke).toBeGreaterThanOrEqual(ROUNDS);
    expect(samples.at(-1)!).toBeLessThan(10_000);
  }, 120_000);

  it("an approve on server 1 reaches a real agent whose poll is held on server 2", async () => {
    const [one, two] = [servers[0]!, servers[1]!];
    const name = `real-${process.pid}`;
    const agent = new AgentProcess(["--server", two.url, "--name", name, "--state-dir", path.join(tmp, name), "--labels", AUTO], {
      preload: [HEALTHY_HOST],
    });
    agents.push(agent);
    await eventually(async () => (await api<{ summary: string }>(one, "GET", `/devices/${name}`)).body?.summary === "Online", 60_000, "the real agent Online");
    const made = await api<{ items: { id: string; state: string }[] }>(one, "POST", "/actions", { device: name, kind: "noop", requireApproval: true });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    const id = made.body.items[0]!.id;
    expect(made.body.items[0]!.state).toBe("PENDING_APPROVE");
    // Its poll parks on server 2 again after the heartbeat that followed.
    await sleep(1_000);
    const t0 = Date.now();
    expect((await api(one, "POST", `/actions/${id}/approve`, {})).status).toBe(200);
    const received = await agent.waitFor("action.received", 10_000, (l) => l.actionId === id);
    const took = Date.parse(String(received.time)) - t0;
    console.log(`[scale-out] approve on server 1 → real agent on server 2 received the action: ${took} ms (agent log clock)`);
    // Woken across servers, not by the agent's next poll (how fast is the bench's to measure).
    expect(took).toBeLessThan(5_000);
    await eventually(async () => (await api<{ state: string }>(one, "GET", `/actions/${id}`)).body.state === "DONE", 10_000, "the action DONE");
    // Stopped with its test: it would heartbeat through the rest of the file.
    agent.kill("SIGTERM");
    await agent.exited;
  }, 120_000);

  it("the console's live updates on server 2 carry what happens on server 1", async () => {
    const [one, two] = [servers[0]!, servers[1]!];
    const abort = new AbortController();
    // events.live as the console's client opens it: tRPC over SSE.
    const res = await fetch(`${two.url}/api/trpc/events.live?input=${encodeURIComponent("{}")}`, {
      headers: { authorization: `Bearer ${token}`, accept: "text/event-stream" },
      signal: abort.signal,
    });
    expect(res.status).toBe(200);
    let text = "";
    const reading = (async () => {
      const decoder = new TextDecoder();
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) text += decoder.decode(chunk, { stream: true });
    })().catch(() => undefined);
    await sleep(300);
    const name = `live-${process.pid}`;
    const made = await api<{ items: { id: string }[] }>(one, "POST", "/fleets", {
      metadata: { name },
      spec: { selector: { matchLabels: { nothing: name } }, template: { spec: { version: "1.0.0" } } },
    });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    await eventually(() => text.includes(`"objectName":"${name}"`), 5_000, "the fleet's event on server 2's live stream");
    abort.abort();
    await reading;
  });

  it("kill -9 the leader mid-rollout: the other server takes over, the rollout completes, no device is updated twice", async () => {
    const [leader] = await leaders();
    expect(leader).toBeDefined();
    const other = servers.find((s) => s !== leader && s.child.exitCode === null)!;
    expect(other).toBeDefined();
    const fleet = `so-${process.pid}`;
    const size = 8;
    const policy = { deviceSelection: { strategy: "BatchSequence", sequence: [{ limit: 2 }, { limit: 4 }, { limit: 6 }, { limit: "100%" }] }, successThreshold: "100%" };
    const body = (version: string) => ({
      metadata: { name: fleet },
      spec: { selector: { matchLabels: { fleet } }, template: { spec: { version, applications: [{ name: "web", command: ["/usr/bin/web"] }] } }, rolloutPolicy: policy },
    });
    expect((await api(other, "POST", "/fleets", body("1.0.0"))).status).toBe(201);
    // The agents held on the server that is not the leader; version 2 applies slowly.
    simulations.push(
      startSimulation({
        server: other.url,
        agents: size,
        prefix: fleet,
        labels: { scale: "out", fleet },
        degraded: 0,
        error: 0,
        restarts: 0,
        flap: 0,
        silent: 0,
        seed: 11,
        slowApplySeconds: 1,
        slowVersions: ["2.0.0"],
      }),
    );
    type Member = { name: string; renderedVersion: number; templateVersion: string | null; updatedStatus: string };
    const members = async () => (await api<{ items: Member[] }>(other, "GET", `/devices?fleet=${fleet}&limit=100`)).body.items;
    await eventually(async () => {
      const m = await members();
      return m.length === size && m.every((d) => d.templateVersion === "1" && d.updatedStatus === "UpToDate");
    }, 60_000, "every member on version 1");
    const renderedBefore = new Map((await members()).map((m) => [m.name, m.renderedVersion]));

    expect((await api(other, "PUT", `/fleets/${fleet}`, body("2.0.0"))).status).toBe(200);
    // Mid-rollout: the first batch has version 2, the rollout is still open.
    await eventually(async () => (await members()).filter((m) => m.templateVersion === "2").length >= 2, 30_000, "the first batch rendered");
    const phaseAtKill = (await api<{ status: { rollout: { phase: string } | null } }>(other, "GET", `/fleets/${fleet}`)).body.status.rollout?.phase;
    leader!.child.kill("SIGKILL");
    const killedAt = Date.now();
    expect(phaseAtKill).not.toBe("Completed");
    await leader!.exited;

    const [next] = await eventually(async () => {
      const l = await leaders();
      return l.length === 1 ? l : undefined;
    }, 15_000, "a new leader");
    const takeover = Date.now() - killedAt;
    console.log(`[scale-out] leader (server ${leader!.n}) killed; server ${next!.n} leads after ${takeover} ms`);
    expect(takeover).toBeLessThan(5_000);
    expect(next).toBe(other);

    await eventually(async () => {
      const f = await api<{ status: { rollout: { phase: string } | null } }>(other, "GET", `/fleets/${fleet}`);
      return f.body.status.rollout?.phase === "Completed";
    }, 90_000, "the rollout Completed under the new leader");
    const after = await members();
    expect(after.every((m) => m.templateVersion === "2")).toBe(true);
    // No device updated twice: one render of version 2 each, renderedVersion one more than before.
    for (const m of after) expect(m.renderedVersion, m.name).toBe(renderedBefore.get(m.name)! + 1);
    const events = await api<{ items: { objectName: string; type: string; message: string }[] }>(other, "GET", `/events?kind=Device&limit=1000`);
    const renders = events.body.items.filter((e) => e.type === "SpecRendered" && e.message.includes(`fleet ${fleet} template version 2`));
    const perDevice = new Map<string, number>();
    for (const e of renders) perDevice.set(e.objectName, (perDevice.get(e.objectName) ?? 0) + 1);
    expect([...perDevice.keys()].sort()).toEqual([...renderedBefore.keys()].sort());
    expect([...perDevice.values()].every((n) => n === 1)).toBe(true);
    // And as the agents saw it: each applied two specs in all, version 1 and version 2.
    const fleetAgents = simulations.slice(-1).flatMap((sim) => sim.agents);
    expect(fleetAgents).toHaveLength(size);
    for (const a of fleetAgents) expect(a.agent.stats.specsApplied, a.name).toBe(2);
  }, 240_000);
});
