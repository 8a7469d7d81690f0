/**
 * The supervisor with real child processes (tiny node programs): statuses, restarts with
 * backoff, the come-up wait, stopping (SIGTERM, then SIGKILL), bounded logs, and the
 * applications a killed agent left running.
 */
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import pino from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { MemoryStateStore } from "../state";
import { eventually } from "../test-support/fake-server";
import { ProcessesDocument, Supervisor, type AppLaunch, type SupervisorOptions } from "./supervisor";
import { UpdateFailure } from "./types";

let dir: string;
let store: MemoryStateStore;
let lines: Record<string, unknown>[];
const supervisors: Supervisor[] = [];

beforeEach(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), "drover-supervisor-"));
  store = new MemoryStateStore();
  lines = [];
});
afterEach(async () => {
  await Promise.all(supervisors.splice(0).map((s) => s.stopAll()));
  await fs.rm(dir, { recursive: true, force: true });
});

function supervisor(options: Partial<SupervisorOptions> = {}): Supervisor {
  const logger = pino({ level: "debug" }, { write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>) });
  const s = new Supervisor({
    logDir: path.join(dir, "logs"),
    cwd: dir,
    store,
    logger,
    settleMs: 300,
    restart: { baseMs: 100, capMs: 800, stableMs: 60_000 },
    killGraceMs: 500,
    ...options,
  });
  supervisors.push(s);
  return s;
}

/**
 * A shell script as an application: it starts in a few ms however loaded the machine, where a
 * node program can take longer than settleMs (300 ms) just to start, and so count as Running
 * before it gets to exit.
 */
function shell(name: string, script: string): AppLaunch {
  return { spec: { name, command: ["/bin/sh", "-c", script] }, env: { PATH: process.env.PATH ?? "" } };
}

