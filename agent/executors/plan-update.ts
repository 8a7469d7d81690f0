/**
 * `k0supdate` and `airgapupdate` {planId, command, version, platform, url, sha256?,
 * forceupdate?} (lib/plan-spec.ts PlanSignalArgs): a plan signals this node to take a
 * version. The agent downloads the file to `<state-dir>/downloads/`, checks its SHA-256
 * when the plan gives one, then hands it to the program the operator who started the agent
 * named with `--update-command`, run as `<command> <file> <version>` (no shell, its own
 * process group, output captured as exec's). What "applying" means (replace the k0s
 * binary, import an image bundle, restart a service) is that program's business; without
 * one the agent applies nothing and the action fails before anything is downloaded.
 *
 * The downloaded file is removed once the command ends: a command that keeps it copies it.
 * Only one action runs at a time, so each run first clears what a killed agent may have
 * left in the downloads directory.
 *
 * `--download-mirror URL` (air-gapped sites): the file is fetched from
 * `<mirror>/<the URL's last path segment>` instead of the plan's URL. The plan's sha256 is
 * checked all the same, so the mirror cannot hand over another file unnoticed.
 */
import { constants } from "node:fs";
import fs from "node:fs/promises";
import path from "node:path";
import { PlanSignalArgs, type PlanUpdateActionKind } from "../../lib/plan-spec";
import { DEFAULT_ARTIFACT_MAX_BYTES, DownloadFailure, downloadFile, redactUrl } from "../runtime/artifact";
import { runCommand } from "./exec";
import { OutputCapture, truncateOutput } from "./output";
import { ActionFailure, type Executor } from "./types";

export interface PlanUpdateOptions {
  /** `--update-command`: the program that applies a downloaded file; null: update actions fail. */
  command: string | null;
  /** Where files are downloaded (`<state-dir>/downloads`). */
  downloadDir: string;
  /** `--download-mirror`: a base URL (no trailing slash) that serves the plan's files by their names. */
  mirror?: string | undefined;
  /** The platform the agent reports: a file for another one is refused (the server picked the wrong one). */
  platform?: string | undefined;
  /** Longest the download may take, and then the command (`--update-timeout-seconds`). */
  timeoutMs?: number | undefined;
  /** Largest file accepted. */
  maxBytes?: number | undefined;
  /** Between SIGTERM and SIGKILL when the command is stopped. */
  killGraceMs?: number | undefined;
  fetch?: typeof fetch | undefined;
  /** The environment the command's is built from (the agent's by default). */
  env?: NodeJS.ProcessEnv | undefined;
}

export const DEFAULT_UPDATE_TIMEOUT_SECONDS = 30 * 60;
/** The most of the command's stderr quoted in a failure's message (the output has all of it). */
const ERROR_TAIL_CHARS = 1000;

export function planUpdateExecutors(options: PlanUpdateOptions): Executor<typeof PlanSignalArgs>[] {
  return [planUpdateExecutor("k0supdate", options), planUpdateExecutor("airgapupdate", options)];
}

