/**
 * The simulator's executors: the same kinds, args schemas and idempotency as the real ones,
 * behind the same interface, but nothing touches the host. `exec` never spawns: it takes a
 * random time in `seconds` and returns a fake output (a line a second while it runs, sent
 * live as a real exec's is); `noop` and `reboot` take a random
 * time too; `sleep` sleeps its own seconds. A share `failure` of the actions that would have
 * succeeded fails instead ("simulated failure").
 *
 * `k0supdate` / `airgapupdate` download and apply nothing: each half takes half of
 * `plan.applySeconds`, and the device names matching the `plan` knobs' globs fail as a real
 * agent would, with its messages: the download ("download failed: simulated failure for
 * NAME from URL"), the checksum ("sha256 mismatch: expected X, got Y") or the update command.
 */
import { createHash } from "node:crypto";
import { PlanSignalArgs, type PlanUpdateActionKind } from "../../lib/plan-spec";
import { redactUrl } from "../runtime/artifact";
import { ExecArgs } from "./exec";
import { NoopArgs } from "./noop";
import { OutputCapture } from "./output";
import { RebootArgs } from "./reboot";
import { sleepExecutor } from "./sleep";
import { abortableDelay, ActionFailure, registry, type Executor, type ExecutorRegistry } from "./types";

export interface SimulatedActionOptions {
  /** Share of actions that fail, 0..1. */
  failure: number;
  /** Range of the simulated duration of exec, noop and reboot, in seconds. */
  seconds: readonly [number, number];
  random: () => number;
  /** The device's name, matched against the `plan` knobs. */
  name?: string;
  plan?: SimulatedPlanOptions;
  /** `--allow-exec` for simulated devices: exec refuses other commands, as the real agent does. Unset: any command. */
  allowExec?: readonly string[];
}

export interface SimulatedPlanOptions {
  /** How long a k0supdate / airgapupdate takes, download and apply (default 0.2). */
  applySeconds?: number;
  /** Globs of device names (`*` any run of characters, `?` one) whose downloads fail. */
  failDownloadNodes?: readonly string[];
  /** ... whose downloads do not match the plan's sha256. */
  badSha256Nodes?: readonly string[];
  /** ... whose update command fails. */
  failApplyNodes?: readonly string[];
}

export const DEFAULT_SIMULATED_ACTION_SECONDS: readonly [number, number] = [0.05, 0.5];
export const DEFAULT_PLAN_APPLY_SECONDS = 0.2;

/** A matcher for comma-list globs of device names: `worker-1*`, `sim-0000?`, `worker-3`. */
export function nodeMatcher(globs: readonly string[] = []): (name: string) => boolean {
  if (globs.length === 0) return () => false;
  const source = globs.map((g) => g.replace(/[.+^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*").replace(/\?/g, ".")).join("|");
  const re = new RegExp(`^(?:${source})$`);
  return (name) => re.test(name);
}

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
    ...(options.allowExec ? { allowList: [...options.allowExec] } : {}),
    async run({ command, args }, { signal, liveOutput }) {
      if (options.allowExec && !options.allowExec.includes(command)) {
        throw new ActionFailure(`command ${JSON.stringify(command)} is not in the agent's allow-list (--allow-exec)`);
      }
      const ms = duration();
      const output = new OutputCapture();
      output.write(`[simulated] ${[command, ...args].join(" ")}\n`);
      liveOutput?.(output);
      // A long one writes a line a second, so that its output grows while it runs (issue 10).
      let waited = 0;
      for (; waited + 1000 < ms; waited += 1000) {
        await abortableDelay(1000, signal);
        output.write(`[simulated] running, ${(waited + 1000) / 1000} s\n`);
      }
      await abortableDelay(ms - waited, signal);
      output.write(`[simulated] exited 0 after ${Math.round(ms)} ms\n`);
      return { output: output.text() };
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
  const update = (kind: PlanUpdateActionKind) => simulatedPlanUpdate(kind, options.name ?? "", options.plan ?? {});
  return registry([mayFail(noop), mayFail(sleepExecutor), mayFail(exec), mayFail(reboot), mayFail(update("k0supdate")), mayFail(update("airgapupdate"))]);
}

function simulatedPlanUpdate(kind: PlanUpdateActionKind, name: string, plan: SimulatedPlanOptions): Executor<typeof PlanSignalArgs> {
  const halfMs = ((plan.applySeconds ?? DEFAULT_PLAN_APPLY_SECONDS) * 1000) / 2;
  const failDownload = nodeMatcher(plan.failDownloadNodes);
  const badSha256 = nodeMatcher(plan.badSha256Nodes);
  const failApply = nodeMatcher(plan.failApplyNodes);
  const hex = (text: string) => createHash("sha256").update(text).digest("hex");
  return {
    kind,
    idempotent: false,
    argsSchema: PlanSignalArgs,
    async run(args, { signal }) {
      const where = redactUrl(args.url);
      await abortableDelay(halfMs, signal);
      if (failDownload(name)) throw new ActionFailure(`download failed: simulated failure for ${name} from ${where}`);
      // The file's "contents" are its URL: its checksum is the plan's, unless this node is to get a bad one.
      const expected = args.sha256 ?? hex(args.url);
      if (badSha256(name)) throw new ActionFailure(`sha256 mismatch: expected ${expected}, got ${hex(`${name} ${args.url}`)}`);
      const output = `[simulated] downloaded ${where}, sha256 ${expected}\n[simulated] applying ${kind} ${args.version}\n`;
      await abortableDelay(halfMs, signal);
      if (failApply(name)) {
        throw new ActionFailure(`update command "simulated" exited with code 1: simulated failure applying ${kind} ${args.version} on ${name}`, output);
      }
      return { output: `${output}[simulated] applied ${args.version}\n` };
    },
  };
}
