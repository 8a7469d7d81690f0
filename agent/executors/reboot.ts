/**
 * `reboot`: reports the Rebooting condition, then reboots the host.
 *
 * Simulated unless the agent runs with `--real-reboot`: Rebooting is reported for a few
 * seconds and the action is DONE. A real reboot runs `systemctl reboot` (or `reboot` where
 * there is no systemctl); the host then stops the agent with the action RUNNING, and the
 * restart after the reboot finds the host booted after the action started and reports it
 * DONE (recover). A restart without a reboot reports it FAILED, as for any action that
 * is not idempotent.
 */
import os from "node:os";
import { z } from "zod";
import { isoTime } from "../timing";
import { runCommand } from "./exec";
import { abortableDelay, ActionFailure, type ActionResult, type Executor } from "./types";

export const RebootArgs = z.object({});

export interface RebootOptions {
  /** Reboot the host (`--real-reboot`); never in tests. */
  real: boolean;
  /** A simulated reboot reports Rebooting this long. */
  simulatedSeconds?: number;
}

export const DEFAULT_SIMULATED_REBOOT_SECONDS = 5;
/** After the reboot command succeeded, how long to wait for the host to go down. */
const REAL_REBOOT_WAIT_MS = 5 * 60_000;

export function rebootExecutor(options: RebootOptions): Executor<typeof RebootArgs> {
  return {
    kind: "reboot",
    idempotent: false,
    argsSchema: RebootArgs,
    async run(_args, { signal, log, setCondition }) {
      setCondition("rebooting", true);
      try {
        if (!options.real) {
          await abortableDelay((options.simulatedSeconds ?? DEFAULT_SIMULATED_REBOOT_SECONDS) * 1000, signal);
          return { output: "simulated reboot (start the agent with --real-reboot to reboot the host)\n" };
        }
        for (const [command, args] of [
          ["systemctl", ["reboot"]],
          ["reboot", []],
        ] as const) {
          const result = await runCommand({ command, args, timeoutMs: 60_000, signal });
          if (result.end === "error") continue; // not on this host: try the next one
          if (result.end === "cancelled") throw new ActionFailure("cancelled", result.output);
          if (result.end !== "exited" || result.code !== 0) {
            throw new ActionFailure(`${command} reboot failed (${result.end === "timeout" ? "timed out" : `exit code ${String(result.code ?? result.signal)}`})`, result.output);
          }
          log.warn({ event: "reboot.requested", command }, "host reboot requested");
          await abortableDelay(REAL_REBOOT_WAIT_MS, signal);
          throw new ActionFailure(`the host did not go down within ${REAL_REBOOT_WAIT_MS / 60_000} minutes of "${command} reboot"`, result.output);
        }
        throw new ActionFailure("neither systemctl nor reboot is available on this host");
      } finally {
        setCondition("rebooting", false);
      }
    },
    recover(startedAt: Date): ActionResult | null {
      if (!options.real) return null;
      const bootedAt = Date.now() - os.uptime() * 1000;
      return bootedAt > startedAt.getTime() ? { output: `the host rebooted (up since ${isoTime(bootedAt)})\n` } : null;
    },
  };
}
