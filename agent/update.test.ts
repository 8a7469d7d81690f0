/**
 * The update driver: seed 003's state sequence, the journal, rollback, resume after a
 * restart, queued specs. With the simulator's runtime, and a scripted one that records what
 * it was asked to do and fails where told.
 */
import pino from "pino";
import { describe, expect, it } from "vitest";
import { canTransition } from "../lib/state-machine";
import { updateStateMachine, type UpdateState } from "../lib/device-status";
import type { RenderedSpec } from "../lib/protocol";
import { SimulatedRuntime } from "./runtime/simulated";
import { UpdateFailure, type BackupJournal, type DeviceRuntime, type FileBackup } from "./runtime/types";
import { AppliedSpecDocument, MemoryStateStore } from "./state";
import { eventually } from "./test-support/fake-server";
import { UpdateDocument, Updater, type UpdatingCondition } from "./update";

function spec(renderedVersion: number, version = `${renderedVersion}.0.0`): RenderedSpec {
  return { renderedVersion, templateVersion: `t${renderedVersion}`, version, config: { files: [] }, applications: [{ name: "web", command: ["/bin/web"] }], hooks: {} };
}

type Step = "start" | "prepare" | "apply" | "activate" | "rollback" | "finish" | "stop";

/** Records every call; fails the steps named in `failAt` for the versions named. */
class ScriptedRuntime implements DeviceRuntime {
  calls: { step: Step; version?: number | null; backups?: readonly FileBackup[] | undefined }[] = [];
  failAt = new Map<Step, string>();
  /** Blocks activate until released (to stop an update mid-way). */
  holdActivate: Promise<void> | null = null;
  readonly backups: FileBackup[] = [{ path: "/etc/app.conf", existed: true, copy: "0", mode: 0o644 }];

  private fail(step: Step) {
    const message = this.failAt.get(step);
    if (message) throw new UpdateFailure(message);
  }
  async start(running: RenderedSpec | null) {
    this.calls.push({ step: "start", version: running?.renderedVersion ?? null });
  }
  async prepare(s: RenderedSpec) {
    this.calls.push({ step: "prepare", version: s.renderedVersion });
    this.fail("prepare");
  }
  async apply(s: RenderedSpec, _previous: RenderedSpec | null, journal: BackupJournal) {
    this.calls.push({ step: "apply", version: s.renderedVersion, backups: journal.existing });
    if (!journal.existing) await journal.record(this.backups);
    this.fail("apply");
  }
  async activate(s: RenderedSpec, signal: AbortSignal) {
    this.calls.push({ step: "activate", version: s.renderedVersion });
    if (this.holdActivate) {
      await Promise.race([this.holdActivate, new Promise((_, reject) => signal.addEventListener("abort", () => reject(new Error("aborted")), { once: true }))]);
    }
    this.fail("activate");
  }
  async rollback(previous: RenderedSpec | null, backups: readonly FileBackup[] | undefined) {
    this.calls.push({ step: "rollback", version: previous?.renderedVersion ?? null, backups });
    this.fail("rollback");
  }
  async finish() {
    this.calls.push({ step: "finish" });
  }
  applications() {
    return [];
  }
  async stop() {
    this.calls.push({ step: "stop" });
  }
  steps() {
    return this.calls.map((c) => c.step);
  }
}

function setup(runtime: DeviceRuntime, store = new MemoryStateStore()) {
  const lines: Record<string, unknown>[] = [];
  const reported: (UpdatingCondition | undefined)[] = [];
  const updater: Updater = new Updater({
    store,
    runtime,
    logger: pino({ level: "debug" }, { write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>) }),
    report: async () => {
      reported.push(updater.condition());
    },
  });
  const states = () => lines.filter((l) => l.event === "update.state").map((l) => l.state as UpdateState);
  return { updater, store, lines, reported, states };
}

async function journalAt(store: MemoryStateStore, doc: Partial<UpdateDocument> & Pick<UpdateDocument, "state">, applied: RenderedSpec | null = spec(1)) {
  if (applied) await store.write("spec", { version: 1, renderedVersion: applied.renderedVersion, spec: applied, appliedAt: new Date().toISOString() } satisfies AppliedSpecDocument);
  const previous = applied ? { version: 1 as const, renderedVersion: applied.renderedVersion, spec: applied, appliedAt: new Date().toISOString() } : null;
  await store.write("update", { version: 1, target: spec(2), previous, attempts: 1, startedAt: "2026-01-01T00:00:00.000Z", changedAt: "2026-01-01T00:00:00.000Z", ...doc } satisfies UpdateDocument);
}

