import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { RenderedSpec } from "../../lib/protocol";
import { writeFileAtomic } from "../state";
import { ConfigFiles, resolveUnderRoot } from "./files";
import { UpdateFailure } from "./types";

let dir: string;
let root: string;
let files: ConfigFiles;

beforeEach(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), "drover-files-"));
  root = path.join(dir, "root");
  files = new ConfigFiles(root, path.join(dir, "backup"));
  await files.init();
});
afterEach(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

function spec(renderedVersion: number, entries: { path: string; content: string; mode?: string }[]): RenderedSpec {
  return { renderedVersion, templateVersion: `t${renderedVersion}`, version: `${renderedVersion}.0.0`, config: { files: entries }, applications: [], hooks: {} };
}

const modeOf = async (file: string) => (await fs.stat(file)).mode & 0o7777;

describe("resolveUnderRoot", () => {
  it.each([
    ["/etc/app.conf", "etc/app.conf"],
    ["/etc//./app.conf", "etc/app.conf"],
    ["/a/b/c", "a/b/c"],
  ])("joins %s under the root", (specPath, relative) => {
    expect(resolveUnderRoot("/srv/root", specPath)).toBe(path.join("/srv/root", relative));
  });

  it.each([
    ["relative", "etc/app.conf", /absolute/],
    ["dot-dot", "/etc/../../outside", /"\.\."/],
    ["dot-dot at the end", "/etc/..", /"\.\."/],
    ["only slashes", "//", /names no file/],
    ["NUL", "/etc/a\0b", /NUL/],
  ])("refuses a %s path", (_name, specPath, message) => {
    expect(() => resolveUnderRoot("/srv/root", specPath)).toThrow(UpdateFailure);
    expect(() => resolveUnderRoot("/srv/root", specPath)).toThrow(message);
  });
});

describe("ConfigFiles", () => {
  it("writes the spec's files under the root with their modes, whatever the umask", async () => {
    const previousUmask = process.umask(0o077);
    try {
      await files.write(spec(1, [{ path: "/etc/app/app.conf", content: "a=1\n", mode: "0644" }, { path: "/bin/run.sh", content: "#!/bin/sh\n", mode: "755" }, { path: "/etc/secret", content: "s" }]), null);
    } finally {
      process.umask(previousUmask);
    }
    expect(await fs.readFile(path.join(root, "etc/app/app.conf"), "utf8")).toBe("a=1\n");
    expect(await modeOf(path.join(root, "etc/app/app.conf"))).toBe(0o644);
    expect(await modeOf(path.join(root, "bin/run.sh"))).toBe(0o755);
    expect(await modeOf(path.join(root, "etc/secret"))).toBe(0o644); // the default
    // No temp file left behind.
    expect((await fs.readdir(path.join(root, "etc/app"))).filter((f) => f !== "app.conf")).toEqual([]);
  });

  it("refuses to write through a symlink that leads out of the root, and leaves the target alone", async () => {
    const outside = path.join(dir, "outside");
    await fs.mkdir(outside);
    await fs.symlink(outside, path.join(root, "etc"));
    await expect(files.write(spec(1, [{ path: "/etc/app.conf", content: "x" }]), null)).rejects.toThrow(/resolves outside the root directory/);
    expect(await fs.readdir(outside)).toEqual([]);
  });

  it("refuses to replace something that is not a regular file", async () => {
    await fs.mkdir(path.join(root, "etc/app.conf"), { recursive: true });
    await expect(files.write(spec(1, [{ path: "/etc/app.conf", content: "x" }]), null)).rejects.toThrow(/not a regular file/);
    await fs.symlink("/etc/passwd", path.join(root, "link"));
    await expect(files.backup(spec(1, [{ path: "/link", content: "x" }]), null)).rejects.toThrow(/not a regular file/);
  });

  it("backs up what it will touch; a restore puts back the old files and removes the new ones", async () => {
    const v1 = spec(1, [{ path: "/etc/a", content: "a1", mode: "0600" }, { path: "/etc/gone", content: "g1" }]);
    await files.write(v1, null);
    await fs.writeFile(path.join(root, "etc/unmanaged"), "host's own"); // not in any spec, but overwritten by v2
    const v2 = spec(2, [{ path: "/etc/a", content: "a2", mode: "0644" }, { path: "/etc/new", content: "n2" }, { path: "/etc/unmanaged", content: "mine now" }]);

    const backups = await files.backup(v2, v1);
    expect(backups).toEqual([
      { path: "/etc/a", existed: true, copy: "0", mode: 0o600 },
      { path: "/etc/new", existed: false },
      { path: "/etc/unmanaged", existed: true, copy: "2", mode: 0o644 },
      { path: "/etc/gone", existed: true, copy: "3", mode: 0o644 },
    ]);
    await files.write(v2, v1);
    expect(await fs.readFile(path.join(root, "etc/a"), "utf8")).toBe("a2");
    await expect(fs.access(path.join(root, "etc/gone"))).rejects.toThrow(); // v2 dropped it

    await files.restore(backups);
    expect(await fs.readFile(path.join(root, "etc/a"), "utf8")).toBe("a1");
    expect(await modeOf(path.join(root, "etc/a"))).toBe(0o600);
    expect(await fs.readFile(path.join(root, "etc/gone"), "utf8")).toBe("g1");
    expect(await fs.readFile(path.join(root, "etc/unmanaged"), "utf8")).toBe("host's own");
    await expect(fs.access(path.join(root, "etc/new"))).rejects.toThrow();
    // Idempotent: a crash mid-restore is finished by restoring again.
    await files.restore(backups);
    expect(await fs.readFile(path.join(root, "etc/a"), "utf8")).toBe("a1");
    await files.clearBackups();
    await expect(fs.access(path.join(dir, "backup"))).rejects.toThrow();
  });
});

describe("writeFileAtomic", () => {
  it("a reader never sees a torn file: always the whole old or the whole new content", async () => {
    const file = path.join(dir, "big.conf");
    const a = "A".repeat(2 * 1024 * 1024);
    const b = "B".repeat(1024 * 1024);
    await writeFileAtomic(file, { content: a }, 0o644);
    let writing = true;
    const reads: string[] = [];
    const reader = (async () => {
      while (writing) {
        const text = await fs.readFile(file, "utf8");
        reads.push(text === a ? "a" : text === b ? "b" : `torn(${text.length})`);
      }
    })();
    for (let i = 0; i < 20; i++) await writeFileAtomic(file, { content: i % 2 === 0 ? b : a }, 0o644);
    writing = false;
    await reader;
    expect(reads.length).toBeGreaterThan(0);
    expect(reads.filter((r) => r.startsWith("torn"))).toEqual([]);
  });

  it("leaves the old file whole when the write fails", async () => {
    const file = path.join(dir, "app.conf");
    await writeFileAtomic(file, { content: "old" }, 0o644);
    await expect(writeFileAtomic(file, { from: path.join(dir, "missing") }, 0o644)).rejects.toThrow(/ENOENT/);
    expect(await fs.readFile(file, "utf8")).toBe("old");
    expect(await fs.readdir(dir)).toEqual(["app.conf", "root"]);
  });
});
