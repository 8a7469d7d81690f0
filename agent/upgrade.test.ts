/**
 * The upgrade steps (upgrade.ts) against a real HTTP server and real files: download with the
 * sha256 checked, the smoke test (the new file run with node --version), the atomic replace
 * keeping <file>.previous, the journal read by the next start, the tries with their growing
 * delays, and the refusal to overwrite sources.
 */
import { createHash } from "node:crypto";
import fs from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import pino from "pino";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { agentUpgradeExecutor } from "./executors/agent-upgrade";
import { MemoryStateStore } from "./state";
import { Upgrader, UpgradeError, type UpgraderOptions } from "./upgrade";

/** A stand-in agent build: a script that prints its version for --version. */
const build = (version: string, extra = "") => Buffer.from(`${extra}if (process.argv.includes("--version")) console.log(${JSON.stringify(version)});\n`);
const sha = (b: Buffer) => createHash("sha256").update(b).digest("hex");

/** What the fake server holds: version → bytes, and the sha256 its manifest claims. */
let held: Map<string, { bytes: Buffer; sha256: string }>;
let hits: string[];
let server: http.Server;
let base: string;
let dir: string;
let own: string;
const silent = pino({ level: "silent" });

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://x");
    hits.push(`${url.pathname}${url.search}`);
    const version = url.searchParams.get("version") ?? "";
    const b = held.get(version);
    if (!b) {
      res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ error: { code: "NOT_FOUND", message: `agent version "${version}" on this server (held: 1.0.0 (current))` } }));
      return;
    }
    if (url.pathname === "/api/agent/v1/download/manifest") {
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ name: "drover-agent", version, sha256: b.sha256, size: b.bytes.length, url: `/api/agent/v1/download?version=${version}` }));
    } else if (url.pathname === "/api/agent/v1/download") {
      res.writeHead(200, { "content-length": b.bytes.length }).end(b.bytes);
    } else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});
beforeEach(async () => {
  held = new Map();
  hits = [];
  dir = await fs.mkdtemp(path.join(os.tmpdir(), "drover-upgrade-"));
  own = path.join(dir, "drover-agent.mjs");
  await fs.writeFile(own, build("1.0.0"), { mode: 0o755 });
});

function hold(version: string, bytes = build(version), claimed = sha(bytes)) {
  held.set(version, { bytes, sha256: claimed });
}

function upgrader(over: Partial<UpgraderOptions> = {}) {
  const store = over.store ?? new MemoryStateStore();
  const restarts: string[] = [];
  const delays: number[] = [];
  const u = new Upgrader({
    serverUrl: base,
    currentVersion: "1.0.0",
    form: "script",
    file: own,
    platform: "linux-amd64",
    store,
    logger: silent,
    onRestart: (info) => restarts.push(info),
    retryMs: 1_000,
    sleep: async (ms) => {
      delays.push(ms);
    },
    ...over,
  });
  return { u, store, restarts, delays };
}

const files = async () => (await fs.readdir(dir)).sort();

