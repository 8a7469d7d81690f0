import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { assignProfiles, deviceNames, seededRandom, simulatedApplications, simulatedHealth, startSimulation, type Profile, type SimulationHandle } from "./simulation";
import { eventually, FakeServer } from "./test-support/fake-server";

describe("profiles", () => {
  const shares = { degraded: 0.1, error: 0.02, restarts: 0.05, flap: 0.01, silent: 0.01 };

  it("assigns exact shares, error and degraded never overlapping", () => {
    const profiles = assignProfiles(1_000, shares, seededRandom(1));
    expect(profiles.filter((p) => p.resources === "error")).toHaveLength(20);
    expect(profiles.filter((p) => p.resources === "degraded")).toHaveLength(100);
    expect(profiles.filter((p) => p.restarts)).toHaveLength(50);
    expect(profiles.filter((p) => p.flap)).toHaveLength(10);
    expect(profiles.filter((p) => p.silent)).toHaveLength(10);
  });

  it("is repeatable with a seed", () => {
    expect(assignProfiles(100, shares, seededRandom(7))).toEqual(assignProfiles(100, shares, seededRandom(7)));
    expect(assignProfiles(100, shares, seededRandom(7))).not.toEqual(assignProfiles(100, shares, seededRandom(8)));
  });

  const base: Profile = { resources: "healthy", resource: "disk", restarts: false, flap: false, silent: false };

  it("reports the profile's resources", async () => {
    expect(await simulatedHealth(base, Math.random).resources()).toEqual({ cpu: "Healthy", memory: "Healthy", disk: "Healthy" });
    expect((await simulatedHealth({ ...base, resources: "degraded" }, Math.random).resources()).disk).toBe("Degraded");
    expect((await simulatedHealth({ ...base, resources: "error" }, Math.random).resources()).disk).toBe("Critical");
    expect((await simulatedHealth({ ...base, resources: "error", resource: "memory" }, Math.random).resources()).memory).toBe("Error");
  });

  it("flapping toggles cpu between Healthy and Degraded", async () => {
    const health = simulatedHealth({ ...base, flap: true }, seededRandom(3));
    const seen = new Set<string>();
    for (let i = 0; i < 50; i++) seen.add((await health.resources()).cpu);
    expect([...seen].sort()).toEqual(["Degraded", "Healthy"]);
  });

  it("restarting applications report growing restart counts and sometimes Starting or Error", () => {
    const apps = simulatedApplications({ ...base, restarts: true }, seededRandom(5));
    const reports = Array.from({ length: 100 }, () => apps(null));
    const last = reports.at(-1) ?? [];
    expect(last.map((a) => a.name)).toEqual(["web", "metrics"]);
    expect(last.reduce((n, a) => n + a.restarts, 0)).toBeGreaterThan(20);
    const statuses = new Set(reports.flatMap((r) => r.map((a) => a.status)));
    expect(statuses).toEqual(new Set(["Running", "Starting", "Error"]));
    // Counts never go down.
    for (let i = 1; i < reports.length; i++) {
      for (const [j, app] of (reports[i] ?? []).entries()) expect(app.restarts).toBeGreaterThanOrEqual(reports[i - 1]?.[j]?.restarts ?? 0);
    }
  });

  it("healthy applications stay Running with no restarts, named after the spec when it has some", () => {
    const apps = simulatedApplications(base, Math.random);
    const spec = { renderedVersion: 1, templateVersion: "t", version: "1", config: { files: [] }, applications: [{ name: "api", command: ["/bin/api"] }], hooks: {} };
    expect(apps(spec)).toEqual([{ name: "api", status: "Running", restarts: 0 }]);
  });

  it("names devices zero-padded", () => {
    expect(deviceNames("sim", 3)).toEqual(["sim-00001", "sim-00002", "sim-00003"]);
    expect(deviceNames("x", 123_456).at(-1)).toBe("x-123456");
  });
});

