/**
 * A running action's output sent while it runs (issue 10): the throttle (at most one report
 * a tick, only when the output grew, one in flight, only once the server has it RUNNING),
 * retries and giving up, on fake timers; then through the real agent and an exec whose
 * output grows, against the fake server.
 */
import pino from "pino";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { Agent } from "./agent";
import { ProtocolClient, ProtocolError } from "./client";
import { builtinExecutors, simulatedExecutors, type LiveOutput } from "./executors";
import { OutputCapture } from "./executors/output";
import { staticHealth } from "./health";
import { OutputStream } from "./output-stream";
import { MemoryStateStore } from "./state";
import { eventually, FakeServer } from "./test-support/fake-server";
import { FAST } from "./test-support/fast-timing";

const silent = pino({ level: "silent" });

describe("the throttle", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  function setup(opts: { ready?: () => boolean; send?: (output: string, signal: AbortSignal) => Promise<void> } = {}) {
    const sent: string[] = [];
    const signals: AbortSignal[] = [];
    const stream = new OutputStream({
      ready: opts.ready ?? (() => true),
      send:
        opts.send ??
        ((output, signal) => {
          sent.push(output);
          signals.push(signal);
          return Promise.resolve();
        }),
      log: silent,
    });
    const capture = new OutputCapture();
    stream.attach(capture);
    return { stream, capture, sent, signals };
  }

  it("sends the whole output so far at most once a second, and only when it grew", async () => {
    const { stream, capture, sent } = setup();
    for (let i = 0; i < 50; i++) capture.write(`line ${i}\n`);
    await vi.advanceTimersByTimeAsync(999);
    expect(sent).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(sent).toHaveLength(1);
    expect(sent[0]).toBe(capture.text());
    // Nothing new: nothing sent, however long it runs.
    await vi.advanceTimersByTimeAsync(5_000);
    expect(sent).toHaveLength(1);
    // Written many times within a second: one report, with all of it.
    capture.write("more\n");
    await vi.advanceTimersByTimeAsync(300);
    capture.write("and more\n");
    await vi.advanceTimersByTimeAsync(700);
    expect(sent).toHaveLength(2);
    expect(sent[1]?.endsWith("more\nand more\n")).toBe(true);
    expect(stream.sent).toBe(2);
    stream.stop();
  });

  it("sends nothing when nothing was written, nor before the server has the action RUNNING", async () => {
    let ready = false;
    const { stream, capture, sent } = setup({ ready: () => ready });
    await vi.advanceTimersByTimeAsync(3_000);
    expect(sent).toEqual([]);
    capture.write("begun\n");
    await vi.advanceTimersByTimeAsync(3_000);
    expect(sent).toEqual([]);
    ready = true;
    await vi.advanceTimersByTimeAsync(1_000);
    expect(sent).toEqual(["begun\n"]);
    stream.stop();
  });

  it("keeps one report in flight at a time, and stop() abandons it and sends no more", async () => {
    const signals: AbortSignal[] = [];
    const { stream, capture } = setup({
      send: (_output, signal) => {
        signals.push(signal);
        return new Promise(() => undefined); // a slow server
      },
    });
    capture.write("a\n");
    await vi.advanceTimersByTimeAsync(1_000);
    capture.write("b\n");
    await vi.advanceTimersByTimeAsync(5_000);
    expect(signals).toHaveLength(1);
    stream.stop();
    expect(signals[0]?.aborted).toBe(true);
    capture.write("c\n");
    await vi.advanceTimersByTimeAsync(5_000);
    expect(signals).toHaveLength(1);
  });

  it("tries again at the next tick after a failure, and gives up when the server refuses (409)", async () => {
    const outcomes: (Error | null)[] = [new Error("socket hang up"), null, new ProtocolError(409, "CONFLICT", "action is DONE")];
    const sent: string[] = [];
    const { stream, capture } = setup({
      send: (output) => {
        sent.push(output);
        const outcome = outcomes.shift();
        return outcome ? Promise.reject(outcome) : Promise.resolve();
      },
    });
    capture.write("a\n");
    await vi.advanceTimersByTimeAsync(1_000);
    await vi.advanceTimersByTimeAsync(1_000); // the failed one again, as it is now
    expect(sent).toEqual(["a\n", "a\n"]);
    expect(stream.sent).toBe(1);
    capture.write("b\n");
    await vi.advanceTimersByTimeAsync(1_000);
    expect(sent).toEqual(["a\n", "a\n", "a\nb\n"]);
    capture.write("c\n");
    await vi.advanceTimersByTimeAsync(10_000);
    expect(sent).toHaveLength(3);
  });

  it("the simulator's exec writes a line a second, handed over as it goes", async () => {
    const exec = simulatedExecutors({ failure: 0, seconds: [2.5, 2.5], random: () => 0 }).get("exec")!;
    let source: LiveOutput | null = null;
    const run = exec.run({ command: "uptime", args: [], timeoutSeconds: 60 }, { signal: new AbortController().signal, log: silent, setCondition: () => undefined, liveOutput: (s) => (source = s) });
    expect(source!.text()).toBe("[simulated] uptime\n");
    await vi.advanceTimersByTimeAsync(1_000);
    expect(source!.text()).toBe("[simulated] uptime\n[simulated] running, 1 s\n");
    await vi.advanceTimersByTimeAsync(1_500);
    expect((await run).output).toBe("[simulated] uptime\n[simulated] running, 1 s\n[simulated] running, 2 s\n[simulated] exited 0 after 2500 ms\n");
  });

  it("cuts long output to 64 KiB as the final report is", async () => {
    const { stream, sent } = setup({});
    const big = { total: 200_000, text: () => "x".repeat(200_000) };
    stream.attach(big);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(Buffer.byteLength(sent[0] ?? "")).toBeLessThanOrEqual(64 * 1024);
    expect(sent[0]).toContain("truncated");
    stream.stop();
  });
});

