/**
 * A running action's output, sent while it runs (issue 10; AGENT_PROTOCOL.md "Action
 * reports": a RUNNING report with output on a RUNNING action replaces the stored output).
 *
 * The executor hands its capture over (ActionContext.liveOutput); every `intervalMs` (1 s),
 * when the capture grew since the last output the server took, and the server already has
 * the action RUNNING, the whole output so far (cut to 64 KiB as the final report is) goes in
 * one PUT. At most one is in flight; one that fails is tried again at the next tick with the
 * output as it is then. Nothing is journaled: a lost partial report loses nothing, the final
 * report carries the whole output as before. The action never waits for any of this.
 */
import type { Logger } from "pino";
import { ProtocolError } from "./client";
import { truncateOutput } from "./executors/output";
import type { LiveOutput } from "./executors/types";


export const OUTPUT_INTERVAL_MS = 1_000;

export interface OutputStreamOptions {
  /** Sends `{state: RUNNING, output}`; rejects when the server did not take it. */
  send(output: string, signal: AbortSignal): Promise<void>;
  /** Whether the server has the action RUNNING by now (its RUNNING report answered). */
  ready(): boolean;
  log: Logger;
  intervalMs?: number;
}

export class OutputStream {
  private source: LiveOutput | null = null;
  private timer: ReturnType<typeof setInterval> | null = null;
  private inFlight: AbortController | null = null;
  /** `total` of the output the server last took (nothing written yet: nothing to send). */
  private sentTotal = 0;
  private stopped = false;
  /** Partial reports the server took, for tests and logs. */
  sent = 0;

  constructor(private readonly options: OutputStreamOptions) {}

  /** The executor's capture; the first one starts the ticks. */
  attach(source: LiveOutput): void {
    if (this.stopped) return;
    this.source = source;
    if (this.timer === null) {
      this.timer = setInterval(() => this.tick(), this.options.intervalMs ?? OUTPUT_INTERVAL_MS);
      // An agent with nothing else to do may still exit: the stream never holds it up.
      this.timer.unref?.();
    }
  }

  /** The action ended: no more partial reports; one in flight is abandoned (the final report follows). */
  stop(): void {
    this.stopped = true;
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    this.inFlight?.abort();
    this.inFlight = null;
  }

  private tick(): void {
    const source = this.source;
    if (this.stopped || !source || this.inFlight || source.total === this.sentTotal || !this.options.ready()) return;
    const total = source.total;
    const output = truncateOutput(source.text());
    const controller = new AbortController();
    this.inFlight = controller;
    this.options
      .send(output, controller.signal)
      .then(
        () => {
          this.sentTotal = total;
          this.sent++;
        },
        (error: unknown) => {
          if (controller.signal.aborted) return;
          // The server will not take partial output for this action (it ended, or never
          // was ours): stop trying. Anything else: the next tick tries again.
          if (error instanceof ProtocolError && [400, 403, 404, 409, 413].includes(error.status)) {
            this.options.log.debug({ event: "action.output.refused", status: error.status, message: error.message }, "the server refused the output so far; not sending more");
            this.stop();
            return;
          }
          this.options.log.debug({ event: "action.output.failed", error: error instanceof Error ? error.message : String(error) }, "sending the output so far failed; trying again");
        },
      )
      .finally(() => {
        if (this.inFlight === controller) this.inFlight = null;
      });
  }
}