/** A node program as an application. */
function app(name: string, code: string, env: Record<string, string> = {}): AppLaunch {
  return { spec: { name, command: [process.execPath, "-e", code] }, env: { PATH: process.env.PATH ?? "", ...env } };
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
const FOREVER = "setInterval(() => {}, 1000);";

describe("Supervisor", () => {
  it("an application is Starting, then Running once it has run the settle time, with no restarts; its output is logged", async () => {
    const s = supervisor();
    await s.run([app("web", `console.log("hello from", process.env.DROVER_APP, process.env.HOME === undefined ? "no-home" : "home"); ${FOREVER}`, { DROVER_APP: "web" })]);
    expect(s.statuses()).toEqual([{ name: "web", status: "Starting", restarts: 0 }]);
    await s.waitUp(5_000, new AbortController().signal);
    expect(s.statuses()).toEqual([{ name: "web", status: "Running", restarts: 0 }]);
    const log = await eventually(async () => {
      const text = await fs.readFile(path.join(dir, "logs/web.log"), "utf8");
      return text.includes("hello from web no-home") ? text : undefined;
    }, 5_000, "output in the log");
    expect(log).toMatch(/^--- drover: starting /);
    // The process group is recorded for a restarted agent to find.
    const doc = await store.read("processes", ProcessesDocument);
    expect(doc?.processes).toEqual([{ name: "web", pid: s.app("web")?.pid, startTicks: expect.any(String) }]);
    expect(doc?.restarts).toEqual({ web: 0 });
  });

  it("restarts an application that exits, with a doubling backoff, and counts the restarts", async () => {
    const s = supervisor({ restart: { baseMs: 100, capMs: 400, stableMs: 60_000 } });
    await s.run([shell("crashy", "sleep 0.05; exit 3")]);
    await eventually(() => (s.statuses()[0]?.restarts ?? 0) >= 5, 10_000, "five restarts");
    const starts = lines.filter((l) => l.event === "app.started").map((l) => Number(l.time));
    const exits = lines.filter((l) => l.event === "app.exited");
    expect(exits.slice(0, 5).map((l) => l.restartInMs)).toEqual([100, 200, 400, 400, 400]);
    expect(exits[0]).toMatchObject({ app: "crashy", code: 3, restarts: 0 });
    // The gaps between starts grow with the backoff (each also holds the ≈50 ms run and a spawn).
    const gaps = starts.slice(1, 5).map((t, i) => t - (starts[i] ?? 0));
    expect(gaps[0]).toBeGreaterThanOrEqual(150);
    expect(gaps[2]).toBeGreaterThanOrEqual(450);
    expect(gaps[2]).toBeGreaterThan(gaps[0] ?? 0);
    expect(["Error", "Starting"]).toContain(s.statuses()[0]?.status);
  });

  it("a run longer than the stable period resets the backoff", async () => {
    const s = supervisor({ settleMs: 50, restart: { baseMs: 100, capMs: 800, stableMs: 200 } });
    await s.run([app("steady", "setTimeout(() => process.exit(1), 300);")]);
    await eventually(() => lines.filter((l) => l.event === "app.exited").length >= 3, 10_000, "three exits");
    expect(lines.filter((l) => l.event === "app.exited").map((l) => l.restartInMs)).toEqual([100, 100, 100]);
  });

  it("restart counts start from 0 with each run, or go on from those an agent restart handed over", async () => {
    const s = supervisor();
    await s.run([app("crashy", "process.exit(1)")], { spec: "7" });
    await eventually(() => (s.statuses()[0]?.restarts ?? 0) >= 2, 10_000, "two restarts");
    await s.stopAll();
    const counted = s.statuses()[0]?.restarts ?? 0;
    // The next agent process finds the counts with the spec they belong to.
    const next = supervisor();
    expect(await next.stopLeftovers()).toEqual({ stopped: 0, spec: "7", restarts: { crashy: counted } });
    await next.run([app("crashy", FOREVER)], { spec: "7", restarts: { crashy: counted } });
    expect(next.statuses()).toEqual([{ name: "crashy", status: "Starting", restarts: counted }]);
    await next.run([app("crashy", FOREVER)], { spec: "8" });
    expect(next.statuses()).toEqual([{ name: "crashy", status: "Starting", restarts: 0 }]);
  });

  it("waitUp fails with the reason and the last output when an application does not come up in time", async () => {
    const s = supervisor();
    // A shell: a node program that exits at once passed for up in a loaded CI run (see shell()).
    await s.run([app("ok", FOREVER), shell("broken", "echo 'config missing: /etc/app.conf' >&2; exit 2")]);
    const failure = await s.waitUp(700, new AbortController().signal).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(UpdateFailure);
    expect((failure as Error).message).toMatch(/^application "broken" did not come up within 0\.7 s: exited with code 2, restarted \d+ times?; last output: config missing: \/etc\/app\.conf/);
  });

  it("waitUp fails at once when a program cannot be run, or is refused", async () => {
    const s = supervisor();
    await s.run([{ spec: { name: "ghost", command: ["/definitely/not/here"] }, env: {} }]);
    const started = Date.now();
    await expect(s.waitUp(10_000, new AbortController().signal)).rejects.toThrow(/^application "ghost": cannot run \/definitely\/not\/here: spawn \/definitely\/not\/here ENOENT/);
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(s.statuses()[0]?.status).toBe("Error");

    await s.run([{ spec: { name: "nope", command: ["/bin/sh"] }, env: {}, refused: "/bin/sh is not allowed" }]);
    expect(s.statuses()).toEqual([{ name: "nope", status: "Error", restarts: 0 }]);
    await expect(s.waitUp(10_000, new AbortController().signal)).rejects.toThrow('application "nope": /bin/sh is not allowed');
  });

  it("stops applications with SIGTERM, and with SIGKILL one that ignores it, its whole process group", async () => {
    const s = supervisor({ killGraceMs: 400 });
    const child = `require("child_process").spawn(process.execPath, ["-e", "${FOREVER}"], { stdio: "ignore" }).pid`;
    await s.run([
      app("polite", FOREVER),
      app("stubborn", `process.on("SIGTERM", () => {}); console.log("child", ${child}); ${FOREVER}`),
    ]);
    await s.waitUp(5_000, new AbortController().signal);
    const grandchild = await eventually(async () => {
      const m = /child (\d+)/.exec(await fs.readFile(path.join(dir, "logs/stubborn.log"), "utf8"));
      return m ? Number(m[1]) : undefined;
    }, 5_000, "the grandchild's pid");
    const pids = [s.app("polite")?.pid ?? 0, s.app("stubborn")?.pid ?? 0];
    const started = Date.now();
    await s.stopAll();
    expect(Date.now() - started).toBeGreaterThanOrEqual(350); // the stubborn one waited for SIGKILL
    expect(pids.map(alive)).toEqual([false, false]);
    await eventually(() => !alive(grandchild), 2_000, "the grandchild gone with its group");
    expect(lines.filter((l) => l.event === "app.stopped").map((l) => l.app).sort()).toEqual(["polite", "stubborn"]);
    expect(lines.some((l) => l.event === "app.exited")).toBe(false); // a stop is not a crash: no restart
  });

  it("keeps an application's log under twice the limit", async () => {
    const s = supervisor({ logMaxBytes: 64 * 1024 });
    await s.run([app("chatty", `for (let i = 0; i < 4000; i++) console.log(String(i).padStart(99, "x")); ${FOREVER}`)]);
    await eventually(async () => (await fs.readFile(path.join(dir, "logs/chatty.log"), "utf8").catch(() => "")).includes("x3999"), 10_000, "the last line");
    const sizes = await Promise.all(["chatty.log", "chatty.log.1"].map(async (f) => (await fs.stat(path.join(dir, "logs", f))).size));
    expect(sizes.every((size) => size <= 64 * 1024)).toBe(true);
    expect(sizes.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(128 * 1024);
  });

  it("stops the applications a killed agent left running before anything starts again", async () => {
    // The agent dies and nobody stops its application. Its supervisor lives on in this process,
    // so it must not restart the application once the next one stops it (100 ms later it did, and
    // that process outlived the run): no restart within a minute, and afterEach stops it.
    const first = supervisor({ restart: { baseMs: 60_000, capMs: 60_000, stableMs: 60_000 } });
    await first.run([app("web", FOREVER)]);
    const pid = first.app("web")?.pid ?? 0;
    expect(alive(pid)).toBe(true);

    const second = supervisor();
    expect(await second.stopLeftovers()).toEqual({ stopped: 1, spec: null, restarts: { web: 0 } });
    expect(alive(pid)).toBe(false);
    expect(await store.read("processes", ProcessesDocument)).toBeNull();
    expect(lines.some((l) => l.event === "app.leftover" && l.pid === pid)).toBe(true);
  });

  it("leaves alone a recorded PID that now belongs to another process", async () => {
    await store.write("processes", { version: 1, processes: [{ name: "web", pid: process.pid, startTicks: "1" }] });
    expect((await supervisor().stopLeftovers()).stopped).toBe(0);
  });
});
