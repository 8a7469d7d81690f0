/**
 * "The database is unreachable", recognised once (issue 22), and what a server knows about it.
 *
 * `isDatabaseUnreachable` says whether an error means the database could not be asked at all
 * (stopped, restarting, refusing connections, its connections cut, the pool exhausted, SQLite's
 * file locked past its busy timeout or unreadable), as opposed to a query the database refused.
 * errors.ts turns those into 503 UNAVAILABLE with a Retry-After on every surface; the text of
 * the driver's error never reaches a client.
 *
 * `DatabaseHealth` is one server's view: `/readyz` asks it (one cheap query, its answer kept
 * for a second, so a load balancer's probes cost nothing), and every surface reports the
 * unreachable errors it meets (`noteError`). While unreachable, a probe runs every half second
 * until the database answers again; when a probe failed too (an outage, not one request's pool
 * timeout), `reachableSince` is then that moment, from which the sweep gives every device a
 * full disconnection timeout (devices/sweep.ts): heartbeats this server refused were not
 * missed by the devices.
 */
import type { Logger } from "./logger";

/** Prisma's codes for a database it could not reach or lost (P1xxx), or a pool it waited on in vain. */
const PRISMA_CODES = new Set(["P1001", "P1002", "P1008", "P1011", "P1017", "P2024", "P2037"]);
/** Driver adapter error kinds (Prisma 6's adapters: pg, better-sqlite3, whose SQLITE_BUSY is a SocketTimeout). */
const ADAPTER_KINDS = new Set(["DatabaseNotReachable", "ConnectionClosed", "SocketTimeout", "TooManyConnections", "TlsConnectionError"]);
/** Node's socket errors, as `pg` passes them on. */
const SOCKET_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "ENOTFOUND", "EPIPE", "EHOSTUNREACH", "ENETUNREACH", "EAI_AGAIN"]);
/**
 * PostgreSQL's SQLSTATEs: class 08 (connection exception), 57P01 admin_shutdown, 57P02
 * crash_shutdown, 57P03 cannot_connect_now (starting up, shutting down, in recovery),
 * 53300 too_many_connections.
 */
const isPgUnavailableState = (code: string) => /^08[0-9A-Z]{3}$/.test(code) || code === "57P01" || code === "57P02" || code === "57P03" || code === "53300";
/** SQLite: the file locked past the busy timeout, or not openable / readable. */
const isSqliteUnavailableCode = (code: string) => /^SQLITE_(BUSY|CANTOPEN|IOERR)(_|$)/.test(code);
/** `pg`'s own errors carry no code, only these messages. */
const PG_MESSAGES = [
  /^Connection terminated/,
  /timeout exceeded when trying to connect/,
  /is not queryable/,
  /^Can't reach database server/,
  // Prisma's interactive transaction that could not get a connection in time (P2028, also used for other misuse).
  /Unable to start a transaction in the given time/,
];

function field(value: unknown, key: string): unknown {
  return value !== null && typeof value === "object" ? (value as Record<string, unknown>)[key] : undefined;
}

export function isDatabaseUnreachable(error: unknown): boolean {
  // Walks the causes: Prisma wraps the adapter's error (meta.driverAdapterError), which wraps the driver's (cause).
  const seen = new Set<unknown>();
  const queue: unknown[] = [error];
  while (queue.length > 0) {
    const e = queue.shift();
    if (e === null || typeof e !== "object" || seen.has(e)) continue;
    seen.add(e);
    const code = field(e, "code");
    const kind = field(e, "kind");
    const message = field(e, "message");
    if (typeof code === "string") {
      if (PRISMA_CODES.has(code) || SOCKET_CODES.has(code) || isPgUnavailableState(code) || isSqliteUnavailableCode(code)) return true;
    }
    if (typeof kind === "string" && ADAPTER_KINDS.has(kind)) return true;
    // The adapter's "postgres" kind keeps the SQLSTATE in `code` (handled above); "sqlite" in `extendedCode`.
    const extended = field(e, "originalCode") ?? field(e, "extendedCode");
    if (typeof extended === "string" && (isPgUnavailableState(extended) || isSqliteUnavailableCode(extended))) return true;
    if (typeof message === "string" && PG_MESSAGES.some((m) => m.test(message))) return true;
    queue.push(field(e, "cause"), field(field(e, "meta"), "driverAdapterError"));
  }
  return false;
}