/** Every consecutive pair of states is a move of seed 003's table. */
function expectLegal(states: UpdateState[]) {
  for (let i = 1; i < states.length; i++) expect(canTransition(updateStateMachine, states[i - 1] as UpdateState, states[i] as UpdateState), `${states[i - 1]} → ${states[i]}`).toBe(true);
}

describe("Updater", () => {
  it("walks Preparing → ReadyToUpdate → ApplyingUpdate → (ActivatingConfig) → Updated, reporting each but the transient one", async () => {
    const runtime = new ScriptedRuntime();
    const { updater, store, reported, states } = setup(runtime);
    await updater.load();
    await updater.start();
    expect(updater.condition()).toBeUndefined(); // nothing to report before the first update
    expect(updater.offer(spec(1))).toBe(true);
    await updater.idle();

    expect(states()).toEqual(["Preparing", "ReadyToUpdate", "ApplyingUpdate", "ActivatingConfig", "Updated"]);
    expectLegal(states());
    expect(reported.map((c) => c?.reason)).toEqual(["Preparing", "ReadyToUpdate", "ApplyingUpdate", "Updated"]);
    expect(reported.map((c) => c?.status)).toEqual([true, true, true, false]);
    expect(reported[0]?.info).toBe("renderedVersion 1 (version 1.0.0)");
    expect(updater.condition()).toEqual({ status: false, reason: "Updated", info: "running renderedVersion 1 (version 1.0.0)" });
    expect(updater.appliedVersion).toBe(1);
    expect((await store.read("spec", AppliedSpecDocument))?.renderedVersion).toBe(1);
    expect(runtime.steps()).toEqual(["start", "prepare", "apply", "activate", "finish"]);
    // Not newer: not taken.
    expect(updater.offer(spec(1))).toBe(false);
  });

  it("a failure in Preparing goes straight to Error: nothing changed, nothing to roll back", async () => {
    const runtime = new ScriptedRuntime();
    runtime.failAt.set("prepare", "artifact https://x/a.tar: checksum mismatch");
    const { updater, states } = setup(runtime);
    await updater.load();
    updater.offer(spec(1));
    await updater.idle();
    expect(states()).toEqual(["Preparing", "Error"]);
    expectLegal(states());
    expect(updater.condition()).toEqual({ status: false, reason: "Error", info: "artifact https://x/a.tar: checksum mismatch" });
    expect(runtime.steps()).toEqual(["prepare", "finish"]);
    expect(updater.appliedVersion).toBe(0);
    // The failed version is known: the poll asks for newer ones only, so it is not retried.
    expect(updater.knownVersion).toBe(1);
    expect(updater.offer(spec(1))).toBe(false);
  });

  it.each([["apply"], ["activate"]] as const)("a failure in %s rolls back to the previous spec with the backups, then Error", async (step) => {
    const runtime = new ScriptedRuntime();
    const { updater, store, states } = setup(runtime);
    await updater.load();
    updater.offer(spec(1));
    await updater.idle();
    runtime.calls = [];
    runtime.failAt.set(step, 'application "web" did not come up within 60 s: exited with code 1');
    updater.offer(spec(2));
    await updater.idle();

    expect(states().slice(5)).toEqual(step === "apply" ? ["Preparing", "ReadyToUpdate", "ApplyingUpdate", "RollingBack", "Error"] : ["Preparing", "ReadyToUpdate", "ApplyingUpdate", "ActivatingConfig", "RollingBack", "Error"]);
    expectLegal(states().slice(5));
    expect(runtime.calls.find((c) => c.step === "rollback")).toEqual({ step: "rollback", version: 1, backups: runtime.backups });
    expect(updater.condition()).toEqual({
      status: false,
      reason: "Error",
      info: 'application "web" did not come up within 60 s: exited with code 1; rolled back to renderedVersion 1',
    });
    expect(updater.appliedVersion).toBe(1);
    expect((await store.read("spec", AppliedSpecDocument))?.renderedVersion).toBe(1);
    expect(updater.knownVersion).toBe(2);
  });

  it("a failed rollback says so in the Error info", async () => {
    const runtime = new ScriptedRuntime();
    runtime.failAt.set("activate", "app down").set("rollback", "cannot restore /etc/app.conf: EIO");
    const { updater } = setup(runtime);
    await updater.load();
    updater.offer(spec(1));
    await updater.idle();
    expect(updater.condition()?.info).toBe("app down; rollback failed: cannot restore /etc/app.conf: EIO");
  });

  it("a newer spec arriving during an update waits for it; of several, the newest is applied", async () => {
    const runtime = new ScriptedRuntime();
    let release = () => {};
    runtime.holdActivate = new Promise((resolve) => (release = resolve));
    const { updater, lines } = setup(runtime);
    await updater.load();
    updater.offer(spec(1));
    await eventually(() => runtime.steps().includes("activate"), 2_000, "activating v1");
    expect(updater.offer(spec(2))).toBe(true);
    expect(updater.offer(spec(3))).toBe(true);
    expect(updater.knownVersion).toBe(3);
    runtime.holdActivate = null;
    release();
    await updater.idle();
    expect(runtime.calls.filter((c) => c.step === "activate").map((c) => c.version)).toEqual([1, 3]);
    expect(updater.appliedVersion).toBe(3);
    expect(lines.some((l) => l.event === "update.superseded" && l.renderedVersion === 2 && l.by === 3)).toBe(true);
  });

  it("stop interrupts an update and leaves its journal for the next start", async () => {
    const runtime = new ScriptedRuntime();
    runtime.holdActivate = new Promise(() => {});
    const { updater, store } = setup(runtime);
    await updater.load();
    updater.offer(spec(1));
    await eventually(() => runtime.steps().includes("activate"), 2_000, "activating");
    await updater.stop();
    expect(runtime.steps().at(-1)).toBe("stop");
    expect((await store.read("update", UpdateDocument))?.state).toBe("ActivatingConfig");
    expect(await store.read("spec", AppliedSpecDocument)).toBeNull();
  });
});

