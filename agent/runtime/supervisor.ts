/**
 * The applications of the running spec, as supervised child processes.
 *
 * Each runs its argv with spawn (no shell) in its own process group, with the environment
 * it is given (host.ts merges the spec's over a minimal one), its working directory the
 * agent's root directory. stdout and stderr go to `logs/<name>.log` under the state
 * directory, rotated at `logMaxBytes` (one previous file kept as `.log.1`), so an
 * application's output never takes more than twice that.
 *
 * Statuses (seed 003's application statuses): Starting from each spawn until it has run for
 * `settleMs`, then Running; Error once it exited (or could not be run) until it is started
 * again. An application that exits, whatever its code, is restarted after a backoff: 1 s
 * doubling to 30 s by default, back to 1 s after a run longer than `stableMs`. `restarts`
 * counts the restarts since the spec was applied (the server counts canary restarts from
 * it). Stopping sends SIGTERM to the process group, then SIGKILL after `killGraceMs`.
 *
 * The process groups are listed in the state directory's `processes` document, so that an
 * agent restarted after a crash (whose applications outlived it) stops them before starting
 * its own: no application runs twice. The document also keeps the restart counts and the
 * spec they belong to: an agent restart is not an application restart, and neither resets
 * nor adds to them.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { closeSync, fstatSync, openSync, readFileSync, renameSync, writeSync } from "node:fs";
import fs from "node:fs/promises";
import path from "node:path";
import type { Logger } from "pino";
import { z } from "zod";
import type { ApplicationStatus } from "../../lib/device-status";
import type { ApplicationSpec } from "../../lib/protocol";
import type { StateStore } from "../state";
import { isoTime, sleep } from "../timing";
import { UpdateFailure, type Applications } from "./types";

export interface RestartPolicy {
  /** First restart delay. */
  baseMs: number;
  /** Longest restart delay. */
  capMs: number;
  /** A run at least this long resets the delay to `baseMs`. */
  stableMs: number;
}

export const DEFAULT_RESTART: RestartPolicy = { baseMs: 1_000, capMs: 30_000, stableMs: 60_000 };
export const DEFAULT_SETTLE_MS = 3_000;
export const DEFAULT_APP_KILL_GRACE_MS = 5_000;
export const DEFAULT_LOG_MAX_BYTES = 1024 * 1024;

export interface SupervisorOptions {
  logDir: string;
  cwd: string;
  /** Where the `processes` document lives. */
  store: StateStore;
  logger: Logger;
  settleMs?: number;
  restart?: RestartPolicy;
  killGraceMs?: number;
  logMaxBytes?: number;
}

export interface RunOptions {
  /** Names the spec these applications belong to (kept with the restart counts). */
  spec?: string | null;
  /** Restart counts to start from (the same spec, before an agent restart); 0 otherwise. */
  restarts?: Readonly<Record<string, number>>;
}

export interface Leftovers {
  /** Process groups found running and stopped. */
  stopped: number;
  spec: string | null;
  restarts: Record<string, number>;
}

export interface AppLaunch {
  spec: ApplicationSpec;
  /** The whole environment of the process. */
  env: Record<string, string>;
  /** Why it is not run at all (it reports Error). */
  refused?: string;
}

export const ProcessesDocument = z.object({
  version: z.literal(1),
  /** The spec the applications belong to (its renderedVersion), as the caller named it. */
  spec: z.string().nullable().default(null),
  processes: z.array(z.object({ name: z.string(), pid: z.number().int().positive(), startTicks: z.string().nullable() })),
  restarts: z.record(z.string(), z.number().int().min(0)).default({}),
});
export type ProcessesDocument = z.infer<typeof ProcessesDocument>;

/** Spawn failures that waiting will not cure: the update fails at once. */
const CANNOT_RUN = new Set(["ENOENT", "EACCES", "ENOTDIR", "EISDIR", "ENOEXEC"]);

export class Supervisor {
  private apps: SupervisedApp[] = [];
  private spec: string | null = null;
  private readonly settleMs: number;
  private readonly restart: RestartPolicy;
  private readonly killGraceMs: number;
  private readonly logMaxBytes: number;

  constructor(private readonly options: SupervisorOptions) {
    this.settleMs = options.settleMs ?? DEFAULT_SETTLE_MS;
    this.restart = options.restart ?? DEFAULT_RESTART;
    this.killGraceMs = options.killGraceMs ?? DEFAULT_APP_KILL_GRACE_MS;
    this.logMaxBytes = options.logMaxBytes ?? DEFAULT_LOG_MAX_BYTES;
  }

