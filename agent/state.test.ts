import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { spawn } from "node:child_process";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { AppliedSpecDocument, FileStateStore, IdentityDocument, MemoryStateStore, StateError, writeFileAtomic, type StateStore } from "./state";

let dir: string;
beforeEach(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), "drover-state-"));
});
afterEach(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

const identity = (token?: string): IdentityDocument => ({
  version: 1,
  deviceName: "worker-0",
  ...(token ? { token, enrollmentId: "e1" } : { enrollment: { id: "e1", secret: "s".repeat(43), requestedAt: "2026-01-01T00:00:00.000Z" } }),
  decommissioning: false,
  decommissioned: false,
});

describe("FileStateStore", () => {
  it("writes, reads back, and survives a reopen (a restart)", async () => {
    const store = await FileStateStore.open(dir);
    expect(await store.read("identity", IdentityDocument)).toBeNull();
    await store.write("identity", identity());
    await store.write("identity", identity("tok"));
    expect(await store.read("identity", IdentityDocument)).toEqual(identity("tok"));
    await store.close();

    const reopened = await FileStateStore.open(dir);
    expect((await reopened.read("identity", IdentityDocument))?.token).toBe("tok");
    await reopened.close();
  });

  it("keeps secrets private: files 0600, directory 0700", async () => {
    const stateDir = path.join(dir, "nested", "state");
    const store = await FileStateStore.open(stateDir);
    await store.write("identity", identity("tok"));
    await store.close();
    expect((await fs.stat(path.join(stateDir, "identity.json"))).mode & 0o777).toBe(0o600);
    expect((await fs.stat(stateDir)).mode & 0o777).toBe(0o700);
  });

  it("a crash mid-write (a torn temp file left behind) does not corrupt the document, and is swept on open", async () => {
    const store = await FileStateStore.open(dir);
    await store.write("identity", identity("good"));
    await store.close();
    // What a crash between 'write temp' and 'rename' leaves: a half-written temp file.
    const torn = path.join(dir, `.identity.json.99999.deadbeef.tmp`);
    await fs.writeFile(torn, '{"version":1,"deviceName":"wor');

    const reopened = await FileStateStore.open(dir);
    expect((await reopened.read("identity", IdentityDocument))?.token).toBe("good");
    await expect(fs.access(torn)).rejects.toThrow();
    await reopened.close();
  });

  it("a write that fails leaves the previous document and no temp file", async () => {
    const store = await FileStateStore.open(dir);
    await store.write("identity", identity("good"));
    // A directory where the document should go makes the rename fail.
    await fs.mkdir(path.join(dir, "spec.json"));
    await expect(store.write("spec", { anything: true })).rejects.toThrow(StateError);
    expect((await fs.readdir(dir)).filter((f) => f.endsWith(".tmp"))).toEqual([]);
    expect((await store.read("identity", IdentityDocument))?.token).toBe("good");
    await store.close();
  });

  it("writes issued together land in order: the last one wins", async () => {
    const store = await FileStateStore.open(dir);
    await Promise.all(Array.from({ length: 20 }, (_, i) => store.write("identity", identity(`tok-${i}`))));
    expect((await store.read("identity", IdentityDocument))?.token).toBe("tok-19");
    await store.close();
  });

  it("remove deletes a document; removing an absent one is fine", async () => {
    const store = await FileStateStore.open(dir);
    const spec: AppliedSpecDocument = {
      version: 1,
      renderedVersion: 3,
      spec: { renderedVersion: 3, templateVersion: "t", version: "1", config: { files: [] }, applications: [], hooks: {} },
      appliedAt: new Date().toISOString(),
    };
    await store.write("spec", spec);
    expect(await store.read("spec", AppliedSpecDocument)).toEqual(spec);
    await store.remove("spec");
    await store.remove("spec");
    expect(await store.read("spec", AppliedSpecDocument)).toBeNull();
    await store.close();
  });

  it("refuses a document that is not valid JSON or not the right shape, with the file named", async () => {
    await fs.writeFile(path.join(dir, "identity.json"), "{oops");
    const store = await FileStateStore.open(dir);
    await expect(store.read("identity", IdentityDocument)).rejects.toThrow(/identity\.json is not valid JSON/);
    await fs.writeFile(path.join(dir, "identity.json"), JSON.stringify({ version: 2 }));
    await expect(store.read("identity", IdentityDocument)).rejects.toThrow(StateError);
    await store.close();
  });

  it("locks the directory against a second agent, and takes over a stale lock", async () => {
    const store = await FileStateStore.open(dir);
    await expect(FileStateStore.open(dir)).rejects.toThrow(/in use by process/);
    await store.close();

    // A lock left by a process that is gone.
    const child = spawn(process.execPath, ["-e", ""]);
    const deadPid = child.pid;
    await new Promise((resolve) => child.on("exit", resolve));
    await fs.writeFile(path.join(dir, "agent.lock"), `${deadPid}\n`);
    const again = await FileStateStore.open(dir);
    expect((await fs.readFile(path.join(dir, "agent.lock"), "utf8")).trim()).toBe(String(process.pid));
    await again.close();
    await expect(fs.access(path.join(dir, "agent.lock"))).rejects.toThrow();
  });
});

describe("writeFileAtomic", () => {
  it("replaces the whole file", async () => {
    const file = path.join(dir, "doc.json");
    await writeFileAtomic(file, { content: "a".repeat(10_000) });
    await writeFileAtomic(file, { content: "b" });
    expect(await fs.readFile(file, "utf8")).toBe("b");
    expect(await fs.readdir(dir)).toEqual(["doc.json"]);
    expect((await fs.stat(file)).mode & 0o777).toBe(0o600);
  });
});

describe("MemoryStateStore", () => {
  it("honours the same contract", async () => {
    const store: StateStore = new MemoryStateStore();
    expect(await store.read("identity", IdentityDocument)).toBeNull();
    const doc = identity("tok");
    await store.write("identity", doc);
    doc.token = "mutated after write";
    expect((await store.read("identity", IdentityDocument))?.token).toBe("tok");
    await store.remove("identity");
    expect(await store.read("identity", IdentityDocument)).toBeNull();
  });
});