describe("through the agent", () => {
  let server: FakeServer;
  let agent: Agent | null = null;
  beforeEach(async () => {
    server = await FakeServer.start();
    server.heartbeatSeconds = 30;
    server.autoApprove = true;
  });
  afterEach(async () => {
    await agent?.stop();
    await server.close();
  });

  it("an exec's output reaches the server while it runs, then whole in the final report", async () => {
    agent = new Agent({
      identity: { name: "worker-0", labels: {}, platform: "linux-amd64", role: "worker", agentVersion: "0.1.0" },
      client: new ProtocolClient({ serverUrl: server.url }),
      store: new MemoryStateStore(),
      health: staticHealth({ cpu: "Healthy", memory: "Healthy", disk: "Healthy" }),
      logger: silent,
      timing: FAST,
      executors: builtinExecutors({ allowExec: ["sh"], killGraceMs: 300 }),
    });
    void agent.start();
    await eventually(() => server.devices.get("worker-0")?.reports.length, 5_000, "first heartbeat");
    const action = server.offerAction("worker-0", "exec", { command: "sh", args: ["-c", "echo one; sleep 1.6; echo two; sleep 1.6; echo three"] });
    // Partial: the first line, while the action still runs.
    await eventually(() => action.state === "RUNNING" && action.output === "one\n", 5_000, "the first line while running");
    await eventually(() => action.state === "DONE", 10_000, "DONE");
    expect(action.output).toBe("one\ntwo\nthree\n");
    const partial = action.reports.filter((r) => r.state === "RUNNING" && r.output !== undefined);
    // About one a second for ~3.2 s of running, each the whole output so far, never the same twice.
    expect(partial.length).toBeGreaterThanOrEqual(2);
    expect(partial.length).toBeLessThanOrEqual(4);
    expect(partial.map((r) => r.output)).toEqual([...new Set(partial.map((r) => r.output))]);
    expect(partial[0]?.output).toBe("one\n");
    expect(action.reports.map((r) => r.state).filter((st) => st !== "RUNNING")).toEqual(["NEW", "DONE"]);
  });
});
