/**
 * Time helpers for the agent's loops: abortable sleep, a wakeable sleep, and exponential
 * backoff with full jitter (a retrying fleet must not retry in lock-step).
 */

/** Resolves after `ms`, or at once when `signal` aborts. Never rejects. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted || ms <= 0) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
  });
}

/**
 * A sleep that another part of the agent can cut short: the heartbeat loop sleeps on it,
 * and a spec change wakes it so that the new renderedVersion is reported at once.
 *
 * A wake resolves the sleep itself (clears its timer, detaches from `signal`): no
 * AbortController per sleep, whose abort() would build a DOMException with a stack on
 * every wake (≈ 6 % of the simulator's CPU with many agents doing short actions).
 */
export class Waker {
  private pending = false;
  /** Ends the sleep under way as woken; null while nobody sleeps. */
  private wakeCurrent: (() => void) | null = null;

  /**
   * Sleeps up to `ms`; returns true when woken (or a wake was already pending), false when
   * the time ran out or `signal` aborted.
   */
  sleep(ms: number, signal?: AbortSignal): Promise<boolean> {
    if (this.pending) {
      this.pending = false;
      return Promise.resolve(true);
    }
    if (signal?.aborted || ms <= 0) return Promise.resolve(false);
    return new Promise((resolve) => {
      const end = (woken: boolean) => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", onEnd);
        if (this.wakeCurrent === onWake) this.wakeCurrent = null;
        resolve(woken);
      };
      const onWake = () => end(true);
      const onEnd = () => end(false);
      const timer = setTimeout(onEnd, ms);
      signal?.addEventListener("abort", onEnd, { once: true });
      this.wakeCurrent = onWake;
    });
  }

  /** Ends the sleep under way; with nobody asleep, the next sleep returns at once (once). */
  wake(): void {
    if (this.wakeCurrent) this.wakeCurrent();
    else this.pending = true;
  }
}

export interface BackoffOptions {
  /** First ceiling, in ms. */
  baseMs: number;
  /** Largest ceiling, in ms. */
  capMs: number;
  /** Returns [0, 1); injectable for tests. */
  random?: () => number;
}

/**
 * Exponential backoff with "full jitter": attempt n waits a uniform random time in
 * [0, min(cap, base * 2^n)]. Reset after a success.
 */
export class Backoff {
  private attempt = 0;
  private readonly random: () => number;

  constructor(private readonly options: BackoffOptions) {
    this.random = options.random ?? Math.random;
  }

  /** The ceiling of the next delay (before jitter). */
  ceiling(attempt = this.attempt): number {
    // 2^attempt overflows to Infinity long after it passed any sane cap; clamp the exponent.
    return Math.min(this.options.capMs, this.options.baseMs * 2 ** Math.min(attempt, 40));
  }

  /** The delay to wait before the next try; grows the ceiling for the one after. */
  next(): number {
    const delay = Math.floor(this.random() * this.ceiling());
    this.attempt++;
    return delay;
  }

  get attempts(): number {
    return this.attempt;
  }

  reset(): void {
    this.attempt = 0;
  }
}

/**
 * The agent's default spread of the periodic heartbeat: each interval is the server's
 * heartbeatSeconds times a uniform factor in [0.8, 1.2].
 *
 * Why: a fleet-wide template change answers every member's held poll at the same moment;
 * each applies and reports, and with exact intervals their heartbeats would stay in step
 * from then on (500 agents at 5 s: 444 POST /status in one 100 ms window, every interval;
 * 32 at most with this spread).
 * Drawing every interval anew (not only the one after an out-of-band report) spreads a
 * synchronized fleet over 0.4 × the interval at once and keeps it from ever locking step
 * again. The mean interval is unchanged, and the longest gap (1.2 ×) stays well inside the
 * server's disconnection timeout (at least 3 × the interval, server/env.ts).
 */
export const HEARTBEAT_JITTER = 0.2;

/** Adds ±`fraction` uniform jitter to `ms` (heartbeat spreading). */
export function jittered(ms: number, fraction: number, random: () => number = Math.random): number {
  if (fraction <= 0) return ms;
  return Math.max(0, Math.round(ms * (1 + fraction * (2 * random() - 1))));
}

export interface LinkedSignal {
  signal: AbortSignal;
  /** True when the timeout (not a parent) aborted it. */
  timedOut(): boolean;
  /** Detaches from the parents and clears the timer; call when the work is done. */
  dispose(): void;
}

/**
 * An AbortSignal that aborts when any parent aborts or after `timeoutMs`.
 *
 * Not AbortSignal.any/AbortSignal.timeout: on Node 20 every AbortSignal.any() leaves a
 * small record on each long-lived parent that is never freed, and the agent links each
 * request to its lifetime signal (≈ 50 bytes a request: nothing for one agent, ≈ 90 MB an
 * hour for a 10,000-agent simulator). This one detaches itself in dispose().
 */
export function linkedSignal(parents: (AbortSignal | undefined)[], timeoutMs?: number): LinkedSignal {
  const controller = new AbortController();
  let timedOut = false;
  const live = parents.filter((p): p is AbortSignal => p !== undefined);
  const onAbort = () => controller.abort();
  const timer =
    timeoutMs === undefined
      ? undefined
      : setTimeout(() => {
          timedOut = true;
          controller.abort(new DOMException("The operation timed out.", "TimeoutError"));
        }, timeoutMs);
  for (const parent of live) {
    if (parent.aborted) controller.abort();
    else parent.addEventListener("abort", onAbort, { once: true });
  }
  return {
    signal: controller.signal,
    timedOut: () => timedOut,
    dispose() {
      clearTimeout(timer);
      for (const parent of live) parent.removeEventListener("abort", onAbort);
    },
  };
}

/**
 * `new Date(at).toISOString()`, the same text, without V8's date cache: its first use loads
 * ICU's time-zone data, ≈0.8 MB of an idle agent's RSS that stays (issue 12), though an ISO
 * time in UTC needs no time zone. Throws the same RangeError for an invalid time.
 */
export function isoTime(at: number | Date = Date.now()): string {
  const date = typeof at === "number" ? new Date(at) : at;
  if (Number.isNaN(date.getTime())) throw new RangeError("Invalid time value");
  const pad = (n: number, width = 2) => String(n).padStart(width, "0");
  const y = date.getUTCFullYear();
  const year = y >= 0 && y <= 9999 ? pad(y, 4) : `${y < 0 ? "-" : "+"}${pad(Math.abs(y), 6)}`;
  return `${year}-${pad(date.getUTCMonth() + 1)}-${pad(date.getUTCDate())}T${pad(date.getUTCHours())}:${pad(date.getUTCMinutes())}:${pad(date.getUTCSeconds())}.${pad(date.getUTCMilliseconds(), 3)}Z`;
}
