/**
 * Agent upgrades (issue 12): the agent replaces its own file with another build from its
 * server and restarts into it.
 *
 * Told a version (a fleet template's `agent.version`, in the rendered spec; or an
 * `agentupgrade {version}` action) different from its own, the agent
 *
 *   1. asks its server for that build's manifest (`/download/manifest?version=X`, plus
 *      `&platform=` when it runs as a single executable) and downloads it
 *      (`/download?version=X`) next to its own file, the sha256 checked as it streams in;
 *   2. runs the new file with `--version` (the smoke test): it must start and print X;
 *   3. keeps its own file as `<file>.previous`, renames the new one over its own (one
 *      rename: the file is always one build or the other, never half of one), journals the
 *      upgrade (`upgrade` in the state store: from, to, when) and
 *   4. stops like for a signal and exits with UPGRADE_EXIT_STATUS (75), which its service
 *      manager restarts it on: systemd's Restart=always (install.sh's unit), or the loop in
 *      install.sh's bin/drover-agent when there is no service manager.
 *
 * The next start reads the journal: running the version it names, the upgrade is done (an
 * `agentupgrade` action is reported DONE, a spec's update goes on to Updated); running
 * another, it failed (the action FAILED). Its heartbeats carry the new version
 * (system.agent.version), which the server writes to the device.
 *
 * A failed download or check (HTTP error, sha256 mismatch, disk full) is tried again with a
 * growing delay (retryMs, then 4×; three tries), then given up: the old agent keeps running
 * and says why (the spec's Error condition, the action's error). A smoke test that fails is
 * not tried again. Nothing is retried on every poll: a spec's failed renderedVersion is never
 * taken again (seed 003), a failed action is over.
 *
 * An agent run from its sources (`npm run agent`, tsx) refuses: it would overwrite a
 * TypeScript file with a bundle. Only the built forms upgrade (scripts/build-agent.mjs tells
 * the bundle which form it is).
 */
import { execFile } from "node:child_process";
import fs from "node:fs/promises";
import path from "node:path";
import type { Logger } from "pino";
import { z } from "zod";
import type { RenderedSpec } from "../lib/protocol";
import { DEFAULT_ARTIFACT_MAX_BYTES, DownloadFailure, downloadFile } from "./runtime/artifact";
import { UpdateFailure, type BackupJournal, type DeviceRuntime, type FileBackup, type ReportedUpdateState } from "./runtime/types";
import type { StateStore } from "./state";
import { isoTime } from "./timing";

/** The exit status of an agent that replaced its file: "start me again" (EX_TEMPFAIL). */
export const UPGRADE_EXIT_STATUS = 75;

export const DEFAULT_UPGRADE_RETRY_MS = 30_000;
export const UPGRADE_TRIES = 3;
const DOWNLOAD_TIMEOUT_MS = 10 * 60_000;
const SMOKE_TEST_TIMEOUT_MS = 30_000;
/** 429s waited out per stage() before they count as failures. */
const MAX_THROTTLED_WAITS = 30;
/** A 429 without Retry-After. */
const THROTTLED_DEFAULT_MS = 5_000;

function retryAfterMs(header: string | null): number {
  const seconds = Number(header);
  return Number.isFinite(seconds) && seconds >= 0 ? Math.min(seconds, 300) * 1000 : THROTTLED_DEFAULT_MS;
}

/** Set by scripts/build-agent.mjs: "script" (drover-agent.mjs) or "sea" (the single executable). */
declare const __DROVER_AGENT_FORM__: string | undefined;

export type AgentForm = "script" | "sea" | "source";

/** How this process runs: a built file (which one), or from the sources. */
export function runningAgent(): { form: AgentForm; file: string | null } {
  const form = typeof __DROVER_AGENT_FORM__ === "string" ? (__DROVER_AGENT_FORM__ as AgentForm) : "source";
  if (form === "sea") return { form, file: process.execPath };
  if (form === "script" && process.argv[1]) return { form, file: path.resolve(process.argv[1]) };
  return { form: "source", file: null };
}

