/**
 * The agent runs actions (seed 004, AGENT_PROTOCOL.md "Action reports"): the Agent with its
 * action queue against the fake server (test-support/fake-server.ts), which keeps actions
 * by the server's state table and marks what a heartbeat leaves out LOST.
 */
import pino from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { Agent, type AgentOptions } from "./agent";
import { ProtocolClient } from "./client";
import { builtinExecutors, registry, type Executor } from "./executors";
import { staticHealth } from "./health";
import { ActionJournalDocument, RESTART_REASON } from "./journal";
import { MemoryStateStore, type StateStore } from "./state";
import { eventually, FakeServer, type FakeAction } from "./test-support/fake-server";
import { FAST } from "./test-support/fast-timing";


let server: FakeServer;
const running: Agent[] = [];

beforeEach(async () => {
  server = await FakeServer.start();
  server.heartbeatSeconds = 30;
  server.autoApprove = true;
});
afterEach(async () => {
  await Promise.all(running.splice(0).map((a) => a.stop()));
  await server.close();
});

interface LogLine {
  event?: string;
  actionId?: string;
  [key: string]: unknown;
}

const EXECUTORS = builtinExecutors({ allowExec: ["echo", "sh"], killGraceMs: 300, simulatedRebootSeconds: 0.3 });

async function startAgent(store: StateStore = new MemoryStateStore(), options: Partial<AgentOptions> = {}) {
  const lines: LogLine[] = [];
  const logger = pino({ level: "debug" }, { write: (line: string) => lines.push(JSON.parse(line) as LogLine) });
  const agent = new Agent({
    identity: { name: "worker-0", labels: {}, platform: "linux-amd64", role: "worker", agentVersion: "0.1.0" },
    client: new ProtocolClient({ serverUrl: server.url }),
    store,
    health: staticHealth({ cpu: "Healthy", memory: "Healthy", disk: "Healthy" }),
    logger,
    timing: FAST,
    executors: EXECUTORS,
    ...options,
  });
  running.push(agent);
  const outcome = agent.start();
  await eventually(() => server.devices.get("worker-0")?.reports.length, 5_000, "first heartbeat");
  const events = (actionId?: string) => lines.filter((l) => actionId === undefined || l.actionId === actionId).map((l) => l.event);
  return { agent, lines, events, outcome, store };
}

const ended = (action: FakeAction) => ["DONE", "FAILED", "CANCELLED", "LOST"].includes(action.state);
const waitEnded = (action: FakeAction, ms = 5_000) => eventually(() => ended(action), ms, `action ${action.kind} to end (state ${action.state})`);
const at = (seconds: number) => new Date(Date.parse("2030-01-01T00:00:00Z") + seconds * 1000).toISOString();
const reported = (action: FakeAction) => action.reports.filter((r) => r.status === 200).map((r) => r.state);

