/**
 * The real agent's runtime: the spec applied to this host.
 *
 *   Preparing         every application's program is allowed (`--allow-apps`); the
 *                     artifact, if any, is downloaded and its SHA-256 checked
 *   ApplyingUpdate    config files backed up, then written under the root directory
 *   ActivatingConfig  the applications restarted; up when each has run `settleMs`
 *   RollingBack       the backed-up files put back, the previous applications started
 *
 * Like `exec` (`--allow-exec`), what runs is the template's choice, so the agent runs an
 * application only when its program (argv[0], matched exactly) was allowed when the agent
 * was started, or `--allow-apps '*'` allows any.
 */
import path from "node:path";
import type { Logger } from "pino";
import type { ApplicationSpec, RenderedSpec } from "../../lib/protocol";
import type { StateStore } from "../state";
import { ArtifactStore, DEFAULT_ARTIFACT_MAX_BYTES, DEFAULT_ARTIFACT_TIMEOUT_MS } from "./artifact";
import { ConfigFiles } from "./files";
import { Supervisor, type AppLaunch, type RestartPolicy } from "./supervisor";
import { UpdateFailure, type BackupJournal, type DeviceRuntime, type FileBackup } from "./types";

export const DEFAULT_START_TIMEOUT_MS = 60_000;

export interface HostRuntimeOptions {
  stateDir: string;
  /** Spec paths are joined under it; `<stateDir>/root` by default. */
  rootDir?: string;
  store: StateStore;
  logger: Logger;
  /** Programs applications may run (argv[0], exactly), or "*" for any. None by default. */
  allowApps?: readonly string[] | "*";
  /** How long each application must stay up to count as Running. */
  settleMs?: number;
  /** How long activation waits for every application to be Running before rolling back. */
  startTimeoutMs?: number;
  restart?: RestartPolicy;
  killGraceMs?: number;
  logMaxBytes?: number;
  artifactTimeoutMs?: number;
  artifactMaxBytes?: number;
  fetch?: typeof fetch;
  /** The environment the minimal one is taken from (process.env by default). */
  hostEnv?: NodeJS.ProcessEnv;
}

/** The variables an application inherits from the agent's environment; everything else it is given. */
const INHERITED = ["PATH", "HOME", "LANG", "LC_ALL", "TZ"] as const;
const DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

export class HostRuntime implements DeviceRuntime {
  readonly rootDir: string;
  readonly files: ConfigFiles;
  readonly artifacts: ArtifactStore;
  readonly supervisor: Supervisor;
  private readonly allow: ReadonlySet<string> | "*";
  private readonly startTimeoutMs: number;
  private readonly baseEnv: Record<string, string>;

  constructor(private readonly options: HostRuntimeOptions) {
    this.rootDir = path.resolve(options.rootDir ?? path.join(options.stateDir, "root"));
    this.files = new ConfigFiles(this.rootDir, path.join(options.stateDir, "update-backup"));
    this.artifacts = new ArtifactStore({
      dir: path.join(options.stateDir, "artifacts"),
      timeoutMs: options.artifactTimeoutMs ?? DEFAULT_ARTIFACT_TIMEOUT_MS,
      maxBytes: options.artifactMaxBytes ?? DEFAULT_ARTIFACT_MAX_BYTES,
      ...(options.fetch ? { fetch: options.fetch } : {}),
    });
    this.supervisor = new Supervisor({
      logDir: path.join(options.stateDir, "logs"),
      cwd: this.rootDir,
      store: options.store,
      logger: options.logger,
      ...(options.settleMs === undefined ? {} : { settleMs: options.settleMs }),
      ...(options.restart === undefined ? {} : { restart: options.restart }),
      ...(options.killGraceMs === undefined ? {} : { killGraceMs: options.killGraceMs }),
      ...(options.logMaxBytes === undefined ? {} : { logMaxBytes: options.logMaxBytes }),
    });
    const allow = options.allowApps ?? [];
    this.allow = allow === "*" ? "*" : new Set(allow);
    this.startTimeoutMs = options.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS;
    const hostEnv = options.hostEnv ?? process.env;
    this.baseEnv = { PATH: DEFAULT_PATH };
    for (const name of INHERITED) {
      const value = hostEnv[name];
      if (value !== undefined) this.baseEnv[name] = value;
    }
  }

