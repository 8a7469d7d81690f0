/**
 * The agent's action queue (seed 004, AGENT_PROTOCOL.md "Action reports").
 *
 * Offered actions go into the journal (journal.ts) as NEW and are reported NEW. They run
 * one at a time, oldest createdAt first, once the server has the NEW report: RUNNING, then
 * DONE (with output) or FAILED (with error and any output). `cancel` from /work reports a
 * queued action CANCELLED without running it, and stops a running one (its executor's
 * signal aborts) and reports it CANCELLED.
 *
 * While an action runs, an executor that captures output hands it over (liveOutput) and its
 * output so far goes to the server at most once a second when it grew (output-stream.ts),
 * outside the journal and without holding the action up.
 *
 * Two loops, side by side:
 *  - the runner takes the next action and runs it through its executor (executors/);
 *  - the reporter sends the journal's unanswered states in order, retrying with backoff
 *    until the server answers. 409: the server disagrees; the report is dropped (and a
 *    refused NEW is never run). 404: the server forgot the action; the report goes again
 *    with kind and args, so that it records it as the agent's (the "agent wins" rule).
 *
 * A state is on disk before the server hears of it, and a report waits for any heartbeat
 * in flight: a heartbeat built before the action was journaled must not reach the server
 * after the NEW report (the server would take the action's absence from it for LOST).
 */
import type { Logger } from "pino";
import { describeZodError, type OfferedAction } from "../lib/protocol";
import { InvalidResponseError, ProtocolError, type ProtocolClient } from "./client";
import { ActionFailure, type ActionContext, type ExecutorRegistry } from "./executors";
import { truncateOutput } from "./executors/output";
import { ActionJournal, isFinished, isSettled, stateOf, type AgentActionState, type JournalEntry } from "./journal";
import { OutputStream } from "./output-stream";
import type { StateStore } from "./state";
import { Backoff, linkedSignal, sleep, Waker, type BackoffOptions } from "./timing";

export type { AgentActionState } from "./journal";
export interface QueuedAction {
  id: string;
  state: AgentActionState;
}

/** Unsettled actions the agent holds at most; the heartbeat lists them all (the protocol caps the list at 1000). */
export const MAX_QUEUED = 500;
const ERROR_LIMIT = 4 * 1024;
/** How long stop() waits for a running action to end after its signal aborted. */
const STOP_WAIT_MS = 2_000;

export interface ActionQueueOptions {
  store: StateStore;
  client: ProtocolClient;
  /** The device token (known once enrolled). */
  token: () => string;
  executors: ExecutorRegistry;
  logger: Logger;
  retry: Omit<BackoffOptions, "random">;
  random?: () => number;
  now?: () => number;
  /** Resolves when no heartbeat is in flight. */
  heartbeatSettled?: () => Promise<void>;
  /** A condition the heartbeat reports changed: send one now. */
  onConditionChange?: () => void;
  /** How often a running action's output so far may be sent (issue 10); 1 s by default. */
  outputIntervalMs?: number;
}

export interface ActionStats {
  received: number;
  done: number;
  failed: number;
  cancelled: number;
}

interface Running {
  entry: JournalEntry;
  controller: AbortController;
  cancelled: boolean;
}

export class ActionQueue {
  readonly stats: ActionStats = { received: 0, done: 0, failed: 0, cancelled: 0 };

  private readonly log: Logger;
  private readonly now: () => number;
  private readonly random: () => number;
  private readonly life = new AbortController();
  private readonly runWaker = new Waker();
  private readonly reportWaker = new Waker();
  private readonly quietWaiters = new Set<() => void>();
  /** When the server last answered a report of each entry (ms), to tell a stale re-offer from a real one. */
  private readonly answeredAt = new Map<string, number>();
  private journal: ActionJournal | null = null;
  private running: Running | null = null;
  private runner: Promise<void> | null = null;
  private reporter: Promise<void> | null = null;
  private rebootingFlag = false;
  private fullWarned = false;

