/**
 * The agent says what it will run, and the console warns before an action the device will
 * refuse (issue 10, finding 5), against a real server: the heartbeat's capabilities, the
 * create preview's refusals, an action's refusal until it is sent; and a real (simulated)
 * agent process reporting its allow-list.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "./helpers/server";
import { expectError, heartbeat } from "./helpers/devices";
import { createAction, enrollAs, getAction, offeredIds, setHealth } from "./helpers/actions";
import { createCallerFactory } from "../server/trpc/init";
import { appRouter } from "../server/trpc/router";
import { startSimulation, type SimulationHandle } from "../agent/simulate";

let s: TestServer;
const sims: SimulationHandle[] = [];
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await Promise.all(sims.map((x) => x.stop()));
  await s?.close();
});

const capabilities = { kinds: ["exec", "noop", "reboot", "sleep"], exec: { allow: ["uptime"] } };

async function preview(input: { device?: string; labelSelector?: string; kind: string; args?: Record<string, unknown> }) {
  const admin = await s.ctx.db.user.findUniqueOrThrow({ where: { username: "admin" }, select: { id: true } });
  const caller = createCallerFactory(appRouter)({ server: s.ctx, auth: s.auth, principal: { userId: admin.id, username: "admin", role: "admin", via: "token" } });
  return caller.actions.preview(input);
}

describe("capabilities in the heartbeat", () => {
  it("an exec off the allow-list: the preview names the devices that will refuse it and why; the action says so until it is sent", async () => {
    const [a, b, old] = await Promise.all([enrollAs(s, { labels: { cap: "t1" } }), enrollAs(s, { labels: { cap: "t1" } }), enrollAs(s, { labels: { cap: "t1" } })]);
    await setHealth(s, a, { capabilities });
    await setHealth(s, b, { capabilities: { ...capabilities, exec: { allow: ["uptime", "rm"] } } });
    await setHealth(s, old, {}); // an older agent: says nothing, so nothing is warned

    const p = await preview({ labelSelector: "cap=t1", kind: "exec", args: { command: "rm", args: ["-rf", "/tmp/x"] } });
    expect(p.total).toBe(3);
    expect(p.refusals).toEqual({ total: 1, devices: [{ name: a.name, reason: `command "rm" is not in its agent's allow-list (--allow-exec: uptime)` }] });
    expect((await preview({ labelSelector: "cap=t1", kind: "exec", args: { command: "uptime" } })).refusals.total).toBe(0);
    expect((await preview({ labelSelector: "cap=t1", kind: "k0supdate" })).refusals.total).toBe(2);

    const refused = await createAction(s, a.name, "exec", { args: { command: "rm" } });
    expect(refused.state).toBe("PENDING_APPROVE");
    expect(refused.refusal).toMatch(/"rm" is not in its agent's allow-list/);
    expect((await getAction(s, refused.id)).refusal).toBe(refused.refusal);
    const fine = await createAction(s, a.name, "noop");
    expect(fine.refusal).toBeNull();
    // Once sent, the agent answers for itself: no more warning.
    expect(await offeredIds(s, a)).toContain(fine.id);
    expect((await getAction(s, fine.id)).refusal).toBeNull();
  });

  it("a malformed capabilities field is 400 and changes nothing", async () => {
    const d = await enrollAs(s);
    await setHealth(s, d, { capabilities });
    const before = await s.ctx.db.device.findUniqueOrThrow({ where: { name: d.name }, select: { reported: true, lastSeen: true } });
    for (const bad of [{ kinds: "exec" }, { kinds: ["Not A Kind"] }, { kinds: ["exec"], exec: { allow: [""] } }, { kinds: Array.from({ length: 65 }, (_, i) => `k${i}`) }]) {
      expectError(await heartbeat(s, d, { capabilities: bad }), 400, "INVALID_REQUEST", /capabilities/);
    }
    expect(await s.ctx.db.device.findUniqueOrThrow({ where: { name: d.name }, select: { reported: true, lastSeen: true } })).toEqual(before);
  });

  it("simulated agents with --allow-exec report it, and refuse what is not on it", async () => {
    const prefix = `capsim-${process.pid}`;
    const sim = startSimulation({ server: s.url, agents: 1, prefix, labels: { cap: "sim" }, degraded: 0, error: 0, restarts: 0, flap: 0, silent: 0, seed: 5, allowExec: ["uptime"] });
    sims.push(sim);
    const pending = async () => (await s.api<{ items: { id: string; deviceName: string }[] }>("GET", "/enrollments?status=Pending&limit=1000")).body.items.find((e) => e.deviceName.startsWith(prefix));
    await expect.poll(pending, { timeout: 15_000 }).toBeTruthy();
    const req = (await pending())!;
    expect((await s.api("POST", `/enrollments/${req.id}/approve`, {})).status).toBe(200);
    await expect.poll(async () => (await preview({ device: req.deviceName, kind: "exec", args: { command: "rm" } })).refusals.total, { timeout: 20_000, interval: 300 }).toBe(1);
    expect((await preview({ device: req.deviceName, kind: "exec", args: { command: "uptime" } })).refusals.total).toBe(0);
  }, 40_000);
});