  async start(running: RenderedSpec | null): Promise<void> {
    await this.files.init();
    const left = await this.supervisor.stopLeftovers();
    if (!running) return;
    const spec = specKey(running);
    // The same spec as before the agent restarted: its restart counts go on.
    await this.supervisor.run(this.launches(running, { refuseDisallowed: true }), { spec, restarts: left.spec === spec ? left.restarts : {} });
  }

  async prepare(spec: RenderedSpec, signal: AbortSignal): Promise<void> {
    for (const app of spec.applications) {
      const refusal = this.refusal(app);
      if (refusal) throw new UpdateFailure(`application "${app.name}": ${refusal}`);
    }
    if (spec.artifact) await this.artifacts.fetch(spec.artifact, signal);
  }

  async apply(spec: RenderedSpec, previous: RenderedSpec | null, backups: BackupJournal, signal: AbortSignal): Promise<void> {
    if (!backups.existing) {
      const taken = await this.files.backup(spec, previous);
      await backups.record(taken);
    }
    signal.throwIfAborted();
    await this.files.write(spec, previous, signal);
  }

  async activate(spec: RenderedSpec, signal: AbortSignal): Promise<void> {
    await this.supervisor.run(this.launches(spec, { refuseDisallowed: false }), { spec: specKey(spec) });
    await this.supervisor.waitUp(this.startTimeoutMs, signal);
  }

  async rollback(previous: RenderedSpec | null, backups: readonly FileBackup[] | undefined): Promise<void> {
    if (backups) await this.files.restore(backups);
    await this.supervisor.run(previous ? this.launches(previous, { refuseDisallowed: true }) : [], { spec: previous ? specKey(previous) : null });
  }

  async finish(keep: readonly (RenderedSpec | null)[]): Promise<void> {
    await this.files.clearBackups();
    await this.artifacts.prune(keep.map((s) => s?.artifact));
  }

  applications() {
    return this.supervisor.statuses();
  }

  async stop(): Promise<void> {
    await this.supervisor.stopAll();
  }

  /** Why `app` may not run, or null. */
  private refusal(app: ApplicationSpec): string | null {
    const program = app.command[0] ?? "";
    if (this.allow === "*" || this.allow.has(program)) return null;
    return `${program} is not allowed; start the agent with --allow-apps ${program} (a comma-separated list of programs, matched exactly, or '*' for any)`;
  }

  /**
   * What to start for `spec`: the environment is a minimal one (PATH, HOME, LANG, LC_ALL,
   * TZ from the agent's), then DROVER_* facts, then the spec's own variables over them.
   */
  private launches(spec: RenderedSpec, { refuseDisallowed }: { refuseDisallowed: boolean }): AppLaunch[] {
    return spec.applications.map((app) => {
      const env: Record<string, string> = {
        ...this.baseEnv,
        DROVER_APP: app.name,
        DROVER_ROOT_DIR: this.rootDir,
        DROVER_RENDERED_VERSION: String(spec.renderedVersion),
        DROVER_VERSION: spec.version,
        ...(spec.artifact ? { DROVER_ARTIFACT: this.artifacts.pathFor(spec.artifact) } : {}),
        ...app.env,
      };
      // A spec already running (agent restart, rollback) whose program was allowed before
      // but is not any more: it reports Error rather than run against the operator's word.
      const refused = refuseDisallowed ? this.refusal(app) : null;
      return { spec: app, env, ...(refused ? { refused } : {}) };
    });
  }
}

function specKey(spec: RenderedSpec): string {
  return String(spec.renderedVersion);
}
