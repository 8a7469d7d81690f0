/**
 * One controller leader among several servers on one PostgreSQL (issue 11, DESIGN.md §9).
 *
 * Every server holds one dedicated connection and tries `pg_try_advisory_lock(CONTROLLER_LOCK)`
 * on it every `retryMs` (1.5 s). The one that gets it is the leader and runs the controllers
 * (server/controllers.ts) for as long as that connection lives: a session-level advisory lock
 * is PostgreSQL's to release, and it does when the session ends, the moment the leader's
 * process dies (kill -9: the kernel closes its socket, the backend sees end-of-file) or its
 * connection is terminated. Another server's next try takes it: a takeover within ≈ 1.5 s.
 *
 * Knowing it still leads: `confirm()` (called before every controllers' tick) asks PostgreSQL
 * on the same connection whether this session holds the lock, with a deadline
 * (`CONFIRM_TIMEOUT_MS`). An error or a deadline missed ends the connection and leadership at
 * once (`onChange(false)` stops the controllers), so a leader that cannot reach PostgreSQL
 * gives up within a tick and a timeout (≈ 2 + 2 s). PostgreSQL, for its part, releases the lock
 * of a connection that went quiet only after TCP keepalives fail (set per session below:
 * 5 s idle, then 3 probes 2 s apart, ≈ 11 s): the old leader has stopped before anyone else
 * can start. A process that is merely paused keeps its socket (the kernel answers the
 * keepalives) and so keeps the lock; it resumes as leader, and nobody else ran meanwhile.
 *
 * What remains (and why it is safe): leadership is checked before a tick, not inside every
 * statement. A pass that started before the lock was lost (a terminated backend, say) runs to
 * its end while the new leader's first pass may begin ≈ 1.5 s later. Their writes meet in the
 * database: an interactive transaction locks the object it decides for (lib/transactions.ts)
 * and each pass re-reads and re-decides inside its own, and the state
 * changes are compare-and-set: a device is rendered only `WHERE renderedSpecId <> <version>`
 * (fleets/render.ts), so two passes rendering one batch update each device once; action moves
 * are `UPDATE … WHERE state = <expected>`; the sweep writes `WHERE lastSeen = <read>`
 * (controllers.ts lists the rest). README: "PostgreSQL and several servers".
 */
import pg from "pg";
import type { Logger } from "./logger";

/** The advisory lock's key: any constant no other tool on the database uses ("DRVR"). */
export const CONTROLLER_LOCK = 0x44525652;
const CONFIRM_TIMEOUT_MS = 2_000;
const BACKOFF_MAX_MS = 5_000;

export interface Leadership {
  /** True while this server holds the lock (as far as it last knew). */
  readonly leader: boolean;
  /** Asks PostgreSQL; false (and leadership given up) when the lock or its connection is gone. */
  confirm(): Promise<boolean>;
  /** Settles after the first try (this server leads or not): a lone server runs its controllers from the start. */
  readonly ready: Promise<void>;
  /** Stops trying; a leader's lock is released (its connection ends). */
  stop(): Promise<void>;
}

export interface LeaderOptions {
  url: string;
  log: Logger;
  /** Called on every change of leadership, after the change. */
  onChange(leader: boolean): void;
  retryMs?: number;
}

export function startLeaderElection(options: LeaderOptions): Leadership {
  const { url, log, onChange } = options;
  const retryMs = options.retryMs ?? 1_500;
  let client: pg.Client | null = null;
  let leader = false;
  let stopped = false;
  let timer: NodeJS.Timeout | null = null;
  let failures = 0;

  const setLeader = (value: boolean) => {
    if (leader === value) return;
    leader = value;
    if (value) log.info({ lock: CONTROLLER_LOCK }, "leader: this server runs the controllers");
    else if (!stopped) log.warn("leader: no longer the leader; controllers stopped");
    onChange(value);
  };

  /** Ends this connection (releasing a lock it held) and leadership with it. */
  const drop = (c: pg.Client, err?: unknown) => {
    if (client !== c) return;
    client = null;
    c.on("error", () => undefined);
    c.end().catch(() => undefined);
    if (err && !stopped) log.warn({ err }, "leader: lost the connection holding the controller lock");
    setLeader(false);
    schedule(nextDelay());
  };

  const nextDelay = () => (failures === 0 ? retryMs : Math.min(BACKOFF_MAX_MS, retryMs * 2 ** Math.min(failures, 4)));

  /** One timer at a time: the next try. */
  const schedule = (delay: number) => {
    if (stopped || timer) return;
    timer = setTimeout(() => void attempt(), delay * (0.8 + Math.random() * 0.4));
    timer.unref();
  };

  const connect = async (): Promise<pg.Client> => {
    const c = new pg.Client({
      connectionString: url,
      application_name: "drover-leader",
      keepAlive: true,
      // PostgreSQL's side: a connection that goes quiet is dropped (and the lock freed) in ≈ 11 s.
      options: "-c tcp_keepalives_idle=5 -c tcp_keepalives_interval=2 -c tcp_keepalives_count=3",
    });
    c.on("error", (err) => drop(c, err));
    c.on("end", () => drop(c, new Error("connection ended")));
    client = c;
    await c.connect();
    return c;
  };

  const attempt = async () => {
    timer = null;
    if (stopped) return;
    try {
      const c = client ?? (await connect());
      if (!leader) {
        const { rows } = await c.query<{ locked: boolean }>("SELECT pg_try_advisory_lock($1) AS locked", [CONTROLLER_LOCK]);
        if (stopped) return;
        if (rows[0]?.locked) setLeader(true);
      }
      failures = 0;
    } catch (err) {
      failures++;
      if (client) drop(client, err);
      else log.warn({ err }, "leader: cannot reach PostgreSQL");
    }
    if (!leader) schedule(nextDelay());
  };

  const ready = attempt();

  return {
    ready,
    get leader() {
      return leader;
    },
    async confirm() {
      const c = client;
      if (!leader || !c) return false;
      let deadline: NodeJS.Timeout | undefined;
      try {
        const { rows } = await Promise.race([
          c.query<{ held: boolean }>(
            `SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid() AND granted
               AND classid = 0 AND objid = $1::bigint::oid AND objsubid = 1) AS held`,
            [CONTROLLER_LOCK],
          ),
          new Promise<never>((_, reject) => {
            deadline = setTimeout(() => reject(new Error(`the leader's connection did not answer in ${CONFIRM_TIMEOUT_MS} ms`)), CONFIRM_TIMEOUT_MS);
          }),
        ]);
        if (rows[0]?.held) return true;
        drop(c, new Error("the controller lock is no longer held by this session"));
      } catch (err) {
        drop(c, err);
      } finally {
        clearTimeout(deadline);
      }
      return false;
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      timer = null;
      const c = client;
      client = null;
      setLeader(false);
      // Ending the session releases the lock at once: the next server need not wait for a timeout.
      if (c) {
        c.on("error", () => undefined);
        await c.end().catch(() => undefined);
      }
    },
  };
}
