/**
 * The spec's artifact: downloaded over HTTP(S) into the state directory
 * (`artifacts/<sha256>`), its SHA-256 computed while it streams in. A mismatch, an HTTP
 * error, a size over the limit or the timeout fails the update in Preparing, before
 * anything on the device changed. A file already there under its checksum is checked
 * again and reused. Applications find the path in `DROVER_ARTIFACT`.
 */
import { createHash } from "node:crypto";
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

export class ArtifactStore {
  private readonly fetchImpl: typeof fetch;

  constructor(private readonly options: ArtifactOptions) {
    this.fetchImpl = options.fetch ?? globalThis.fetch;
  }

  pathFor(artifact: Artifact): string {
    return path.join(this.options.dir, artifact.sha256);
  }

  /** The verified artifact's path: reused when already there and intact, else downloaded. */
  async fetch(artifact: Artifact, signal: AbortSignal): Promise<string> {
    await fs.mkdir(this.options.dir, { recursive: true, mode: 0o700 });
    const file = this.pathFor(artifact);
    if ((await sha256OfFile(file)) === artifact.sha256) return file;

    const part = `${file}.part`;
    const linked = linkedSignal([signal], this.options.timeoutMs);
    const where = redact(artifact.url);
    try {
      let res: Response;
      try {
        res = await this.fetchImpl(artifact.url, { signal: linked.signal, redirect: "follow" });
      } catch (error) {
        throw new UpdateFailure(`artifact ${where}: download failed: ${describe(error, linked.timedOut(), this.options.timeoutMs)}`, { cause: error });
      }
      if (!res.ok || !res.body) {
        await res.body?.cancel().catch(() => undefined);
        throw new UpdateFailure(`artifact ${where}: download failed: HTTP ${res.status}`);
      }
      const declared = Number(res.headers.get("content-length") ?? NaN);
      if (declared > this.options.maxBytes) {
        await res.body.cancel().catch(() => undefined);
        throw new UpdateFailure(`artifact ${where}: ${declared} bytes, over the limit of ${this.options.maxBytes}`);
      }
      const hash = createHash("sha256");
      let bytes = 0;
      const handle = await fs.open(part, "w", 0o600);
      try {
        try {
          for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
            bytes += chunk.byteLength;
            if (bytes > this.options.maxBytes) throw new UpdateFailure(`artifact ${where}: over the limit of ${this.options.maxBytes} bytes`);
            hash.update(chunk);
            await handle.write(chunk);
          }
        } catch (error) {
          if (error instanceof UpdateFailure) throw error;
          throw new UpdateFailure(`artifact ${where}: download failed: ${describe(error, linked.timedOut(), this.options.timeoutMs)}`, { cause: error });
        }
        await handle.sync();
      } finally {
        await handle.close();
      }
      const actual = hash.digest("hex");
      if (actual !== artifact.sha256) {
        throw new UpdateFailure(`artifact ${where}: checksum mismatch: expected sha256 ${artifact.sha256}, got ${actual} (${bytes} bytes)`);
      }
      await fs.rename(part, file);
      return file;
    } finally {
      linked.dispose();
      await fs.rm(part, { force: true });
    }
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

/** The file's SHA-256 in hex, or null when it cannot be read. */
export async function sha256OfFile(file: string): Promise<string | null> {
  try {
    const hash = createHash("sha256");
    for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
    return hash.digest("hex");
  } catch {
    return null;
  }
}

/** The URL without credentials or query (which may hold a token) for messages. */
function redact(url: string): string {
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
