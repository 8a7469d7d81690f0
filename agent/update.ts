/**
 * Applying rendered specs: seed 003's update states, journaled, reported, resumable.
 *
 *   Preparing → ReadyToUpdate → ApplyingUpdate → ActivatingConfig → Updated
 *   Preparing → Error                      (nothing on the device changed yet)
 *   ApplyingUpdate | ActivatingConfig → RollingBack → Error
 *
 * The moves are checked against lib/device-status.ts `updateStateMachine`. The work of each
 * step is the DeviceRuntime's (runtime/host.ts on a real device, runtime/simulated.ts in the
 * simulator). Each reported state goes out in a heartbeat at once (`report`);
 * ActivatingConfig is transient and not reported (the condition stays ApplyingUpdate).
 *
 * Two documents in the state store:
 *   spec    the spec the device runs (its renderedVersion is what the heartbeat reports);
 *           replaced only once an update reached Updated.
 *   update  the last update: its target, the spec it started from, the state reached, the
 *           file backups, how many times it was started. Written (atomically) before each
 *           step, so an agent restarted mid-way knows where it was: an update that had not
 *           touched the device yet starts again; one that had resumes at ApplyingUpdate (the
 *           steps are idempotent and the backups of the first attempt are kept) until it was
 *           interrupted MAX_UPDATE_ATTEMPTS times, then rolls back; a rollback is finished.
 *           After the end (Updated or Error) it stays, so the condition is still reported and
 *           a failed renderedVersion is not taken again (seed 003: Error "will not retry").
 *
 * One update at a time. A newer spec arriving meanwhile waits until the current one ends
 * (Updated, or rolled back), then is applied; of several, only the newest.
 */
import type { Logger } from "pino";
import { z } from "zod";
import { updateStateMachine, type UpdateState } from "../lib/device-status";
import { RenderedSpec, type StatusReport } from "../lib/protocol";
import { assertTransition } from "../lib/state-machine";
import { FileBackup, UpdateFailure, type DeviceRuntime, type ReportedUpdateState } from "./runtime/types";
import { AppliedSpecDocument, type StateStore } from "./state";
import { isoTime } from "./timing";

/** The states an update is journaled in (the reported ones plus the transient ActivatingConfig). */
export const JOURNALED_STATES = ["Preparing", "ReadyToUpdate", "ApplyingUpdate", "ActivatingConfig", "RollingBack", "Updated", "Error"] as const satisfies readonly UpdateState[];
export type JournaledState = (typeof JOURNALED_STATES)[number];

/** Times an update may be started (the first run and resumes after agent restarts) before it rolls back. */
export const MAX_UPDATE_ATTEMPTS = 3;

export const UpdateDocument = z.object({
  version: z.literal(1),
  target: RenderedSpec,
  previous: AppliedSpecDocument.nullable(),
  state: z.enum(JOURNALED_STATES),
  info: z.string().optional(),
  attempts: z.number().int().min(1),
  backups: z.array(FileBackup).optional(),
  startedAt: z.string(),
  changedAt: z.string(),
});
export type UpdateDocument = z.infer<typeof UpdateDocument>;

export type UpdatingCondition = NonNullable<StatusReport["conditions"]["updating"]>;

export interface UpdaterOptions {
  store: StateStore;
  runtime: DeviceRuntime;
  logger: Logger;
  now?: () => number;
  /** A reported state was entered: send it (a heartbeat at once). Resolves when sent, or when waiting is not worth it. */
  report: () => Promise<void>;
  /** An update ended. */
  onOutcome?: (outcome: "Updated" | "Error") => void;
  maxAttempts?: number;
}

const TERMINAL: ReadonlySet<JournaledState> = new Set(["Updated", "Error"]);
/** States in which the device may already have changed: a rollback has something to undo. */
const TOUCHED: ReadonlySet<JournaledState> = new Set(["ApplyingUpdate", "ActivatingConfig", "RollingBack"]);

export class Updater {
  private appliedDoc: AppliedSpecDocument | null = null;
  private journal: UpdateDocument | null = null;
  private next: RenderedSpec | null = null;
  private task: Promise<void> | null = null;
  private readonly controller = new AbortController();
  private readonly now: () => number;
  private readonly maxAttempts: number;
  private stopped = false;

  constructor(private readonly options: UpdaterOptions) {
    this.now = options.now ?? Date.now;
    this.maxAttempts = options.maxAttempts ?? MAX_UPDATE_ATTEMPTS;
  }

  /** Reads the running spec and the last update from the store. */
  async load(): Promise<void> {
    const { store, logger } = this.options;
    this.appliedDoc = await store.read("spec", AppliedSpecDocument);
    this.journal = await store.read("update", UpdateDocument);
    const j = this.journal;
    if (j && !TERMINAL.has(j.state) && this.appliedDoc?.renderedVersion === j.target.renderedVersion) {
      // The agent stopped between recording the new running spec and journaling Updated.
      logger.info({ event: "update.recovered", renderedVersion: j.target.renderedVersion }, "the update had completed before the restart");
      this.journal = { ...j, state: "Updated", info: updatedInfo(j.target), changedAt: this.iso() };
      await store.write("update", this.journal);
    }
  }

