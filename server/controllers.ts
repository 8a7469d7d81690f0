/**
 * The controllers' clock: the safety sweep (DESIGN.md §1), action expiry, the action reconcile (offering
 * is retried for devices with waiting actions), the rollout controller (every open rollout:
 * canary durations and timeouts move with time alone), the plan controller (deadlines,
 * devices that came Online or stopped qualifying), the fleet controller's recount and the
 * device-status gauges, the workflow controller (deadlines, backoff, references), and the
 * pruning of idempotency keys past their 24 h. Reactive work happens where events occur (the fleet controller also
 * recounts shortly after device events: fleets/controller.ts); this catches what time alone
 * changes.
 */
import type { ServerContext } from "./context";
import { sweepDisconnected } from "./devices/sweep";
import { wakeDevicesWithPendingActions } from "./actions/scheduling";
import { expireActions } from "./actions/expiry";
import { refreshFleetStatus, watchFleetStatus } from "./fleets/controller";
import { runRollouts, watchRollouts } from "./rollouts/controller";
import { runPlans, watchPlans } from "./plans/controller";
import { runWorkflows, watchWorkflows } from "./workflows/controller";
import { startMetricsHistory } from "./overview/history";
import { pruneIdempotencyKeys } from "./idempotency/idempotency";
import { dialectOf } from "./db";
import { startLeaderElection, type Leadership } from "./leader";

/**
 * Starts the controllers. On SQLite, here and now (one server owns its database). On
 * PostgreSQL (several servers may share it, DESIGN.md §9), only on the elected leader
 * (server/leader.ts): they start when this server wins the advisory lock and stop when it
 * loses it; every tick first confirms the lock is still held.
 *
 * "Nothing done twice" rests on two things. (1) At most one server runs the controllers at a
 * time, up to one window: a pass already running when the lock is lost (a terminated or
 * broken connection) finishes while the new leader may start its first pass ≈ 1.5 s later; a
 * leader that cannot reach PostgreSQL gives up before PostgreSQL frees its lock (leader.ts).
 * (2) Inside that window the database decides, not leadership. Every interactive transaction
 * locks the object it decides for (a plan, a workflow, a fleet: server/lib/transactions.ts), and
 * the controllers re-read and re-decide inside theirs, so a second pass of one object sees the
 * first's commit and decides nothing new. And the writes are compare-and-set: renders only touch devices
 * `WHERE renderedSpecId <> <version>` (a device is never given the same version twice), action
 * moves are `UPDATE … WHERE state = <expected>`, the sweep writes `WHERE lastSeen = <read>`, a
 * schedule's tick `WHERE nextScheduleTime = <due>`, a plan node's action has the node's id
 * (a second insert fails). What the window can still repeat is work outside a transaction
 * (a wake sent twice, a recount), never a device's update.
 */
export interface Controllers {
  ready: Promise<void>;
  stop(): Promise<void>;
  /**
   * One pass of the controllers' tick now, on this server if it leads (false if it does not):
   * what the sweep's timer does every DROVER_SWEEP_SECONDS, for tests that drive time instead
   * of waiting for it.
   */
  tick(): Promise<boolean>;
}

export function startControllers(ctx: ServerContext): Controllers {
  if (dialectOf(ctx.env.DATABASE_URL) !== "postgresql") {
    ctx.metrics.controllerLeader.set(1);
    const running = runControllers(ctx, null);
    return {
      ready: Promise.resolve(),
      tick: () => running.tick().then(() => true),
      stop: () => {
        running.stop();
        return Promise.resolve();
      },
    };
  }
  ctx.metrics.controllerLeader.set(0);
  let running: ReturnType<typeof runControllers> | null = null;
  const election = startLeaderElection({
    url: ctx.env.DATABASE_URL,
    log: ctx.log,
    onChange: (leader) => {
      ctx.metrics.controllerLeader.set(leader ? 1 : 0);
      running?.stop();
      running = leader ? runControllers(ctx, election) : null;
    },
  });
  return {
    ready: election.ready,
    tick: async () => (running ? (await running.tick(), true) : false),
    async stop() {
      running?.stop();
      running = null;
      await election.stop();
    },
  };
}

/**
 * A turn of the event loop for what waits (requests, held polls to answer). On SQLite every query
 * settles without I/O, so a tick's steps ran back to back in one chain of microtasks: 10–30 ms
 * of the event loop every 2 s with 10,000 devices (issue 22: the wake and approve p99).
 */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** The controllers themselves; `leadership` (PostgreSQL) is confirmed before every tick. */
function runControllers(ctx: ServerContext, leadership: Leadership | null): { stop(): void; tick(): Promise<void> } {
  let running: Promise<void> | null = null;
  let stopped = false;
  // This leader's term: devices get a full disconnection timeout from here (devices/sweep.ts),
  // whatever kept their heartbeats from being recorded before (a database outage cost the old
  // leader its lock; a restarted server heard nothing while it was down).
  const termStartedAt = ctx.now();
  // A tick asked for while one runs waits for it and runs after it (the timer's own ticks skip).
  const tick = async (): Promise<void> => {
    if (stopped) return;
    if (running) return running;
    running = pass().finally(() => (running = null));
    return running;
  };
  const requested = async (): Promise<void> => {
    while (running) await running;
    return tick();
  };
  const pass = async () => {
    try {
      if (leadership && !(await leadership.confirm())) return;
      const steps = [
        () => sweepDisconnected(ctx, termStartedAt),
        () => expireActions(ctx),
        () => wakeDevicesWithPendingActions(ctx),
        // Rollouts before the recount: what they render shows in the counts.
        () => runRollouts(ctx),
        () => runPlans(ctx),
        () => runWorkflows(ctx),
        () => refreshFleetStatus(ctx),
        // Idempotency keys past their 24 h (issue 22): one indexed DELETE.
        () => pruneIdempotencyKeys(ctx),
      ];
      for (const step of steps) {
        // Leadership lost mid-tick (stop() is called then): the rest is the new leader's.
        if (stopped) return;
        await step();
        await nextTurn();
      }
    } catch (err) {
      // Unreachable: noted (and logged once) by the database's health; the sweep waits for it.
      if (!ctx.database.noteError(err) && !stopped) ctx.log.error({ err }, "sweep failed");
    } finally {
      // What the tick changed (or anything since the last count) shows at the next scrape.
      counted = null;
    }
  };
  // The device gauges: counted by the leader alone (a follower shows none), when /metrics is
  // read, at most once a tick however often it is (a benchmark's probe reads it every 100 ms).
  let counted: Promise<{ axis: string; value: string; n: number }[]> | null = null;
  ctx.metrics.countDevicesWith(() => (counted ??= Promise.resolve(ctx.fast.statusCounts())));
  const timer = setInterval(() => void tick(), ctx.env.DROVER_SWEEP_SECONDS * 1000);
  timer.unref();
  const fleets = watchFleetStatus(ctx);
  const rollouts = watchRollouts(ctx);
  const plans = watchPlans(ctx);
  const workflows = watchWorkflows(ctx);
  // The overview's history: a sample a minute on its own timer (server/overview/history.ts).
  const history = startMetricsHistory(ctx);
  return {
    tick: requested,
    stop() {
      stopped = true;
      ctx.metrics.countDevicesWith(null);
      clearInterval(timer);
      fleets.stop();
      rollouts.stop();
      plans.stop();
      workflows.stop();
      history.stop();
    },
  };
}
