/**
 * The built-in executors and their args schemas. exec runs real commands (sh, echo, sleep)
 * on this host; reboot is only ever simulated here.
 */
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import pino from "pino";
import { afterAll, describe, expect, it } from "vitest";
import { describeZodError } from "../../lib/protocol";
import { builtinExecutors, simulatedExecutors, ActionFailure, type ActionContext, type Executor } from ".";
import { ExecArgs } from "./exec";
import { MAX_OUTPUT_BYTES, OutputCapture, truncateOutput } from "./output";
import { rebootExecutor } from "./reboot";
import { SleepArgs } from "./sleep";

const tmp = await fs.mkdtemp(path.join(os.tmpdir(), "drover-executors-"));
afterAll(() => fs.rm(tmp, { recursive: true, force: true }));

const silent = pino({ level: "silent" });
function context(signal: AbortSignal = new AbortController().signal, conditions: boolean[] = []): ActionContext {
  return { signal, log: silent, setCondition: (_name, value) => conditions.push(value) };
}

const executors = builtinExecutors({ allowExec: ["echo", "sh", "sleep", "/nonexistent/drover-test"], killGraceMs: 300, simulatedRebootSeconds: 0.2 });
function executor(kind: string): Executor {
  const found = executors.get(kind);
  if (!found) throw new Error(`no ${kind}`);
  return found;
}

/** Runs an exec action; resolves with its output, or with the ActionFailure it ended with. */
async function exec(args: Record<string, unknown>, signal?: AbortSignal): Promise<{ output: string } | ActionFailure> {
  const e = executor("exec");
  try {
    return await e.run(e.argsSchema.parse(args), context(signal));
  } catch (error) {
    if (error instanceof ActionFailure) return error;
    throw error;
  }
}

const sh = (script: string, timeoutSeconds?: number) => ({ command: "sh", args: ["-c", script], ...(timeoutSeconds ? { timeoutSeconds } : {}) });