  get applied(): AppliedSpecDocument | null {
    return this.appliedDoc;
  }

  /** renderedVersion of the spec the device runs. */
  get appliedVersion(): number {
    return this.appliedDoc?.renderedVersion ?? 0;
  }

  /**
   * The newest renderedVersion this agent has taken (running, being applied, queued, or
   * failed): the work poll asks for newer ones only, so a failed spec is not handed back.
   */
  get knownVersion(): number {
    return Math.max(this.appliedVersion, this.journal?.target.renderedVersion ?? 0, this.next?.renderedVersion ?? 0);
  }

  get lastUpdate(): Readonly<UpdateDocument> | null {
    return this.journal;
  }

  get busy(): boolean {
    return this.task !== null;
  }

  /** conditions.updating for the heartbeat; undefined before the first update. */
  condition(): UpdatingCondition | undefined {
    const j = this.journal;
    if (!j) return undefined;
    const reason: ReportedUpdateState = j.state === "ActivatingConfig" ? "ApplyingUpdate" : j.state;
    return { status: !TERMINAL.has(j.state), reason, ...(j.info === undefined ? {} : { info: j.info.slice(0, 4096) }) };
  }

  applications() {
    return this.options.runtime.applications();
  }

  /**
   * Brings the device up as the store says: the running spec's applications started (unless
   * an interrupted update had already changed the device: its resume decides), and an
   * interrupted update resumed in the background.
   */
  async start(): Promise<void> {
    const j = this.journal;
    const interrupted = j !== null && !TERMINAL.has(j.state);
    await this.options.runtime.start(interrupted && TOUCHED.has(j.state) ? null : (this.appliedDoc?.spec ?? null));
    if (interrupted) this.launch(() => this.resume(j));
  }

  /** Takes a spec from the work poll; false when it is not newer than what the agent has. */
  offer(spec: RenderedSpec): boolean {
    if (this.stopped || spec.renderedVersion <= this.knownVersion) return false;
    if (this.task) {
      if (this.next) this.options.logger.info({ event: "update.superseded", renderedVersion: this.next.renderedVersion, by: spec.renderedVersion }, "a queued spec was superseded");
      this.next = spec;
      this.options.logger.info({ event: "update.queued", renderedVersion: spec.renderedVersion }, "a newer spec waits for the update under way");
      return true;
    }
    this.launch(() => this.update(spec));
    return true;
  }

  /** Resolves when no update is under way (tests). */
  async idle(): Promise<void> {
    while (this.task) await this.task;
  }

  /** The agent stops: an update under way is interrupted (its journal says where it was), the applications stopped. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.controller.abort();
    await this.idle();
    await this.options.runtime.stop();
  }

  /** Decommission: stop (the applications too), and forget the last update. */
  async reset(): Promise<void> {
    await this.stop();
    this.next = null;
    this.journal = null;
    await this.options.store.remove("update");
  }

  /** Decommission: forget the running spec. */
  async forgetApplied(): Promise<void> {
    this.appliedDoc = null;
    await this.options.store.remove("spec");
  }

  // -------------------------------------------------------------------------------------

  private launch(run: () => Promise<void>): void {
    const task = (async () => {
      try {
        await run();
        while (this.next && !this.controller.signal.aborted) {
          const spec = this.next;
          this.next = null;
          await this.update(spec);
        }
      } catch (error) {
        // Only the state store failing gets here (every step's failure is handled): the
        // journal keeps the last state written, and a restart picks up from there.
        this.options.logger.error({ event: "update.crashed", err: errorMessage(error) }, "the update stopped: cannot record its progress");
      } finally {
        this.task = null;
      }
    })();
    this.task = task;
  }

  private async update(target: RenderedSpec): Promise<void> {
    const previous = this.appliedDoc;
    const at = this.iso();
    this.journal = { version: 1, target, previous, state: "Preparing", info: updatingInfo(target), attempts: 1, startedAt: at, changedAt: at };
    await this.record(true);
    await this.run("Preparing");
  }

  private async resume(j: UpdateDocument): Promise<void> {
    const { logger } = this.options;
    logger.info({ event: "update.resumed", renderedVersion: j.target.renderedVersion, state: j.state, attempts: j.attempts }, "resuming the update interrupted by a restart");
    if (j.state === "RollingBack") return this.rollBack(j.info ?? "interrupted", { entered: true });
    if (!TOUCHED.has(j.state)) {
      this.journal = { ...j, state: "Preparing", info: updatingInfo(j.target), attempts: j.attempts + 1, changedAt: this.iso() };
      await this.record(true);
      return this.run("Preparing");
    }
    if (j.attempts >= this.maxAttempts) {
      return this.rollBack(`the agent restarted during the update ${j.attempts} times`);
    }
    this.journal = { ...j, state: "ApplyingUpdate", attempts: j.attempts + 1, changedAt: this.iso() };
    await this.record(true);
    return this.run("ApplyingUpdate");
  }

