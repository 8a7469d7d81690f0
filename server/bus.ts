/**
 * The event bus (DESIGN.md §1): reports, approvals and spec changes wake the controllers and
 * the parked long-polls that care. Topics are strings such as `device:<id>` (work may be
 * waiting for that device) or `enrollment:<id>`.
 *
 * In process on SQLite. On PostgreSQL (several servers on one database, DESIGN.md §9) the
 * same object is a `PgBus` (server/bus-pg.ts): every publish also goes out as a NOTIFY and
 * what other servers publish comes back in here; callers do not change.
 */
import { EventEmitter } from "node:events";

export type Listener<T = unknown> = (payload: T) => void;

export class Bus {
  protected readonly emitter = new EventEmitter();

  constructor() {
    // One listener per parked long-poll: 10,000+ is normal, not a leak.
    this.emitter.setMaxListeners(0);
  }

  publish<T>(topic: string, payload?: T): void {
    this.emitter.emit(topic, payload);
  }

  subscribe<T>(topic: string, listener: Listener<T>): () => void {
    this.emitter.on(topic, listener as Listener);
    return () => this.emitter.off(topic, listener as Listener);
  }

  /** What `subscribe`'s returned function does, for a caller that keeps the listener rather than one more closure (the held polls). */
  unsubscribe<T>(topic: string, listener: Listener<T>): void {
    this.emitter.off(topic, listener as Listener);
  }

  listenerCount(topic: string): number {
    return this.emitter.listenerCount(topic);
  }

  /** Ends what the bus holds open (the PostgreSQL bridge's connection); nothing in process. */
  async close(): Promise<void> {}
}

export const topics = {
  device: (deviceId: string) => `device:${deviceId}`,
  enrollment: (enrollmentId: string) => `enrollment:${enrollmentId}`,
  /** Every persisted event, for live console updates. */
  events: "events",
  /** A fleet member's heartbeat moved its statuses or restart counts: `{owner}` (the rollout controller looks soon). */
  memberReports: "member-reports",
  /** Heartbeats a server ingested since its last message, `{n}`, about once a second (the overview's history counts the cluster's). */
  heartbeats: "heartbeats",
  /** A device's work poll was admitted by a server, `{key, server}`: the others answer theirs (the per-device cap across servers). */
  pollAdmitted: "poll-admitted",
} as const;
