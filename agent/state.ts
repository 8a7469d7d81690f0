/**
 * The agent's durable state: small JSON documents in its state directory.
 *
 *   identity.json  device name, enrollment id + secret (before approval), token or private key
 *                  and client certificate (after),
 *                  decommissioning / decommissioned flags. Mode 0600.
 *   spec.json      the last applied rendered spec and its renderedVersion. Mode 0600.
 *   actions.json   the action journal (journal.ts): the queue and recently finished actions.
 *   update.json    the last update: target, previous spec, state reached, file backups (update.ts).
 *   processes.json the process groups of the running applications (runtime/supervisor.ts).
 *
 * Every write is atomic: write a temp file, fsync it, rename it over the document, fsync
 * the directory. A crash leaves either the old or the new document, never a torn one; a
 * leftover temp file is ignored and swept on the next open. A lock file keeps two agents
 * off one state directory.
 *
 * The simulator runs thousands of agents in one process and uses MemoryStateStore, which
 * implements the same interface.
 */
import { constants as fsConstants } from "node:fs";
import fs from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import { RenderedSpec } from "../lib/protocol";
import { randomBytes } from "./random";

export const DOCUMENT_NAMES = ["identity", "spec", "actions", "update", "processes", "upgrade"] as const;
export type DocumentName = (typeof DOCUMENT_NAMES)[number];

export interface StateStore {
  /** The document, validated by `schema`; null when it does not exist. Throws StateError when unreadable. */
  read<S extends z.ZodType>(name: DocumentName, schema: S): Promise<z.output<S> | null>;
  /** Replaces the document atomically and durably. */
  write(name: DocumentName, value: unknown): Promise<void>;
  /** Deletes the document (durably); no error when it is absent. */
  remove(name: DocumentName): Promise<void>;
  /** Waits for pending writes and releases the store. */
  close(): Promise<void>;
}

export class StateError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "StateError";
  }
}

// ---------------------------------------------------------------------------------------
// Documents

export const IdentityDocument = z.object({
  version: z.literal(1),
  deviceName: z.string(),
  /** Present from the first enrollment request until approval. */
  enrollment: z
    .object({
      /** Unknown until the server answered the POST; the secret is saved before sending. */
      id: z.string().optional(),
      secret: z.string(),
      requestedAt: z.string(),
      /** The device's private key (issue 23), made before the request so that a retry sends the same CSR. */
      key: z.string().optional(),
    })
    .optional(),
  enrollmentId: z.string().optional(),
  token: z.string().optional(),
  /**
   * Issue 23: the device's private key (PEM; this file is 0600 and the key never leaves it),
   * its client certificate from the server's CA, and when it came (renewal is reckoned from it).
   */
  key: z.string().optional(),
  certificate: z.string().optional(),
  certificateReceivedAt: z.string().optional(),
  /** Set when a decommission request arrived; a restart after a crash finishes the job. */
  decommissioning: z.boolean().default(false),
  decommissioned: z.boolean().default(false),
  decommissionedAt: z.string().optional(),
});
export type IdentityDocument = z.infer<typeof IdentityDocument>;

export const AppliedSpecDocument = z.object({
  version: z.literal(1),
  renderedVersion: z.number().int().min(0),
  spec: RenderedSpec,
  appliedAt: z.string(),
});
export type AppliedSpecDocument = z.infer<typeof AppliedSpecDocument>;

// ---------------------------------------------------------------------------------------
// File store

const LOCK_FILE = "agent.lock";
const TEMP_SUFFIX = ".tmp";

export class FileStateStore implements StateStore {
  private queue: Promise<unknown> = Promise.resolve();
  private closed = false;

  private constructor(
    readonly dir: string,
    private readonly lockPath: string | null,
  ) {}

  /** Opens (creating) a state directory: mode 0700, lock taken, stale temp files swept. */
  static async open(dir: string, options: { lock?: boolean } = {}): Promise<FileStateStore> {
    const absolute = path.resolve(dir);
    await fs.mkdir(absolute, { recursive: true, mode: 0o700 });
    const lockPath = options.lock === false ? null : await acquireLock(absolute);
    for (const entry of await fs.readdir(absolute)) {
      if (entry.endsWith(TEMP_SUFFIX)) await fs.rm(path.join(absolute, entry), { force: true });
    }
    return new FileStateStore(absolute, lockPath);
  }

  private file(name: DocumentName): string {
    return path.join(this.dir, `${name}.json`);
  }

