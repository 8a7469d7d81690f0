/**
 * The Agent core against a fake protocol server (test-support/fake-server.ts): every branch
 * of enrollment, polling, heartbeats, failures and decommission, with short timings.
 */
import pino from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Agent, exitCodeFor, type AgentOptions } from "./agent";
import { ProtocolClient } from "./client";
import { staticHealth } from "./health";
import { NullRuntime } from "./runtime/null";
import { SimulatedRuntime } from "./runtime/simulated";
import { AppliedSpecDocument, IdentityDocument, MemoryStateStore, type DocumentName, type StateStore } from "./state";
import { eventually, FakeServer } from "./test-support/fake-server";
import { FAST } from "./test-support/fast-timing";


let server: FakeServer;
const running: Agent[] = [];

beforeEach(async () => {
  server = await FakeServer.start();
  server.heartbeatSeconds = 30; // heartbeats in these tests come from events, not the clock
});
afterEach(async () => {
  await Promise.all(running.splice(0).map((a) => a.stop()));
  await server.close();
});

interface LogLine {
  event?: string;
  [key: string]: unknown;
}

function makeAgent(store: StateStore, options: Partial<AgentOptions> = {}) {
  const lines: LogLine[] = [];
  const logger = pino({ level: "debug" }, { write: (line: string) => lines.push(JSON.parse(line) as LogLine) });
  const agent = new Agent({
    identity: { name: "worker-0", labels: { site: "lab" }, platform: "linux-amd64", role: "worker", agentVersion: "0.1.0" },
    client: new ProtocolClient({ serverUrl: server.url }),
    store,
    health: staticHealth({ cpu: "Healthy", memory: "Degraded", disk: "Healthy" }),
    logger,
    timing: FAST,
    ...options,
  });
  running.push(agent);
  const events = () => lines.map((l) => l.event);
  return { agent, lines, events };
}

async function enrolledAgent(store: StateStore = new MemoryStateStore(), options: Partial<AgentOptions> = {}) {
  const made = makeAgent(store, options);
  const outcome = made.agent.start();
  await eventually(() => server.devices.get("worker-0")?.status === "Pending", 5_000, "enrollment request");
  server.approve("worker-0");
  await eventually(() => server.device("worker-0").reports.length > 0, 5_000, "first heartbeat");
  return { ...made, outcome, store };
}

