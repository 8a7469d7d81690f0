/**
 * The real agent process runs node actions from the real server (seed 004, DESIGN.md §4,
 * AGENT_PROTOCOL.md "Action reports"), driven through the operator REST API: exec with the
 * allow-list, cancel of a running action, and a SIGKILL mid-action followed by a restart on
 * the same state directory.
 *
 * The agent processes preload test-support/healthy-host.ts (HEALTHY_HOST): the server only offers actions
 * to an Online device, and this machine's real load must not decide that.
 */
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../tests/helpers/server";
import { AgentProcess, HEALTHY_HOST, eventually, type LogLine } from "./test-support/agent-process";
import { RESTART_REASON } from "./journal";

interface ActionView {
  id: string;
  kind: string;
  state: string;
  origin: string;
  output?: string | null;
  error: string | null;
  updatedAt: string;
}

interface EventView {
  id: number;
  type: string;
  reason: string;
}

const HEALTHY = { preload: [HEALTHY_HOST] };
const FINISHED = ["DONE", "FAILED", "CANCELLED", "LOST"];

let server: TestServer;
let tmp: string;

beforeAll(async () => {
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), "drover-actions-process-"));
  server = await startTestServer({ DROVER_AUTO_APPROVE: "test=actions", DROVER_HEARTBEAT_SECONDS: "2" });
});

afterAll(async () => {
  AgentProcess.killAll();
  await server?.close();
  await fs.rm(tmp, { recursive: true, force: true });
});

function startAgent(name: string, stateDir: string, extra: string[] = []): AgentProcess {
  return new AgentProcess(["--server", server.url, "--name", name, "--labels", "test=actions", "--state-dir", stateDir, ...extra], HEALTHY);
}

async function online(name: string): Promise<void> {
  await eventually(
    async () => {
      const res = await server.api<{ summary: string }>("GET", `/devices/${name}`);
      return res.status === 200 && res.body.summary === "Online";
    },
    20_000,
    `${name} Online`,
  );
}

/** Creates an action (approving it when its kind needs approval) and returns its id. */
async function createAction(device: string, kind: string, args: Record<string, unknown>): Promise<string> {
  const res = await server.api<{ items: ActionView[] }>("POST", "/actions", { device, kind, args });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  const action = res.body.items[0];
  if (!action) throw new Error("no action created");
  if (action.state === "PENDING_APPROVE") {
    const approved = await server.api("POST", `/actions/${action.id}/approve`, {});
    expect(approved.status, JSON.stringify(approved.body)).toBe(200);
  }
  return action.id;
}

async function action(id: string): Promise<ActionView> {
  const res = await server.api<ActionView>("GET", `/actions/${id}`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

async function waitState(id: string, states: string[], timeoutMs = 20_000): Promise<ActionView> {
  let last: ActionView | undefined;
  return eventually(
    async () => {
      last = await action(id);
      return states.includes(last.state) ? last : undefined;
    },
    timeoutMs,
    `action ${id} to be ${states.join(" or ")} (last: ${last?.state})`,
  );
}

async function events(id: string): Promise<EventView[]> {
  const res = await server.api<{ items: EventView[] }>("GET", `/events?kind=Action&name=${id}&limit=1000`);
  expect(res.status).toBe(200);
  return res.body.items;
}

const aboutAction = (id: string) => (line: LogLine) => line.actionId === id;

describe("the agent process runs actions from the real server", () => {
  it("exec of an allowed command is DONE with its output; a command off the allow-list is FAILED", async () => {
    const agent = startAgent("act-exec", path.join(tmp, "act-exec"), ["--allow-exec", "echo"]);
    await agent.waitFor("approved");
    await online("act-exec");

    const hello = await createAction("act-exec", "exec", { command: "echo", args: ["hello"] });
    const done = await waitState(hello, FINISHED);
    expect(done).toMatchObject({ state: "DONE", origin: "user", error: null });
    expect(done.output).toBe("hello\n");

    const refused = await createAction("act-exec", "exec", { command: "uname", args: ["-a"] });
    expect(await waitState(refused, FINISHED)).toMatchObject({
      state: "FAILED",
      error: `command "uname" is not in the agent's allow-list (--allow-exec)`,
    });

    agent.kill("SIGTERM");
    expect(await agent.exited).toBe(0);
  });

  it("a sleep cancelled while RUNNING is stopped and CANCELLED", async () => {
    const agent = startAgent("act-cancel", path.join(tmp, "act-cancel"));
    await agent.waitFor("approved");
    await online("act-cancel");

    const id = await createAction("act-cancel", "sleep", { seconds: 30 });
    await waitState(id, ["RUNNING"]);
    const cancelledAt = Date.now();
    const res = await server.api("POST", `/actions/${id}/cancel`, {});
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(await waitState(id, FINISHED)).toMatchObject({ state: "CANCELLED" });
    expect(Date.now() - cancelledAt).toBeLessThan(10_000);
    expect(agent.events(aboutAction(id))).toContain("action.cancelled");

    agent.kill("SIGTERM");
    expect(await agent.exited).toBe(0);
  });

  it("killed with SIGKILL mid-sleep and restarted: that action is FAILED with the reason, the queue after it runs, a DONE one is not run again", async () => {
    const stateDir = path.join(tmp, "act-restart");
    const first = startAgent("act-restart", stateDir, ["--allow-exec", "echo"]);
    await first.waitFor("approved");
    await online("act-restart");

    const before = await createAction("act-restart", "exec", { command: "echo", args: ["before"] });
    const doneBefore = await waitState(before, FINISHED);
    expect(doneBefore).toMatchObject({ state: "DONE", output: "before\n" });
    const eventsBefore = await events(before);

    const sleeping = await createAction("act-restart", "sleep", { seconds: 30 });
    await waitState(sleeping, ["RUNNING"]);
    const queued = await createAction("act-restart", "exec", { command: "echo", args: ["after"] });
    // Queued on the agent (NEW) behind the running sleep: one action at a time.
    await waitState(queued, ["NEW"]);
    await first.waitFor("action.received", 10_000, aboutAction(queued));

    first.kill("SIGKILL");
    expect(await first.exited).toBe(null);

    const second = startAgent("act-restart", stateDir, ["--allow-exec", "echo"]);
    await second.waitFor("resumed");
    expect(await waitState(sleeping, FINISHED)).toMatchObject({ state: "FAILED", error: RESTART_REASON });
    expect(await waitState(queued, FINISHED)).toMatchObject({ state: "DONE", output: "after\n" });

    // The DONE action was not run, or reported, again.
    expect(second.events(aboutAction(before))).not.toContain("action.started");
    expect(second.events(aboutAction(sleeping))).not.toContain("action.started");
    expect(second.lines.filter((l) => l.event === "action.recovered").map((l) => [l.actionId, l.state])).toEqual([[sleeping, "FAILED"]]);
    const after = await action(before);
    expect(after).toMatchObject({ state: "DONE", output: "before\n", updatedAt: doneBefore.updatedAt });
    expect(await events(before)).toHaveLength(eventsBefore.length);
    expect((await events(queued)).filter((e) => e.reason === "RUNNING")).toHaveLength(1);

    second.kill("SIGTERM");
    expect(await second.exited).toBe(0);
  });
});