  /** Stops what runs and starts `launches`, with restart counts from 0 (or `options.restarts`). */
  async run(launches: readonly AppLaunch[], options: RunOptions = {}): Promise<void> {
    await this.stopAll();
    await fs.mkdir(this.options.logDir, { recursive: true, mode: 0o700 });
    this.spec = options.spec ?? null;
    this.apps = launches.map(
      (launch) =>
        new SupervisedApp(launch, {
          cwd: this.options.cwd,
          logFile: path.join(this.options.logDir, `${launch.spec.name}.log`),
          logMaxBytes: this.logMaxBytes,
          settleMs: this.settleMs,
          restart: this.restart,
          killGraceMs: this.killGraceMs,
          logger: this.options.logger,
          onProcessChange: () => void this.recordProcesses(),
          restarts: options.restarts?.[launch.spec.name] ?? 0,
        }),
    );
    for (const app of this.apps) app.start();
    await this.recordProcesses();
  }

  statuses(): Applications {
    return this.apps.map((a) => ({ name: a.name, status: a.status, restarts: a.restarts }));
  }

  /** The application named `name` (tests, logs). */
  app(name: string): SupervisedApp | undefined {
    return this.apps.find((a) => a.name === name);
  }

  /**
   * Resolves once every application is Running at the same time. Throws UpdateFailure when
   * one cannot be run at all, or when `timeoutMs` passes first, saying which and why.
   */
  async waitUp(timeoutMs: number, signal: AbortSignal): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      signal.throwIfAborted();
      const refused = this.apps.find((a) => a.refused !== undefined);
      if (refused) throw new UpdateFailure(`application "${refused.name}": ${refused.refused ?? ""}`);
      if (this.apps.every((a) => a.status === "Running")) return;
      const broken = this.apps.find((a) => a.spawnErrorCode !== undefined && CANNOT_RUN.has(a.spawnErrorCode));
      if (broken) throw new UpdateFailure(`application "${broken.name}": ${broken.lastExit ?? "cannot be run"}`);
      if (Date.now() >= deadline) {
        const down = this.apps.find((a) => a.status !== "Running");
        throw new UpdateFailure(down ? down.whyNotUp(timeoutMs) : "applications did not come up");
      }
      await sleep(Math.min(100, Math.max(1, deadline - Date.now())), signal);
    }
  }

  async stopAll(): Promise<void> {
    const apps = this.apps;
    await Promise.all(apps.map((a) => a.stop()));
    if (apps.length > 0) await this.recordProcesses();
  }

  /**
   * Stops the process groups a previous agent process recorded and left running (it was
   * killed, or the host lost power mid-way and PIDs were reused: a PID whose start time no
   * longer matches is left alone).
   */
  async stopLeftovers(): Promise<Leftovers> {
    const doc = await this.options.store.read("processes", ProcessesDocument).catch(() => null);
    let stopped = 0;
    for (const p of doc?.processes ?? []) {
      const ticks = processStartTicks(p.pid);
      if (ticks !== null && p.startTicks !== null && ticks !== p.startTicks) continue; // PID reused
      if (!groupAlive(p.pid)) continue;
      this.options.logger.warn({ event: "app.leftover", app: p.name, pid: p.pid }, "stopping an application left running by a previous agent process");
      signalGroup(p.pid, "SIGTERM");
      const deadline = Date.now() + this.killGraceMs;
      while (groupAlive(p.pid) && Date.now() < deadline) await sleep(50);
      if (groupAlive(p.pid)) signalGroup(p.pid, "SIGKILL");
      stopped++;
    }
    if (doc) await this.options.store.remove("processes");
    return { stopped, spec: doc?.spec ?? null, restarts: doc?.restarts ?? {} };
  }

  private async recordProcesses(): Promise<void> {
    const processes = this.apps.flatMap((a) => (a.pid === undefined ? [] : [{ name: a.name, pid: a.pid, startTicks: a.startTicks }]));
    const restarts = Object.fromEntries(this.apps.map((a) => [a.name, a.restarts]));
    const doc: ProcessesDocument = { version: 1, spec: this.spec, processes, restarts };
    await this.options.store.write("processes", doc).catch((error: unknown) => {
      this.options.logger.warn({ event: "app.record-failed", err: String(error) }, "cannot record application processes");
    });
  }
}

