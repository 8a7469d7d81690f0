/**
 * `exec {command, args?, timeoutSeconds?}`: runs one command of the agent's allow-list
 * (`--allow-exec`), with child_process.spawn and no shell, in its own process group.
 * stdout and stderr are captured interleaved, in arrival order, and cut to 64 KiB (head and
 * tail kept). A non-zero exit, a signal or the timeout is FAILED. A cancel, a timeout or
 * the agent stopping stops the whole process group: SIGTERM, then SIGKILL after a grace.
 */
import { spawn } from "node:child_process";
import { z } from "zod";
import { OutputCapture } from "./output";
import { ActionFailure, type Executor } from "./types";

export const ExecArgs = z.strictObject({
  command: z.string().min(1),
  args: z.array(z.string()).default([]),
  timeoutSeconds: z.number().positive().max(3600).default(60),
});

export interface ExecOptions {
  /** Commands the agent may run, matched exactly (`--allow-exec`). */
  allow: readonly string[];
  /** Between SIGTERM and SIGKILL when a command is stopped. */
  killGraceMs?: number;
}

export const DEFAULT_KILL_GRACE_MS = 5_000;

export function execExecutor(options: ExecOptions): Executor<typeof ExecArgs> {
  const allowed = new Set(options.allow);
  return {
    kind: "exec",
    // A command may have effects; the agent cannot know whether running it twice is safe.
    idempotent: false,
    argsSchema: ExecArgs,
    allowList: [...options.allow],
    async run({ command, args, timeoutSeconds }, { signal, log, liveOutput }) {
      if (!allowed.has(command)) {
        throw new ActionFailure(`command ${JSON.stringify(command)} is not in the agent's allow-list (--allow-exec)`);
      }
      // The capture is the queue's to read while the command runs (its output so far, sent live).
      const capture = new OutputCapture();
      liveOutput?.(capture);
      const result = await runCommand({ command, args, timeoutMs: timeoutSeconds * 1000, signal, killGraceMs: options.killGraceMs, capture });
      log.debug({ event: "exec.exited", command, code: result.code, signal: result.signal, outputBytes: result.outputBytes }, "command exited");
      const name = JSON.stringify(command);
      switch (result.end) {
        case "cancelled":
          throw new ActionFailure("cancelled", result.output);
        case "timeout":
          throw new ActionFailure(`command ${name} timed out after ${timeoutSeconds} s`, result.output);
        case "error":
          throw new ActionFailure(`cannot run command ${name}: ${result.message}`, result.output);
        case "exited":
          if (result.code === 0) return { output: result.output };
          if (result.code !== null) throw new ActionFailure(`command ${name} exited with code ${result.code}`, result.output);
          throw new ActionFailure(`command ${name} was killed by signal ${result.signal ?? "unknown"}`, result.output);
      }
    },
  };
}

export interface CommandResult {
  /** exited: on its own; timeout / cancelled: stopped by the agent; error: could not be run. */
  end: "exited" | "timeout" | "cancelled" | "error";
  code: number | null;
  signal: NodeJS.Signals | null;
  output: string;
  outputBytes: number;
  /** The last bytes of stderr alone (up to STDERR_TAIL_BYTES), for a failure's message. */
  stderrTail: string;
  message?: string;
}

const STDERR_TAIL_BYTES = 2048;

/** After the command exits, how long to wait for its output pipes (a background child may hold them). */
const PIPE_DRAIN_MS = 1_000;

/** Runs a command to its end; never rejects. */
export function runCommand(options: {
  command: string;
  args: readonly string[];
  timeoutMs: number;
  signal: AbortSignal;
  killGraceMs?: number | undefined;
  /** The child's whole environment (the agent's by default). */
  env?: NodeJS.ProcessEnv | undefined;
  /** Where stdout and stderr go (a fresh one by default); the caller may read it while the command runs. */
  capture?: OutputCapture | undefined;
}): Promise<CommandResult> {
  const { command, args, timeoutMs, signal } = options;
  const killGraceMs = options.killGraceMs ?? DEFAULT_KILL_GRACE_MS;
  const output = options.capture ?? new OutputCapture();
  let stderrTail = Buffer.alloc(0);
  const ownGroup = process.platform !== "win32";

  return new Promise((resolve) => {
    const child = spawn(command, [...args], { stdio: ["ignore", "pipe", "pipe"], detached: ownGroup, windowsHide: true, ...(options.env ? { env: options.env } : {}) });
    child.stdout?.on("data", (chunk: Buffer) => output.write(chunk));
    child.stderr?.on("data", (chunk: Buffer) => {
      output.write(chunk);
      stderrTail = Buffer.concat([stderrTail, chunk]);
      if (stderrTail.length > STDERR_TAIL_BYTES) stderrTail = stderrTail.subarray(stderrTail.length - STDERR_TAIL_BYTES);
    });

    let stopping: "timeout" | "cancelled" | null = null;
    let exit: { code: number | null; signal: NodeJS.Signals | null } | null = null;
    let settled = false;
    let killTimer: NodeJS.Timeout | undefined;
    let drainTimer: NodeJS.Timeout | undefined;

    const kill = (sig: NodeJS.Signals) => {
      if (child.pid === undefined) return;
      try {
        // The whole group: a shell script's children go too.
        if (ownGroup) process.kill(-child.pid, sig);
        else child.kill(sig);
      } catch {
        // ESRCH: already gone.
      }
    };
    const stop = (why: "timeout" | "cancelled") => {
      if (stopping || settled || exit) return;
      stopping = why;
      kill("SIGTERM");
      killTimer = setTimeout(() => kill("SIGKILL"), killGraceMs);
    };
    const timeout = setTimeout(() => stop("timeout"), timeoutMs);
    const onAbort = () => stop("cancelled");
    signal.addEventListener("abort", onAbort, { once: true });

    const finish = (result: Omit<CommandResult, "output" | "outputBytes" | "stderrTail">) => {
      if (settled) return;
      settled = true;
      clearTimeout(timeout);
      clearTimeout(killTimer);
      clearTimeout(drainTimer);
      signal.removeEventListener("abort", onAbort);
      child.stdout?.destroy();
      child.stderr?.destroy();
      resolve({ ...result, output: output.text(), outputBytes: output.total, stderrTail: stderrTail.toString("utf8").replace(/^\uFFFD+/, "") });
    };
    const finishExited = () => {
      const code = exit?.code ?? null;
      const sig = exit?.signal ?? null;
      finish({ end: stopping ?? "exited", code, signal: sig });
    };

    child.once("error", (error) => {
      // Spawning failed (ENOENT, EACCES...); a kill failure after a start does not get here.
      if (exit === null) finish({ end: "error", code: null, signal: null, message: error.message });
    });
    child.once("exit", (code, sig) => {
      exit = { code, signal: sig };
      drainTimer = setTimeout(finishExited, PIPE_DRAIN_MS);
    });
    child.once("close", (code, sig) => {
      exit ??= { code, signal: sig };
      finishExited();
    });
    if (signal.aborted) onAbort();
  });
}
