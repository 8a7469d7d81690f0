/**
 * What an action kind is to the agent: an executor with an args schema and a run function.
 * The queue (../actions.ts) validates args, runs one action at a time and turns the
 * outcome into the seed-004 states: a result is DONE, an ActionFailure (or any throw) is
 * FAILED, and a run whose signal the operator aborted is CANCELLED.
 */
import type { Logger } from "pino";
import type { z } from "zod";

export interface ActionContext {
  /** Aborts when the operator cancels the action or the agent stops. */
  signal: AbortSignal;
  log: Logger;
  /** Sets a condition that the heartbeat reports (a reboot sets `rebooting`). */
  setCondition(name: "rebooting", value: boolean): void;
  /**
   * An executor that captures output as it runs hands the capture here: the queue sends the
   * output so far while the action runs, at most once a second (issue 10). Optional.
   */
  liveOutput?(source: LiveOutput): void;
}

/** Output while it is written: bytes written so far (a change counter) and the text kept. */
export interface LiveOutput {
  readonly total: number;
  text(): string;
}

export interface ActionResult {
  output: string;
}

/** An action that did not succeed: `message` becomes the report's `error`, with any output it produced. */
export class ActionFailure extends Error {
  constructor(
    message: string,
    readonly output?: string,
  ) {
    super(message);
    this.name = "ActionFailure";
  }
}

export interface Executor<S extends z.ZodType = z.ZodType> {
  kind: string;
  /**
   * Safe to run again from the start when the agent died while it ran. Otherwise such an
   * action is reported FAILED ("agent restarted while the action was running").
   */
  idempotent: boolean;
  argsSchema: S;
  /** `exec` only: the commands it runs, told to the server (capabilities); absent: any command. */
  allowList?: readonly string[];
  run(args: z.output<S>, context: ActionContext): Promise<ActionResult>;
  /**
   * After a restart that found the action RUNNING: its result when the restart itself is
   * the proof that it completed (a reboot that happened), else null.
   */
  recover?(startedAt: Date): ActionResult | null;
}

export type ExecutorRegistry = ReadonlyMap<string, Executor>;

export function registry(executors: Executor[]): ExecutorRegistry {
  return new Map(executors.map((e) => [e.kind, e]));
}

/** Resolves after `ms`; rejects with ActionFailure("cancelled") when `signal` aborts first. */
export function abortableDelay(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.reject(new ActionFailure("cancelled"));
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(new ActionFailure("cancelled"));
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

/** What these executors run, for the heartbeat (lib/protocol AgentCapabilities). */
export function capabilitiesOf(executors: ExecutorRegistry): { kinds: string[]; exec?: { allow: string[] } } {
  const allow = executors.get("exec")?.allowList;
  return { kinds: [...executors.keys()].sort(), ...(allow ? { exec: { allow: [...allow] } } : {}) };
}
