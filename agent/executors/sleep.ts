/**
 * `sleep {seconds}`: waits, then succeeds; a cancel ends it at once. Not idempotent: after
 * a restart the agent cannot tell how much of the wait was done, and running it again
 * would wait longer than asked.
 */
import { z } from "zod";
import { abortableDelay, type Executor } from "./types";

export const SleepArgs = z.strictObject({
  seconds: z.number().min(0).max(3600),
});

export const sleepExecutor: Executor<typeof SleepArgs> = {
  kind: "sleep",
  idempotent: false,
  argsSchema: SleepArgs,
  async run({ seconds }, { signal }) {
    await abortableDelay(seconds * 1000, signal);
    return { output: "" };
  },
};
