/**
 * The simulator against the real server (API only, fresh SQLite, auto-approve by label):
 * the statuses the server derives match the simulator's knobs.
 */
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type RunningServer } from "../server/main";
import { startSimulation, type SimulationHandle } from "./simulate";
import { eventually } from "./test-support/fake-server";

const ADMIN_PASSWORD = "simulation-test-password";
let server: RunningServer;
let tmp: string;
let simulation: SimulationHandle | null = null;

beforeAll(async () => {
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), "drover-simulation-"));
  server = await startServer({
    console: false,
    env: {
      PORT: "0",
      HOST: "127.0.0.1",
      DATABASE_URL: `file:${path.join(tmp, "drover.db")}`,
      DROVER_ADMIN_PASSWORD: ADMIN_PASSWORD,
      DROVER_AUTO_APPROVE: "simulated=true",
      DROVER_HEARTBEAT_SECONDS: "2",
      LOG_LEVEL: "warn",
    },
  });
});

afterAll(async () => {
  await simulation?.stop();
  await server?.close();
  await fs.rm(tmp, { recursive: true, force: true });
});

async function operator(route: string) {
  const login = await fetch(`${server.url}/api/v1/auth/token`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ username: "admin", password: ADMIN_PASSWORD }),
  });
  const { token } = (await login.json()) as { token: string };
  const res = await fetch(`${server.url}/api/v1${route}`, { headers: { authorization: `Bearer ${token}` } });
  return (await res.json()) as Record<string, unknown>;
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
});
