/**
 * The built-in action kinds (lib/action-status.ts BUILTIN_ACTION_KINDS): noop, sleep, exec,
 * reboot, the plan signals k0supdate and airgapupdate (lib/plan-spec.ts
 * PLAN_UPDATE_ACTION_KINDS), and agentupgrade (issue 12, given an upgrader). The agent process runs the real ones; the simulator runs
 * simulated.ts.
 */
import type { Upgrader } from "../upgrade";
import { agentUpgradeExecutor } from "./agent-upgrade";
import { execExecutor } from "./exec";
import { noopExecutor } from "./noop";
import { planUpdateExecutors, type PlanUpdateOptions } from "./plan-update";
import { rebootExecutor } from "./reboot";
import { sleepExecutor } from "./sleep";
import { registry, type ExecutorRegistry } from "./types";

export { ActionFailure, capabilitiesOf, registry, type ActionContext, type ActionResult, type Executor, type ExecutorRegistry, type LiveOutput } from "./types";
export { simulatedExecutors, DEFAULT_SIMULATED_ACTION_SECONDS, DEFAULT_PLAN_APPLY_SECONDS, type SimulatedActionOptions, type SimulatedPlanOptions } from "./simulated";
export type { PlanUpdateOptions } from "./plan-update";

export interface BuiltinOptions {
  /** `--allow-exec`: the commands `exec` may run. None by default. */
  allowExec?: readonly string[];
  /** `--real-reboot`: `reboot` reboots the host. */
  realReboot?: boolean;
  /** Between SIGTERM and SIGKILL when an exec is stopped. */
  killGraceMs?: number;
  /** How long a simulated reboot reports Rebooting. */
  simulatedRebootSeconds?: number;
  /** k0supdate / airgapupdate: `--update-command` and where files are downloaded. Without it they fail. */
  update?: PlanUpdateOptions;
  /** agentupgrade: the agent's upgrader (../upgrade.ts); without it the kind is not run. */
  upgrader?: Upgrader;
}

export function builtinExecutors(options: BuiltinOptions = {}): ExecutorRegistry {
  return registry([
    noopExecutor,
    sleepExecutor,
    execExecutor({ allow: options.allowExec ?? [], ...(options.killGraceMs === undefined ? {} : { killGraceMs: options.killGraceMs }) }),
    rebootExecutor({ real: options.realReboot ?? false, ...(options.simulatedRebootSeconds === undefined ? {} : { simulatedSeconds: options.simulatedRebootSeconds }) }),
    // No command, no download directory needed: the run fails before it would use one.
    ...planUpdateExecutors({ command: null, downloadDir: "", killGraceMs: options.killGraceMs, ...options.update }),
    ...(options.upgrader ? [agentUpgradeExecutor(options.upgrader)] : []),
  ]);
}
