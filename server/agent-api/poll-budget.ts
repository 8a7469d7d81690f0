/**
 * How many long-polls the server holds, in all and per device (issue 6). A held poll costs a
 * socket and ≈10 KB; without a ceiling one token held 633 at once, and enough of them fill
 * the process's sockets so that operators and new agents are refused. Past the global budget
 * a new poll gets 429 with Retry-After (as the Kubernetes API server does past its
 * in-flight limit); past the per-device cap the device's oldest held poll is answered at once,
 * so an agent that reconnects after losing its socket is never locked out by its own ghost.
 * Across servers (issue 22), a device's new poll on another server answers every poll it
 * holds here (`supersedeAll`, told over the bus by server/agent-api/handler.ts): a device's
 * polls are held by one server at a time, at most the cap there.
 *
 * `Deadlines` is the one timer of every held poll (issue 22).
 */
import { AppError } from "../errors";

/** A held request as the budget sees it: answered early when a newer one of its key needs its place. */
export interface Held {
  supersede(): void;
}

export class PollBudget {
  private held = 0;
  // One entry per key, an array of one or two (DROVER_MAX_POLLS_PER_DEVICE), oldest first: no
  // Set or closure per poll (issue 22: memory per held poll).
  private readonly byKey = new Map<string, Held[]>();

  constructor(
    private readonly max: number,
    private readonly perKey: number,
    private readonly onRefused: (reason: "budget" | "superseded") => void = () => undefined,
  ) {}

  get size(): number {
    return this.held;
  }

  /** Answers at once every poll `key` holds here (a newer one was admitted on another server). */
  supersedeAll(key: string): void {
    const mine = this.byKey.get(key);
    if (!mine) return;
    for (const entry of [...mine]) {
      this.release(key, entry);
      this.onRefused("superseded");
      entry.supersede();
    }
  }

  /**
   * Takes a place for `entry`, a held poll of `key` (a device or an enrollment), or throws 429.
   * Past the per-key cap the key's oldest entry is superseded (out of the budget first, its
   * answer a moment later). Give the place back with `release(key, entry)`, however it ends.
   */
  admit(key: string, entry: Held): void {
    const mine = this.byKey.get(key);
    if (mine && mine.length >= this.perKey) {
      const oldest = mine[0];
      if (oldest) {
        this.release(key, oldest);
        this.onRefused("superseded");
        oldest.supersede();
      }
    } else if (this.held >= this.max) {
      this.onRefused("budget");
      // Spread the retries: a wall of agents told "1 s" comes back as one wall.
      throw new AppError("RATE_LIMITED", `the server holds ${this.max} long-polls, its limit: retry later`, 5 + Math.random() * 25);
    }
    const now = this.byKey.get(key);
    if (now) now.push(entry);
    else this.byKey.set(key, [entry]);
    this.held++;
  }

  /** Gives `entry`'s place back; false when it held none (already released). */
  release(key: string, entry: Held): boolean {
    const mine = this.byKey.get(key);
    const i = mine ? mine.indexOf(entry) : -1;
    if (!mine || i < 0) return false;
    mine.splice(i, 1);
    if (mine.length === 0) this.byKey.delete(key);
    this.held--;
    return true;
  }
}

/**
 * Which keys arrived here lately (issue 22): a device's poll on a server that has not held one
 * of its polls within `windowMs` is news to the cluster (the agent came over from another
 * server, whose ghost poll should be answered); a poll following the device's last one here is
 * not, and tells no one. So a server publishes once per device that moves to it, not once per
 * poll (10,000 agents re-polling would be 10,000 bus messages to every server). Bounded: past
 * `maxEntries` the stalest are forgotten (forgotten ones count as new: one message more).
 */
export class Arrivals {
  private readonly lastSeen = new Map<string, number>();

  constructor(
    private readonly windowMs: number,
    private readonly maxEntries: number,
  ) {}

  /** True when `key` was not seen here within the window; `key` is seen now either way. */
  arrive(key: string, now: number): boolean {
    const last = this.lastSeen.get(key);
    this.lastSeen.delete(key);
    this.lastSeen.set(key, now);
    for (const stalest of this.lastSeen.keys()) {
      if (this.lastSeen.size <= this.maxEntries) break;
      this.lastSeen.delete(stalest);
    }
    return last === undefined || now - last > this.windowMs;
  }
}

/** What `Deadlines` times: done once answered (it then stays queued, small, until its deadline). */
export interface Timed {
  readonly deadline: number;
  readonly done: boolean;
  expire(): void;
}

/**
 * One timer for every held poll rather than a `setTimeout` each (issue 22: a Timeout, its
 * closure and the timer list's entry per poll). Polls wait in one FIFO queue per wait length, so
 * each queue is in deadline order; the timer is set for the earliest head. An answered poll is
 * not searched for: it is `done` and skipped when it reaches the head.
 */
export class Deadlines<T extends Timed> {
  private readonly queues = new Map<number, { items: T[]; head: number }>();
  private timer: NodeJS.Timeout | null = null;
  private armedFor = Infinity;

  constructor(private readonly now: () => number = Date.now) {}

  add(item: T, waitMs: number): void {
    let q = this.queues.get(waitMs);
    if (!q) this.queues.set(waitMs, (q = { items: [], head: 0 }));
    q.items.push(item);
    if (item.deadline < this.armedFor) this.arm(item.deadline);
  }

  /** Items queued, answered ones not yet dropped included (tests). */
  get queued(): number {
    let n = 0;
    for (const q of this.queues.values()) n += q.items.length - q.head;
    return n;
  }

  private arm(at: number): void {
    if (this.timer) clearTimeout(this.timer);
    this.armedFor = at;
    this.timer = setTimeout(() => this.fire(), Math.max(0, at - this.now()));
    // The sockets keep a server running, not a timer of polls whose sockets closed.
    this.timer.unref();
  }

  private fire(): void {
    this.timer = null;
    this.armedFor = Infinity;
    const now = this.now();
    let next = Infinity;
    for (const [wait, q] of this.queues) {
      while (q.head < q.items.length) {
        const item = q.items[q.head] as T;
        if (!item.done && item.deadline > now) break;
        q.items[q.head++] = undefined as unknown as T;
        if (!item.done) item.expire();
      }
      if (q.head === q.items.length) this.queues.delete(wait);
      else {
        if (q.head > 1024) {
          q.items = q.items.slice(q.head);
          q.head = 0;
        }
        next = Math.min(next, (q.items[q.head] as T).deadline);
      }
    }
    if (next < Infinity) this.arm(next);
  }
}