describe("enrollment", () => {
  it("saves the secret before asking, waits for approval, stores the token and heartbeats at once", async () => {
    const store = new MemoryStateStore();
    const { agent, events } = makeAgent(store);
    void agent.start();
    await eventually(() => agent.phase === "pending", 5_000, "enrollment request");

    const pending = await store.read("identity", IdentityDocument);
    expect(pending?.enrollment?.secret).toBe(server.device("worker-0").secret);
    expect(pending?.enrollment?.secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(pending?.enrollment?.id).toBe(server.device("worker-0").enrollmentId);
    expect(pending?.token).toBeUndefined();
    expect(server.device("worker-0").labels).toEqual({ site: "lab" });
    expect(agent.phase).toBe("pending");

    server.approve("worker-0");
    await eventually(() => server.device("worker-0").reports.length > 0, 5_000, "first heartbeat");
    const approved = await store.read("identity", IdentityDocument);
    expect(approved?.token).toBe(server.device("worker-0").token);
    expect(approved?.enrollment).toBeUndefined(); // the secret is no longer needed
    expect(server.device("worker-0").reports[0]).toEqual({
      resources: { cpu: "Healthy", memory: "Degraded", disk: "Healthy" },
      applications: [],
      conditions: { rebooting: false },
      config: { renderedVersion: 0 },
      actions: [],
      // What it runs, every heartbeat: the built-in kinds, and exec's allow-list (empty by default).
      capabilities: { kinds: ["airgapupdate", "exec", "k0supdate", "noop", "reboot", "sleep"], exec: { allow: [] } },
    });
    expect(events()).toEqual(expect.arrayContaining(["enrolled", "approved"]));
  });

  it("approved at once, takes the token from the request's answer: no decision to wait for", async () => {
    server.autoApprove = true;
    server.tokenWithApproval = true;
    const store = new MemoryStateStore();
    const { agent, events } = makeAgent(store);
    void agent.start();
    await eventually(() => (server.devices.get("worker-0")?.reports.length ?? 0) > 0, 5_000, "first heartbeat");
    expect((await store.read("identity", IdentityDocument))?.token).toBe(server.device("worker-0").token);
    expect(server.count("POST", /^\/enrollments$/)).toBe(1);
    expect(server.count("GET", /^\/enrollments\//)).toBe(0);
    expect(events()).toEqual(expect.arrayContaining(["enrolled", "approved"]));
  });

  it("a restart while pending resumes waiting on the same request", async () => {
    const store = new MemoryStateStore();
    const first = makeAgent(store);
    void first.agent.start();
    await eventually(() => first.agent.phase === "pending", 5_000, "enrollment request");
    expect(await first.agent.stop()).toEqual({ kind: "stopped" });

    const second = makeAgent(store);
    void second.agent.start();
    await eventually(() => second.agent.phase === "pending", 5_000, "pending again");
    server.approve("worker-0");
    await eventually(() => second.agent.hasToken, 5_000, "token");
    expect(server.count("POST", /^\/enrollments$/)).toBe(1);
  });

  it("a crash between saving the secret and storing the answer re-sends the same request", async () => {
    const store = new MemoryStateStore();
    const first = makeAgent(store);
    void first.agent.start();
    await eventually(() => first.agent.phase === "pending", 5_000, "enrollment request");
    await first.agent.stop();
    // Forget the id, as if the process died before the answer reached the disk.
    const identity = await store.read("identity", IdentityDocument);
    await store.write("identity", { ...identity, enrollment: { ...identity?.enrollment, id: undefined } });

    const second = makeAgent(store);
    void second.agent.start();
    await eventually(() => second.agent.phase === "pending", 5_000, "pending again");
    expect(server.device("worker-0").enrollPosts).toBe(2);
    expect((await store.read("identity", IdentityDocument))?.enrollment?.id).toBe(server.device("worker-0").enrollmentId);
  });

  it("denied: the denial sticks; the agent only looks again, ever more slowly", async () => {
    const store = new MemoryStateStore();
    const { agent, events } = makeAgent(store, { random: () => 0.99 });
    void agent.start();
    await eventually(() => server.devices.get("worker-0")?.status === "Pending", 5_000, "enrollment request");
    const firstSecret = server.device("worker-0").secret;
    server.deny("worker-0");
    await eventually(() => events().filter((e) => e === "denied").length >= 3, 5_000, "three denials");
    // Growing backoff (≈100, 200, 400 ms), not a tight loop, and never a new request: a new
    // secret would put the request back to Pending and undo the operator's decision.
    expect(server.count("POST", /^\/enrollments$/)).toBe(1);
    expect(server.count("GET", /^\/enrollments\//)).toBeLessThanOrEqual(6);
    expect(server.device("worker-0").secret).toBe(firstSecret);
    expect(server.device("worker-0").status).toBe("Denied");
    expect(agent.hasToken).toBe(false);
    await agent.stop();
  });

  it("a name already taken is a fatal error (exit 1)", async () => {
    const other = makeAgent(new MemoryStateStore());
    void other.agent.start();
    await eventually(() => server.devices.get("worker-0")?.status === "Pending", 5_000, "first request");

    const { agent, lines } = makeAgent(new MemoryStateStore());
    const outcome = await agent.start();
    expect(outcome.kind).toBe("enrollment-conflict");
    expect(exitCodeFor(outcome)).toBe(1);
    expect(lines.some((l) => l.event === "enrollment.conflict" && /taken/.test(String(l.msg)))).toBe(true);
  });

  it("retries the enrollment request through server errors", async () => {
    server.fail({ method: "POST", path: /^\/enrollments$/, status: 503, times: 2 });
    server.fail({ method: "GET", path: /^\/enrollments\//, status: 500, times: 2 });
    const { agent } = makeAgent(new MemoryStateStore());
    void agent.start();
    await eventually(() => agent.phase === "pending" && server.count("GET", /^\/enrollments\//) >= 3, 5_000, "pending");
    server.approve("worker-0");
    await eventually(() => agent.hasToken, 5_000, "token");
    expect(agent.stats.errors).toBe(4);
  });

  it("refuses a state directory that belongs to another device", async () => {
    const store = new MemoryStateStore();
    await store.write("identity", { version: 1, deviceName: "someone-else", token: "t", decommissioning: false, decommissioned: false });
    const outcome = await makeAgent(store).agent.start();
    expect(outcome).toMatchObject({ kind: "state-error", message: expect.stringContaining("someone-else") });
  });
});

describe("operation", () => {
  it("applies a newer spec, persists it and reports its renderedVersion at once", async () => {
    const { agent, store, events } = await enrolledAgent();
    server.setSpec("worker-0", 3);
    await eventually(() => server.device("worker-0").reports.some((r) => r.config.renderedVersion === 3), 2_000, "report of v3");
    expect(await store.read("spec", AppliedSpecDocument)).toMatchObject({ renderedVersion: 3, spec: { config: { files: [{ path: "/etc/answer", content: "3" }] } } });
    expect(agent.appliedVersion).toBe(3);
    expect(events()).toContain("spec.applied");
    // The next poll asks for newer than 3.
    await eventually(() => server.requests.some((r) => r.path === "/work" && r.query.includes("specVersion=3")), 5_000, "poll at v3");
  });

  it("a restart with a stored token neither enrolls again nor re-applies its spec", async () => {
    const store = new MemoryStateStore();
    const first = await enrolledAgent(store);
    server.setSpec("worker-0", 2);
    await eventually(() => first.agent.appliedVersion === 2, 5_000, "v2");
    await first.agent.stop();

    const reportsBefore = server.device("worker-0").reports.length;
    const second = makeAgent(store);
    void second.agent.start();
    await eventually(() => server.device("worker-0").reports.length > reportsBefore, 5_000, "heartbeat after restart");
    expect(server.device("worker-0").reports.at(-1)?.config.renderedVersion).toBe(2);
    expect(second.agent.stats.specsApplied).toBe(0);
    expect(server.count("POST", /^\/enrollments$/)).toBe(1);
    expect(second.events()).toContain("resumed");
  });

  it("reports each update state in a heartbeat at once, and the new renderedVersion only once Updated", async () => {
    await enrolledAgent();
    const before = server.device("worker-0").reports.length;
    server.setSpec("worker-0", 3);
    await eventually(() => server.device("worker-0").reports.some((r) => r.conditions.updating?.reason === "Updated"), 5_000, "Updated reported");
    const reports = server.device("worker-0").reports.slice(before);
    // Heartbeats come every 30 s here: these are the state changes' own.
    expect(reports.map((r) => [r.conditions.updating?.reason, r.conditions.updating?.status, r.config.renderedVersion])).toEqual([
      ["Preparing", true, 0],
      ["ReadyToUpdate", true, 0],
      ["ApplyingUpdate", true, 0],
      ["Updated", false, 3],
    ]);
    expect(reports[0]?.conditions.updating?.info).toBe("renderedVersion 3 (version 1.3.0)");
  });

  it("a spec that fails is reported RollingBack then Error, keeps the previous renderedVersion and is not taken again", async () => {
    const runtime = new SimulatedRuntime({ failVersions: ["bad"] }, () => []);
    const { agent } = await enrolledAgent(new MemoryStateStore(), { runtime });
    server.setSpec("worker-0", 2);
    await eventually(() => agent.appliedVersion === 2, 5_000, "v2");
    server.setSpec("worker-0", 3, { version: "bad" });
    await eventually(() => server.device("worker-0").reports.at(-1)?.conditions.updating?.reason === "Error", 5_000, "Error reported");
    const last = server.device("worker-0").reports.at(-1);
    expect(last?.conditions.updating).toEqual({ status: false, reason: "Error", info: "simulated failure applying version bad; rolled back to renderedVersion 2" });
    expect(last?.config.renderedVersion).toBe(2);
    expect(server.device("worker-0").reports.map((r) => r.conditions.updating?.reason)).toContain("RollingBack");
    // The poll asks for newer than the failed one: the server does not hand it back.
    await eventually(() => server.requests.some((r) => r.path === "/work" && r.query.includes("specVersion=3")), 5_000, "poll past v3");
    expect(agent.stats).toMatchObject({ specsApplied: 1, specsFailed: 1 });
    server.setSpec("worker-0", 4);
    await eventually(() => agent.appliedVersion === 4, 5_000, "v4 after the failure");
  });

  it("runs actions while an update takes its time, and reports the runtime's applications", async () => {
    const runtime = new SimulatedRuntime({ slowApplySeconds: 1, crashVersions: ["crashy"], crashSeconds: 0.2 }, () => []);
    const { agent } = await enrolledAgent(new MemoryStateStore(), { runtime });
    server.heartbeatSeconds = 1; // taken with the state changes' heartbeats
    server.setSpec("worker-0", 2, { version: "crashy", applications: [{ name: "api", command: ["/bin/api"] }] });
    await eventually(() => agent.updatingCondition?.reason === "Preparing", 2_000, "updating");
    const action = server.offerAction("worker-0", "noop", {});
    await eventually(() => action.state === "DONE", 2_000, "the action done during the update");
    expect(agent.updatingCondition?.status).toBe(true);
    await agent.updateIdle();
    await eventually(() => (server.device("worker-0").reports.at(-1)?.applications[0]?.restarts ?? 0) >= 2, 5_000, "restarts counted");
    expect(server.device("worker-0").reports.at(-1)?.applications[0]?.name).toBe("api");
  });

  it("heartbeats at the interval the server asks for, each drawn within ±20%", async () => {
    server.heartbeatSeconds = 1;
    const { agent, lines } = await enrolledAgent(new MemoryStateStore(), { random: () => 0.999999 });
    const started = Date.now();
    await eventually(() => agent.stats.heartbeats >= 3, 5_000, "three heartbeats");
    // First at once, then one every 1.2 s with this draw (1 s if the intervals were exact).
    expect(Date.now() - started).toBeGreaterThanOrEqual(2_200);
    expect(new Set(lines.filter((l) => l.event === "heartbeat").map((l) => l.nextInMs))).toEqual(new Set([1_200]));
  });

  it("out-of-band reports go out at once, and each draws the next periodic heartbeat anew (no lock-step after a fleet-wide change)", async () => {
    const { lines } = await enrolledAgent(new MemoryStateStore(), { random: () => 0 });
    const started = Date.now();
    server.setSpec("worker-0", 3);
    await eventually(() => server.device("worker-0").reports.some((r) => r.conditions.updating?.reason === "Updated"), 5_000, "Updated reported");
    // Heartbeats every 30 s here: the update's states were not held back for the period.
    expect(Date.now() - started).toBeLessThan(5_000);
    const next = () => lines.filter((l) => l.event === "heartbeat").map((l) => l.nextInMs);
    await eventually(() => next().length >= 5, 5_000, "the first heartbeat and the four states answered");
    // 0.8 × 30 s with this draw: rescheduled with the spread, not a whole interval in step.
    expect(new Set(next())).toEqual(new Set([24_000]));
  });

  it("survives dropped connections and 5xx on /work and /status, backing off", async () => {
    const { agent } = await enrolledAgent();
    server.fail({ path: /^\/work$/, status: 503, times: 3 });
    server.fail({ path: /^\/work$/, status: 0, drop: true, times: 2 });
    server.fail({ path: /^\/status$/, status: 500, times: 2 });
    // The poll in flight brings v5; the heartbeat it wakes and the next polls fail.
    server.setSpec("worker-0", 5);
    await eventually(() => server.device("worker-0").reports.some((r) => r.config.renderedVersion === 5), 10_000, "v5 reported");
    await eventually(() => agent.stats.errors >= 7, 10_000, "all injected failures met");
    // The poll loop is still alive.
    server.setSpec("worker-0", 6);
    await eventually(() => agent.appliedVersion === 6, 10_000, "v6 applied after failures");
    expect(agent.phase).toBe("polling");
    const failed = server.requests.filter((r) => r.path === "/work" && r.status !== 200);
    expect(failed.map((r) => r.status)).toEqual([503, 503, 503, 0, 0]);
  });

  it("honours Retry-After on 429", async () => {
    const { agent } = await enrolledAgent();
    server.fail({ path: /^\/work$/, status: 429, retryAfter: "1" });
    server.setSpec("worker-0", 1); // answers the poll in flight; the next one is limited
    await eventually(() => server.requests.some((r) => r.status === 429), 5_000, "429");
    server.setSpec("worker-0", 2); // so the poll after the wait answers at once
    await eventually(() => agent.appliedVersion === 2, 5_000, "v2");
    const polls = server.requests.filter((r) => r.path === "/work");
    const limited = polls.findIndex((r) => r.status === 429);
    const next = polls[limited + 1];
    expect(next).toBeDefined();
    expect((next?.at ?? 0) - (polls[limited]?.at ?? 0)).toBeGreaterThanOrEqual(950);
  });

  it("a status report refused for the server's load (429, issue 22 item 4) goes again after Retry-After, carrying what it had to say", async () => {
    const { agent } = await enrolledAgent();
    server.fail({ method: "POST", path: /^\/status$/, status: 429, retryAfter: "1" });
    // Applying v1 wakes a heartbeat at once: the one refused.
    server.setSpec("worker-0", 1);
    await eventually(() => server.requests.some((r) => r.path === "/status" && r.status === 429), 5_000, "429 on /status");
    await eventually(() => server.device("worker-0").reports.some((r) => r.config.renderedVersion === 1), 5_000, "v1 reported");
    expect(agent.appliedVersion).toBe(1);
    const reports = server.requests.filter((r) => r.path === "/status");
    const limited = reports.findIndex((r) => r.status === 429);
    const next = reports[limited + 1];
    expect(next?.status).toBe(200);
    // Back when told (+ up to 0.2 s of jitter), neither sooner nor after a backoff of its own.
    const gap = (next?.at ?? 0) - (reports[limited]?.at ?? 0);
    expect(gap).toBeGreaterThanOrEqual(950);
    expect(gap).toBeLessThan(1_500);
  });

  it("honours Retry-After on 503 too (its server's database unreachable): back when it says, not after a grown backoff", async () => {
    const { agent } = await enrolledAgent();
    server.fail({ path: /^\/work$/, status: 503, retryAfter: "1", times: 3 });
    server.setSpec("worker-0", 1);
    await eventually(() => server.requests.filter((r) => r.status === 503).length === 3, 10_000, "three 503s");
    server.setSpec("worker-0", 2);
    await eventually(() => agent.appliedVersion === 2, 5_000, "v2");
    const polls = server.requests.filter((r) => r.path === "/work");
    const first = polls.findIndex((r) => r.status === 503);
    const gaps = [1, 2, 3].map((i) => (polls[first + i]?.at ?? 0) - (polls[first + i - 1]?.at ?? 0));
    // Each retry after ≈ 1 s (+ up to 0.2 s jitter): a backoff would have grown past it.
    for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(950);
    for (const gap of gaps) expect(gap).toBeLessThan(1_500);
  });

  it("401 on /work: the credential was revoked, the agent ends with a non-zero exit", async () => {
    const { outcome } = await enrolledAgent();
    server.revoke("worker-0");
    const result = await outcome;
    expect(result).toMatchObject({ kind: "revoked", status: 401 });
    expect(exitCodeFor(result)).toBe(1);
  });

  it("401 on /status ends the agent too", async () => {
    const { outcome } = await enrolledAgent();
    server.fail({ path: /^\/status$/, status: 401 });
    server.setSpec("worker-0", 1); // wakes a heartbeat
    expect(await outcome).toMatchObject({ kind: "revoked", status: 401 });
  });

  it("stop() aborts the long-poll in flight at once", async () => {
    const { agent } = await enrolledAgent(new MemoryStateStore(), { timing: { ...FAST, pollWaitSeconds: 60 } });
    server.maxWaitSeconds = 60;
    await eventually(() => server.count("GET", /^\/work$/) === 0 && agent.stats.polls > 0, 5_000, "poll in flight");
    const started = Date.now();
    expect(await agent.stop()).toEqual({ kind: "stopped" });
    // At once, not at the end of its 60 s wait.
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it("a stop that arrives while the applications are starting still ends the agent at once", async () => {
    const store = new MemoryStateStore();
    const first = await enrolledAgent(store);
    await first.agent.stop();
    let release = () => {};
    const starting = new Promise<void>((resolve) => (release = resolve));
    let startCalled = false;
    const runtime = new NullRuntime();
    runtime.start = async () => {
      startCalled = true;
      await starting;
    };
    server.maxWaitSeconds = 60;
    const { agent } = makeAgent(store, { runtime, timing: { ...FAST, pollWaitSeconds: 60 } });
    const outcome = agent.start();
    await eventually(() => startCalled, 2_000, "applications starting");
    const stopping = agent.stop();
    release();
    const started = Date.now();
    expect(await stopping).toEqual({ kind: "stopped" });
    expect(await outcome).toEqual({ kind: "stopped" });
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it("does not spin while the server keeps offering an action whose report does not get through", async () => {
    const { agent, events } = await enrolledAgent();
    server.fail({ method: "PUT", path: /^\/actions\//, status: 503, times: 1_000 });
    const action = server.offerAction("worker-0", "noop");
    await new Promise((r) => setTimeout(r, 1_000));
    // heldWorkDelayMs is 300: a few polls a second, not thousands; the action is held once.
    const polls = server.requests.filter((r) => r.path === "/work").length;
    expect(polls).toBeLessThanOrEqual(8);
    expect(events().filter((e) => e === "action.received")).toHaveLength(1);
    expect(agent.phase).toBe("polling");
    expect(action.state).toBe("PENDING_SCHEDULE");
    // Not run before the server has its NEW report.
    expect(events()).not.toContain("action.started");
  });

  it("silence() stops polls and heartbeats for a while, then it comes back", async () => {
    server.heartbeatSeconds = 1;
    const { agent } = await enrolledAgent();
    agent.silence(3_000);
    await new Promise((r) => setTimeout(r, 100));
    const before = server.requests.length;
    await new Promise((r) => setTimeout(r, 1_000));
    expect(server.requests.length).toBe(before);
    await eventually(() => server.requests.length > before, 3_000, "back after silence");
  });
});

describe("decommission", () => {
  it("reports Started then Completed, deletes the spec, wipes the token and exits 0", async () => {
    const { agent, outcome, store, events } = await enrolledAgent();
    server.setSpec("worker-0", 4);
    await eventually(() => agent.appliedVersion === 4, 5_000, "v4");
    server.decommission("worker-0");
    const result = await outcome;
    expect(result).toEqual({ kind: "decommissioned", state: "Completed" });
    expect(exitCodeFor(result)).toBe(0);
    const states = server.device("worker-0").reports.flatMap((r) => (r.decommissioning ? [r.decommissioning.state] : []));
    expect(states).toEqual(["Started", "Completed"]);
    expect(await store.read("spec", AppliedSpecDocument)).toBeNull();
    const identity = await store.read("identity", IdentityDocument);
    expect(identity).toMatchObject({ deviceName: "worker-0", decommissioned: true });
    expect(identity?.token).toBeUndefined();
    expect(identity?.enrollment).toBeUndefined();
    expect(events()).toEqual(expect.arrayContaining(["decommission.requested", "decommission.started", "decommission.step", "decommission.completed", "decommission.credential-wiped"]));

    // A restart with that state directory does nothing.
    expect(await makeAgent(store).agent.start()).toEqual({ kind: "already-decommissioned" });
  });

  it("a failed step is reported as Error with its info, and the agent still stops using the token", async () => {
    const inner = new MemoryStateStore();
    const store: StateStore = {
      read: (name, schema) => inner.read(name, schema),
      write: (name, value) => inner.write(name, value),
      remove: async (name: DocumentName) => {
        if (name === "spec") throw new Error("disk on fire");
        return inner.remove(name);
      },
      close: () => inner.close(),
    };
    const { outcome } = await enrolledAgent(store);
    server.decommission("worker-0");
    expect(await outcome).toEqual({ kind: "decommissioned", state: "Error", info: "remove applied spec: disk on fire" });
    expect(server.device("worker-0").reports.at(-1)?.decommissioning).toEqual({ state: "Error", info: "remove applied spec: disk on fire" });
    expect((await inner.read("identity", IdentityDocument))?.token).toBeUndefined();
  });

  it("retries the Completed report through server errors", async () => {
    const { outcome } = await enrolledAgent();
    server.fail({ path: /^\/status$/, status: 503, times: 3 });
    server.decommission("worker-0");
    expect(await outcome).toMatchObject({ kind: "decommissioned", state: "Completed" });
    const states = server.device("worker-0").reports.flatMap((r) => (r.decommissioning ? [r.decommissioning.state] : []));
    expect(states).toEqual(["Started", "Completed"]);
  });

  it("after a crash between Completed and the wipe, a restart finishes the wipe on 401", async () => {
    const store = new MemoryStateStore();
    const first = await enrolledAgent(store);
    await first.agent.stop();
    const identity = await store.read("identity", IdentityDocument);
    await store.write("identity", { ...identity, decommissioning: true });
    server.revoke("worker-0"); // the server saw Completed and revoked the credential

    const outcome = await makeAgent(store).agent.start();
    expect(outcome).toEqual({ kind: "decommissioned", state: "Completed" });
    expect((await store.read("identity", IdentityDocument))?.decommissioned).toBe(true);
  });
});