describe("running actions", () => {
  it("reports NEW, RUNNING, then DONE with the output", async () => {
    const { events } = await startAgent();
    const action = server.offerAction("worker-0", "exec", { command: "echo", args: ["hello"] });
    await waitEnded(action);
    expect(action.state).toBe("DONE");
    expect(action.output).toBe("hello\n");
    expect(reported(action)).toEqual(["NEW", "RUNNING", "DONE"]);
    expect(events(action.id)).toEqual(expect.arrayContaining(["action.received", "action.started", "action.done"]));
  });

  it("runs one at a time, oldest createdAt first, whatever order they arrive in", async () => {
    const order: string[] = [];
    const probe: Executor = {
      kind: "probe",
      idempotent: true,
      argsSchema: z.object({ name: z.string() }),
      async run({ name }) {
        order.push(`start ${name}`);
        await new Promise((r) => setTimeout(r, 50));
        order.push(`end ${name}`);
        return { output: name };
      },
    };
    const { agent } = await startAgent(new MemoryStateStore(), { executors: registry([probe]) });
    // Offered in one answer, newest first.
    const actions = [3, 1, 2].map((n) => server.offerAction("worker-0", "probe", { name: `a${n}` }, at(n)));
    for (const action of actions) await waitEnded(action);
    expect(order).toEqual(["start a1", "end a1", "start a2", "end a2", "start a3", "end a3"]);
    expect(actions.map((a) => a.state)).toEqual(["DONE", "DONE", "DONE"]);
    expect(agent.actionStats).toMatchObject({ received: 3, done: 3 });
  });

  it("the heartbeat lists the whole queue; nothing goes LOST", async () => {
    server.heartbeatSeconds = 1;
    await startAgent();
    const sleeping = server.offerAction("worker-0", "sleep", { seconds: 1.5 }, at(1));
    const queued = server.offerAction("worker-0", "noop", {}, at(2));
    const device = server.device("worker-0");
    const listing = await eventually(
      () => device.reports.find((r) => r.actions.some((a) => a.id === sleeping.id && a.state === "RUNNING") && r.actions.some((a) => a.id === queued.id)),
      5_000,
      "a heartbeat with both",
    );
    expect(listing.actions).toEqual([
      { id: sleeping.id, state: "RUNNING" },
      { id: queued.id, state: "NEW" },
    ]);
    await waitEnded(queued);
    expect([sleeping.state, queued.state]).toEqual(["DONE", "DONE"]);
    // Once the server has the final reports they leave the list.
    await eventually(() => device.reports.at(-1)?.actions.length === 0 && device.reports.length > 2, 5_000, "an empty queue reported");
  });

  it("unknown kinds and bad args are FAILED with an error naming the kind or the field", async () => {
    await startAgent();
    const unknown = server.offerAction("worker-0", "teleport", {}, at(1));
    const badArgs = server.offerAction("worker-0", "sleep", { seconds: "soon" }, at(2));
    const refused = server.offerAction("worker-0", "exec", { command: "rm", args: ["-rf", "/"] }, at(3));
    for (const action of [unknown, badArgs, refused]) await waitEnded(action);
    expect(unknown).toMatchObject({ state: "FAILED", error: `unknown action kind "teleport" (this agent runs: noop, sleep, exec, reboot, k0supdate, airgapupdate)` });
    expect(badArgs).toMatchObject({ state: "FAILED", error: expect.stringMatching(/^invalid args for sleep: seconds: /) });
    expect(refused).toMatchObject({ state: "FAILED", error: `command "rm" is not in the agent's allow-list (--allow-exec)` });
    // FAILED is only reachable from RUNNING: each went through it.
    expect(reported(unknown)).toEqual(["NEW", "RUNNING", "FAILED"]);
  });

  it("a failing command is FAILED with its exit code and output", async () => {
    await startAgent();
    const action = server.offerAction("worker-0", "exec", { command: "sh", args: ["-c", "echo partial; exit 7"] });
    await waitEnded(action);
    expect(action).toMatchObject({ state: "FAILED", error: `command "sh" exited with code 7`, output: "partial\n" });
  });

  it("reboot reports the Rebooting condition while it runs", async () => {
    await startAgent();
    const action = server.offerAction("worker-0", "reboot");
    await waitEnded(action);
    expect(action.state).toBe("DONE");
    const device = server.device("worker-0");
    const rebooting = device.reports.findIndex((r) => r.conditions.rebooting === true);
    expect(rebooting).toBeGreaterThan(-1);
    await eventually(() => device.reports.slice(rebooting).some((r) => r.conditions.rebooting === false), 5_000, "Rebooting cleared");
  });
});