export const UpgradeDocument = z.object({
  version: z.literal(1),
  from: z.string(),
  to: z.string(),
  /** restarting: renamed, the agent exits; then done or failed, written by the next start. */
  state: z.enum(["restarting", "done", "failed"]),
  file: z.string(),
  /** When the new file was put in place. */
  at: z.string(),
  info: z.string().optional(),
});
export type UpgradeDocument = z.infer<typeof UpgradeDocument>;

/** An upgrade that cannot happen (or did not): `message` says why, for the condition or the action. */
export class UpgradeError extends Error {
  constructor(
    message: string,
    /** Worth another try later (a download, a check); false for a refusal or a smoke test. */
    readonly retryable: boolean,
    /** The server said "not now" (429): wait this long; not counted as a failed try. */
    readonly throttledMs?: number,
  ) {
    super(message);
    this.name = "UpgradeError";
  }
}

/** A new build downloaded, checked and smoke-tested, waiting to be renamed into place. */
export interface StagedUpgrade {
  version: string;
  file: string;
  sha256: string;
}

export interface UpgraderOptions {
  /** The agent's server (its --server), whose /download serves the builds. */
  serverUrl: string;
  /** This agent's version. */
  currentVersion: string;
  /** How this agent runs (runningAgent()). */
  form: AgentForm;
  /** The file it runs from (null from the sources). */
  file: string | null;
  /** The single executable's platform (os-arch), asked for with ?platform=. */
  platform: string;
  store: StateStore;
  logger: Logger;
  /** Called once the new file is in place: the agent stops and exits with UPGRADE_EXIT_STATUS. */
  onRestart: (info: string) => void;
  /** First wait before another try; then 4× that. */
  retryMs?: number;
  tries?: number;
  fetch?: typeof fetch;
  /** Runs `file --version` and resolves with what it printed (tests replace it). */
  smokeTest?: (file: string, form: AgentForm) => Promise<string>;
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  now?: () => number;
  random?: () => number;
}

export class Upgrader {
  private journal: UpgradeDocument | null = null;
  private readonly now: () => number;
  private readonly random: () => number;

  constructor(private readonly options: UpgraderOptions) {
    this.now = options.now ?? Date.now;
    this.random = options.random ?? Math.random;
  }

  get version(): string {
    return this.options.currentVersion;
  }

  /** The last upgrade as journaled (after load(), with this start's verdict). */
  get last(): Readonly<UpgradeDocument> | null {
    return this.journal;
  }

  /**
   * At start, before the action journal is read: an upgrade that was restarting is done if
   * this is the version it put in place, failed otherwise.
   */
  async load(): Promise<void> {
    const { store, logger, currentVersion } = this.options;
    await this.removeLeftovers();
    this.journal = await store.read("upgrade", UpgradeDocument);
    const j = this.journal;
    if (j?.state !== "restarting") return;
    if (currentVersion === j.to) {
      this.journal = { ...j, state: "done", info: `upgraded from ${j.from} to ${j.to}` };
      logger.info({ event: "upgrade.done", from: j.from, to: j.to }, `agent upgraded from ${j.from} to ${j.to}`);
    } else {
      this.journal = { ...j, state: "failed", info: `restarted as ${currentVersion}, not ${j.to}` };
      logger.error({ event: "upgrade.failed", from: j.from, to: j.to, running: currentVersion }, `the agent restarted as ${currentVersion}, not ${j.to}`);
    }
    await store.write("upgrade", this.journal);
  }

  /** Builds a killed agent left half-downloaded or unused beside its file (`.drover-agent-X.new.mjs[.part]`). */
  private async removeLeftovers(): Promise<void> {
    const own = this.options.file;
    if (this.options.form === "source" || own === null) return;
    const ext = path.extname(own);
    const prefix = `.${path.basename(own, ext)}-`;
    const entries = await fs.readdir(path.dirname(own)).catch(() => [] as string[]);
    for (const entry of entries) {
      if (entry.startsWith(prefix) && (entry.endsWith(`.new${ext}`) || entry.endsWith(`.new${ext}.part`))) await fs.rm(path.join(path.dirname(own), entry), { force: true });
    }
  }