  constructor(private readonly options: ActionQueueOptions) {
    this.log = options.logger;
    this.now = options.now ?? Date.now;
    this.random = options.random ?? Math.random;
  }

  /** Loads the journal (settling what a restart must settle) and starts both loops. */
  async start(): Promise<void> {
    if (this.journal) return;
    const { journal, recovered } = await ActionJournal.load(this.options.store, this.options.executors, new Date(this.now()));
    this.journal = journal;
    for (const r of recovered) {
      if (r.outcome === "failed") {
        this.stats.failed++;
        this.log.warn({ event: "action.recovered", actionId: r.id, kind: r.kind, state: "FAILED", error: r.error }, "action was running when the agent stopped: FAILED");
      } else if (r.outcome === "done") {
        this.stats.done++;
        this.log.info({ event: "action.recovered", actionId: r.id, kind: r.kind, state: "DONE" }, "action completed across the restart: DONE");
      } else {
        this.log.info({ event: "action.recovered", actionId: r.id, kind: r.kind, state: "RUNNING" }, "idempotent action was running when the agent stopped: running it again");
      }
    }
    const queued = journal.queue();
    if (queued.length > 0) this.log.info({ event: "actions.resumed", queue: queued }, "resuming the action queue");
    this.runner = this.runLoop();
    this.reporter = this.reportLoop();
  }

  /**
   * Takes the actions of a /work answer and its cancel list. Returns true when it took
   * anything new (a new action, a cancel to carry out); false when everything offered was
   * already held (its reports are on the way).
   *
   * `askedAt`: when the poll that brought this answer was sent. An answer to a poll older
   * than the server's last answer about an action may still offer it: that is not a sign
   * that the server lost it.
   */
  async offer(actions: readonly OfferedAction[], cancel: readonly string[], askedAt: number = this.now()): Promise<boolean> {
    const journal = this.requireJournal();
    const now = new Date(this.now());
    let took = false;
    let changed = false;

    for (const action of actions) {
      const entry = journal.get(action.id);
      if (entry) {
        // Offered again after the server answered its reports: it no longer has them
        // (a restored database, say). Send them again; a finished action is never re-run.
        if (entry.reported > 0 && (this.answeredAt.get(entry.id) ?? 0) < askedAt) {
          this.log.warn({ event: "action.reoffered", actionId: entry.id, state: stateOf(entry) }, "the server offers an action it had reports of; reporting again");
          journal.replay(entry);
          changed = true;
        }
        continue;
      }
      if (journal.activeCount() >= MAX_QUEUED) {
        if (!this.fullWarned) this.log.warn({ event: "actions.full", max: MAX_QUEUED }, "the action queue is full; further actions wait on the server");
        this.fullWarned = true;
        continue;
      }
      journal.add(action, now);
      this.stats.received++;
      took = changed = true;
      this.log.info({ event: "action.received", actionId: action.id, kind: action.kind, createdAt: action.createdAt }, "action queued");
    }

    for (const id of cancel) {
      const entry = journal.get(id);
      if (!entry) {
        this.log.debug({ event: "action.cancel.unknown", actionId: id }, "cancel for an action this agent does not hold");
        continue;
      }
      const state = stateOf(entry);
      if (this.running?.entry === entry) {
        if (this.running.cancelled) continue;
        this.running.cancelled = true;
        this.running.controller.abort();
        took = true;
        this.log.info({ event: "action.cancelling", actionId: id, kind: entry.kind }, "stopping the running action");
      } else if (state === "NEW" || state === "RUNNING") {
        // Queued (or RUNNING from before a restart and not started again yet).
        journal.finish(entry, "CANCELLED", now);
        this.stats.cancelled++;
        took = changed = true;
        this.log.info({ event: "action.cancelled", actionId: id, kind: entry.kind, was: state }, "action cancelled before it ran");
      } else if (isSettled(entry) && (this.answeredAt.get(entry.id) ?? 0) < askedAt) {
        // The server still has it NEW or RUNNING, though it answered the final report.
        journal.replay(entry);
        changed = true;
      }
    }

    if (this.fullWarned && journal.activeCount() < MAX_QUEUED) this.fullWarned = false;
    if (changed) {
      await journal.save();
      this.reportWaker.wake();
      this.runWaker.wake();
    }
    return took;
  }