interface AppSettings {
  cwd: string;
  logFile: string;
  logMaxBytes: number;
  settleMs: number;
  restart: RestartPolicy;
  killGraceMs: number;
  logger: Logger;
  onProcessChange: () => void;
  restarts: number;
}

const TAIL_CHARS = 512;

export class SupervisedApp {
  readonly name: string;
  status: ApplicationStatus = "Preparing";
  restarts = 0;
  pid: number | undefined;
  startTicks: string | null = null;
  /** How the last run ended, for people. */
  lastExit: string | undefined;
  spawnErrorCode: string | undefined;
  readonly refused: string | undefined;

  private child: ChildProcess | null = null;
  private exited: Promise<void> = Promise.resolve();
  private startedAt = 0;
  private failures = 0;
  private stopping = false;
  private settleTimer: NodeJS.Timeout | undefined;
  private restartTimer: NodeJS.Timeout | undefined;
  private readonly log: RotatingLog;
  private tail = "";

  constructor(
    private readonly launch: AppLaunch,
    private readonly settings: AppSettings,
  ) {
    this.name = launch.spec.name;
    this.refused = launch.refused;
    this.restarts = settings.restarts;
    this.log = new RotatingLog(settings.logFile, settings.logMaxBytes);
  }

  start(): void {
    if (this.refused !== undefined) {
      this.status = "Error";
      this.lastExit = this.refused;
      this.settings.logger.error({ event: "app.refused", app: this.name, reason: this.refused }, `application ${this.name} not started`);
      return;
    }
    this.spawnOnce();
  }

  private spawnOnce(): void {
    const [program, ...args] = this.launch.spec.command;
    if (program === undefined || this.stopping) return;
    this.status = "Starting";
    this.spawnErrorCode = undefined;
    this.startedAt = Date.now();
    this.log.write(`--- drover: starting ${JSON.stringify(this.launch.spec.command)} (restart ${this.restarts}) at ${isoTime()}\n`);

    let child: ChildProcess;
    try {
      child = spawn(program, args, { cwd: this.settings.cwd, env: this.launch.env as NodeJS.ProcessEnv, stdio: ["ignore", "pipe", "pipe"], detached: process.platform !== "win32", windowsHide: true });
    } catch (error) {
      this.ended({ error: error as NodeJS.ErrnoException });
      return;
    }
    this.child = child;
    let resolveExited = () => {};
    this.exited = new Promise((resolve) => (resolveExited = resolve));
    let done = false;
    const end = (how: { code?: number | null; signal?: NodeJS.Signals | null; error?: NodeJS.ErrnoException }) => {
      if (done) return;
      done = true;
      this.ended(how);
      resolveExited();
    };
    child.stdout?.on("data", (chunk: Buffer) => this.output(chunk));
    child.stderr?.on("data", (chunk: Buffer) => this.output(chunk));
    child.once("error", (error: NodeJS.ErrnoException) => {
      // Spawning failed (ENOENT, EACCES...); an error after a start (a failed kill) is not an end.
      if (child.pid === undefined) end({ error });
    });
    child.once("exit", (code, signal) => end({ code, signal }));
    if (child.pid !== undefined) {
      this.pid = child.pid;
      this.startTicks = processStartTicks(child.pid);
      this.settings.logger.info({ event: "app.started", app: this.name, pid: child.pid, restarts: this.restarts }, `application ${this.name} started`);
      this.settings.onProcessChange();
      this.settleTimer = setTimeout(() => {
        if (this.child === child && !done) {
          this.status = "Running";
          this.settings.logger.info({ event: "app.running", app: this.name, pid: child.pid }, `application ${this.name} is running`);
        }
      }, this.settings.settleMs);
    }
  }

