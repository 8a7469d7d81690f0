/**
 * What the commands that keep printing share (`describe plan --watch`, `plan watch`,
 * `rollout status --watch`, `events --follow`): Ctrl-C ends them quietly, they poll, and a
 * server away for a while (a restart) is waited out rather than ending them.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { note } from "./context";
import { CliError, EXIT } from "./http";

/**
 * Runs `run` with a signal that Ctrl-C aborts when `watching`; an error after Ctrl-C (the
 * aborted request or sleep) ends the command quietly, any other is thrown.
 */
export async function untilCtrlC(watching: boolean, run: (signal: AbortSignal) => Promise<void>): Promise<void> {
  const stop = new AbortController();
  const onSigint = () => stop.abort();
  if (watching) process.once("SIGINT", onSigint);
  try {
    await run(stop.signal);
  } catch (error) {
    if (!stop.signal.aborted) throw error;
  } finally {
    process.removeListener("SIGINT", onSigint);
  }
}

/**
 * A poll that outlives a server restart: `poll(get)` is `get()`'s answer, or undefined while
 * the server is unreachable (said once per outage). Anything else (401, 404) is thrown and
 * ends the command.
 */
export function pollThroughRestarts(): <T>(get: () => Promise<T>) => Promise<T | undefined> {
  let warned = false;
  return async (get) => {
    try {
      const answer = await get();
      warned = false;
      return answer;
    } catch (error) {
      if (!(error instanceof CliError && error.exitCode === EXIT.UNREACHABLE)) throw error;
      if (!warned) note(`warning: ${error.message}; retrying`);
      warned = true;
      return undefined;
    }
  };
}

/**
 * Polls an object every `interval` ms from `first` until `ended` says so, calling `print` each
 * time the part `key` picks out changed; returns the object as it ended.
 */
export async function watchUntil<T>(opts: {
  first: T;
  interval: number;
  signal: AbortSignal;
  get: (signal: AbortSignal) => Promise<T>;
  ended: (current: T) => boolean;
  key: (current: T) => string;
  print: (current: T) => void;
}): Promise<T> {
  const poll = pollThroughRestarts();
  let current = opts.first;
  let last = opts.key(current);
  while (!opts.ended(current)) {
    await sleep(opts.interval, undefined, { signal: opts.signal });
    const next = await poll(() => opts.get(opts.signal));
    if (next === undefined) continue;
    current = next;
    const now = opts.key(current);
    if (now === last) continue;
    last = now;
    opts.print(current);
  }
  return current;
}