export function planUpdateExecutor(kind: PlanUpdateActionKind, options: PlanUpdateOptions): Executor<typeof PlanSignalArgs> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_UPDATE_TIMEOUT_SECONDS * 1000;
  return {
    kind,
    // Applying a version twice may well be harmless, but the agent cannot know what the
    // command does, nor how far a run cut short by a restart got: the plan sees FAILED.
    idempotent: false,
    argsSchema: PlanSignalArgs,
    async run(args, { signal, log, liveOutput }) {
      const command = options.command;
      if (!command) throw new ActionFailure(`this agent has no --update-command: it cannot apply ${kind}`);
      if (options.platform !== undefined && args.platform !== options.platform) {
        throw new ActionFailure(`the file is for ${args.platform}, this agent runs on ${options.platform}`);
      }
      if (command.includes("/")) {
        try {
          await fs.access(command, constants.X_OK);
        } catch (error) {
          throw new ActionFailure(`cannot run update command ${JSON.stringify(command)}: ${(error as Error).message}`);
        }
      }

      const url = options.mirror ? mirrored(options.mirror, args.url) : args.url;
      if (url !== args.url) log.info({ event: "update.mirror", url: redactUrl(args.url), mirror: redactUrl(url) }, "downloading the update file from the mirror");

      await fs.rm(options.downloadDir, { recursive: true, force: true });
      await fs.mkdir(options.downloadDir, { recursive: true, mode: 0o700 });
      const file = path.join(options.downloadDir, downloadName(kind, args));
      const where = redactUrl(url) + (url !== args.url ? ` (mirror of ${redactUrl(args.url)})` : "");
      let downloaded: { sha256: string; bytes: number };
      try {
        downloaded = await downloadFile({ url, file, sha256: args.sha256, timeoutMs, maxBytes: options.maxBytes ?? DEFAULT_ARTIFACT_MAX_BYTES, signal, fetch: options.fetch });
      } catch (error) {
        if (!(error instanceof DownloadFailure)) throw error;
        throw new ActionFailure(error.kind === "transfer" || error.kind === "too-large" ? `${error.message} from ${where}` : error.message);
      }
      log.info({ event: "update.downloaded", file, bytes: downloaded.bytes, sha256: downloaded.sha256 }, "update file downloaded");
      const header =
        `downloaded ${downloaded.bytes} bytes from ${where}, sha256 ${downloaded.sha256}` +
        `${args.sha256 ? " (matches the plan)" : " (not checked: the plan gives none)"}\n` +
        `running ${command} ${file} ${args.version}\n`;

      // The header and the command's output so far, sent while it runs.
      const capture = new OutputCapture();
      liveOutput?.({
        get total() {
          return capture.total;
        },
        text: () => truncateOutput(header + capture.text()),
      });
      try {
        const result = await runCommand({
          command,
          args: [file, args.version],
          timeoutMs,
          signal,
          killGraceMs: options.killGraceMs,
          capture,
          env: {
            ...(options.env ?? process.env),
            DROVER_UPDATE_FILE: file,
            DROVER_UPDATE_VERSION: args.version,
            DROVER_UPDATE_KIND: kind,
            DROVER_UPDATE_PLATFORM: args.platform,
            DROVER_UPDATE_SHA256: downloaded.sha256,
            DROVER_UPDATE_FORCE: args.forceupdate ? "true" : "false",
            DROVER_PLAN_ID: args.planId,
            DROVER_PLAN_COMMAND: String(args.command),
          },
        });
        log.info({ event: "update.command.exited", command, end: result.end, code: result.code, signal: result.signal }, "update command ended");
        const output = truncateOutput(header + result.output);
        const name = JSON.stringify(command);
        switch (result.end) {
          case "cancelled":
            throw new ActionFailure("cancelled", output);
          case "timeout":
            throw new ActionFailure(`update command ${name} timed out after ${timeoutMs / 1000} s`, output);
          case "error":
            throw new ActionFailure(`cannot run update command ${name}: ${result.message}`, output);
          case "exited": {
            if (result.code === 0) return { output };
            const how = result.code !== null ? `exited with code ${result.code}` : `was killed by signal ${result.signal ?? "unknown"}`;
            const tail = result.stderrTail.trim().slice(-ERROR_TAIL_CHARS);
            throw new ActionFailure(`update command ${name} ${how}${tail ? `: ${tail}` : ""}`, output);
          }
        }
      } finally {
        await fs.rm(file, { force: true });
      }
    },
  };
}

/** `<mirror>/<the URL's last path segment>` (still %-encoded as it was); the plan's query is not sent. */
function mirrored(mirror: string, url: string): string {
  let segment = "";
  try {
    segment = new URL(url).pathname.split("/").pop() ?? "";
  } catch {
    // an invalid URL cannot come through the schema
  }
  if (segment === "") throw new ActionFailure(`${redactUrl(url)} names no file to fetch from the mirror ${mirror}`);
  return `${mirror.replace(/\/+$/, "")}/${segment}`;
}

/** `<kind>-<the URL's file name>` (the command may go by its name or extension), safe as a file name. */
function downloadName(kind: string, args: PlanSignalArgs): string {
  let base = "";
  try {
    base = decodeURIComponent(path.posix.basename(new URL(args.url).pathname));
  } catch {
    // an undecodable name: fall back to the version
  }
  const safe = (base || args.version).replace(/[^A-Za-z0-9._+-]/g, "_").slice(0, 120);
  return `${kind}-${safe}`;
}
