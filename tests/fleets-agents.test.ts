/**
 * Fleets with real agents (the simulator's, in-process, over HTTP): devices enrolled by an
 * auto-approve rule join the fleet their labels select, apply its spec and become UpToDate;
 * a template change reaches them in their held long-polls and they converge again; a version
 * that fails to apply leaves them OutOfDate with the failure as the reason.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { startTestServer, type TestServer } from "./helpers/server";
import { eventually } from "./helpers/devices";
import { startSimulation, type SimulationHandle } from "../agent/simulate";

const AGENTS = 8;
let s: TestServer;
let simulation: SimulationHandle | null = null;

beforeAll(async () => {
  s = await startTestServer({ DROVER_AUTO_APPROVE: "simulated=true", DROVER_HEARTBEAT_SECONDS: "1", DROVER_SWEEP_SECONDS: "1", LOG_LEVEL: "warn" });
});
afterAll(async () => {
  await simulation?.stop();
  await s?.close();
});

interface FleetStatus {
  status: { templateVersion: string; devices: { total: number; upToDate: number; updating: number; outOfDate: number; unknown: number } };
}
interface DeviceRow {
  name: string;
  fleet: string | null;
  updatedStatus: string;
  updatedInfo: string | null;
}

const body = (version: string) => ({
  metadata: { name: "sim-edge" },
  spec: {
    selector: { matchLabels: { site: "sim-edge" } },
    template: { spec: { version, config: { files: [{ path: "/etc/edge.conf", content: `version=${version}\n` }] }, applications: [{ name: "web", command: ["/usr/bin/web"] }] } },
  },
});

const fleetStatus = async () => (await s.api<FleetStatus>("GET", "/fleets/sim-edge")).body.status;
const members = async () => (await s.api<{ items: DeviceRow[] }>("GET", "/devices?fleet=sim-edge&limit=100")).body.items;

it("agents join, apply the fleet's spec, and follow a template change to UpToDate; a failing version shows why", async () => {
  expect((await s.api("POST", "/fleets", body("1.0.0"))).status).toBe(201);
  simulation = startSimulation({
    server: s.url,
    agents: AGENTS,
    prefix: "fleetsim",
    labels: { simulated: "true", site: "sim-edge" },
    degraded: 0,
    error: 0,
    restarts: 0,
    flap: 0,
    silent: 0,
    failVersions: ["3.0.0"],
    seed: 7,
  });
  await eventually(async () => {
    const st = await fleetStatus();
    return st.devices.total === AGENTS && st.devices.upToDate === AGENTS ? st : undefined;
  }, 30_000);

  // A new template: every member gets it in its held poll and reports it applied.
  const started = Date.now();
  expect((await s.api<FleetStatus>("PUT", "/fleets/sim-edge", body("2.0.0"))).body.status.templateVersion).toBe("2");
  const converged = await eventually(async () => {
    const st = await fleetStatus();
    return st.devices.upToDate === AGENTS ? st : undefined;
  }, 30_000);
  expect(converged.templateVersion).toBe("2");
  expect(Date.now() - started).toBeLessThan(30_000);
  const rows = await members();
  expect(rows).toHaveLength(AGENTS);
  for (const d of rows) {
    const detail = (await s.api<{ renderedVersion: number; templateVersion: string; reported: { config: { renderedVersion: number } } }>("GET", `/devices/${d.name}`)).body;
    expect(detail).toMatchObject({ renderedVersion: 2, templateVersion: "2", reported: { config: { renderedVersion: 2 } } });
  }

  // A version the agents fail to apply: OutOfDate, each with the reason.
  await s.api("PUT", "/fleets/sim-edge", body("3.0.0"));
  const failed = await eventually(async () => {
    const list = await members();
    return list.every((d) => d.updatedStatus === "OutOfDate" && d.updatedInfo?.includes("the last update failed")) ? list : undefined;
  }, 30_000);
  expect(failed[0]!.updatedInfo).toMatch(/^running renderedVersion 2 of 3; the last update failed/);
  // The fleet controller recounts shortly after the devices' reports.
  await eventually(async () => ((await fleetStatus()).devices.outOfDate === AGENTS ? true : undefined), 10_000);
});
