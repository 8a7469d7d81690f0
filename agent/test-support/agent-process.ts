/**
 * The real agent as a child process (`node drover-agent.mjs ...`, the agent built as it ships
 * once per test run by tests/global-setup.ts), with its JSON log lines parsed, for the process
 * tests against the real server.
 */
import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { inject } from "vitest";

const ROOT = path.resolve(import.meta.dirname, "../..");
const children = new Set<ChildProcess>();

export interface LogLine {
  event?: string;
  msg?: string;
  [key: string]: unknown;
}

/**
 * Preload it (`preload: [HEALTHY_HOST]`) and the host reads as healthy whatever the test
 * machine's load (test-support/healthy-host.ts, built for the run).
 */
export const HEALTHY_HOST = inject("healthyHost");

export class AgentProcess {
  readonly lines: LogLine[] = [];
  readonly stderr: string[] = [];
  readonly exited: Promise<number | null>;
  private readonly child: ChildProcess;

  /**
   * `preload`: modules imported before the agent (e.g. HEALTHY_HOST).
   * `bundle`: run this built agent file (npm run build:agent) instead of the run's build, from `cwd`.
   * `command`: run this program instead (an installed agent's bin/drover-agent), with `env`.
   */
  constructor(args: string[], options: { preload?: string[]; bundle?: string; cwd?: string; command?: string; env?: NodeJS.ProcessEnv } = {}) {
    const imports = (options.preload ?? []).flatMap((m) => ["--import", m]);
    const entry = options.bundle ?? inject("agentBundle");
    const [program, argv] = options.command ? [options.command, args] : [process.execPath, [...imports, entry, ...args]];
    this.child = spawn(program, argv, { cwd: options.cwd ?? ROOT, stdio: ["ignore", "pipe", "pipe"], env: options.env ?? process.env });
    children.add(this.child);
    let buffer = "";
    this.child.stdout?.on("data", (chunk: Buffer) => {
      buffer += chunk.toString("utf8");
      let newline: number;
      while ((newline = buffer.indexOf("\n")) >= 0) {
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + 1);
        try {
          this.lines.push(JSON.parse(line) as LogLine);
        } catch {
          this.lines.push({ msg: line });
        }
      }
    });
    this.child.stderr?.on("data", (chunk: Buffer) => this.stderr.push(chunk.toString("utf8")));
    this.exited = new Promise((resolve) =>
      this.child.on("exit", (code) => {
        children.delete(this.child);
        resolve(code);
      }),
    );
  }

  /** Every agent process still running, killed (afterAll). */
  static killAll(): void {
    for (const child of children) child.kill("SIGKILL");
  }

  events(filter: (line: LogLine) => boolean = () => true): (string | undefined)[] {
    return this.lines.filter(filter).map((l) => l.event);
  }

  async waitFor(event: string, timeoutMs = 20_000, match: (line: LogLine) => boolean = () => true): Promise<LogLine> {
    return eventually(() => this.lines.find((l) => l.event === event && match(l)), timeoutMs, `agent log event "${event}" (stderr: ${this.stderr.join("")})`);
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  kill(signal: NodeJS.Signals): void {
    this.child.kill(signal);
  }
}

/** Polls `check` until it gives a value, at 25, 50, 100 then every 200 ms (`pollDelays`). */
export async function eventually<T>(check: () => T | undefined | false | Promise<T | undefined | false>, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  const delays = pollDelays();
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, delays.next().value));
  }
}

/**
 * The waits between a poll's checks: `everyMs` each time, or, by default, doubling from 25 ms to
 * 200. Most conditions hold within a few checks, seen as soon as at a fixed 50 ms; one that takes
 * seconds (agents' heartbeats, a rollout, a renewal) is checked 5 times a second instead of 20,
 * each check an API call or a query on both sides of it: the CPU of a wait (issue 20).
 */
export function* pollDelays(everyMs?: number): Generator<number, never> {
  for (let delay = everyMs ?? 25; ; delay = everyMs ?? Math.min(200, delay * 2)) yield delay;
}
