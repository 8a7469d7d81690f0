/**
 * The controllers' clock: the safety sweep (DESIGN.md §1), action expiry, the action reconcile (offering
 * is retried for devices with waiting actions), the rollout controller (every open rollout:
 * canary durations and timeouts move with time alone), the plan controller (deadlines,
 * devices that came Online or stopped qualifying), the fleet controller's recount and the
 * device-status gauges, the workflow controller (deadlines, backoff, references). Reactive work happens where events occur (the fleet controller also
 * recounts shortly after device events: fleets/controller.ts); this catches what time alone
 * changes.
 */
import type { ServerContext } from "./context";
import { sweepDisconnected } from "./devices/sweep";
import { deviceCounts } from "./devices/queries";
import { wakeDevicesWithPendingActions } from "./actions/scheduling";
import { expireActions } from "./actions/expiry";
import { refreshFleetStatus, watchFleetStatus } from "./fleets/controller";
import { runRollouts, watchRollouts } from "./rollouts/controller";
import { runPlans, watchPlans } from "./plans/controller";
import { runWorkflows, watchWorkflows } from "./workflows/controller";
import { startMetricsHistory } from "./overview/history";

export function startControllers(ctx: ServerContext): { stop(): void } {
  let running = false;
  let stopped = false;
  const tick = async () => {
    if (running || stopped) return;
    running = true;
    try {
      await sweepDisconnected(ctx);
      await expireActions(ctx);
      await wakeDevicesWithPendingActions(ctx);
      // Rollouts before the recount: what they render shows in the counts.
      await runRollouts(ctx);
      await runPlans(ctx);
      await runWorkflows(ctx);
      await refreshFleetStatus(ctx);
      const counts = await deviceCounts(ctx);
      ctx.metrics.devicesByStatus.reset();
      for (const axis of ["summary", "updated", "applicationSummary", "lifecycle"] as const) {
        for (const [status, n] of Object.entries(counts[axis])) ctx.metrics.devicesByStatus.set({ axis, status }, n);
      }
    } catch (err) {
      if (!stopped) ctx.log.error({ err }, "sweep failed");
    } finally {
      running = false;
    }
  };
  const timer = setInterval(() => void tick(), ctx.env.DROVER_SWEEP_SECONDS * 1000);
  timer.unref();
  const fleets = watchFleetStatus(ctx);
  const rollouts = watchRollouts(ctx);
  const plans = watchPlans(ctx);
  const workflows = watchWorkflows(ctx);
  // The overview's history: a sample a minute on its own timer (server/overview/history.ts).
  const history = startMetricsHistory(ctx);
  return {
    stop() {
      stopped = true;
      clearInterval(timer);
      fleets.stop();
      rollouts.stop();
      plans.stop();
      workflows.stop();
      history.stop();
    },
  };
}
