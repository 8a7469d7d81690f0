/** `noop`: does nothing and succeeds. Useful to check that a device takes actions at all. */
import { z } from "zod";
import type { Executor } from "./types";

export const NoopArgs = z.object({});

export const noopExecutor: Executor<typeof NoopArgs> = {
  kind: "noop",
  idempotent: true,
  argsSchema: NoopArgs,
  async run() {
    return { output: "" };
  },
};