  private ended(how: { code?: number | null; signal?: NodeJS.Signals | null; error?: NodeJS.ErrnoException }): void {
    clearTimeout(this.settleTimer);
    const ranMs = Date.now() - this.startedAt;
    const hadPid = this.pid !== undefined;
    this.child = null;
    this.pid = undefined;
    this.startTicks = null;
    const program = this.launch.spec.command[0] ?? "";
    this.lastExit = how.error
      ? `cannot run ${program}: ${how.error.message}`
      : how.code !== null && how.code !== undefined
        ? `exited with code ${how.code}`
        : `killed by signal ${how.signal ?? "unknown"}`;
    this.spawnErrorCode = how.error?.code;
    this.log.write(`--- drover: ${this.lastExit} after ${ranMs} ms\n`);
    if (hadPid) this.settings.onProcessChange();
    if (this.stopping) return;

    this.status = "Error";
    if (ranMs >= this.settings.restart.stableMs) this.failures = 0;
    const delayMs = Math.min(this.settings.restart.capMs, this.settings.restart.baseMs * 2 ** Math.min(this.failures, 30));
    this.failures++;
    this.settings.logger.warn(
      { event: "app.exited", app: this.name, code: how.code ?? null, signal: how.signal ?? null, error: how.error?.message, ranMs, restartInMs: delayMs, restarts: this.restarts },
      `application ${this.name} ${this.lastExit}; restarting in ${delayMs} ms`,
    );
    this.restartTimer = setTimeout(() => {
      this.restartTimer = undefined;
      if (this.stopping) return;
      this.restarts++;
      this.spawnOnce();
    }, delayMs);
  }

  private output(chunk: Buffer): void {
    this.log.write(chunk);
    this.tail = (this.tail + chunk.toString("utf8")).slice(-TAIL_CHARS);
  }

  /** Why it is not Running after `timeoutMs`, for the Error condition's info. */
  whyNotUp(timeoutMs: number): string {
    const how = this.status === "Starting" && this.restarts === 0 && this.lastExit === undefined ? "still starting" : (this.lastExit ?? this.status);
    const tail = this.tail.trim().split("\n").slice(-3).join(" | ").slice(-300);
    return (
      `application "${this.name}" did not come up within ${formatSeconds(timeoutMs)}: ${how}` +
      (this.restarts > 0 ? `, restarted ${this.restarts} time${this.restarts === 1 ? "" : "s"}` : "") +
      (tail ? `; last output: ${tail}` : "")
    );
  }

  async stop(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.restartTimer);
    clearTimeout(this.settleTimer);
    const child = this.child;
    if (child && child.pid !== undefined) {
      const pid = child.pid;
      signalGroup(pid, "SIGTERM");
      const kill = setTimeout(() => signalGroup(pid, "SIGKILL"), this.settings.killGraceMs);
      await this.exited;
      clearTimeout(kill);
      // The group may outlive its leader (a child that ignored SIGTERM): make sure.
      if (groupAlive(pid)) signalGroup(pid, "SIGKILL");
      this.settings.logger.info({ event: "app.stopped", app: this.name, pid }, `application ${this.name} stopped`);
    }
    this.log.close();
  }
}

/** A log file bounded at `maxBytes`: when full it becomes `<file>.1` (replacing the older one). */
export class RotatingLog {
  private fd: number | null = null;
  private size = 0;
  private failed = false;
  private closed = false;

  constructor(
    readonly file: string,
    private readonly maxBytes: number,
  ) {}

  write(data: Buffer | string): void {
    if (this.failed || this.closed) return;
    try {
      const bytes = typeof data === "string" ? Buffer.from(data, "utf8") : data;
      if (this.fd === null) {
        this.fd = openSync(this.file, "a", 0o600);
        this.size = fstatSync(this.fd).size;
      }
      if (this.size > 0 && this.size + bytes.length > this.maxBytes) {
        closeSync(this.fd);
        renameSync(this.file, `${this.file}.1`);
        this.fd = openSync(this.file, "a", 0o600);
        this.size = 0;
      }
      // One chunk larger than the limit is cut to its end.
      const slice = bytes.length > this.maxBytes ? bytes.subarray(bytes.length - this.maxBytes) : bytes;
      writeSync(this.fd, slice);
      this.size += slice.length;
    } catch {
      // A full disk must not take the agent down; the application keeps running unlogged.
      this.failed = true;
    }
  }

  /** Output arriving after this (the last bytes of a stopped application) is dropped. */
  close(): void {
    this.closed = true;
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
  }
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    if (process.platform === "win32") process.kill(pid, signal);
    else process.kill(-pid, signal);
  } catch {
    // ESRCH: already gone.
  }
}

function groupAlive(pid: number): boolean {
  try {
    process.kill(process.platform === "win32" ? pid : -pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** The process's start time in clock ticks since boot (Linux /proc), to tell a reused PID; null elsewhere. */
export function processStartTicks(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the command name (which may hold spaces) start at field 3; starttime is 22.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return fields[19] ?? null;
  } catch {
    return null;
  }
}

function formatSeconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${(ms / 1000).toFixed(1)} s`;
}