  /** Whether being told `version` means an upgrade (or a downgrade): it is not this one. */
  differs(version: string): boolean {
    return version !== this.options.currentVersion;
  }

  /** Why this agent cannot replace itself, or null when it can. */
  refusal(): string | null {
    if (this.options.form === "source" || this.options.file === null) {
      return "this agent runs from its sources (npm run agent), not from an installed file: it does not upgrade itself (install it with install.sh)";
    }
    return null;
  }

  /**
   * Downloads, checks and smoke-tests `version` beside the agent's file, trying again after
   * retryMs and 4 × retryMs when a try fails in a way worth retrying. Throws UpgradeError.
   */
  async stage(version: string, signal: AbortSignal): Promise<StagedUpgrade> {
    const tries = this.options.tries ?? UPGRADE_TRIES;
    const base = this.options.retryMs ?? DEFAULT_UPGRADE_RETRY_MS;
    const sleep = this.options.sleep ?? abortableSleep;
    const failures: string[] = [];
    let throttled = 0;
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.stageOnce(version, signal);
      } catch (error) {
        if (signal.aborted) throw error;
        const e = error instanceof UpgradeError ? error : new UpgradeError(error instanceof Error ? error.message : String(error), true);
        // A fleet upgrading at once behind one address meets the server's per-address download
        // limit: wait as told (spread a little) and go on, without using up a try.
        if (e.throttledMs !== undefined && throttled < MAX_THROTTLED_WAITS) {
          throttled++;
          attempt--;
          const delayMs = e.throttledMs + Math.floor(this.random() * Math.max(1_000, e.throttledMs / 2));
          this.options.logger.info({ event: "upgrade.throttled", version, retryInMs: delayMs }, "the server asks to download later");
          await sleep(delayMs, signal);
          continue;
        }
        failures.push(e.message);
        if (!e.retryable || attempt >= tries) {
          const why = failures.length > 1 ? `${e.message} (${failures.length} tries)` : e.message;
          this.options.logger.error({ event: "upgrade.failed", version, attempt, error: e.message }, `agent upgrade to ${version} failed`);
          throw new UpgradeError(`agent upgrade to ${version} failed: ${why}`, e.retryable);
        }
        const delayMs = base * 4 ** (attempt - 1);
        this.options.logger.warn({ event: "upgrade.retry", version, attempt, error: e.message, retryInMs: delayMs }, `agent upgrade to ${version} failed; trying again`);
        await sleep(delayMs, signal);
      }
    }
  }

  /** One try: manifest, download (sha256), smoke test. The new file is left only when all passed. */
  async stageOnce(version: string, signal: AbortSignal): Promise<StagedUpgrade> {
    const refused = this.refusal();
    if (refused) throw new UpgradeError(refused, false);
    const { serverUrl, form, platform, logger } = this.options;
    const own = this.options.file!;
    const fetchImpl = this.options.fetch ?? globalThis.fetch;
    const query = new URLSearchParams({ version, ...(form === "sea" ? { platform } : {}) });

    let manifest: { version: string; sha256: string; url: string };
    try {
      const res = await fetchImpl(`${serverUrl}/api/agent/v1/download/manifest?${query}`, { signal });
      const body = (await res.json().catch(() => null)) as { version?: unknown; sha256?: unknown; url?: unknown; error?: { message?: unknown } } | null;
      if (res.status === 429) throw new UpgradeError("the server is rate-limiting downloads (HTTP 429)", true, retryAfterMs(res.headers.get("retry-after")));
      if (!res.ok) throw new UpgradeError(`the server has no such build: HTTP ${res.status}${typeof body?.error?.message === "string" ? ` (${body.error.message})` : ""}`, true);
      if (body?.version !== version || typeof body.sha256 !== "string" || !/^[a-f0-9]{64}$/.test(body.sha256) || typeof body.url !== "string" || !body.url.startsWith("/")) {
        throw new UpgradeError("the server's manifest is not one of this version", true);
      }
      manifest = { version, sha256: body.sha256, url: body.url };
    } catch (error) {
      if (error instanceof UpgradeError || signal.aborted) throw error;
      throw new UpgradeError(`cannot get the manifest: ${(error as Error).message}`, true);
    }

    // Beside the agent's own file: the same filesystem, so the final rename is atomic.
    // The extension stays last: node picks the module type of drover-agent.mjs by it.
    const ext = path.extname(own);
    const staged = path.join(path.dirname(own), `.${path.basename(own, ext)}-${version}.new${ext}`);
    try {
      await downloadFile({ url: `${serverUrl}${manifest.url}`, file: staged, sha256: manifest.sha256, timeoutMs: DOWNLOAD_TIMEOUT_MS, maxBytes: DEFAULT_ARTIFACT_MAX_BYTES, signal, fetch: fetchImpl });
    } catch (error) {
      if (error instanceof DownloadFailure) throw new UpgradeError(error.message, error.kind !== "cancelled", /HTTP 429$/.test(error.message) ? THROTTLED_DEFAULT_MS : undefined);
      throw new UpgradeError(`cannot write ${staged}: ${(error as Error).message}`, true);
    }
    try {
      await fs.chmod(staged, 0o755);
      const printed = await (this.options.smokeTest ?? smokeTest)(staged, form);
      if (printed.trim() !== version) throw new UpgradeError(`the new build's smoke test printed ${JSON.stringify(printed.trim().slice(0, 80))}, not ${version}`, false);
    } catch (error) {
      await fs.rm(staged, { force: true });
      if (error instanceof UpgradeError) throw error;
      throw new UpgradeError(`the new build's smoke test failed: ${(error as Error).message}`, false);
    }
    logger.info({ event: "upgrade.staged", version, sha256: manifest.sha256, file: staged }, `agent ${version} downloaded and checked`);
    return { version, file: staged, sha256: manifest.sha256 };
  }

  /**
   * Puts the staged build in place of the agent's file (the old one kept as `<file>.previous`),
   * journals it, and asks the agent to restart. After this the agent must not go on.
   */
  async activate(staged: StagedUpgrade): Promise<void> {
    const { store, logger, currentVersion } = this.options;
    const own = this.options.file!;
    const previous = `${own}.previous`;
    try {
      // A hard link keeps the old file as it is, costing no space; a copy where links fail.
      await fs.rm(previous, { force: true });
      await fs.link(own, previous).catch(() => fs.copyFile(own, previous));
    } catch (error) {
      throw new UpgradeError(`cannot keep the running agent as ${previous}: ${(error as Error).message}`, true);
    }
    // Journaled before the rename: a crash between the two restarts on the old file, which
    // load() then reads as a failed upgrade, not as done.
    this.journal = { version: 1, from: currentVersion, to: staged.version, state: "restarting", file: own, at: isoTime(this.now()) };
    await store.write("upgrade", this.journal);
    try {
      await fs.rename(staged.file, own);
    } catch (error) {
      this.journal = { ...this.journal, state: "failed", info: (error as Error).message };
      await store.write("upgrade", this.journal);
      await fs.rm(staged.file, { force: true });
      throw new UpgradeError(`cannot replace ${own}: ${(error as Error).message}`, true);
    }
    const info = `upgraded ${own} from ${currentVersion} to ${staged.version} (sha256 ${staged.sha256}); restarting`;
    logger.warn({ event: "upgrade.restarting", from: currentVersion, to: staged.version, file: own, previous }, info);
    this.options.onRestart(info);
  }

  /** stage() then activate(). */
  async upgrade(version: string, signal: AbortSignal): Promise<void> {
    const staged = await this.stage(version, signal);
    signal.throwIfAborted();
    await this.activate(staged);
  }
}