  async read<S extends z.ZodType>(name: DocumentName, schema: S): Promise<z.output<S> | null> {
    // Wait for queued writes of this store, so a read sees its own writes.
    await this.queue.catch(() => undefined);
    const file = this.file(name);
    let text: string;
    try {
      text = await fs.readFile(file, "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
      throw new StateError(`cannot read ${file}: ${(error as Error).message}`, { cause: error });
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (error) {
      throw new StateError(`${file} is not valid JSON; move it away to start afresh`, { cause: error });
    }
    const parsed = schema.safeParse(json);
    if (!parsed.success) throw new StateError(`${file} does not hold a valid ${name} document: ${parsed.error.message}`);
    return parsed.data as z.output<S>;
  }

  write(name: DocumentName, value: unknown): Promise<void> {
    const file = this.file(name);
    return this.enqueue(async () => {
      try {
        await writeFileAtomic(file, { content: JSON.stringify(value, null, 2) + "\n" });
      } catch (error) {
        throw new StateError(`cannot write ${file}: ${(error as Error).message}`, { cause: error });
      }
    });
  }

  remove(name: DocumentName): Promise<void> {
    return this.enqueue(async () => {
      await fs.rm(this.file(name), { force: true });
      await fsyncDir(this.dir);
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.queue.catch(() => undefined);
    if (this.lockPath) await fs.rm(this.lockPath, { force: true });
  }

  /** Writes of one store run one at a time, in order: a later write never loses to an earlier one. */
  private enqueue(task: () => Promise<void>): Promise<void> {
    if (this.closed) return Promise.reject(new StateError("state store is closed"));
    const run = this.queue.catch(() => undefined).then(task);
    this.queue = run;
    return run;
  }
}

/**
 * Replaces `file` atomically and durably with `content` (or a copy of the file `from`), mode
 * `mode` exactly (chmod, not masked by the umask): temp file in the same directory → write →
 * chmod → fsync → rename → fsync of the directory. A crash leaves the old or the new file,
 * never a torn one; a leftover temp file (`.<name>.drover-….tmp`) is removed on failure, and
 * swept when a state directory opens. Used for the state documents and the spec's config files.
 */
export async function writeFileAtomic(file: string, source: { content: string } | { from: string }, mode = 0o600): Promise<void> {
  const dir = path.dirname(file);
  const temp = path.join(dir, `.${path.basename(file)}.drover-${process.pid}-${(await randomBytes(4)).toString("hex")}${TEMP_SUFFIX}`);
  try {
    let handle: fs.FileHandle;
    if ("from" in source) {
      await fs.copyFile(source.from, temp, fsConstants.COPYFILE_EXCL);
      handle = await fs.open(temp, "r+");
    } else {
      handle = await fs.open(temp, fsConstants.O_WRONLY | fsConstants.O_CREAT | fsConstants.O_EXCL, 0o600);
    }
    try {
      if ("content" in source) await handle.writeFile(source.content, "utf8");
      await handle.chmod(mode);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await fs.rename(temp, file);
  } catch (error) {
    await fs.rm(temp, { force: true });
    throw error;
  }
  await fsyncDir(dir);
}

/** fsync a directory, so a rename in it survives a crash (where the platform can). */
export async function fsyncDir(dir: string): Promise<void> {
  let handle: fs.FileHandle | undefined;
  try {
    handle = await fs.open(dir, "r");
    await handle.sync();
  } catch (error) {
    // Some platforms (Windows) cannot fsync a directory; the rename is still atomic there.
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== "EISDIR" && code !== "EPERM" && code !== "EINVAL") throw error;
  } finally {
    await handle?.close();
  }
}

async function acquireLock(dir: string): Promise<string> {
  const lockPath = path.join(dir, LOCK_FILE);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const handle = await fs.open(lockPath, "wx", 0o600);
      await handle.writeFile(`${process.pid}\n`);
      await handle.close();
      return lockPath;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      const holder = Number.parseInt(await fs.readFile(lockPath, "utf8").catch(() => ""), 10);
      if (Number.isInteger(holder) && holder > 0 && isAlive(holder)) {
        throw new StateError(`state directory ${dir} is in use by process ${holder}`);
      }
      // A stale lock from a process that died without cleaning up.
      await fs.rm(lockPath, { force: true });
    }
  }
  throw new StateError(`cannot lock state directory ${dir}`);
}

function isAlive(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

// ---------------------------------------------------------------------------------------
// Memory store

/** Same contract as the file store, in memory: documents are kept serialised, as on disk. */
export class MemoryStateStore implements StateStore {
  private readonly documents = new Map<DocumentName, string>();

  async read<S extends z.ZodType>(name: DocumentName, schema: S): Promise<z.output<S> | null> {
    const text = this.documents.get(name);
    if (text === undefined) return null;
    const parsed = schema.safeParse(JSON.parse(text));
    if (!parsed.success) throw new StateError(`memory ${name} document is invalid: ${parsed.error.message}`);
    return parsed.data as z.output<S>;
  }

  async write(name: DocumentName, value: unknown): Promise<void> {
    this.documents.set(name, JSON.stringify(value));
  }

  async remove(name: DocumentName): Promise<void> {
    this.documents.delete(name);
  }

  async close(): Promise<void> {}

  has(name: DocumentName): boolean {
    return this.documents.has(name);
  }
}
