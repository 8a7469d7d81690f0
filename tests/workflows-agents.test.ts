/**
 * The diamond with real simulated agents (issue 9): four groups of agents enrolled by
 * DROVER_AUTO_APPROVE, each step a noop job on one group by label selector; the workflow runs
 * to Succeeded through the agents' own polls and reports, in dependency order.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "./helpers/server";
import { eventually } from "./helpers/devices";
import { startSimulation, type SimulationHandle } from "../agent/simulate";
import type { WorkflowObject } from "../server/workflows/workflows";

let s: TestServer;
const simulations: SimulationHandle[] = [];

beforeAll(async () => {
  s = await startTestServer({ DROVER_AUTO_APPROVE: "test=workflows-agents", DROVER_HEARTBEAT_SECONDS: "1", DROVER_SWEEP_SECONDS: "0.5", LOG_LEVEL: "warn" });
}, 60_000);

afterAll(async () => {
  await Promise.all(simulations.map((sim) => sim.stop()));
  await s?.close();
}, 30_000);

describe("the diamond with simulated agents", () => {
  it("runs A, then B and C, then D, to Succeeded", async () => {
    for (const group of ["a", "b", "c", "d"]) {
      simulations.push(
        await startSimulation({ server: s.url, agents: 2, prefix: `wfa-${group}`, labels: { test: "workflows-agents", group }, degraded: 0, error: 0, restarts: 0, flap: 0, silent: 0, seed: 9 }),
      );
    }
    await eventually(async () => {
      const res = await s.api<{ items: unknown[] }>("GET", `/devices?labelSelector=${encodeURIComponent("test=workflows-agents")}&summary=Online&lifecycle=Enrolled&limit=500`);
      return res.body.items.length === 8 ? true : undefined;
    }, 30_000);
    const step = (group: string, dependencies?: string[]) => ({
      ...(dependencies ? { dependencies } : {}),
      jobTemplate: { kind: "noop", targets: { selector: { matchLabels: { test: "workflows-agents", group } } } },
    });
    const created = await s.api<WorkflowObject>("POST", "/workflows", {
      metadata: { name: "diamond-agents" },
      spec: { steps: { A: step("a"), B: step("b", ["A"]), C: step("c", ["A"]), D: step("d", ["B", "C"]) } },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const done = await eventually(async () => {
      const w = (await s.api<WorkflowObject>("GET", "/workflows/diamond-agents")).body;
      return w.status.phase === "Running" ? undefined : w;
    }, 30_000);
    expect(done.status.phase).toBe("Succeeded");
    const st = done.status.statuses;
    for (const name of ["A", "B", "C", "D"]) expect(st[name]).toMatchObject({ phase: "Succeeded", targets: { total: 2, done: 2, failed: 0 } });
    // Order: B and C started after A finished; D after both.
    expect(Date.parse(st.B!.startedAt!)).toBeGreaterThanOrEqual(Date.parse(st.A!.finishedAt!));
    expect(Date.parse(st.C!.startedAt!)).toBeGreaterThanOrEqual(Date.parse(st.A!.finishedAt!));
    expect(Date.parse(st.D!.startedAt!)).toBeGreaterThanOrEqual(Math.max(Date.parse(st.B!.finishedAt!), Date.parse(st.C!.finishedAt!)));
  }, 60_000);
});