/** Runs the new build with --version: it must load all of its code and exit 0. */
export function smokeTest(file: string, form: AgentForm): Promise<string> {
  const [command, args] = form === "sea" ? [file, ["--version"]] : [process.execPath, [file, "--version"]];
  return new Promise((resolve, reject) => {
    execFile(command, args, { timeout: SMOKE_TEST_TIMEOUT_MS, maxBuffer: 64 * 1024, env: { ...process.env, NODE_OPTIONS: "" } }, (error, stdout, stderr) => {
      // Node prints the thrown error's own line ("Error: …") among the stack: that, else the tail.
      const why = /^\w*Error\b.*$/m.exec(stderr)?.[0] ?? stderr.trim().slice(-300);
      if (error) reject(new Error(`${path.basename(file)} --version: ${error.killed ? "timed out" : `exit ${String(error.code)}`}${why ? `: ${why.slice(0, 500)}` : ""}`));
      else resolve(stdout);
    });
  });
}

function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason as Error);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason as Error);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

/** Resolves never; rejects when `signal` aborts (the agent stopping after activate()). */
function untilAborted(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    if (signal.aborted) return reject(signal.reason as Error);
    signal.addEventListener("abort", () => reject(signal.reason as Error), { once: true });
  });
}

/**
 * A spec's `agent.version` as part of its update (seed 003's states), around the device's
 * runtime: Preparing downloads and checks the build (a failure: Error, nothing changed);
 * ApplyingUpdate, once the spec's files are written, puts it in place and restarts. The
 * restarted agent resumes the update at ApplyingUpdate (update.ts: the steps are idempotent),
 * now running that version, and goes on to Updated. A rollback does not put the old agent
 * back: the new one is running and rolls the spec back itself.
 */