describe("startSimulation against a fake server", () => {
  let server: FakeServer;
  let simulation: SimulationHandle | null = null;
  beforeEach(async () => {
    server = await FakeServer.start();
    server.autoApprove = true;
    server.heartbeatSeconds = 1;
  });
  afterEach(async () => {
    await simulation?.stop();
    simulation = null;
    await server.close();
  });

  it("runs a few hundred agents: ramp-up, enrollment, concurrent long-polls, heartbeats, knobs", async () => {
    // Only the first heartbeat matters here, and it goes out as soon as an agent polls. At the
    // suite's 1 s interval, 300 agents send 300 reports a second for as long as the test
    // runs: 0.24 CPU-s every second in this process (measured: 242 ms/s against 1.4 at 30 s),
    // most of what a loaded full run leaves it, so the last agents' first reports and the
    // spec below queued behind the others' periodic ones (this test's flake, issue 21).
    server.heartbeatSeconds = 60;
    simulation = startSimulation({
      server: server.url,
      agents: 300,
      rate: 3_000,
      degraded: 0.1,
      error: 0.02,
      // No silent share (its own test is below): the default 1 % goes quiet 30-120 s after
      // start for 6 minutes (seed 42: sim-00111 at 36.8 s), which a loaded run reaches, and
      // a silent agent neither reports nor takes the spec.
      silent: 0,
      seed: 42,
      timing: { pollWaitSeconds: 20 },
    });
    await simulation.rampedUp;
    await eventually(() => simulation?.stats().polling === 300 && server.devices.size === 300, 20_000, "all polling");
    await eventually(() => [...server.devices.values()].every((d) => d.reports.length > 0), 10_000, "a heartbeat from each");

    // Every agent holds a poll at the same time, so a spec for all of them lands at once.
    await eventually(() => server.heldPolls === 300, 10_000, "300 polls held at once");
    for (const name of server.devices.keys()) server.setSpec(name, 2);
    await eventually(() => simulation?.stats().specsApplied === 300, 10_000, "all applied");

    const latest = [...server.devices.values()].map((d) => d.reports.at(-1));
    const degraded = latest.filter((r) => r && Object.values(r.resources).includes("Degraded")).length;
    const bad = latest.filter((r) => r && Object.values(r.resources).some((s) => s === "Error" || s === "Critical")).length;
    expect(bad).toBe(6);
    expect(degraded).toBeGreaterThanOrEqual(30); // 30, plus any flapping ones
    expect(server.device("sim-00001").labels).toEqual({ simulated: "true" });

    const stats = simulation.stats();
    expect(stats).toMatchObject({ agents: 300, started: 300, enrolled: 300, approved: 300, failed: 0 });
    const stopped = Date.now();
    const final = await simulation.stop();
    simulation = null;
    // Stopping aborts the 300 held polls rather than waiting out their 20 s: well under that.
    // Not a tighter bound: it is CPU-bound, 2.6 s for 300 agents in a loaded run (was < 2 s here).
    expect(Date.now() - stopped).toBeLessThan(10_000);
    expect(final.polling).toBe(0);
  });

  it("silent agents stop reporting for a while and come back", async () => {
    simulation = startSimulation({ server: server.url, agents: 4, silent: 0.5, silentSeconds: 3, activeSeconds: [0.5, 0.5], seed: 1 });
    await eventually(() => simulation?.stats().silent === 2, 10_000, "two agents silent");
    const silent = simulation.agents.filter((a) => a.profile.silent).map((a) => a.name);
    const counts = silent.map((name) => server.device(name).reports.length);
    await new Promise((r) => setTimeout(r, 1_000));
    expect(silent.map((name) => server.device(name).reports.length)).toEqual(counts);
    await eventually(() => silent.every((name, i) => server.device(name).reports.length > (counts[i] ?? 0)), 5_000, "back");
  });

  it("virtual agents run actions through the simulated executors: exec never spawns, a share fails", async () => {
    simulation = startSimulation({ server: server.url, agents: 4, seed: 5, actionFailure: 0.5, actionSeconds: [0.01, 0.05] });
    await eventually(() => simulation?.stats().polling === 4, 10_000, "polling");
    const actions = [...server.devices.keys()].flatMap((name) =>
      Array.from({ length: 5 }, (_, i) => server.offerAction(name, "exec", { command: "/definitely/not/on/this/host", args: [String(i)] })),
    );
    const finished = () => actions.filter((a) => a.state === "DONE" || a.state === "FAILED").length;
    await eventually(() => finished() === actions.length, 10_000, "every action finished");
    const failed = actions.filter((a) => a.state === "FAILED");
    // About half, by the seeded draw; never all or none of 20.
    expect(failed.length).toBeGreaterThan(2);
    expect(failed.length).toBeLessThan(18);
    expect(failed.every((a) => a.error === "simulated failure")).toBe(true);
    expect(actions.filter((a) => a.state === "DONE").every((a) => /^\[simulated\] \/definitely\/not\/on\/this\/host \d/.test(a.output ?? ""))).toBe(true);
    expect(simulation.stats()).toMatchObject({ actionsDone: 20 - failed.length, actionsFailed: failed.length, actionsCancelled: 0 });
  });

  it("virtual agents apply plan signals: --plan-apply-seconds, and failures on the nodes the knobs name", async () => {
    const knobs = { failDownloadNodes: ["sim-00001"], badSha256Nodes: ["sim-00002"], failApplyNodes: ["*3"] };
    simulation = startSimulation({ server: server.url, agents: 5, seed: 2, planApplySeconds: 0.1, ...knobs });
    await eventually(() => simulation?.stats().polling === 5, 10_000, "polling");
    const sha256 = "c".repeat(64);
    const actions = [...server.devices.keys()].sort().map((name) =>
      server.offerAction(name, "k0supdate", { planId: "p1", command: 0, version: "v1.31.0+k0s.0", platform: "linux-amd64", url: "https://files.example/k0s?token=t", sha256 }),
    );
    await eventually(() => actions.every((a) => a.state === "DONE" || a.state === "FAILED"), 10_000, "every update finished");
    expect(actions.map((a) => [a.device, a.state, a.error])).toEqual([
      ["sim-00001", "FAILED", "download failed: simulated failure for sim-00001 from https://files.example/k0s"],
      ["sim-00002", "FAILED", expect.stringMatching(new RegExp(`^sha256 mismatch: expected ${sha256}, got [0-9a-f]{64}$`))],
      ["sim-00003", "FAILED", 'update command "simulated" exited with code 1: simulated failure applying k0supdate v1.31.0+k0s.0 on sim-00003'],
      ["sim-00004", "DONE", undefined],
      ["sim-00005", "DONE", undefined],
    ]);
  });

  it("counts decommissioned agents (over global fetch)", async () => {
    simulation = startSimulation({ server: server.url, agents: 3, seed: 3, transport: "fetch" });
    await eventually(() => simulation?.stats().polling === 3, 10_000, "polling");
    server.decommission("sim-00002");
    await eventually(() => simulation?.stats().decommissioned === 1, 10_000, "decommissioned");
    expect(simulation.stats().polling).toBe(2);
  });
});
