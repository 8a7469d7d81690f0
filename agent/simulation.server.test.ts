/**
 * The simulator against the real server (API only, fresh SQLite, auto-approve by label):
 * the statuses the server derives match the simulator's knobs; over TLS, the agents trust the
 * server's CA (the session resumed after a restart: server/tls/session-tickets.test.ts).
 */
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RenderedSpec, StatusReport } from "../lib/protocol";
import { topics } from "../server/bus";
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

  it("virtual devices follow the update states, with versions that crash-loop, fail to apply, or apply slowly", async () => {
    await simulation?.stop();
    simulation = startSimulation({
      server: server.url,
      agents: 3,
      prefix: "simupd",
      labels: { simulated: "true", fleet: "upd" },
      degraded: 0,
      error: 0,
      restarts: 0,
      flap: 0,
      silent: 0,
      crashVersions: ["2.0.0"],
      crashSeconds: 1,
      failVersions: ["3.0.0"],
      slowApplySeconds: 1,
      slowVersions: ["4.0.0"],
      seed: 13,
    });
    await eventually(() => simulation?.stats().polling === 3, 30_000, "all 3 agents polling");
    type View = { updatedStatus: string; updatingReason: string | null; applicationSummary: string; reported: StatusReport | null };
    const view = async (name: string) => (await server.api<View>("GET", `/devices/${name}`)).body;
    await eventually(async () => (await Promise.all(["simupd-00001", "simupd-00002", "simupd-00003"].map(view))).every((d) => d.reported !== null), 30_000, "reports");
    const render = async (name: string, version: string) => {
      const spec: RenderedSpec = { renderedVersion: 1, templateVersion: `t-${version}`, version, config: { files: [] }, applications: [{ name: "api", command: ["/srv/api"] }], hooks: {} };
      const row = await server.ctx.db.device.update({ where: { name }, data: { spec: JSON.stringify(spec), renderedVersion: 1, templateVersion: spec.templateVersion } });
      server.ctx.bus.publish(topics.device(row.id), { at: Date.now() });
    };
    await render("simupd-00001", "2.0.0");
    await render("simupd-00002", "3.0.0");
    await render("simupd-00003", "4.0.0");

    // Slow: the server sees it Updating for a while (a state a second), then UpToDate.
    const updating = await eventually(async () => {
      const d = await view("simupd-00003");
      return d.updatedStatus === "Updating" ? d : undefined;
    }, 10_000, "simupd-00003 Updating");
    expect(["Preparing", "ReadyToUpdate", "ApplyingUpdate"]).toContain(updating.updatingReason);
    await eventually(async () => (await view("simupd-00003")).updatedStatus === "UpToDate", 15_000, "simupd-00003 UpToDate");

    // Fail: rolled back, Error with the reason, still at renderedVersion 0.
    const failed = await view("simupd-00002");
    expect(failed).toMatchObject({ updatedStatus: "OutOfDate", updatingReason: "Error" });
    expect(failed.reported?.conditions.updating?.info).toBe("simulated failure applying version 3.0.0; rolled back to renderedVersion 0");
    expect(failed.reported?.config.renderedVersion).toBe(0);

    // Crash: applied, then its application's restarts grow.
    const crashing = await eventually(async () => {
      const d = await view("simupd-00001");
      return (d.reported?.applications[0]?.restarts ?? 0) >= 3 ? d : undefined;
    }, 15_000, "simupd-00001 restarting");
    expect(crashing.updatedStatus).toBe("UpToDate");
    expect(crashing.reported?.applications[0]?.name).toBe("api");
    expect(simulation.stats()).toMatchObject({ specsApplied: 2, specsFailed: 1, updating: 0 });
  });
});

describe("the simulator over TLS (issue 23)", () => {
  it("trusts the server's CA from a file (--ca-file) and holds its polls over TLS", async () => {
    const secure = await startTestServer({ DROVER_TLS: "auto", DROVER_AUTO_APPROVE: "simulated=true", LOG_LEVEL: "warn" });
    const caFile = path.join(secure.dir, "ca.pem");
    fs.writeFileSync(caFile, secure.ctx.tls.caPem!);
    const tlsSimulation = startSimulation({ server: secure.url, agents: 5, prefix: "simtls", rate: 100, degraded: 0, error: 0, restarts: 0, flap: 0, silent: 0, seed: 3, trust: { caFile } });
    try {
      expect(secure.url).toMatch(/^https:/);
      await eventually(async () => (await secure.ctx.metrics.heldPolls.get()).values[0]?.value === 5, 30_000, "5 polls held over TLS");
      const handshakes = (await secure.ctx.metrics.tlsHandshakes.get()).values;
      expect(handshakes.reduce((sum, v) => sum + v.value, 0)).toBeGreaterThanOrEqual(1);
      expect(tlsSimulation.stats()).toMatchObject({ approved: 5, polling: 5, failed: 0, revoked: 0 });
    } finally {
      await tlsSimulation.stop();
      await secure.close();
    }
  });
});