/** Running (a zombie waiting for whoever reaps orphans does not count). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    // /proc/PID/stat: "pid (comm) S ..."; Z is a zombie.
    return !/\) Z /.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return true; // no /proc (macOS): kill(0) is all there is
  }
}

describe("exec", () => {
  it("refuses a command that is not in the allow-list, naming it and the flag", async () => {
    const result = await exec({ command: "rm", args: ["-rf", "/"] });
    expect(result).toBeInstanceOf(ActionFailure);
    expect((result as ActionFailure).message).toBe(`command "rm" is not in the agent's allow-list (--allow-exec)`);
  });

  it("matches the allow-list exactly: a path to an allowed name is not allowed", async () => {
    const result = await exec({ command: "/bin/echo", args: ["hi"] });
    expect((result as ActionFailure).message).toMatch(/"\/bin\/echo" is not in the agent's allow-list/);
  });

  it("refuses everything when no command is allowed (the default)", async () => {
    const none = builtinExecutors().get("exec");
    await expect(none?.run(ExecArgs.parse({ command: "echo" }), context())).rejects.toThrow(/"echo" is not in the agent's allow-list/);
  });

  it("runs an allowed command without a shell and returns its output", async () => {
    expect(await exec({ command: "echo", args: ["hello", "$HOME", "*"] })).toEqual({ output: "hello $HOME *\n" });
  });

  it("captures stdout and stderr interleaved, in order", async () => {
    const result = await exec(sh("echo one; sleep 0.05; echo two >&2; sleep 0.05; echo three"));
    expect(result).toEqual({ output: "one\ntwo\nthree\n" });
  });

  it("is FAILED on a non-zero exit, naming the code, with the output", async () => {
    const result = await exec(sh("echo oops; echo worse >&2; exit 3"));
    expect(result).toBeInstanceOf(ActionFailure);
    expect((result as ActionFailure).message).toBe(`command "sh" exited with code 3`);
    expect((result as ActionFailure).output).toBe("oops\nworse\n");
  });

  it("is FAILED when killed by a signal, naming it", async () => {
    const result = await exec(sh("kill -9 $$"));
    expect((result as ActionFailure).message).toBe(`command "sh" was killed by signal SIGKILL`);
  });

  it("is FAILED when the command cannot be started", async () => {
    const result = await exec({ command: "/nonexistent/drover-test" });
    expect((result as ActionFailure).message).toMatch(/^cannot run command "\/nonexistent\/drover-test": .*ENOENT/);
  });

  it("is FAILED on timeout, and the command is stopped", async () => {
    const started = Date.now();
    const result = await exec(sh("echo started; sleep 30", 0.3));
    expect((result as ActionFailure).message).toBe(`command "sh" timed out after 0.3 s`);
    expect((result as ActionFailure).output).toBe("started\n");
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  it("cuts output over 64 KiB, keeping head and tail around a marker", async () => {
    // 200,000 bytes: "BEGIN", then x's, then "END".
    const result = await exec(sh("printf BEGIN; head -c 199992 /dev/zero | tr '\\0' x; printf END"));
    const output = (result as { output: string }).output;
    expect(output.startsWith("BEGIN")).toBe(true);
    expect(output.endsWith("END")).toBe(true);
    const [head = "", dropped = "0", tail = ""] = output.split(/\n…\[truncated (\d+) bytes\]…\n/);
    expect(head.length + Number(dropped) + tail.length).toBe(200_000);
    expect(Buffer.byteLength(output)).toBeLessThanOrEqual(MAX_OUTPUT_BYTES);
    expect(Buffer.byteLength(output)).toBeGreaterThan(MAX_OUTPUT_BYTES - 40);
  });

  it("a cancel stops the whole process group, SIGKILL after the grace when SIGTERM is ignored", async () => {
    const pidFile = path.join(tmp, `${randomUUID()}.pid`);
    const controller = new AbortController();
    // The shell ignores SIGTERM (so does its child, which inherits that) and starts a grandchild.
    const running = exec(sh(`trap "" TERM; sleep 30 & echo $! > ${pidFile}; echo waiting; wait`), controller.signal);
    const grandchild = await waitForPid(pidFile);
    expect(alive(grandchild)).toBe(true);
    const cancelledAt = Date.now();
    controller.abort();
    const result = await running;
    expect(result).toBeInstanceOf(ActionFailure);
    expect((result as ActionFailure).message).toBe("cancelled");
    expect((result as ActionFailure).output).toBe("waiting\n");
    const took = Date.now() - cancelledAt;
    expect(took).toBeGreaterThanOrEqual(250); // it waited for SIGTERM to work
    expect(took).toBeLessThan(3_000);
    await expectGone(grandchild);
  });

  it("a cancel of a command that honours SIGTERM ends it at once", async () => {
    const pidFile = path.join(tmp, `${randomUUID()}.pid`);
    const controller = new AbortController();
    const running = exec(sh(`sleep 30 & echo $! > ${pidFile}; wait`), controller.signal);
    const grandchild = await waitForPid(pidFile);
    const cancelledAt = Date.now();
    controller.abort();
    expect(((await running) as ActionFailure).message).toBe("cancelled");
    expect(Date.now() - cancelledAt).toBeLessThan(250);
    await expectGone(grandchild);
  });
});

async function waitForPid(file: string): Promise<number> {
  const deadline = Date.now() + 5_000;
  while (Date.now() < deadline) {
    const text = await fs.readFile(file, "utf8").catch(() => "");
    const pid = Number.parseInt(text, 10);
    if (pid > 0) return pid;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error("no pid file");
}

async function expectGone(pid: number): Promise<void> {
  const deadline = Date.now() + 2_000;
  while (alive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  expect(alive(pid)).toBe(false);
}

describe("output capture", () => {
  it("keeps everything up to the limit", () => {
    const capture = new OutputCapture(10);
    capture.write("0123");
    capture.write(Buffer.from("456789"));
    expect(capture.text()).toBe("0123456789");
  });

  it("keeps the head and the tail beyond it, across chunk boundaries, the marker within the limit", () => {
    // Room is left for the longest marker this total could need ("…[truncated 120 bytes]…",
    // 29 bytes with its newlines): 35 + 36 bytes are kept, 49 dropped.
    const capture = new OutputCapture(100);
    const text = Array.from({ length: 30 }, (_, i) => `<${String(i).padStart(2, "0")}>`).join(""); // 120 bytes
    for (let i = 0; i < text.length; i += 7) capture.write(text.slice(i, i + 7));
    expect(capture.text()).toBe(`${text.slice(0, 35)}\n…[truncated 49 bytes]…\n${text.slice(-36)}`);
    expect(Buffer.byteLength(capture.text())).toBeLessThanOrEqual(100);
  });

  it("never cuts a UTF-8 character in two", () => {
    const text = "é".repeat(100); // 2 bytes each
    const cut = truncateOutput(text, 61);
    expect(cut).not.toContain("\uFFFD");
    expect(cut).toMatch(/^(é)+\n…\[truncated \d+ bytes\]…\n(é)+$/);
    expect(Buffer.byteLength(cut)).toBeLessThanOrEqual(61);
  });
});

describe("args validation", () => {
  const rows: [string, Executor["argsSchema"], unknown, RegExp | null][] = [
    ["exec needs a command", ExecArgs, {}, /^command: /],
    ["exec args are strings", ExecArgs, { command: "echo", args: [1] }, /^args\.0: /],
    ["exec timeout at most 3600", ExecArgs, { command: "echo", timeoutSeconds: 3601 }, /^timeoutSeconds: /],
    ["exec timeout positive", ExecArgs, { command: "echo", timeoutSeconds: 0 }, /^timeoutSeconds: /],
    ["exec refuses unknown fields (a typo is not ignored)", ExecArgs, { command: "echo", timeout: 5 }, /timeout/],
    ["exec defaults", ExecArgs, { command: "echo" }, null],
    ["sleep needs seconds", SleepArgs, {}, /^seconds: /],
    ["sleep at most 3600", SleepArgs, { seconds: 3601 }, /^seconds: /],
    ["sleep not negative", SleepArgs, { seconds: -1 }, /^seconds: /],
    ["sleep seconds is a number", SleepArgs, { seconds: "5" }, /^seconds: /],
    ["sleep 0 is fine", SleepArgs, { seconds: 0 }, null],
  ];
  it.each(rows)("%s", (_name, schema, args, message) => {
    const parsed = schema.safeParse(args);
    if (message === null) expect(parsed.success).toBe(true);
    else expect(!parsed.success && describeZodError(parsed.error)).toMatch(message);
  });

  it("exec fills its defaults", () => {
    expect(ExecArgs.parse({ command: "echo" })).toEqual({ command: "echo", args: [], timeoutSeconds: 60 });
  });
});

describe("noop, sleep, reboot", () => {
  it("noop succeeds with no output", async () => {
    expect(await executor("noop").run({}, context())).toEqual({ output: "" });
  });

  it("sleep waits its seconds; a cancel ends it at once", async () => {
    const started = Date.now();
    await executor("sleep").run({ seconds: 0.2 }, context());
    expect(Date.now() - started).toBeGreaterThanOrEqual(190);

    const controller = new AbortController();
    const sleeping = executor("sleep").run({ seconds: 30 }, context(controller.signal));
    setTimeout(() => controller.abort(), 50);
    await expect(sleeping).rejects.toThrow("cancelled");
  });

  it("a simulated reboot reports Rebooting, then clears it and succeeds", async () => {
    const conditions: boolean[] = [];
    const result = await executor("reboot").run({}, context(undefined, conditions));
    expect(conditions).toEqual([true, false]);
    expect(result.output).toMatch(/simulated reboot/);
  });

  it("declares which kinds may run again after a restart", () => {
    expect(Object.fromEntries([...executors.values()].map((e) => [e.kind, e.idempotent]))).toEqual({ noop: true, sleep: false, exec: false, reboot: false, k0supdate: false, airgapupdate: false });
  });

  it("a real reboot counts as done after a restart only when the host booted since it started", () => {
    const real = rebootExecutor({ real: true });
    expect(real.recover?.(new Date(0))).toMatchObject({ output: expect.stringMatching(/the host rebooted/) });
    expect(real.recover?.(new Date())).toBeNull();
    expect(rebootExecutor({ real: false }).recover?.(new Date(0))).toBeNull();
  });
});

describe("simulated executors (the simulator)", () => {
  it("exec never spawns: any command 'succeeds' after a time in the range, with a fake output", async () => {
    const simulated = simulatedExecutors({ failure: 0, seconds: [0.05, 0.1], random: () => 0.5 });
    const e = simulated.get("exec");
    const started = Date.now();
    const result = await e?.run(ExecArgs.parse({ command: "/definitely/not/here", args: ["--now"] }), context());
    expect(Date.now() - started).toBeGreaterThanOrEqual(70);
    expect(result?.output).toMatch(/^\[simulated\] \/definitely\/not\/here --now\n/);
  });

  it("fails the given share of actions; keeps schemas and idempotency of the real kinds", async () => {
    const failing = simulatedExecutors({ failure: 1, seconds: [0, 0], random: () => 0.5 });
    await expect(failing.get("noop")?.run({}, context())).rejects.toThrow("simulated failure");
    const passing = simulatedExecutors({ failure: 0, seconds: [0, 0], random: () => 0.5 });
    expect(await passing.get("noop")?.run({}, context())).toEqual({ output: "" });
    for (const kind of ["noop", "sleep", "exec", "reboot", "k0supdate", "airgapupdate"]) {
      expect(passing.get(kind)?.idempotent).toBe(executors.get(kind)?.idempotent);
      expect(passing.get(kind)?.argsSchema).toBe(executors.get(kind)?.argsSchema);
    }
  });

  it("a simulated reboot reports Rebooting while it lasts", async () => {
    const conditions: boolean[] = [];
    await simulatedExecutors({ failure: 0, seconds: [0, 0], random: () => 0 }).get("reboot")?.run({}, context(undefined, conditions));
    expect(conditions).toEqual([true, false]);
  });
});
