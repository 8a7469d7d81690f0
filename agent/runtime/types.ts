/**
 * What applying a rendered spec does to a device, step by step (seed 003's update states).
 * The update driver (../update.ts) walks the states, journals them and reports them; a
 * DeviceRuntime does the work of each step:
 *
 *   host.ts       the real agent: downloads the artifact, writes config files under its root
 *                 directory, supervises the applications as child processes
 *   simulated.ts  the simulator's virtual devices: nothing touches the host; knobs make
 *                 chosen versions fail, crash-loop or apply slowly
 *   null.ts       nothing to do (the Agent's default when none is given)
 */
import { z } from "zod";
import type { REPORTED_UPDATE_STATES } from "../../lib/device-status";
import type { RenderedSpec, StatusReport } from "../../lib/protocol";

export type Applications = StatusReport["applications"];
export type ReportedUpdateState = (typeof REPORTED_UPDATE_STATES)[number];

/** A step failed: `message` becomes the Error condition's `info`. */
export class UpdateFailure extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "UpdateFailure";
  }
}

/**
 * One file the update is about to change, as it was before: journaled (in the update
 * document) before the first file is touched, so that a rollback, even after a crash,
 * puts back exactly what was there.
 */
export const FileBackup = z.object({
  /** The spec's path (absolute, under the root directory). */
  path: z.string(),
  existed: z.boolean(),
  /** The saved copy's name in the backup folder, when it existed. */
  copy: z.string().optional(),
  mode: z.number().int().optional(),
});
export type FileBackup = z.infer<typeof FileBackup>;

export interface BackupJournal {
  /** The backups of an earlier attempt of the same update (a resumed one): reuse, never redo. */
  readonly existing: readonly FileBackup[] | undefined;
  /** Persists the backups; called before the first file is changed. */
  record(backups: FileBackup[]): Promise<void>;
}

export interface DeviceRuntime {
  /**
   * At agent start, with the spec the device runs (null before the first): clean up what a
   * previous agent process left behind, and start that spec's applications.
   */
  start(running: RenderedSpec | null): Promise<void>;
  /** Preparing: validate the spec and fetch what it needs. Changes nothing on the device. */
  prepare(spec: RenderedSpec, signal: AbortSignal): Promise<void>;
  /** ApplyingUpdate: write the update to disk (files), backing up what it replaces first. */
  apply(spec: RenderedSpec, previous: RenderedSpec | null, backups: BackupJournal, signal: AbortSignal): Promise<void>;
  /** ActivatingConfig: (re)start the applications and wait until they are up; throws UpdateFailure if they are not. */
  activate(spec: RenderedSpec, signal: AbortSignal): Promise<void>;
  /** RollingBack: put the backed-up files back and run `previous`'s applications again. Idempotent. */
  rollback(previous: RenderedSpec | null, backups: readonly FileBackup[] | undefined): Promise<void>;
  /**
   * After the update ended (Updated or Error) and that is journaled: drop the backups, and
   * what no spec in `keep` needs (old artifacts).
   */
  finish(keep: readonly (RenderedSpec | null)[]): Promise<void>;
  /** Time spent in a reported state (the simulator's slow-apply knob); the real agent has none. */
  dwell?(spec: RenderedSpec, state: ReportedUpdateState, signal: AbortSignal): Promise<void>;
  /** The applications and their statuses, for the heartbeat. */
  applications(): Applications;
  /** The agent stops (or decommissions): stop the applications. */
  stop(): Promise<void>;
}