/** How long clients are told to wait: short (the database is usually back within seconds), spread so they do not all return at once. */
export function unavailableRetryAfterSeconds(random = Math.random()): number {
  return 1 + Math.floor(random * 3);
}

export interface DatabaseHealthOptions {
  /** One cheap query (`SELECT 1`). */
  ping: () => Promise<unknown>;
  /** The server's clock (ctx.now), read at each use. */
  now: () => Date;
  log: Logger;
  /** How long a probe's answer is kept for `/readyz`. */
  cacheMs?: number;
  /** How often the database is probed while unreachable. */
  retryMs?: number;
}

export class DatabaseHealth {
  private unreachable = false;
  /** A probe failed too: an outage, not one request's bad luck (a pool timeout under load). */
  private confirmed = false;
  private backAt: Date | null = null;
  private shedAt: Date | null = null;
  private probe: { at: number; ok: Promise<boolean> } | null = null;
  private retry: NodeJS.Timeout | null = null;
  private closed = false;
  private readonly cacheMs: number;
  private readonly retryMs: number;

  constructor(private readonly options: DatabaseHealthOptions) {
    this.cacheMs = options.cacheMs ?? 1_000;
    this.retryMs = options.retryMs ?? 500;
  }

  /** False while the database is known to be unreachable. */
  get reachable(): boolean {
    return !this.unreachable;
  }

  /** When the database last answered again after being unreachable; null if it never was (in this process). */
  get reachableSince(): Date | null {
    return this.backAt;
  }

  /**
   * The last moment this server refused a heartbeat for its own load (429 past
   * DROVER_MAX_HEARTBEATS_IN_FLIGHT, issue 22 item 4); null if it never did. Like an outage's
   * end, the sweep counts devices' silence only from then.
   */
  get heartbeatsShedAt(): Date | null {
    return this.shedAt;
  }

  /** A heartbeat refused for the server's load: not the device's silence. */
  noteHeartbeatShed(): void {
    this.shedAt = this.options.now();
  }

  /** Records an error met anywhere; true (and the database now known unreachable) when it is one. */
  noteError(error: unknown): boolean {
    if (!isDatabaseUnreachable(error)) return false;
    this.markUnreachable();
    return true;
  }

  /** `/readyz`: whether a cheap query succeeds, asked at most once per `cacheMs`. */
  ready(): Promise<boolean> {
    const at = Date.now();
    if (this.probe && at - this.probe.at < this.cacheMs) return this.probe.ok;
    const ok = this.options.ping().then(
      () => {
        this.markReachable();
        return true;
      },
      (err: unknown) => {
        // Any failure means not ready; only an unreachable one starts the watch (and the grace).
        if (this.noteError(err)) this.confirmed = true;
        else this.options.log.warn({ err }, "readiness probe failed");
        return false;
      },
    );
    this.probe = { at, ok };
    return ok;
  }

  close(): void {
    this.closed = true;
    if (this.retry) clearTimeout(this.retry);
    this.retry = null;
  }

  private markUnreachable(): void {
    if (!this.unreachable) this.options.log.warn("database unreachable: answering 503 until it is back");
    this.unreachable = true;
    this.probe = { at: Date.now(), ok: Promise.resolve(false) };
    this.watch();
  }

  private markReachable(): void {
    if (!this.unreachable) return;
    this.unreachable = false;
    // Only a confirmed outage grants the sweep's grace: a lone refusal (one request's pool
    // timeout) would otherwise postpone every device's Offline by a timeout each time.
    if (this.confirmed) this.backAt = this.options.now();
    this.confirmed = false;
    this.options.log.info("database reachable again");
  }

  /** Probes until the database answers: when it does is when devices can be heard again. */
  private watch(): void {
    if (this.retry || this.closed) return;
    this.retry = setTimeout(() => {
      this.retry = null;
      this.probe = null;
      void this.ready().then((ok) => {
        if (!ok) this.watch();
      });
    }, this.retryMs);
    this.retry.unref();
  }
}