  /** The whole queue, as the heartbeat reports it: every entry not finished-and-acknowledged. */
  queue(): QueuedAction[] {
    return this.journal?.queue() ?? [];
  }

  /** conditions.rebooting of the heartbeat. */
  get rebooting(): boolean {
    return this.rebootingFlag;
  }

  /** Nothing to tell the server and no cancel under way. */
  isQuiet(): boolean {
    if (!this.journal) return true;
    return this.journal.nextReport() === null && !this.running?.cancelled;
  }

  /**
   * Waits until isQuiet() (the server has answered every report, and no cancel is under
   * way), at most `maxMs` or until `signal` aborts. A running action that is not being
   * cancelled does not count: this waits for reports, not for actions to end.
   */
  waitQuiet(signal: AbortSignal, maxMs: number): Promise<void> {
    if (this.isQuiet() || signal.aborted) return Promise.resolve();
    // One timer and one listener, both gone once quiet: the poll loop calls this after
    // every offer, and a 10,000-agent simulator should not keep a 5 s timer each.
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener("abort", done);
        this.quietWaiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, maxMs);
      signal.addEventListener("abort", done, { once: true });
      this.quietWaiters.add(done);
    });
  }

  /**
   * Stops both loops. A running action's signal aborts; it stays RUNNING in the journal, so
   * the next start applies the restart rule to it (FAILED, or run again when idempotent).
   */
  async stop(): Promise<void> {
    this.life.abort();
    this.running?.controller.abort();
    await this.reporter;
    if (this.runner) await Promise.race([this.runner, sleep(STOP_WAIT_MS)]);
    await this.journal?.flushed();
  }

  /** Decommission: the journal goes with the device. */
  async remove(): Promise<void> {
    await this.stop();
    await this.options.store.remove("actions");
  }

  // -------------------------------------------------------------------------------------
  // The runner

  private async runLoop(): Promise<void> {
    const journal = this.requireJournal();
    const retry = new Backoff({ ...this.options.retry, random: this.random });
    while (!this.life.signal.aborted) {
      const entry = journal.nextToRun();
      if (!entry) {
        await this.runWaker.sleep(60_000, this.life.signal);
        continue;
      }
      try {
        await this.run(journal, entry);
        retry.reset();
      } catch (error) {
        // Only the journal's store fails here; the action itself never throws out of run().
        const delayMs = retry.next();
        this.log.error({ event: "action.journal.failed", actionId: entry.id, error: String(error), retryInMs: delayMs }, "writing the action journal failed");
        await sleep(delayMs, this.life.signal);
      }
    }
  }

  private async run(journal: ActionJournal, entry: JournalEntry): Promise<void> {
    const { kind, id } = entry;
    // Current from here: a cancel from now on stops this run (even before it starts).
    const running: Running = { entry, controller: new AbortController(), cancelled: false };
    this.running = running;
    if (stateOf(entry) === "NEW") {
      journal.start(entry, new Date(this.now()));
      try {
        await journal.save();
      } catch (error) {
        this.running = null;
        throw error;
      }
      this.reportWaker.wake();
    }
    const log = this.log.child({ actionId: id, kind });
    log.info({ event: "action.started", args: entry.args }, "action running");
    const started = this.now();

    const linked = linkedSignal([this.life.signal, running.controller.signal]);
    const stream = new OutputStream({
      // Only once the server has it RUNNING: before that, a RUNNING report would be a move.
      ready: () => stateOf(entry) === "RUNNING" && entry.reported >= entry.history.length,
      send: async (output, signal) => {
        const sending = linkedSignal([signal, this.life.signal]);
        try {
          await this.putReport(this.options.token(), id, { state: "RUNNING", output }, sending.signal);
        } finally {
          sending.dispose();
        }
      },
      log,
      ...(this.options.outputIntervalMs === undefined ? {} : { intervalMs: this.options.outputIntervalMs }),
    });
    const context: ActionContext = {
      signal: linked.signal,
      log,
      liveOutput: (source) => stream.attach(source),
      setCondition: (name, value) => {
        if (name === "rebooting" && this.rebootingFlag !== value) {
          this.rebootingFlag = value;
          this.options.onConditionChange?.();
        }
      },
    };

    let outcome: { state: "DONE" | "FAILED" | "CANCELLED"; output?: string | undefined; error?: string | undefined };
    try {
      if (running.cancelled) throw new ActionFailure("cancelled");
      const executor = this.options.executors.get(kind);
      if (!executor) {
        throw new ActionFailure(`unknown action kind "${kind}" (this agent runs: ${[...this.options.executors.keys()].join(", ")})`);
      }
      const args = executor.argsSchema.safeParse(entry.args);
      if (!args.success) throw new ActionFailure(`invalid args for ${kind}: ${describeZodError(args.error)}`);
      const result = await executor.run(args.data, context);
      // It ran to its end: DONE, even if a cancel came in the last moment.
      outcome = { state: "DONE", output: result.output };
    } catch (error) {
      const output = error instanceof ActionFailure ? error.output : undefined;
      if (running.cancelled) {
        outcome = { state: "CANCELLED", output };
      } else if (this.life.signal.aborted) {
        // The agent is stopping: leave it RUNNING for the restart rule.
        log.info({ event: "action.interrupted" }, "agent stopping while the action runs");
        return;
      } else {
        outcome = { state: "FAILED", output, error: error instanceof Error ? error.message : String(error) };
      }
    } finally {
      stream.stop();
      linked.dispose();
      this.running = null;
      if (this.rebootingFlag) context.setCondition("rebooting", false);
    }

    // DONE always carries its output, even ""; the others only when there is some.
    const output = outcome.output === undefined || (outcome.output === "" && outcome.state !== "DONE") ? undefined : truncateOutput(outcome.output);
    const error = outcome.error === undefined ? undefined : truncateOutput(outcome.error, ERROR_LIMIT);
    journal.finish(entry, outcome.state, new Date(this.now()), { output, error });
    await journal.save();
    this.reportWaker.wake();
    this.notifyQuiet();

    const ms = this.now() - started;
    if (outcome.state === "DONE") {
      this.stats.done++;
      log.info({ event: "action.done", ms, outputBytes: Buffer.byteLength(output ?? "") }, "action DONE");
    } else if (outcome.state === "CANCELLED") {
      this.stats.cancelled++;
      log.info({ event: "action.cancelled", ms, was: "RUNNING" }, "action CANCELLED");
    } else {
      this.stats.failed++;
      log.warn({ event: "action.failed", ms, error }, "action FAILED");
    }
  }

  // -------------------------------------------------------------------------------------
  // The reporter

  private async reportLoop(): Promise<void> {
    const journal = this.requireJournal();
    const retry = new Backoff({ ...this.options.retry, random: this.random });
    const signal = this.life.signal;
    while (!signal.aborted) {
      const next = journal.nextReport();
      if (!next) {
        this.notifyQuiet();
        await this.reportWaker.sleep(60_000, signal);
        continue;
      }
      const { entry, index, state } = next;
      let delayMs = 0;
      try {
        if (journal.unsaved) await journal.save();
        await this.options.heartbeatSettled?.();
        if (signal.aborted) break;
        await this.send(journal, entry, index, state, signal);
        retry.reset();
      } catch (error) {
        if (signal.aborted) break;
        delayMs = this.retryDelay(error, retry);
        this.log.warn({ event: "action.report.failed", actionId: entry.id, state, error: describe(error), retryInMs: delayMs }, "action report failed");
      }
      if (delayMs > 0) await sleep(delayMs, signal);
    }
  }

  /** Sends history[index] and records the answer; throws when it is worth trying again. */
  private async send(journal: ActionJournal, entry: JournalEntry, index: number, state: AgentActionState, signal: AbortSignal): Promise<void> {
    const report = {
      state,
      ...(isFinished(state) && entry.output !== undefined ? { output: entry.output } : {}),
      ...(isFinished(state) && entry.error !== undefined ? { error: entry.error } : {}),
    };
    const token = this.options.token();
    let answer: "ok" | "dropped" = "ok";
    try {
      await this.putReport(token, entry.id, report, signal);
    } catch (error) {
      if (!(error instanceof ProtocolError)) throw error;
      if (error.status === 404) {
        // The server does not know the action (any more): the agent wins, it records ours.
        this.log.warn({ event: "action.report.recreated", actionId: entry.id, state }, "server does not know the action; reporting it with its kind and args");
        try {
          await this.putReport(token, entry.id, { ...report, kind: entry.kind, args: entry.args }, signal);
        } catch (again) {
          if (!(again instanceof ProtocolError) || !isFinal(again.status)) throw again;
          answer = this.dropped(journal, entry, state, again);
        }
      } else if (isFinal(error.status)) {
        answer = this.dropped(journal, entry, state, error);
      } else {
        throw error;
      }
    }
    this.answeredAt.set(entry.id, this.now());
    journal.acknowledge(entry, index); // (a no-op after refuse(): nothing more is sent)
    await journal.save();
    if (answer === "ok") this.log.debug({ event: "action.reported", actionId: entry.id, state }, "action report acknowledged");
    this.runWaker.wake();
  }

  private async putReport(token: string, id: string, report: Parameters<ProtocolClient["reportAction"]>[2], signal: AbortSignal): Promise<void> {
    try {
      await this.options.client.reportAction(token, id, report, signal);
    } catch (error) {
      // A 2xx with an answer we do not understand: the server has the report.
      if (error instanceof InvalidResponseError && error.status >= 200 && error.status < 300) {
        this.log.warn({ event: "action.report.unexpected-answer", actionId: id, error: error.message }, "unexpected answer to an action report; taking it as acknowledged");
        return;
      }
      throw error;
    }
  }

  /** A report the server refuses for good (409, 400, 403): log it and do not send it again. */
  private dropped(journal: ActionJournal, entry: JournalEntry, state: AgentActionState, error: ProtocolError): "dropped" {
    if (error.status === 409 && state === "NEW" && stateOf(entry) === "NEW") {
      // The server no longer schedules it (an operator cancelled it on its way, say): never run it.
      journal.refuse(entry, new Date(this.now()), `the server refused the action: ${error.message}`);
      this.log.warn({ event: "action.refused", actionId: entry.id, kind: entry.kind, message: error.message }, "the server refused the action (409); it will not run");
      return "dropped";
    }
    this.log.warn(
      { event: error.status === 409 ? "action.report.conflict" : "action.report.rejected", actionId: entry.id, state, status: error.status, code: error.code, message: error.message },
      error.status === 409 ? "the server disagrees with the report (409); dropping it" : "the server rejected the report; dropping it",
    );
    return "dropped";
  }

  private retryDelay(error: unknown, retry: Backoff): number {
    if (error instanceof ProtocolError && (error.status === 429 || error.status === 503) && error.retryAfterMs !== undefined) {
      return error.retryAfterMs + Math.floor(this.random() * Math.min(1_000, error.retryAfterMs * 0.1 + 100));
    }
    return Math.max(1, retry.next());
  }

  private notifyQuiet(): void {
    if (this.quietWaiters.size === 0 || !this.isQuiet()) return;
    for (const wake of [...this.quietWaiters]) wake();
    this.quietWaiters.clear();
  }

  private requireJournal(): ActionJournal {
    if (!this.journal) throw new Error("the action queue is not started");
    return this.journal;
  }
}

/** Statuses after which sending the same report again cannot help. */
function isFinal(status: number): boolean {
  return status === 400 || status === 403 || status === 409 || status === 413;
}

function describe(error: unknown): Record<string, unknown> {
  if (error instanceof ProtocolError) return { status: error.status, code: error.code, message: error.message };
  if (error instanceof Error) return { type: error.name, message: error.message };
  return { message: String(error) };
}