describe("Upgrader", () => {
  it("downloads, checks and smoke-tests the build, renames it over its own file keeping .previous, journals it and asks to restart", async () => {
    hold("1.1.0");
    const { u, store, restarts } = upgrader();
    await u.upgrade("1.1.0", new AbortController().signal);

    expect(await fs.readFile(own, "utf8")).toBe(build("1.1.0").toString());
    expect(await fs.readFile(`${own}.previous`, "utf8")).toBe(build("1.0.0").toString());
    expect((await fs.stat(own)).mode & 0o777).toBe(0o755);
    expect(await files()).toEqual(["drover-agent.mjs", "drover-agent.mjs.previous"]);
    expect(restarts).toHaveLength(1);
    expect(restarts[0]).toContain("from 1.0.0 to 1.1.0");
    expect(u.last).toMatchObject({ from: "1.0.0", to: "1.1.0", state: "restarting", file: own });
    expect(hits).toEqual(["/api/agent/v1/download/manifest?version=1.1.0", "/api/agent/v1/download?version=1.1.0"]);

    // The next start, now 1.1.0, reads the journal: done; an agentupgrade action that started
    // before is DONE across the restart.
    const next = upgrader({ store, currentVersion: "1.1.0" }).u;
    await next.load();
    expect(next.last).toMatchObject({ state: "done", info: "upgraded from 1.0.0 to 1.1.0" });
    const recovered = agentUpgradeExecutor(next).recover!(new Date(Date.now() - 60_000));
    expect(recovered?.output).toContain("upgraded from 1.0.0 to 1.1.0");
    // Not an action started after the upgrade.
    expect(agentUpgradeExecutor(next).recover!(new Date(Date.now() + 60_000))).toBeNull();
  });

  it("a start removes what a killed upgrade left beside the file", async () => {
    for (const f of [".drover-agent-1.1.0.new.mjs", ".drover-agent-1.1.0.new.mjs.part"]) await fs.writeFile(path.join(dir, f), "x");
    await fs.writeFile(path.join(dir, "keep.txt"), "mine");
    await upgrader().u.load();
    expect(await files()).toEqual(["drover-agent.mjs", "keep.txt"]);
  });

  it("a restart that came back on the old version reads the upgrade as failed", async () => {
    hold("1.1.0");
    const { u, store } = upgrader();
    await u.upgrade("1.1.0", new AbortController().signal);
    const again = upgrader({ store, currentVersion: "1.0.0" }).u;
    await again.load();
    expect(again.last).toMatchObject({ state: "failed", info: "restarted as 1.0.0, not 1.1.0" });
    expect(agentUpgradeExecutor(again).recover!(new Date(0))).toBeNull();
  });

  it("a sha256 mismatch keeps the running file, leaves nothing behind, and is tried again after growing delays, then given up", async () => {
    hold("1.1.0", build("1.1.0"), sha(build("tampered")));
    const { u, restarts, delays } = upgrader();
    const failure = await u.upgrade("1.1.0", new AbortController().signal).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(UpgradeError);
    expect((failure as Error).message).toMatch(/^agent upgrade to 1\.1\.0 failed: sha256 mismatch: expected [0-9a-f]{64}, got [0-9a-f]{64} \(3 tries\)$/);
    // Three tries: waits of 1 s and 4 s between them, not one per poll.
    expect(delays).toEqual([1_000, 4_000]);
    expect(hits.filter((h) => h.startsWith("/api/agent/v1/download?"))).toHaveLength(3);
    expect(await fs.readFile(own, "utf8")).toBe(build("1.0.0").toString());
    expect(await files()).toEqual(["drover-agent.mjs"]);
    expect(restarts).toEqual([]);
    expect(u.last).toBeNull();
  });

  it("a try that succeeds after a failed one goes on (the server got the build meanwhile)", async () => {
    const { u, restarts, delays } = upgrader({
      sleep: async (ms) => {
        delays.push(ms);
        hold("1.1.0");
      },
    });
    await u.upgrade("1.1.0", new AbortController().signal);
    expect(delays).toEqual([1_000]);
    expect(restarts).toHaveLength(1);
  });

  it("a 429 from the server is waited out as told, without using up a try", async () => {
    hold("1.1.0");
    let limited = 2;
    const original = server.listeners("request")[0] as (req: http.IncomingMessage, res: http.ServerResponse) => void;
    server.removeAllListeners("request");
    server.on("request", (req: http.IncomingMessage, res: http.ServerResponse) => {
      if (limited-- > 0) res.writeHead(429, { "retry-after": "7", "content-type": "application/json" }).end(JSON.stringify({ error: { code: "RATE_LIMITED", message: "slow down" } }));
      else original(req, res);
    });
    try {
      const { u, restarts, delays } = upgrader({ tries: 1, random: () => 0 });
      await u.upgrade("1.1.0", new AbortController().signal);
      expect(delays).toEqual([7_000, 7_000]);
      expect(restarts).toHaveLength(1);
    } finally {
      server.removeAllListeners("request");
      server.on("request", original);
    }
  });

  it("an unknown version fails with the server's word on what it holds", async () => {
    const { u } = upgrader({ tries: 1 });
    await expect(u.upgrade("9.9.9", new AbortController().signal)).rejects.toThrow(/agent upgrade to 9\.9\.9 failed: the server has no such build: HTTP 404 \(agent version "9\.9\.9" on this server \(held: 1\.0\.0 \(current\)\)\)/);
  });

  it("a smoke test that fails is not tried again, and the new file goes", async () => {
    // Downloads fine, but crashes when run.
    hold("1.1.0", Buffer.from(`throw new Error("broken build");\n`));
    const { u, restarts, delays } = upgrader();
    await expect(u.upgrade("1.1.0", new AbortController().signal)).rejects.toThrow(/agent upgrade to 1\.1\.0 failed: the new build's smoke test failed: \.drover-agent-1\.1\.0\.new\.mjs --version: exit 1: .*broken build/s);
    expect(delays).toEqual([]);
    expect(await files()).toEqual(["drover-agent.mjs"]);
    expect(restarts).toEqual([]);
  });

  it("a smoke test that prints another version fails", async () => {
    hold("1.1.0", build("1.0.9"));
    const { u } = upgrader();
    await expect(u.upgrade("1.1.0", new AbortController().signal)).rejects.toThrow(/smoke test printed "1\.0\.9", not 1\.1\.0/);
    expect(await fs.readFile(own, "utf8")).toBe(build("1.0.0").toString());
  });

  it("an agent run from its sources refuses, without asking the server", async () => {
    hold("1.1.0");
    const { u } = upgrader({ form: "source", file: null });
    await expect(u.upgrade("1.1.0", new AbortController().signal)).rejects.toThrow(/runs from its sources \(npm run agent\), not from an installed file: it does not upgrade itself/);
    expect(hits).toEqual([]);
  });

  it("the single executable asks for its platform's build", async () => {
    hold("1.1.0");
    const { u } = upgrader({ form: "sea", tries: 1, smokeTest: () => Promise.resolve("1.1.0\n") });
    await u.upgrade("1.1.0", new AbortController().signal);
    expect(hits[0]).toBe("/api/agent/v1/download/manifest?version=1.1.0&platform=linux-amd64");
  });

  it("the agentupgrade action fails with why, and does nothing for its own version", async () => {
    hold("1.1.0", build("1.1.0"), sha(build("x")));
    const { u } = upgrader({ tries: 1 });
    const executor = agentUpgradeExecutor(u);
    const context = { signal: new AbortController().signal, log: silent, setCondition: () => undefined };
    await expect(executor.run({ version: "1.0.0" }, context)).resolves.toEqual({ output: "this agent already runs 1.0.0\n" });
    await expect(executor.run({ version: "1.1.0" }, context)).rejects.toThrow(/^agent upgrade to 1\.1\.0 failed: sha256 mismatch/);
  });
});
