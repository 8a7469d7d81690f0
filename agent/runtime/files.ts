/**
 * The spec's config files, written under the agent's root directory (`--root-dir`).
 *
 * A spec path is absolute (`/etc/app.conf`) and is always joined under the root: no `..`
 * segment, no NUL, and the parent directory, once created, must resolve (symlinks
 * followed) inside the root, so neither a crafted path nor a symlink planted by an
 * application can make the agent write elsewhere. Only regular files are replaced.
 *
 * Every write is atomic: temp file in the same directory, mode set, fsync, rename, fsync of
 * the directory. Before the first file changes, the update backs up every path it will
 * touch (the spec's files, and the previous spec's files it removes) into a backup folder,
 * and journals the list; a rollback puts each back, or removes it when it did not exist.
 */
import fs from "node:fs/promises";
import path from "node:path";
import type { RenderedSpec } from "../../lib/protocol";
import { UpdateFailure, type FileBackup } from "./types";
import { writeFileAtomic } from "../state";

export const DEFAULT_FILE_MODE = 0o644;

/** The host path of spec path `specPath` under `root`; throws UpdateFailure when it would leave the root. */
export function resolveUnderRoot(root: string, specPath: string): string {
  const fail = (why: string) => new UpdateFailure(`config file ${JSON.stringify(specPath)}: ${why}`);
  if (!specPath.startsWith("/")) throw fail("must be an absolute path");
  if (specPath.includes("\0")) throw fail("must not contain NUL");
  const segments = specPath.split("/").filter((s) => s !== "" && s !== ".");
  if (segments.includes("..")) throw fail('must not contain ".." segments');
  if (segments.length === 0) throw fail("names no file");
  const resolvedRoot = path.resolve(root);
  const full = path.join(resolvedRoot, ...segments);
  if (!full.startsWith(resolvedRoot + path.sep)) throw fail("is outside the root directory");
  return full;
}

/** Octal text ("0644", "755") → number; the default when absent. */
export function parseMode(mode: string | undefined): number {
  return mode === undefined ? DEFAULT_FILE_MODE : Number.parseInt(mode, 8);
}

/** Creates the parent directories of `file` and checks that they resolve inside `root`. */
async function parentInsideRoot(root: string, file: string): Promise<void> {
  const dir = path.dirname(file);
  await fs.mkdir(dir, { recursive: true, mode: 0o755 });
  const [realRoot, realDir] = await Promise.all([fs.realpath(root), fs.realpath(dir)]);
  if (realDir !== realRoot && !realDir.startsWith(realRoot + path.sep)) {
    throw new UpdateFailure(`config file ${JSON.stringify(file)}: its directory resolves outside the root directory (${realDir})`);
  }
}

/** What is at `file` now: null when nothing, else its mode; throws when it is not a regular file. */
async function regularFile(file: string, specPath: string): Promise<{ mode: number } | null> {
  try {
    const stat = await fs.lstat(file);
    if (!stat.isFile()) throw new UpdateFailure(`config file ${JSON.stringify(specPath)}: exists and is not a regular file`);
    return { mode: stat.mode & 0o7777 };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw error;
  }
}

export class ConfigFiles {
  constructor(
    /** The root directory spec paths are joined under. */
    readonly root: string,
    /** Where copies of replaced files are kept during an update. */
    private readonly backupDir: string,
  ) {}

  async init(): Promise<void> {
    await fs.mkdir(this.root, { recursive: true, mode: 0o755 });
  }

  /** The paths an update from `previous` to `spec` changes: its files, and the previous files it drops. */
  private touched(spec: RenderedSpec, previous: RenderedSpec | null): string[] {
    const paths = spec.config.files.map((f) => f.path);
    const keep = new Set(paths);
    for (const f of previous?.config.files ?? []) if (!keep.has(f.path)) paths.push(f.path);
    return paths;
  }

  /** Copies what is at every touched path into the backup folder. Nothing under the root changes. */
  async backup(spec: RenderedSpec, previous: RenderedSpec | null): Promise<FileBackup[]> {
    await fs.rm(this.backupDir, { recursive: true, force: true });
    await fs.mkdir(this.backupDir, { recursive: true, mode: 0o700 });
    const backups: FileBackup[] = [];
    for (const [index, specPath] of this.touched(spec, previous).entries()) {
      const file = resolveUnderRoot(this.root, specPath);
      const current = await regularFile(file, specPath);
      if (!current) {
        backups.push({ path: specPath, existed: false });
        continue;
      }
      const copy = String(index);
      await writeFileAtomic(path.join(this.backupDir, copy), { from: file }, 0o600);
      backups.push({ path: specPath, existed: true, copy, mode: current.mode });
    }
    return backups;
  }

  /** Writes `spec`'s files and removes the ones only `previous` had. */
  async write(spec: RenderedSpec, previous: RenderedSpec | null, signal?: AbortSignal): Promise<void> {
    const keep = new Set(spec.config.files.map((f) => f.path));
    for (const f of spec.config.files) {
      signal?.throwIfAborted();
      const file = resolveUnderRoot(this.root, f.path);
      await parentInsideRoot(this.root, file);
      await regularFile(file, f.path);
      try {
        await writeFileAtomic(file, { content: f.content }, parseMode(f.mode));
      } catch (error) {
        throw new UpdateFailure(`config file ${JSON.stringify(f.path)}: cannot write: ${(error as Error).message}`, { cause: error });
      }
    }
    for (const f of previous?.config.files ?? []) {
      if (keep.has(f.path)) continue;
      const file = resolveUnderRoot(this.root, f.path);
      if (await regularFile(file, f.path)) await fs.rm(file, { force: true });
    }
  }

  /** Puts back what the backups recorded (idempotent: a crash mid-way is finished by running it again). */
  async restore(backups: readonly FileBackup[]): Promise<void> {
    for (const b of backups) {
      const file = resolveUnderRoot(this.root, b.path);
      if (!b.existed || b.copy === undefined) {
        const current = await regularFile(file, b.path).catch(() => null);
        if (current) await fs.rm(file, { force: true });
        continue;
      }
      await parentInsideRoot(this.root, file);
      await writeFileAtomic(file, { from: path.join(this.backupDir, b.copy) }, b.mode ?? DEFAULT_FILE_MODE);
    }
  }

  async clearBackups(): Promise<void> {
    await fs.rm(this.backupDir, { recursive: true, force: true });
  }
}