describe("Updater after a restart", () => {
  it("an update that had not touched the device starts again from Preparing, the running spec's applications started meanwhile", async () => {
    const store = new MemoryStateStore();
    await journalAt(store, { state: "ReadyToUpdate" });
    const runtime = new ScriptedRuntime();
    const { updater, states, lines } = setup(runtime, store);
    await updater.load();
    expect(updater.condition()).toMatchObject({ status: true, reason: "ReadyToUpdate" });
    await updater.start();
    await updater.idle();
    expect(runtime.calls[0]).toEqual({ step: "start", version: 1 });
    expect(states()).toEqual(["Preparing", "ReadyToUpdate", "ApplyingUpdate", "ActivatingConfig", "Updated"]);
    expect(lines.find((l) => l.event === "update.resumed")).toMatchObject({ state: "ReadyToUpdate", attempts: 1 });
    expect((await store.read("update", UpdateDocument))?.attempts).toBe(2);
    expect(updater.appliedVersion).toBe(2);
  });

  it("one interrupted while applying resumes at ApplyingUpdate with the first attempt's backups, no application started before", async () => {
    const store = new MemoryStateStore();
    const first = [{ path: "/etc/first", existed: false }];
    await journalAt(store, { state: "ActivatingConfig", backups: first });
    const runtime = new ScriptedRuntime();
    const { updater, states } = setup(runtime, store);
    await updater.load();
    expect(updater.condition()).toMatchObject({ status: true, reason: "ApplyingUpdate" }); // ActivatingConfig is not reported
    await updater.start();
    await updater.idle();
    expect(runtime.calls[0]).toEqual({ step: "start", version: null });
    expect(runtime.calls.find((c) => c.step === "apply")?.backups).toEqual(first);
    expect(states()).toEqual(["ApplyingUpdate", "ActivatingConfig", "Updated"]);
    expect(updater.appliedVersion).toBe(2);
  });

  it("after too many interruptions it rolls back instead", async () => {
    const store = new MemoryStateStore();
    await journalAt(store, { state: "ApplyingUpdate", attempts: 3, backups: [] });
    const runtime = new ScriptedRuntime();
    const { updater, states } = setup(runtime, store);
    await updater.load();
    await updater.start();
    await updater.idle();
    expect(states()).toEqual(["RollingBack", "Error"]);
    expect(runtime.calls.find((c) => c.step === "rollback")).toEqual({ step: "rollback", version: 1, backups: [] });
    expect(updater.condition()?.info).toBe("the agent restarted during the update 3 times; rolled back to renderedVersion 1");
    expect(updater.appliedVersion).toBe(1);
  });

  it("a rollback under way is finished", async () => {
    const store = new MemoryStateStore();
    await journalAt(store, { state: "RollingBack", info: "app down", backups: [] });
    const runtime = new ScriptedRuntime();
    const { updater, states } = setup(runtime, store);
    await updater.load();
    await updater.start();
    await updater.idle();
    expect(states()).toEqual(["Error"]);
    expect(runtime.steps()).toEqual(["start", "rollback", "finish"]);
    expect(updater.condition()?.info).toBe("app down; rolled back to renderedVersion 1");
  });

  it("an update whose new spec was recorded just before the restart is Updated", async () => {
    const store = new MemoryStateStore();
    await journalAt(store, { state: "ActivatingConfig" }, spec(2));
    const runtime = new ScriptedRuntime();
    const { updater } = setup(runtime, store);
    await updater.load();
    await updater.start();
    await updater.idle();
    expect(updater.condition()).toMatchObject({ status: false, reason: "Updated" });
    expect(runtime.steps()).toEqual(["start"]);
    expect(runtime.calls[0]).toEqual({ step: "start", version: 2 });
  });

  it("a finished update is still reported, and its version still known", async () => {
    const store = new MemoryStateStore();
    await journalAt(store, { state: "Error", info: "boom; rolled back to renderedVersion 1" });
    const { updater } = setup(new ScriptedRuntime(), store);
    await updater.load();
    await updater.start();
    expect(updater.busy).toBe(false);
    expect(updater.condition()).toEqual({ status: false, reason: "Error", info: "boom; rolled back to renderedVersion 1" });
    expect(updater.knownVersion).toBe(2);
    expect(updater.appliedVersion).toBe(1);
  });
});

