/**
 * The simulator against the real server (API only, fresh SQLite, auto-approve by label):
 * the statuses the server derives match the simulator's knobs.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../tests/helpers/server";
import { startSimulation, type SimulationHandle } from "./simulate";
import { eventually } from "./test-support/fake-server";

let server: TestServer;
let simulation: SimulationHandle | null = null;

beforeAll(async () => {
  server = await startTestServer({ DROVER_AUTO_APPROVE: "simulated=true", DROVER_HEARTBEAT_SECONDS: "2", LOG_LEVEL: "warn" });
});

afterAll(async () => {
  await simulation?.stop();
  await server?.close();
});

async function operator(route: string, method = "GET", body?: unknown) {
  return (await server.api<Record<string, unknown>>(method, route, body)).body;
}

describe("the simulator against the real server", () => {
  it("enrolls a fleet that the server sees with the statuses the knobs ask for", async () => {
    simulation = startSimulation({ server: server.url, agents: 40, rate: 100, degraded: 0.25, error: 0.1, restarts: 0.2, flap: 0, silent: 0, seed: 11 });
    await eventually(() => simulation?.stats().polling === 40, 30_000, "all 40 agents polling");
    const summaries = await eventually(async () => {
      const list = (await operator("/devices?labelSelector=simulated%3Dtrue&limit=100")) as { items?: { summary: string; applicationSummary: string }[] };
      const items = list.items ?? [];
      return items.length === 40 && items.every((d) => d.summary !== "Offline") ? items : undefined;
    }, 30_000, "40 devices reporting");
    const by = (key: "summary" | "applicationSummary", value: string) => summaries.filter((d) => d[key] === value).length;
    expect(by("summary", "Error")).toBe(4);
    expect(by("summary", "Degraded")).toBe(10);
    expect(by("summary", "Online")).toBe(26);
    // Applications: healthy ones Running; restarting ones now and then Starting or Error.
    expect(by("applicationSummary", "Healthy") + by("applicationSummary", "Degraded") + by("applicationSummary", "Error")).toBe(40);
    expect(by("applicationSummary", "Healthy")).toBeGreaterThanOrEqual(32);

    const stopped = await simulation.stop();
    simulation = null;
    expect(stopped).toMatchObject({ started: 40, approved: 40, failed: 0, revoked: 0 });
  });

  it("runs the actions the server schedules: exec simulated, a share failing, none LOST", async () => {
    simulation = startSimulation({
      server: server.url,
      agents: 6,
      prefix: "simact",
      labels: { simulated: "true", fleet: "act" },
      degraded: 0,
      error: 0,
      restarts: 0,
      flap: 0,
      silent: 0,
      actionFailure: 0.5,
      actionSeconds: [0.01, 0.05],
      seed: 12,
    });
    await eventually(() => simulation?.stats().polling === 6, 30_000, "all 6 agents polling");
    await eventually(async () => {
      const list = (await operator("/devices?labelSelector=fleet%3Dact&limit=100")) as { items?: { summary: string }[] };
      return list.items?.length === 6 && list.items.every((d) => d.summary === "Online");
    }, 30_000, "6 devices Online");

    const created: string[] = [];
    for (const [kind, args] of [
      ["noop", {}],
      ["exec", { command: "/not/on/this/host", args: ["--simulated"] }],
      ["noop", {}],
    ] as const) {
      const res = (await operator("/actions", "POST", { labelSelector: "fleet=act", kind, args })) as { items: { id: string; state: string }[] };
      const pending = res.items.filter((a) => a.state === "PENDING_APPROVE").map((a) => a.id);
      if (pending.length > 0) await operator("/actions/approve", "POST", { ids: pending });
      created.push(...res.items.map((a) => a.id));
    }
    expect(created).toHaveLength(18);
    const finished = await eventually(async () => {
      const list = (await operator("/actions?labelSelector=fleet%3Dact&limit=100")) as { items: { id: string; kind: string; state: string; error: string | null }[] };
      return list.items.length === 18 && list.items.every((a) => ["DONE", "FAILED", "CANCELLED", "LOST"].includes(a.state)) ? list.items : undefined;
    }, 30_000, "18 actions finished");
    const failed = finished.filter((a) => a.state === "FAILED");
    expect(finished.filter((a) => a.state === "DONE").length + failed.length).toBe(18);
    expect(failed.length).toBeGreaterThan(0);
    expect(failed.length).toBeLessThan(18);
    expect(failed.every((a) => a.error === "simulated failure")).toBe(true);
    const exec = (await operator(`/actions/${finished.find((a) => a.kind === "exec" && a.state === "DONE")?.id ?? ""}`)) as { output?: string };
    expect(exec.output).toMatch(/^\[simulated\] \/not\/on\/this\/host --simulated\n/);
    expect(simulation.stats()).toMatchObject({ actionsDone: 18 - failed.length, actionsFailed: failed.length });
  });
});