  /** Runs the update in the journal from `from` to its end. */
  private async run(from: "Preparing" | "ApplyingUpdate"): Promise<void> {
    const { runtime } = this.options;
    const signal = this.controller.signal;
    const j = this.current();
    const target = j.target;
    const previous = j.previous?.spec ?? null;
    try {
      if (from === "Preparing") {
        await runtime.dwell?.(target, "Preparing", signal);
        try {
          await runtime.prepare(target, signal);
        } catch (error) {
          if (signal.aborted) return;
          // Nothing on the device changed: straight to Error (seed 003: Preparing → Error).
          return await this.fail(errorMessage(error));
        }
        await this.enter("ReadyToUpdate");
        await runtime.dwell?.(target, "ReadyToUpdate", signal);
        await this.enter("ApplyingUpdate");
      } else {
        // Resumed: the device may be half-changed, so any failure now rolls back. Prepare
        // again (the artifact is checked, and re-fetched if it went missing).
        await runtime.prepare(target, signal);
      }
      await runtime.dwell?.(target, "ApplyingUpdate", signal);
      await runtime.apply(
        target,
        previous,
        {
          existing: j.backups,
          record: async (backups) => {
            this.current().backups = backups;
            await this.options.store.write("update", this.current());
          },
        },
        signal,
      );
      await this.enter("ActivatingConfig");
      await runtime.activate(target, signal);
      signal.throwIfAborted();

      this.appliedDoc = { version: 1, renderedVersion: target.renderedVersion, spec: target, appliedAt: this.iso() };
      await this.options.store.write("spec", this.appliedDoc);
      this.options.logger.info(
        { event: "spec.applied", renderedVersion: target.renderedVersion, previous: previous?.renderedVersion ?? 0, templateVersion: target.templateVersion, version: target.version },
        "spec applied",
      );
      this.options.onOutcome?.("Updated");
      await this.enter("Updated", updatedInfo(target));
      await this.finish([target, previous]);
    } catch (error) {
      if (signal.aborted) return; // the agent stops; the journal says where to pick up
      await this.rollBack(errorMessage(error));
    }
  }

  private async rollBack(reason: string, { entered = false }: { entered?: boolean } = {}): Promise<void> {
    const j = this.current();
    if (!entered) await this.enter("RollingBack", reason);
    const previous = j.previous?.spec ?? null;
    let info = `${reason}; rolled back to renderedVersion ${j.previous?.renderedVersion ?? 0}`;
    try {
      await this.options.runtime.dwell?.(j.target, "RollingBack", this.controller.signal);
      await this.options.runtime.rollback(previous, j.backups);
    } catch (error) {
      if (this.controller.signal.aborted) return;
      info = `${reason}; rollback failed: ${errorMessage(error)}`;
    }
    await this.fail(info);
  }

  private async fail(info: string): Promise<void> {
    const j = this.current();
    this.options.logger.error({ event: "spec.failed", renderedVersion: j.target.renderedVersion, version: j.target.version, info }, "applying the spec failed");
    this.options.onOutcome?.("Error");
    await this.enter("Error", info);
    await this.finish([j.previous?.spec ?? null, j.target]);
  }

  private async finish(keep: (RenderedSpec | null)[]): Promise<void> {
    try {
      await this.options.runtime.finish(keep);
    } catch (error) {
      this.options.logger.warn({ event: "update.cleanup-failed", err: errorMessage(error) }, "cleaning up after the update failed");
    }
  }

  private async enter(state: JournaledState, info?: string): Promise<void> {
    const j = this.current();
    assertTransition(updateStateMachine, j.state, state);
    j.state = state;
    j.info = info ?? (TERMINAL.has(state) ? undefined : updatingInfo(j.target));
    if (j.info === undefined) delete j.info;
    j.changedAt = this.iso();
    await this.record(state !== "ActivatingConfig");
  }

  /** Journals the current state, logs it and, when reported, sends it. */
  private async record(report: boolean): Promise<void> {
    const j = this.current();
    await this.options.store.write("update", j);
    this.options.logger.info(
      { event: "update.state", state: j.state, renderedVersion: j.target.renderedVersion, version: j.target.version, attempt: j.attempts, ...(j.info ? { info: j.info } : {}) },
      `update ${j.state}`,
    );
    if (report) await this.options.report();
  }

  private current(): UpdateDocument {
    if (!this.journal) throw new Error("no update under way");
    return this.journal;
  }

  private iso(): string {
    return isoTime(this.now());
  }
}

function updatingInfo(spec: RenderedSpec): string {
  return `renderedVersion ${spec.renderedVersion} (version ${spec.version})`;
}

function updatedInfo(spec: RenderedSpec): string {
  return `running renderedVersion ${spec.renderedVersion} (version ${spec.version})`;
}

function errorMessage(error: unknown): string {
  if (error instanceof UpdateFailure) return error.message;
  if (error instanceof Error) return error.message;
  return String(error);
}

export function readAppliedSpec(store: StateStore): Promise<AppliedSpecDocument | null> {
  return store.read("spec", AppliedSpecDocument);
}