describe("cancel", () => {
  it("a queued action is CANCELLED without running; a running one is stopped and CANCELLED", async () => {
    const { events } = await startAgent();
    const sleeping = server.offerAction("worker-0", "sleep", { seconds: 30 }, at(1));
    const queued = server.offerAction("worker-0", "exec", { command: "echo", args: ["never"] }, at(2));
    await eventually(() => sleeping.state === "RUNNING" && queued.state === "NEW", 5_000, "one running, one queued");

    server.cancelAction(queued.id);
    await waitEnded(queued);
    expect(queued.state).toBe("CANCELLED");
    expect(reported(queued)).toEqual(["NEW", "CANCELLED"]);
    expect(events(queued.id)).not.toContain("action.started");

    const cancelledAt = Date.now();
    server.cancelAction(sleeping.id);
    await waitEnded(sleeping);
    expect(sleeping.state).toBe("CANCELLED");
    expect(Date.now() - cancelledAt).toBeLessThan(2_000);
  });

  it("a cancelled exec has its process killed", async () => {
    await startAgent();
    const action = server.offerAction("worker-0", "exec", { command: "sh", args: ["-c", "echo begun; sleep 30"] });
    await eventually(() => action.state === "RUNNING", 5_000, "running");
    await new Promise((r) => setTimeout(r, 100));
    server.cancelAction(action.id);
    await waitEnded(action);
    expect(action).toMatchObject({ state: "CANCELLED", output: "begun\n" });
  });

  it("an action the server refuses (409 on NEW) is never run", async () => {
    const { events } = await startAgent();
    server.fail({ method: "PUT", path: /^\/actions\//, status: 409, times: 1 });
    const action = server.offerAction("worker-0", "noop");
    await eventually(() => events(action.id).includes("action.refused"), 5_000, "refused");
    // Stop offering it, as the real server does once it is no longer PENDING_SCHEDULE.
    server.setActionState(action.id, "CANCELLED");
    const after = server.offerAction("worker-0", "noop");
    await waitEnded(after);
    expect(events(action.id)).not.toContain("action.started");
    expect(server.device("worker-0").reports.at(-1)?.actions.some((a) => a.id === action.id)).toBe(false);
  });
});

describe("reports", () => {
  it("are retried through server errors until the server answers", async () => {
    const { events } = await startAgent();
    server.fail({ method: "PUT", path: /^\/actions\//, status: 503, times: 3 });
    server.fail({ method: "PUT", path: /^\/actions\//, status: 0, drop: true, times: 1 });
    const action = server.offerAction("worker-0", "noop");
    await waitEnded(action);
    expect(reported(action)).toEqual(["NEW", "RUNNING", "DONE"]);
    expect(events().filter((e) => e === "action.report.failed")).toHaveLength(4);
  });

  it("404: the server forgot the action; the report goes again with kind and args (the agent wins)", async () => {
    await startAgent();
    const original = server.offerAction("worker-0", "sleep", { seconds: 0.5 });
    await eventually(() => original.state === "RUNNING", 5_000, "running");
    server.forget(original.id);
    const recreated = await eventually(() => server.device("worker-0").actions.find((a) => a.id === original.id && ended(a)), 5_000, "recreated");
    expect(recreated).toMatchObject({ state: "DONE", origin: "agent", kind: "sleep", args: { seconds: 0.5 } });
  });

  it("409 on a later report is logged and dropped; the queue goes on", async () => {
    const { events } = await startAgent();
    const first = server.offerAction("worker-0", "sleep", { seconds: 0.3 }, at(1));
    const second = server.offerAction("worker-0", "noop", {}, at(2));
    await eventually(() => first.state === "RUNNING", 5_000, "running");
    server.setActionState(first.id, "LOST"); // the server gave up on it meanwhile
    await waitEnded(second);
    expect(second.state).toBe("DONE");
    expect(first.state).toBe("LOST");
    expect(events(first.id)).toContain("action.report.conflict");
  });

  it("a re-offer of a finished action re-reports it and never runs it again", async () => {
    const { events } = await startAgent();
    const action = server.offerAction("worker-0", "exec", { command: "echo", args: ["once"] });
    await waitEnded(action);
    await new Promise((r) => setTimeout(r, 100));
    server.setActionState(action.id, "PENDING_SCHEDULE"); // e.g. a database restored from a backup
    await waitEnded(action);
    expect(action).toMatchObject({ state: "DONE", output: "once\n" });
    expect(reported(action)).toEqual(["NEW", "RUNNING", "DONE", "NEW", "RUNNING", "DONE"]);
    expect(events(action.id).filter((e) => e === "action.started")).toHaveLength(1);
    expect(events(action.id)).toContain("action.reoffered");
  });
});

describe("polling", () => {
  it("after taking an action, polls again only once the server has answered its NEW report", async () => {
    // Requests as the agent sends them and gets their answers, in order.
    const log: { at: "sent" | "answered"; what: string; offered?: string[] }[] = [];
    const spy = (async (input: string | URL | Request, init?: RequestInit) => {
      const url = new URL(input instanceof Request ? input.url : input);
      const path = url.pathname.replace(/^.*\/api\/agent\/v1/, "");
      const body = typeof init?.body === "string" ? (JSON.parse(init.body) as { state?: string }) : {};
      const what = `${init?.method ?? "GET"} ${path}${body.state ? ` ${body.state}` : ""}`;
      // Hold the NEW report back: an agent that polls at once does it meanwhile, and is
      // offered the same action again.
      if (body.state === "NEW") await new Promise((r) => setTimeout(r, 300));
      log.push({ at: "sent", what });
      const response = await fetch(input, init);
      const offered = path === "/work" ? (JSON.parse(await response.clone().text()) as { actions?: { id: string }[] }).actions?.map((a) => a.id) : undefined;
      log.push({ at: "answered", what, ...(offered ? { offered } : {}) });
      return response;
    }) as typeof fetch;
    // heldWorkDelayMs well above the 300 ms hold, so that only the answer ends the wait.
    await startAgent(new MemoryStateStore(), { client: new ProtocolClient({ serverUrl: server.url, fetch: spy }), timing: { ...FAST, heldWorkDelayMs: 5_000 } });
    const action = server.offerAction("worker-0", "noop");
    await waitEnded(action);
    expect(reported(action)).toEqual(["NEW", "RUNNING", "DONE"]);

    const offers = log.filter((e) => e.offered?.includes(action.id));
    expect(offers).toHaveLength(1);
    const offeredAt = log.indexOf(offers[0]!);
    const newAnsweredAt = log.findIndex((e) => e.at === "answered" && e.what === `PUT /actions/${action.id} NEW`);
    expect(newAnsweredAt).toBeGreaterThan(offeredAt);
    const between = log.slice(offeredAt + 1, newAnsweredAt).filter((e) => e.at === "sent" && e.what === "GET /work");
    expect(between).toEqual([]);
    // And it does poll again after that.
    await eventually(() => log.slice(newAnsweredAt).some((e) => e.at === "sent" && e.what === "GET /work"), 5_000, "the next poll");
  });
});

describe("restart", () => {
  it("an action running when the agent stopped is FAILED with the reason; the queue after it runs; DONE ones do not run again", async () => {
    const store = new MemoryStateStore();
    const first = await startAgent(store);
    const done = server.offerAction("worker-0", "exec", { command: "echo", args: ["first"] }, at(1));
    await waitEnded(done);
    const sleeping = server.offerAction("worker-0", "sleep", { seconds: 30 }, at(2));
    const queued = server.offerAction("worker-0", "exec", { command: "echo", args: ["after"] }, at(3));
    await eventually(() => sleeping.state === "RUNNING" && queued.state === "NEW", 5_000, "one running, one queued");
    await first.agent.stop();
    expect(sleeping.state).toBe("RUNNING");

    const second = await startAgent(store);
    await waitEnded(sleeping);
    await waitEnded(queued);
    expect(sleeping).toMatchObject({ state: "FAILED", error: RESTART_REASON });
    expect(queued).toMatchObject({ state: "DONE", output: "after\n" });
    expect(second.events(done.id)).not.toContain("action.started");
    expect(second.events(sleeping.id)).not.toContain("action.started");
    expect(reported(done)).toEqual(["NEW", "RUNNING", "DONE"]);
    const journal = await store.read("actions", ActionJournalDocument);
    expect(journal?.entries.map((e) => e.history.at(-1))).toEqual(["DONE", "FAILED", "DONE"]);
  });

  it("an idempotent action running when the agent stopped runs again", async () => {
    let runs = 0;
    const waitForever: Executor = {
      kind: "probe",
      idempotent: true,
      argsSchema: z.object({}),
      async run(_args, { signal }) {
        runs++;
        if (runs === 1) await new Promise((_resolve, reject) => signal.addEventListener("abort", () => reject(new Error("stopped"))));
        return { output: `run ${runs}` };
      },
    };
    const store = new MemoryStateStore();
    const first = await startAgent(store, { executors: registry([waitForever]) });
    const action = server.offerAction("worker-0", "probe");
    await eventually(() => action.state === "RUNNING" && runs === 1, 5_000, "running");
    await first.agent.stop();
    await startAgent(store, { executors: registry([waitForever]) });
    await waitEnded(action);
    expect(action).toMatchObject({ state: "DONE", output: "run 2" });
  });

  it("final reports not yet acknowledged are sent after a restart", async () => {
    const store = new MemoryStateStore();
    const first = await startAgent(store);
    server.fail({ method: "PUT", path: /^\/actions\//, status: 503, times: 1_000 });
    const action = server.offerAction("worker-0", "noop");
    await eventually(async () => (await store.read("actions", ActionJournalDocument))?.entries.length === 1, 5_000, "journaled");
    await first.agent.stop();
    server.clearFailures();
    await startAgent(store);
    await waitEnded(action);
    expect(action.state).toBe("DONE");
  });
});

describe("decommission", () => {
  it("stops the running action and removes the journal", async () => {
    const store = new MemoryStateStore();
    const { outcome } = await startAgent(store);
    const action = server.offerAction("worker-0", "sleep", { seconds: 30 });
    await eventually(() => action.state === "RUNNING", 5_000, "running");
    server.decommission("worker-0");
    expect(await outcome).toMatchObject({ kind: "decommissioned", state: "Completed" });
    expect(store.has("actions")).toBe(false);
  });
});
