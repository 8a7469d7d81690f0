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
 */
import { AppError } from "../errors";

export class PollBudget {
  private held = 0;
  private readonly byKey = new Map<string, Set<() => void>>();

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
      mine.delete(entry);
      this.onRefused("superseded");
      entry();
    }
  }

  /**
   * Takes a place for a held poll of `key` (a device or an enrollment), or throws 429.
   * `supersede` answers this poll early when a newer one of the same key needs its place.
   * Returns the release, to call once when the poll ends, however it ends.
   */
  admit(key: string, supersede: () => void): () => void {
    const mine = this.byKey.get(key) ?? new Set<() => void>();
    if (mine.size >= this.perKey) {
      // Sets iterate in insertion order: the first is the oldest.
      const oldest = mine.values().next().value;
      if (oldest) {
        // Out of the device's set now, even if its answer goes out a moment later.
        mine.delete(oldest);
        this.onRefused("superseded");
        oldest();
      }
    } else if (this.held >= this.max) {
      this.onRefused("budget");
      // Spread the retries: a wall of agents told "1 s" comes back as one wall.
      throw new AppError("RATE_LIMITED", `the server holds ${this.max} long-polls, its limit: retry later`, 5 + Math.random() * 25);
    }
    let released = false;
    const entry = () => supersede();
    mine.add(entry);
    this.byKey.set(key, mine);
    this.held++;
    return () => {
      if (released) return;
      released = true;
      this.held--;
      mine.delete(entry);
      if (mine.size === 0 && this.byKey.get(key) === mine) this.byKey.delete(key);
    };
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
