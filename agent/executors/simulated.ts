/**
 * The simulator's executors: the same kinds, args schemas and idempotency as the real ones,
 * behind the same interface, but nothing touches the host. `exec` never spawns: it takes a
 * random time in `seconds` and returns a fake output; `noop` and `reboot` take a random
 * time too; `sleep` sleeps its own seconds. A share `failure` of the actions that would have
 * succeeded fails instead ("simulated failure").
 */
import { ExecArgs } from "./exec";
import { NoopArgs } from "./noop";
import { RebootArgs } from "./reboot";
import { sleepExecutor } from "./sleep";
import { abortableDelay, ActionFailure, registry, type Executor, type ExecutorRegistry } from "./types";

export interface SimulatedActionOptions {
  /** Share of actions that fail, 0..1. */
  failure: number;
  /** Range of the simulated duration of exec, noop and reboot, in seconds. */
  seconds: readonly [number, number];
  random: () => number;
}

export const DEFAULT_SIMULATED_ACTION_SECONDS: readonly [number, number] = [0.05, 0.5];

export function simulatedExecutors(options: SimulatedActionOptions): ExecutorRegistry {
  const [min, max] = options.seconds;
  const duration = () => (min + options.random() * (max - min)) * 1000;
  const mayFail = <E extends Executor>(executor: E): E => ({
    ...executor,
    async run(args, context) {
      const result = await executor.run(args, context);
      if (options.random() < options.failure) throw new ActionFailure("simulated failure", result.output);
      return result;
    },
  });
  const noop: Executor<typeof NoopArgs> = {
    kind: "noop",
    idempotent: true,
    argsSchema: NoopArgs,
    async run(_args, { signal }) {
      await abortableDelay(duration(), signal);
      return { output: "" };
    },
  };
  const exec: Executor<typeof ExecArgs> = {
    kind: "exec",
    idempotent: false,
    argsSchema: ExecArgs,
    async run({ command, args }, { signal }) {
      const ms = duration();
      await abortableDelay(ms, signal);
      return { output: `[simulated] ${[command, ...args].join(" ")}\n[simulated] exited 0 after ${Math.round(ms)} ms\n` };
    },
  };
  const reboot: Executor<typeof RebootArgs> = {
    kind: "reboot",
    idempotent: false,
    argsSchema: RebootArgs,
    async run(_args, { signal, setCondition }) {
      setCondition("rebooting", true);
      try {
        await abortableDelay(duration(), signal);
      } finally {
        setCondition("rebooting", false);
      }
      return { output: "[simulated] rebooted\n" };
    },
  };
  return registry([mayFail(noop), mayFail(sleepExecutor), mayFail(exec), mayFail(reboot)]);
}