describe("the simulator's runtime", () => {
  it("a fail version rolls back to Error; the device keeps its applications", async () => {
    const runtime = new SimulatedRuntime({ failVersions: ["3.0.0"] }, () => [{ name: "web", status: "Running", restarts: 0 }]);
    const { updater, states } = setup(runtime);
    await updater.load();
    updater.offer(spec(1));
    await updater.idle();
    updater.offer(spec(2, "3.0.0"));
    await updater.idle();
    expect(states().slice(5)).toEqual(["Preparing", "ReadyToUpdate", "ApplyingUpdate", "RollingBack", "Error"]);
    expect(updater.condition()?.info).toBe("simulated failure applying version 3.0.0; rolled back to renderedVersion 1");
    expect(updater.appliedVersion).toBe(1);
  });

  it("slow versions spend the set time in each reported state; others do not", async () => {
    const runtime = new SimulatedRuntime({ slowApplySeconds: 0.2, slowVersions: ["2.0.0"] }, () => []);
    const { updater, lines } = setup(runtime);
    await updater.load();
    let started = Date.now();
    updater.offer(spec(1));
    await updater.idle();
    expect(Date.now() - started).toBeLessThan(150);
    started = Date.now();
    updater.offer(spec(2, "2.0.0"));
    await updater.idle();
    expect(Date.now() - started).toBeGreaterThanOrEqual(3 * 200 - 10); // Preparing, ReadyToUpdate, ApplyingUpdate
    const times = lines.filter((l) => l.event === "update.state" && l.renderedVersion === 2).map((l) => Number(l.time));
    expect((times[1] ?? 0) - (times[0] ?? 0)).toBeGreaterThanOrEqual(190);
  });

  it("a crash version comes up, then its applications restart every period; counts start again with the next spec", () => {
    let now = 1_000_000;
    const runtime = new SimulatedRuntime({ crashVersions: ["2.0.0"], crashSeconds: 5 }, () => [{ name: "web", status: "Running", restarts: 0 }], () => now);
    void runtime.activate(spec(2, "2.0.0"));
    expect(runtime.applications()).toEqual([{ name: "web", status: "Running", restarts: 0 }]);
    now += 5_200;
    expect(runtime.applications()).toEqual([{ name: "web", status: "Starting", restarts: 1 }]);
    now += 2_000;
    expect(runtime.applications()).toEqual([{ name: "web", status: "Running", restarts: 1 }]);
    now += 30_000;
    expect(runtime.applications()[0]?.restarts).toBe(7);
    void runtime.rollback(spec(1));
    expect(runtime.applications()).toEqual([{ name: "web", status: "Running", restarts: 0 }]);
  });
});