export class UpgradingRuntime implements DeviceRuntime {
  private staged: StagedUpgrade | null = null;
  readonly dwell?: DeviceRuntime["dwell"];

  constructor(
    private readonly inner: DeviceRuntime,
    private readonly upgrader: Upgrader,
  ) {
    if (inner.dwell) this.dwell = (spec: RenderedSpec, state: ReportedUpdateState, signal: AbortSignal) => inner.dwell!(spec, state, signal);
  }

  start(running: RenderedSpec | null): Promise<void> {
    return this.inner.start(running);
  }

  async prepare(spec: RenderedSpec, signal: AbortSignal): Promise<void> {
    await this.inner.prepare(spec, signal);
    const version = spec.agent?.version;
    if (!version || !this.upgrader.differs(version)) return;
    if (this.staged?.version === version && (await exists(this.staged.file))) return;
    this.staged = await this.asUpdateFailure(() => this.upgrader.stage(version, signal));
  }

  async apply(spec: RenderedSpec, previous: RenderedSpec | null, backups: BackupJournal, signal: AbortSignal): Promise<void> {
    await this.inner.apply(spec, previous, backups, signal);
    const version = spec.agent?.version;
    if (!version || !this.upgrader.differs(version)) return;
    const staged = this.staged?.version === version && (await exists(this.staged.file)) ? this.staged : await this.asUpdateFailure(() => this.upgrader.stage(version, signal));
    this.staged = null;
    await this.asUpdateFailure(() => this.upgrader.activate(staged));
    // The agent is stopping to restart as `version`; the update's journal says ApplyingUpdate,
    // which the next start resumes.
    await untilAborted(signal);
  }

  activate(spec: RenderedSpec, signal: AbortSignal): Promise<void> {
    return this.inner.activate(spec, signal);
  }

  rollback(previous: RenderedSpec | null, backups: readonly FileBackup[] | undefined): Promise<void> {
    return this.inner.rollback(previous, backups);
  }

  async finish(keep: readonly (RenderedSpec | null)[]): Promise<void> {
    if (this.staged) {
      await fs.rm(this.staged.file, { force: true });
      this.staged = null;
    }
    await this.inner.finish(keep);
  }

  applications() {
    return this.inner.applications();
  }

  stop(): Promise<void> {
    return this.inner.stop();
  }

  private async asUpdateFailure<T>(run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      if (error instanceof UpgradeError) throw new UpdateFailure(error.message, { cause: error });
      throw error;
    }
  }
}

async function exists(file: string): Promise<boolean> {
  return fs.access(file).then(
    () => true,
    () => false,
  );
}
