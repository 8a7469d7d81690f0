/**
 * The built-in action kinds (lib/action-status.ts BUILTIN_ACTION_KINDS): noop, sleep, exec,
 * reboot. The agent process runs the real ones; the simulator runs simulated.ts.
 */
import { execExecutor } from "./exec";
import { noopExecutor } from "./noop";
import { rebootExecutor } from "./reboot";
import { sleepExecutor } from "./sleep";
import { registry, type ExecutorRegistry } from "./types";

export { ActionFailure, registry, type ActionContext, type ActionResult, type Executor, type ExecutorRegistry } from "./types";
export { simulatedExecutors, DEFAULT_SIMULATED_ACTION_SECONDS, type SimulatedActionOptions } from "./simulated";

export interface BuiltinOptions {
  /** `--allow-exec`: the commands `exec` may run. None by default. */
  allowExec?: readonly string[];
  /** `--real-reboot`: `reboot` reboots the host. */
  realReboot?: boolean;
  /** Between SIGTERM and SIGKILL when an exec is stopped. */
  killGraceMs?: number;
  /** How long a simulated reboot reports Rebooting. */
  simulatedRebootSeconds?: number;
}

export function builtinExecutors(options: BuiltinOptions = {}): ExecutorRegistry {
  return registry([
    noopExecutor,
    sleepExecutor,
    execExecutor({ allow: options.allowExec ?? [], ...(options.killGraceMs === undefined ? {} : { killGraceMs: options.killGraceMs }) }),
    rebootExecutor({ real: options.realReboot ?? false, ...(options.simulatedRebootSeconds === undefined ? {} : { simulatedSeconds: options.simulatedRebootSeconds }) }),
  ]);
}
