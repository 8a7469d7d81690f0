/**
 * The simulator's virtual device: the same update states as a real one, nothing touches the
 * host. Knobs, matched against the spec's `version` (the template's version string):
 *
 *   crashVersions     its applications come up, then restart every `crashSeconds`: the
 *                     restart count grows by one each period, Starting for a moment after
 *                     each restart (the server's canary thresholds count these)
 *   failVersions      applying fails in ApplyingUpdate → RollingBack → Error
 *   slowApplySeconds  each reported state (Preparing, ReadyToUpdate, ApplyingUpdate,
 *                     RollingBack) lasts this long, for `slowVersions` (all when not given)
 *
 * Cheap enough for 10,000 devices: no process, no timer while idle; restart counts are
 * computed from the clock when a heartbeat asks.
 */
import type { RenderedSpec } from "../../lib/protocol";
import { sleep } from "../timing";
import { UpdateFailure, type Applications, type DeviceRuntime, type ReportedUpdateState } from "./types";

export interface SimulatedUpdateOptions {
  crashVersions?: readonly string[];
  /** Period of a crash-looping version's restarts (default 10). */
  crashSeconds?: number;
  failVersions?: readonly string[];
  /** Versions applied slowly; every version when absent. */
  slowVersions?: readonly string[];
  /** Seconds spent in each reported update state (default 0). */
  slowApplySeconds?: number;
}

export const DEFAULT_CRASH_SECONDS = 10;
/** How long a crash-looping application reports Starting after each restart. */
const CRASH_STARTING_MS = 1_000;
const DEFAULT_APPLICATION_NAMES = ["web", "metrics"];

/** The applications a spec runs in the simulator: its own, or two stand-ins when it names none. */
export function simulatedApplicationNames(spec: RenderedSpec | null): string[] {
  const names = spec?.applications.map((a) => a.name) ?? [];
  return names.length > 0 ? names : DEFAULT_APPLICATION_NAMES;
}

export class SimulatedRuntime implements DeviceRuntime {
  private running: RenderedSpec | null = null;
  private activatedAt = 0;
  private readonly crash: ReadonlySet<string>;
  private readonly fail: ReadonlySet<string>;
  private readonly slow: ReadonlySet<string> | null;
  private readonly crashMs: number;
  private readonly slowMs: number;

  constructor(
    options: SimulatedUpdateOptions,
    /** The applications of a device that does not crash-loop (the profile's restarts knob). */
    private readonly steady: (running: RenderedSpec | null) => Applications,
    private readonly now: () => number = Date.now,
  ) {
    this.crash = new Set(options.crashVersions ?? []);
    this.fail = new Set(options.failVersions ?? []);
    this.slow = options.slowVersions ? new Set(options.slowVersions) : null;
    this.crashMs = (options.crashSeconds ?? DEFAULT_CRASH_SECONDS) * 1000;
    this.slowMs = (options.slowApplySeconds ?? 0) * 1000;
  }

  async start(running: RenderedSpec | null): Promise<void> {
    this.activated(running);
  }

  async prepare(): Promise<void> {}

  async apply(spec: RenderedSpec): Promise<void> {
    if (this.fail.has(spec.version)) throw new UpdateFailure(`simulated failure applying version ${spec.version}`);
  }

  async activate(spec: RenderedSpec): Promise<void> {
    this.activated(spec);
  }

  async rollback(previous: RenderedSpec | null): Promise<void> {
    this.activated(previous);
  }

  async finish(): Promise<void> {}

  async dwell(spec: RenderedSpec, _state: ReportedUpdateState, signal: AbortSignal): Promise<void> {
    if (this.slowMs <= 0 || (this.slow !== null && !this.slow.has(spec.version))) return;
    await sleep(this.slowMs, signal);
    signal.throwIfAborted();
  }

  applications(): Applications {
    const running = this.running;
    if (running && this.crash.has(running.version)) {
      const elapsed = Math.max(0, this.now() - this.activatedAt);
      const restarts = Math.floor(elapsed / this.crashMs);
      const starting = restarts > 0 && elapsed % this.crashMs < Math.min(CRASH_STARTING_MS, this.crashMs / 2);
      return simulatedApplicationNames(running).map((name) => ({ name, status: starting ? "Starting" : "Running", restarts }));
    }
    return this.steady(running);
  }

  async stop(): Promise<void> {}

  private activated(spec: RenderedSpec | null): void {
    this.running = spec;
    this.activatedAt = this.now();
  }
}
