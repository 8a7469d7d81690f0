/**
 * Downloads over HTTP(S) into the state directory, the SHA-256 computed while the file
 * streams in: `downloadFile` serves both the spec's artifact (ArtifactStore, below) and the
 * update actions' files (../executors/plan-update.ts). A mismatch, an HTTP error, a size over
 * the limit or the timeout fails with a DownloadFailure and leaves no file behind.
 *
 * The spec's artifact is kept as `artifacts/<sha256>`; a file already there under its
 * checksum is checked again and reused. A failure fails the update in Preparing, before
 * anything on the device changed. Applications find the path in `DROVER_ARTIFACT`.
 */
import { createReadStream } from "node:fs";
import fs from "node:fs/promises";
import path from "node:path";
import type { RenderedSpec } from "../../lib/protocol";
import { linkedSignal } from "../timing";
import { UpdateFailure } from "./types";

export type Artifact = NonNullable<RenderedSpec["artifact"]>;

export interface ArtifactOptions {
  dir: string;
  /** Longest a download may take. */
  timeoutMs: number;
  /** Largest artifact accepted. */
  maxBytes: number;
  fetch?: typeof fetch;
}

export const DEFAULT_ARTIFACT_TIMEOUT_MS = 10 * 60_000;
export const DEFAULT_ARTIFACT_MAX_BYTES = 4 * 1024 ** 3;

/** A SHA-256 hash; node:crypto is loaded on the first one (an idle agent does without it: ≈0.6 MB of its RSS, issue 12). */
async function sha256Hash() {
  return (await import("node:crypto")).createHash("sha256");
}

export class ArtifactStore {
  constructor(private readonly options: ArtifactOptions) {}

  pathFor(artifact: Artifact): string {
    return path.join(this.options.dir, artifact.sha256);
  }

  /** The verified artifact's path: reused when already there and intact, else downloaded. */
  async fetch(artifact: Artifact, signal: AbortSignal): Promise<string> {
    await fs.mkdir(this.options.dir, { recursive: true, mode: 0o700 });
    const file = this.pathFor(artifact);
    if ((await sha256OfFile(file)) === artifact.sha256) return file;
    try {
      const { timeoutMs, maxBytes, fetch } = this.options;
      await downloadFile({ url: artifact.url, file, sha256: artifact.sha256, timeoutMs, maxBytes, fetch, signal });
    } catch (error) {
      if (error instanceof DownloadFailure) throw new UpdateFailure(`artifact ${error.where}: ${error.message}`, { cause: error });
      throw error;
    }
    return file;
  }

  /** Removes every artifact but those of `keep`. */
  async prune(keep: readonly (Artifact | undefined)[]): Promise<void> {
    const wanted = new Set(keep.filter((a): a is Artifact => a !== undefined).map((a) => a.sha256));
    let entries: string[];
    try {
      entries = await fs.readdir(this.options.dir);
    } catch {
      return;
    }
    for (const entry of entries) {
      if (!wanted.has(entry)) await fs.rm(path.join(this.options.dir, entry), { force: true, recursive: true });
    }
  }
}

/**
 * A download that did not give the file. `message` says what went wrong without the URL
 * ("download failed: HTTP 404", "sha256 mismatch: expected …, got …"); `where` is the URL
 * as messages may show it. `kind` "cancelled": the caller's signal aborted.
 */
export class DownloadFailure extends Error {
  constructor(
    message: string,
    readonly kind: "transfer" | "too-large" | "sha256" | "cancelled",
    readonly where: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = "DownloadFailure";
  }
}

export interface DownloadOptions {
  url: string;
  /** Where the file ends up; it is written to `<file>.part` first and renamed once complete (and verified). */
  file: string;
  /** When given, the file must have this SHA-256 (hex). */
  sha256?: string | undefined;
  /** Longest the download may take. */
  timeoutMs: number;
  /** Largest file accepted. */
  maxBytes: number;
  /** Aborts the download (a cancel, the agent stopping). */
  signal: AbortSignal;
  fetch?: typeof fetch | undefined;
}

/**
 * Streams `url` (redirects followed) to `file` and returns its SHA-256 and size. The
 * directory must exist. Throws DownloadFailure; on any failure neither the file nor its
 * `.part` is left.
 */
export async function downloadFile(options: DownloadOptions): Promise<{ sha256: string; bytes: number }> {
  const { url, file, maxBytes, timeoutMs, signal } = options;
  const fetchImpl = options.fetch ?? globalThis.fetch;
  const part = `${file}.part`;
  const linked = linkedSignal([signal], timeoutMs);
  const where = redactUrl(url);
  const fail = (error: unknown): DownloadFailure => {
    if (error instanceof DownloadFailure) return error;
    if (signal.aborted) return new DownloadFailure("cancelled", "cancelled", where, { cause: error });
    return new DownloadFailure(`download failed: ${describe(error, linked.timedOut(), timeoutMs)}`, "transfer", where, { cause: error });
  };
  try {
    let res: Response;
    try {
      res = await fetchImpl(url, { signal: linked.signal, redirect: "follow" });
    } catch (error) {
      throw fail(error);
    }
    if (!res.ok || !res.body) {
      await res.body?.cancel().catch(() => undefined);
      throw new DownloadFailure(`download failed: HTTP ${res.status}`, "transfer", where);
    }
    const declared = Number(res.headers.get("content-length") ?? NaN);
    if (declared > maxBytes) {
      await res.body.cancel().catch(() => undefined);
      throw new DownloadFailure(`${declared} bytes, over the limit of ${maxBytes}`, "too-large", where);
    }
    const hash = await sha256Hash();
    let bytes = 0;
    const handle = await fs.open(part, "w", 0o600);
    try {
      try {
        for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
          bytes += chunk.byteLength;
          if (bytes > maxBytes) throw new DownloadFailure(`over the limit of ${maxBytes} bytes`, "too-large", where);
          hash.update(chunk);
          await handle.write(chunk);
        }
      } catch (error) {
        throw fail(error);
      }
      await handle.sync();
    } finally {
      await handle.close();
    }
    const actual = hash.digest("hex");
    if (options.sha256 !== undefined && actual !== options.sha256.toLowerCase()) {
      throw new DownloadFailure(`sha256 mismatch: expected ${options.sha256}, got ${actual}`, "sha256", where);
    }
    await fs.rename(part, file);
    return { sha256: actual, bytes };
  } finally {
    linked.dispose();
    await fs.rm(part, { force: true });
  }
}

/** The file's SHA-256 in hex, or null when it cannot be read. */
export async function sha256OfFile(file: string): Promise<string | null> {
  try {
    const hash = await sha256Hash();
    for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
    return hash.digest("hex");
  } catch {
    return null;
  }
}

/** The URL without credentials or query (which may hold a token) for messages. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return "(invalid url)";
  }
}

function describe(error: unknown, timedOut: boolean, timeoutMs: number): string {
  if (timedOut) return `timed out after ${timeoutMs / 1000} s`;
  if (error instanceof Error) {
    const cause = (error as Error & { cause?: unknown }).cause;
    return cause instanceof Error ? `${error.message}: ${cause.message}` : error.message;
  }
  return String(error);
}
