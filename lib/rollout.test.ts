/**
 * The rollout decision engine (issue 7; seed 002, EDS defaults, Flight Control batches and
 * budget), one row per rule, boundaries included. Each scenario drives `decideRollout` the
 * way the controller will: a simulated fleet whose devices take the renders they are given,
 * ticks at chosen times, the state round-tripped through JSON and its zod schema between
 * ticks, and every move checked against the phase table.
 */
import { describe, expect, it } from "vitest";
import {
  budgetAllowance,
  decideRollout,
  deviceRolloutStatus,
  revertTargetForNextRollout,
  RolloutInputError,
  RolloutStateSchema,
  supersedeRollout,
  type RolloutDecision,
  type RolloutMember,
  type RolloutMove,
  type RolloutRequest,
  type RolloutState,
} from "./rollout";
import { canMoveRollout, rolloutMachine } from "./rollout-status";
import { RolloutPolicy } from "./fleet-spec";

// ---------------------------------------------------------------------------------------
// A simulated fleet

const T0 = Date.parse("2026-03-01T12:00:00.000Z");
const S = 1_000;
const MIN = 60 * S;
const H = 60 * MIN;
const at = (ms: number) => new Date(T0 + ms);

/** Every move any scenario made, for the coverage check at the end. */
const SEEN_MOVES = new Set<string>();
const moveKey = (m: { from: string; to: string; by?: string | undefined }) => `${m.from}->${m.to}:${m.by}`;
function checkMoves(moves: RolloutMove[]): void {
  for (const m of moves) {
    expect(canMoveRollout(m.from, m.to, m.by), moveKey(m)).toBe(true);
    SEEN_MOVES.add(moveKey(m));
  }
}

type Labels = Record<string, string>;

class Fleet {
  members = new Map<string, RolloutMember>();
  state: RolloutState | null = null;
  last!: RolloutDecision;
  now = 0;
  private nextId = 1;

  constructor(
    public policy: RolloutPolicy | null,
    public target = "2",
    public previous: string | null = "1",
  ) {}

  /** A member running `version` (the previous one by default), applied and UpToDate. */
  add(name: string, labels: Labels = {}, patch: Partial<RolloutMember> = {}): this {
    this.members.set(name, {
      name,
      labels,
      renderedTemplateVersion: this.previous,
      renderedAt: at(-H),
      applied: true,
      updated: "UpToDate",
      updateState: null,
      connected: true,
      restarts: 0,
      ...patch,
    });
    return this;
  }

  addMany(prefix: string, n: number, labels: Labels = {}): this {
    for (let i = 1; i <= n; i++) this.add(`${prefix}${String(i).padStart(2, "0")}`, labels);
    return this;
  }

  get(name: string): RolloutMember {
    const m = this.members.get(name);
    if (!m) throw new Error(`no member ${name}`);
    return m;
  }

  set(name: string, patch: Partial<RolloutMember>): this {
    Object.assign(this.get(name), patch);
    return this;
  }

  request(kind: RolloutRequest["kind"], actor = "alice", reason?: string, atMs = this.now): RolloutRequest {
    return { id: `r${this.nextId++}`, kind, actor, at: at(atMs), ...(reason ? { reason } : {}) };
  }

  /** One controller tick at T0 + ms: decide, check, persist (JSON + schema), apply the renders. */
  tick(ms = this.now, requests: RolloutRequest[] = []): RolloutDecision {
    this.now = ms;
    const d = decideRollout({
      now: at(ms),
      policy: this.policy,
      targetTemplateVersion: this.target,
      previousTemplateVersion: this.previous,
      members: [...this.members.values()].map((m) => ({ ...m })),
      state: this.state,
      requests,
    });
    checkMoves(d.moves);
    expect(d.conditions.map((c) => c.type)).toEqual(["RolloutInProgress", "CanaryPaused", "CanaryFailed"]);
    this.state = RolloutStateSchema.parse(JSON.parse(JSON.stringify(d.state)));
    for (const r of d.render) {
      // The agent keeps reporting its old spec's restart count until it applies the new one.
      this.set(r.device, { renderedTemplateVersion: r.templateVersion, renderedAt: at(ms), applied: false, updated: "OutOfDate", updateState: null });
    }
    this.last = d;
    return d;
  }

  /** The agent applied its rendered spec (counters restart from 0). */
  apply(names: string | string[], restarts = 0): this {
    for (const n of [names].flat()) this.set(n, { applied: true, updated: "UpToDate", updateState: "Updated", restarts });
    return this;
  }

  /** Every member that was given a spec it has not applied yet applies it. */
  applyAll(): this {
    for (const m of this.members.values()) if (!m.applied) this.apply(m.name);
    return this;
  }

  updating(names: string | string[]): this {
    for (const n of [names].flat()) this.set(n, { applied: false, updated: "Updating", updateState: "ApplyingUpdate" });
    return this;
  }

  /** The update failed and the agent rolled back (still reports its previous spec). */
  fail(names: string | string[]): this {
    for (const n of [names].flat()) this.set(n, { applied: false, updated: "OutOfDate", updateState: "Error" });
    return this;
  }

  restarts(name: string, n: number): this {
    return this.set(name, { restarts: n });
  }

  phase() {
    return this.state?.phase;
  }
  version(name: string) {
    return this.get(name).renderedTemplateVersion;
  }
  onTarget(): string[] {
    return [...this.members.values()].filter((m) => m.renderedTemplateVersion === this.target).map((m) => m.name).sort();
  }
  condition(type: string) {
    return this.last.conditions.find((c) => c.type === type)!;
  }
  rendered(d = this.last) {
    return d.render.map((r) => `${r.device}@${r.templateVersion}`);
  }
}

const policy = (p: unknown) => RolloutPolicy.parse(p);
/** A canary of one (EDS defaults: 10m, noRestarts 5m, autoPause 2, autoFail 5) and no batches. */
const CANARY = () => policy({ canary: {} });

/** Started with a canary of `a01` among a01..a05, which has applied the new version. */
function canaryRunning(p: RolloutPolicy = CANARY(), n = 5): Fleet {
  const f = new Fleet(p).addMany("a", n);
  f.tick(0);
  f.apply("a01");
  return f;
}

// ---------------------------------------------------------------------------------------

describe("no policy, first version", () => {
  it("no policy: every member gets the target at once, and the rollout completes when all are done", () => {
    const f = new Fleet(null).addMany("d", 3).add("late", {}, { renderedTemplateVersion: null });
    const d = f.tick(0);
    expect(f.rendered(d)).toEqual(["d01@2", "d02@2", "d03@2", "late@2"]);
    expect(d.moves.map((m) => `${m.from}->${m.to}`)).toEqual(["New->RollingOut"]);
    expect(f.state?.batch?.name).toBe("all members");
    expect(f.condition("RolloutInProgress")).toMatchObject({ status: "True", reason: "Active", message: "Rolling out all members" });
    f.apply(["d01", "d02", "late"]).fail("d03");
    f.tick(S);
    expect(f.phase()).toBe("Completed");
    expect(f.state?.batchReports.at(-1)).toMatchObject({ total: 4, successful: 3, failed: 1, successThreshold: null, passed: true });
    expect(f.condition("RolloutInProgress")).toMatchObject({ status: "False", reason: "Inactive" });
    expect(f.condition("RolloutInProgress").message).toMatch(/^Rollout is not in progress/);
  });

  it("the fleet's first version (no previous) goes to every member at once even with a canary policy", () => {
    const f = new Fleet(policy({ canary: { replicas: 1 }, disruptionBudget: { maxUnavailable: 1 } }), "1", null);
    f.add("a", {}, { renderedTemplateVersion: null }).add("b", {}, { renderedTemplateVersion: null });
    const d = f.tick(0);
    expect(f.rendered(d)).toEqual(["a@1", "b@1"]);
    expect(f.state?.allAtOnce).toBe(true);
    expect(f.state?.canary).toBeNull();
  });

  it("an empty fleet completes at once", () => {
    const f = new Fleet(policy({ canary: {} }));
    f.tick(0);
    expect(f.phase()).toBe("Completed");
  });
});

describe("canary selection", () => {
  const rows: [what: string, replicas: number | string, labelled: number, others: number, selector: boolean, expected: number][] = [
    ["replicas 1 of 5", 1, 0, 5, false, 1],
    ["replicas 3 of 5", 3, 0, 5, false, 3],
    ["replicas larger than the fleet", 9, 0, 5, false, 5],
    ["10% of 15 rounds up to 2", "10%", 0, 15, false, 2],
    ["20% of 10 is exactly 2", "20%", 0, 10, false, 2],
    ["1% of 5 is at least 1", "1%", 0, 5, false, 1],
    ["50% of the 3 selector matches rounds up to 2", "50%", 3, 10, true, 2],
    ["the selector limits the population", 5, 2, 10, true, 2],
  ];
  it.each(rows)("%s", (_what, replicas, labelled, others, selector, expected) => {
    const f = new Fleet(policy({ canary: { replicas, ...(selector ? { selector: { matchLabels: { stage: "canary" } } } : {}) } }));
    f.addMany("x", others).addMany("c", labelled, { stage: "canary" });
    const d = f.tick(0);
    expect(f.state?.canary?.devices).toHaveLength(expected);
    if (selector) for (const n of f.state?.canary?.devices ?? []) expect(n).toMatch(/^c/);
    // Only the canary devices get the target while the canary runs.
    expect(d.render.map((r) => r.device).sort()).toEqual(f.state?.canary?.devices);
    expect(f.phase()).toBe("Canary");
  });

  it("takes connected devices first, then by name", () => {
    const f = new Fleet(policy({ canary: { replicas: 2 } }));
    f.add("a", {}, { connected: false }).add("b").add("c").add("d");
    f.tick(0);
    expect(f.state?.canary?.devices).toEqual(["b", "c"]);
  });

  it("a selector nobody matches skips the canary (with an event) and starts the batches", () => {
    const f = new Fleet(policy({ canary: { selector: { matchLabels: { stage: "canary" } } } })).addMany("x", 2);
    const d = f.tick(0);
    expect(d.events.map((e) => e.type)).toContain("CanarySkipped");
    expect(f.phase()).toBe("RollingOut");
    expect(f.state?.batch?.name).toBe("final implicit batch");
  });

  it("a member that joins during the canary with no spec gets the previous version, others stay put", () => {
    const f = canaryRunning();
    f.add("new", {}, { renderedTemplateVersion: null }).add("old", {}, { renderedTemplateVersion: "0" });
    const d = f.tick(S);
    expect(f.rendered(d)).toEqual(["new@1"]);
    expect(f.onTarget()).toEqual(["a01"]);
  });
});

describe("canary thresholds (EDS order, strictly greater than)", () => {
  const rows: [what: string, restarts: number, phase: string, reason: string | null][] = [
    ["0 restarts", 0, "Canary", null],
    ["autoPause.maxRestarts (2) does not pause", 2, "Canary", null],
    ["autoPause.maxRestarts + 1 (3) pauses", 3, "CanaryPaused", "RestartsExceeded"],
    ["autoFail.maxRestarts (5) only pauses", 5, "CanaryPaused", "RestartsExceeded"],
    ["autoFail.maxRestarts + 1 (6) fails, checked before auto-pause", 6, "CanaryFailed", "RestartsExceeded"],
  ];
  it.each(rows)("%s", (_what, restarts, phase, reason) => {
    const f = canaryRunning();
    f.restarts("a01", restarts);
    const d = f.tick(MIN);
    expect(f.phase()).toBe(phase);
    if (phase === "CanaryPaused") {
      expect(f.condition("CanaryPaused")).toMatchObject({ status: "True", reason });
      expect(f.condition("CanaryPaused").message).toContain(`a01 restarted ${restarts} times`);
      expect(f.state?.pause).toMatchObject({ source: "auto", devices: ["a01"] });
      expect(f.condition("RolloutInProgress")).toMatchObject({ status: "False", reason: "Suspended" });
      expect(d.moves).toEqual([{ from: "Canary", to: "CanaryPaused", by: "server", actor: "rollout-controller" }]);
    }
    if (phase === "CanaryFailed") {
      expect(f.condition("CanaryFailed")).toMatchObject({ status: "True", reason });
      expect(f.condition("CanaryPaused").status).toBe("False");
      expect(d.moves.map((m) => `${m.from}->${m.to}`)).toEqual(["Canary->CanaryFailed"]);
    }
    if (phase === "Canary") expect(f.condition("CanaryPaused")).toMatchObject({ status: "False" });
  });

  it("restarts reported before the device applied the new version do not count", () => {
    const f = new Fleet(CANARY()).addMany("a", 3);
    f.tick(0);
    f.restarts("a01", 50); // still running the old spec
    f.tick(MIN);
    expect(f.phase()).toBe("Canary");
    f.apply("a01", 3);
    f.tick(2 * MIN);
    expect(f.phase()).toBe("CanaryPaused");
  });

  it("while paused, nothing else gets the new version", () => {
    const f = canaryRunning(policy({ canary: {} }));
    f.restarts("a01", 3);
    f.tick(MIN);
    const d = f.tick(H);
    expect(d.render).toEqual([]);
    expect(f.onTarget()).toEqual(["a01"]);
    expect(f.phase()).toBe("CanaryPaused");
  });

  it("autoFail disabled: any number of restarts only pauses", () => {
    const f = canaryRunning(policy({ canary: { autoFail: { enabled: false } } }));
    f.restarts("a01", 100);
    f.tick(MIN);
    expect(f.phase()).toBe("CanaryPaused");
  });

  it("autoPause disabled: restarts up to autoFail.maxRestarts change nothing", () => {
    const f = canaryRunning(policy({ canary: { autoPause: { enabled: false } } }));
    f.restarts("a01", 5);
    f.tick(MIN);
    expect(f.phase()).toBe("Canary");
    f.restarts("a01", 6);
    f.tick(2 * MIN);
    expect(f.phase()).toBe("CanaryFailed");
  });

  it("a canary device whose update failed fails the canary (UpdateFailed) and reverts", () => {
    const f = new Fleet(CANARY()).addMany("a", 3);
    f.tick(0);
    f.fail("a01");
    const d = f.tick(MIN);
    expect(f.phase()).toBe("CanaryFailed");
    expect(f.condition("CanaryFailed")).toMatchObject({ status: "True", reason: "UpdateFailed" });
    expect(f.condition("CanaryFailed").message).toContain("a01 failed to update to version 2");
    expect(d.revertFleetTo).toBe("1");
    expect(f.rendered(d)).toEqual(["a01@1"]);
  });

  it("with autoFail off, a failed update pauses instead", () => {
    const f = new Fleet(policy({ canary: { autoFail: { enabled: false } } })).addMany("a", 3);
    f.tick(0);
    f.fail("a01");
    f.tick(MIN);
    expect(f.phase()).toBe("CanaryPaused");
    expect(f.condition("CanaryPaused").reason).toBe("UpdateFailed");
  });

  it("several devices over the threshold are all named", () => {
    const f = new Fleet(policy({ canary: { replicas: 3 } })).addMany("a", 5);
    f.tick(0);
    f.apply(["a01", "a02", "a03"]).restarts("a01", 3).restarts("a03", 4);
    f.tick(MIN);
    expect(f.state?.pause?.devices).toEqual(["a01", "a03"]);
  });
});

describe("canary timeout", () => {
  const p = () => policy({ canary: { duration: "10m", autoFail: { canaryTimeout: "1h" } } });
  it.each([
    ["exactly canaryTimeout after the start: not yet", H, "Canary"],
    ["1 ms past canaryTimeout: failed", H + 1, "CanaryFailed"],
  ])("%s", (_what, ms, phase) => {
    const f = new Fleet(p()).addMany("a", 3);
    f.tick(0);
    f.updating("a01"); // stuck updating: the canary never ends by itself
    f.tick(ms);
    expect(f.phase()).toBe(phase);
    if (phase === "CanaryFailed") {
      expect(f.condition("CanaryFailed").reason).toBe("TimeoutExceeded");
      expect(f.last.revertFleetTo).toBe("1");
    }
  });

  it("applies while the canary is paused (the safeguard against long pauses)", () => {
    const f = new Fleet(p()).addMany("a", 3);
    f.tick(0);
    f.tick(MIN, [f.request("pause", "alice", "looking at logs")]);
    expect(f.phase()).toBe("CanaryPaused");
    f.tick(H + 1);
    expect(f.phase()).toBe("CanaryFailed");
  });

  it("no timeout when autoFail is disabled", () => {
    const f = new Fleet(policy({ canary: { autoFail: { enabled: false, canaryTimeout: "1h" } } })).addMany("a", 3);
    f.tick(0);
    f.updating("a01");
    f.tick(10 * H);
    expect(f.phase()).toBe("Canary");
  });
});

describe("the canary's watch: what its automatic checks see, for the console", () => {
  const watchOf = (f: Fleet) => f.last.progress.find((p) => p.kind === "canary")?.watch;

  it("each canary device's restarts on the new version, most first, against both thresholds; still watched while paused", () => {
    const f = new Fleet(policy({ canary: { replicas: 3, autoFail: { canaryTimeout: "1h" } } })).addMany("a", 5);
    f.tick(0);
    f.apply(["a01", "a02", "a03"]).restarts("a02", 2);
    f.tick(MIN);
    expect(watchOf(f)).toEqual({
      devices: [
        { name: "a02", restarts: 2, status: "successful" },
        { name: "a01", restarts: 0, status: "successful" },
        { name: "a03", restarts: 0, status: "successful" },
      ],
      total: 3,
      restarting: 1,
      pauseAbove: 2,
      failAbove: 5,
      timeoutAt: at(H).toISOString(),
      endsAt: at(10 * MIN).toISOString(),
    });
    f.restarts("a02", 4);
    f.tick(2 * MIN);
    expect(f.phase()).toBe("CanaryPaused");
    // Paused, and auto-fail still counts: 2 more restarts of a02 fail it.
    expect(watchOf(f)).toMatchObject({ restarting: 1, failAbove: 5, devices: [{ name: "a02", restarts: 4 }, {}, {}] });
    // The restart moved the auto end: noRestartsDuration (5m) from the last restart.
    expect(watchOf(f)?.endsAt).toBe(at(10 * MIN).toISOString());
    f.restarts("a02", 6);
    f.tick(3 * MIN);
    expect(f.phase()).toBe("CanaryFailed");
    // The stage the rollout ended in keeps its watch: the devices that failed it, and by how much.
    expect(f.last.progress[0]).toMatchObject({ kind: "canary", status: "failed", watch: { devices: [{ name: "a02", restarts: 6 }, {}, {}] } });
  });

  it("an operator's resume switches auto-pause off: no pause threshold left; auto-fail off: none either", () => {
    const f = canaryRunning();
    f.restarts("a01", 3);
    f.tick(MIN);
    f.tick(2 * MIN, [f.request("resume", "bob")]);
    expect(watchOf(f)).toMatchObject({ pauseAbove: null, failAbove: 5 });
    const g = canaryRunning(policy({ canary: { autoFail: { enabled: false }, autoPause: { enabled: false } } }));
    g.tick(MIN);
    expect(watchOf(g)).toMatchObject({ pauseAbove: null, failAbove: null, timeoutAt: null });
  });

  it("gone once the canary ended and the batches run", () => {
    const f = canaryRunning();
    f.tick(MIN, [f.request("promote", "alice")]);
    expect(f.phase()).toBe("RollingOut");
    expect(f.last.progress[0]).toMatchObject({ kind: "canary", status: "done" });
    expect(f.last.progress[0]).not.toHaveProperty("watch");
  });
});

describe("resume and pause during the canary", () => {
  it("a manual resume overrides auto-pause for the rest of the canary; auto-fail still applies", () => {
    const f = canaryRunning();
    f.restarts("a01", 3);
    f.tick(MIN);
    expect(f.phase()).toBe("CanaryPaused");
    const d = f.tick(2 * MIN, [f.request("resume", "bob")]);
    expect(d.requests).toEqual([expect.objectContaining({ kind: "resume", outcome: "applied" })]);
    expect(f.phase()).toBe("Canary");
    expect(f.state?.canary?.autoPauseOverride).toMatchObject({ actor: "bob" });
    expect(d.moves).toEqual([{ from: "CanaryPaused", to: "Canary", by: "operator", actor: "bob" }]);
    f.restarts("a01", 4);
    f.tick(3 * MIN);
    expect(f.phase()).toBe("Canary");
    f.restarts("a01", 6);
    f.tick(4 * MIN);
    expect(f.phase()).toBe("CanaryFailed");
  });

  it("resuming an operator's pause leaves auto-pause on", () => {
    const f = canaryRunning();
    f.tick(MIN, [f.request("pause", "alice", "checking")]);
    expect(f.phase()).toBe("CanaryPaused");
    expect(f.condition("CanaryPaused")).toMatchObject({ status: "True", reason: "PausedByOperator" });
    expect(f.condition("CanaryPaused").message).toBe("paused by alice: checking");
    f.tick(2 * MIN, [f.request("resume", "alice")]);
    expect(f.state?.canary?.autoPauseOverride).toBeNull();
    f.restarts("a01", 3);
    f.tick(3 * MIN);
    expect(f.phase()).toBe("CanaryPaused");
  });

  it("pause and resume in one tick, oldest first", () => {
    const f = canaryRunning();
    const d = f.tick(MIN, [f.request("pause"), f.request("resume")]);
    expect(d.requests.map((r) => r.outcome)).toEqual(["applied", "applied"]);
    expect(d.moves.map((m) => m.to)).toEqual(["CanaryPaused", "Canary"]);
    expect(f.phase()).toBe("Canary");
  });

  it("a paused canary does not end, even after its duration", () => {
    const f = canaryRunning();
    f.tick(MIN, [f.request("pause")]);
    f.tick(H);
    expect(f.phase()).toBe("CanaryPaused");
  });
});

describe("canary end", () => {
  it("auto mode: ends at canary start + duration when no device restarted (boundary)", () => {
    const f = canaryRunning(policy({ canary: { duration: "10m", noRestartsDuration: "5m" } }));
    f.tick(10 * MIN - 1);
    expect(f.phase()).toBe("Canary");
    expect(f.condition("RolloutInProgress").message).toContain(`the canary ends at ${at(10 * MIN).toISOString()}`);
    const d = f.tick(10 * MIN);
    expect(f.phase()).toBe("RollingOut");
    expect(d.moves[0]).toEqual({ from: "Canary", to: "RollingOut", by: "server", actor: "rollout-controller" });
    expect(f.onTarget()).toEqual(["a01", "a02", "a03", "a04", "a05"]);
  });

  it("auto mode: a restart pushes the end to lastRestart + noRestartsDuration (boundary)", () => {
    const f = canaryRunning(policy({ canary: { duration: "10m", noRestartsDuration: "5m" } }));
    f.restarts("a01", 1);
    f.tick(8 * MIN); // the restart is seen here
    expect(f.state?.canary?.lastRestartAt).toBe(at(8 * MIN).toISOString());
    f.tick(10 * MIN);
    expect(f.phase()).toBe("Canary");
    f.tick(13 * MIN - 1);
    expect(f.phase()).toBe("Canary");
    f.tick(13 * MIN);
    expect(f.phase()).toBe("RollingOut");
  });

  it("auto mode: canary devices still updating at the end of the duration keep it waiting", () => {
    const f = new Fleet(CANARY()).addMany("a", 3);
    f.tick(0);
    f.updating("a01");
    f.tick(30 * MIN);
    expect(f.phase()).toBe("Canary");
    expect(f.condition("RolloutInProgress")).toMatchObject({ status: "True", reason: "Active" });
    expect(f.condition("RolloutInProgress").message).toContain("waiting for a01 (updating)");
    f.apply("a01");
    f.tick(31 * MIN);
    expect(f.phase()).toBe("RollingOut");
  });

  it("manual validation: only promote ends the canary; the condition says it waits", () => {
    const f = canaryRunning(policy({ canary: { validationMode: "manual" } }));
    f.tick(100 * H);
    expect(f.phase()).toBe("Canary");
    expect(f.condition("RolloutInProgress")).toMatchObject({ status: "False", reason: "Waiting" });
    expect(f.condition("RolloutInProgress").message).toMatch(/^Waiting for canary to be promoted/);
    const d = f.tick(100 * H + 1, [f.request("promote", "carol")]);
    expect(d.requests[0]).toMatchObject({ outcome: "applied" });
    expect(d.moves[0]).toEqual({ from: "Canary", to: "RollingOut", by: "operator", actor: "carol" });
    expect(f.state?.canary).toMatchObject({ endedBy: "carol" });
  });

  it("promote ends an auto-mode canary early, and a paused one", () => {
    const f = canaryRunning();
    f.tick(MIN, [f.request("promote", "dave")]);
    expect(f.phase()).toBe("RollingOut");
    const g = canaryRunning();
    g.restarts("a01", 3);
    g.tick(MIN);
    g.tick(2 * MIN, [g.request("promote", "dave")]);
    expect(g.phase()).toBe("RollingOut");
    expect(g.state?.pause).toBeNull();
  });
});

describe("batches (Flight Control)", () => {
  it("a sequence, then the implicit final batch with everyone left (disconnected ones included)", () => {
    const f = new Fleet(policy({ deviceSelection: { strategy: "BatchSequence", sequence: [{ limit: 2 }, { selector: { matchLabels: { region: "emea" } } }] } }));
    f.addMany("a", 4).addMany("e", 3, { region: "emea" }).add("z", {}, { connected: false });
    f.tick(0);
    expect(f.state?.batch).toMatchObject({ name: "batch 1", devices: ["a01", "a02"], successThreshold: 90 });
    f.applyAll().tick(S);
    expect(f.state?.batch).toMatchObject({ name: "batch 2", devices: ["e01", "e02", "e03"] });
    f.applyAll().tick(2 * S);
    expect(f.state?.batch).toMatchObject({ name: "final implicit batch", devices: ["a03", "a04", "z"] });
    expect(f.version("z")).toBe("2");
    f.applyAll().tick(3 * S);
    expect(f.phase()).toBe("Completed");
    expect(f.state?.batchReports.map((r) => `${r.batchName}:${r.total}`)).toEqual(["batch 1:2", "batch 2:3", "final implicit batch:3"]);
  });

  it("an explicit batch skips disconnected devices", () => {
    const f = new Fleet(policy({ deviceSelection: { strategy: "BatchSequence", sequence: [{ limit: 2 }] } }));
    f.add("a", {}, { connected: false }).add("b").add("c");
    f.tick(0);
    expect(f.state?.batch?.devices).toEqual(["b", "c"]);
  });

  it("without deviceSelection, one batch after the canary with every remaining member", () => {
    const f = canaryRunning();
    f.tick(10 * MIN);
    expect(f.state?.batch).toMatchObject({ name: "final implicit batch", devices: ["a02", "a03", "a04", "a05"] });
  });

  it("limit counts devices earlier stages already updated: the canary covers a 1-device batch", () => {
    const f = new Fleet(
      policy({
        canary: { selector: { matchLabels: { group: "a" } } },
        deviceSelection: { strategy: "BatchSequence", sequence: [{ selector: { matchLabels: { group: "a" } }, limit: 2 }, { selector: { matchLabels: { group: "a" } }, limit: "25%" }] },
      }),
    );
    f.addMany("a", 4, { group: "a" }).addMany("b", 2, { group: "b" });
    f.tick(0);
    expect(f.state?.canary?.devices).toEqual(["a01"]);
    f.applyAll().tick(10 * MIN);
    // batch 1: limit 2 of group a, a01 already on the target → one more.
    expect(f.state?.batch).toMatchObject({ name: "batch 1", devices: ["a02"] });
    const d = f.applyAll().tick(10 * MIN + S);
    // batch 2: 25% of 4 = 1, already 2 on the target → selects nothing, the final batch starts.
    expect(d.events.filter((e) => e.type === "BatchStarted").map((e) => e.message)).toEqual(["batch 2 selects no device", "final implicit batch: 4 devices (a03, a04, b01, b02)"]);
    expect(f.state?.batch?.name).toBe("final implicit batch");
  });

  it.each([
    ["30% of 5 rounds up to 2", "30%", 5, 2],
    ["20% of 5 is 1", "20%", 5, 1],
    ["1% of 5 is at least 1", "1%", 5, 1],
    ["100% of 5", "100%", 5, 5],
    ["a count larger than the population", 9, 5, 5],
  ] as const)("batch limit: %s", (_what, limit, n, expected) => {
    const f = new Fleet(policy({ deviceSelection: { strategy: "BatchSequence", sequence: [{ limit }] } })).addMany("d", n);
    f.tick(0);
    expect(f.state?.batch?.devices).toHaveLength(expected);
  });

  it("a joiner during the final batch belongs to it", () => {
    const f = new Fleet(policy({})).addMany("d", 2);
    f.tick(0);
    f.add("late", {}, { renderedTemplateVersion: null });
    const d = f.tick(S);
    expect(f.rendered(d)).toEqual(["late@2"]);
    expect(f.state?.batch?.devices).toEqual(["d01", "d02", "late"]);
  });
});

describe("success threshold and suspension", () => {
  const fiveInBatch1 = (threshold?: string) =>
    new Fleet(policy({ deviceSelection: { strategy: "BatchSequence", sequence: [{ limit: 5, ...(threshold ? { successThreshold: threshold } : {}) }] } })).addMany("d", 7);

  it("under the threshold: Suspended with Flight Control's message, nothing more is rendered", () => {
    const f = fiveInBatch1();
    f.tick(0);
    f.apply(["d01", "d02", "d03", "d04"]).fail("d05");
    const d = f.tick(S);
    expect(f.phase()).toBe("Suspended");
    expect(d.render).toEqual([]);
    expect(f.condition("RolloutInProgress")).toMatchObject({
      status: "False",
      reason: "Suspended",
      message: "batch 1 failed: 80% of batch devices were updated successfully, while success threshold was set to 90%; Breakdown: total=5 successful=4 failed=1 timed out=0",
    });
    expect(f.state?.batchReports.at(-1)).toMatchObject({ batchName: "batch 1", total: 5, successful: 4, failed: 1, timedOut: 0, successPercentage: 80, passed: false });
    f.tick(H);
    expect(f.onTarget()).toEqual(["d01", "d02", "d03", "d04", "d05"]);
  });

  it("exactly at the threshold continues (9 of 10 = 90%)", () => {
    const f = new Fleet(policy({ deviceSelection: { strategy: "BatchSequence", sequence: [{ limit: 10 }] } })).addMany("d", 12);
    f.tick(0);
    f.applyAll().fail("d10");
    f.tick(S);
    expect(f.phase()).toBe("RollingOut");
    expect(f.state?.batch?.name).toBe("final implicit batch");
  });

  it("a batch's own threshold overrides the policy's", () => {
    const f = fiveInBatch1("80%");
    f.tick(0);
    f.apply(["d01", "d02", "d03", "d04"]).fail("d05");
    f.tick(S);
    expect(f.phase()).toBe("RollingOut");
    expect(f.state?.batchReports[0]?.successThreshold).toBe(80);
  });

  it("a device still updating keeps the batch open", () => {
    const f = fiveInBatch1();
    f.tick(0);
    f.apply(["d01", "d02", "d03", "d04"]).updating("d05");
    f.tick(S);
    expect(f.phase()).toBe("RollingOut");
    expect(f.state?.batchReports).toEqual([]);
  });

  it.each([
    ["at defaultUpdateTimeout: still updating", 24 * H, "RollingOut"],
    ["1 ms past it: timed out, counted unsuccessful", 24 * H + 1, "Suspended"],
  ])("update timeout (24h default): %s", (_what, ms, phase) => {
    const f = fiveInBatch1();
    f.tick(0);
    f.apply(["d01", "d02", "d03", "d04"]).updating("d05");
    f.tick(ms);
    expect(f.phase()).toBe(phase);
    if (phase === "Suspended") expect(f.condition("RolloutInProgress").message).toContain("Breakdown: total=5 successful=4 failed=0 timed out=1");
  });

  it("defaultUpdateTimeout from the policy", () => {
    const f = new Fleet(policy({ defaultUpdateTimeout: "1h", deviceSelection: { strategy: "BatchSequence", sequence: [{ limit: 1 }] } })).addMany("d", 3);
    f.tick(0);
    f.tick(H + 1);
    expect(f.phase()).toBe("Suspended");
  });

  it("promote approves a suspended batch: the next one starts, recording who", () => {
    const f = fiveInBatch1();
    f.tick(0);
    f.apply(["d01", "d02", "d03", "d04"]).fail("d05");
    f.tick(S);
    const d = f.tick(2 * S, [f.request("promote", "erin")]);
    expect(d.requests[0]).toMatchObject({ outcome: "applied", message: "approved: final implicit batch starts" });
    expect(d.moves[0]).toEqual({ from: "Suspended", to: "RollingOut", by: "operator", actor: "erin" });
    expect(d.events).toContainEqual(expect.objectContaining({ type: "BatchApproved", actor: "erin" }));
    expect(f.state?.batch).toMatchObject({ name: "final implicit batch", approvedBy: { actor: "erin", at: at(2 * S).toISOString() } });
    expect(f.rendered(d)).toEqual(["d06@2", "d07@2"]);
  });

  it("the final batch is held to its threshold too; promote then completes", () => {
    const f = new Fleet(policy({})).addMany("d", 2);
    f.tick(0);
    f.apply("d01").fail("d02");
    f.tick(S);
    expect(f.phase()).toBe("Suspended");
    expect(f.condition("RolloutInProgress").message).toMatch(/^final implicit batch failed: 50% of batch devices/);
    const d = f.tick(2 * S, [f.request("promote", "erin")]);
    expect(d.moves[0]).toEqual({ from: "Suspended", to: "Completed", by: "operator", actor: "erin" });
    expect(f.state?.ended?.message).toContain("approved by erin under its threshold");
  });

  it("in Suspended, pause and resume are ignored with a reason", () => {
    const f = new Fleet(policy({})).addMany("d", 1);
    f.tick(0);
    f.fail("d01");
    f.tick(S);
    const d = f.tick(2 * S, [f.request("pause"), f.request("resume")]);
    expect(d.requests.map((r) => r.outcome)).toEqual(["ignored", "ignored"]);
    expect(d.requests[0]?.message).toContain("promote to continue or abort");
    expect(d.requests[1]?.message).toContain("nothing is paused");
    expect(d.events.filter((e) => e.type === "RolloutRequestIgnored").map((e) => e.actor)).toEqual(["alice", "alice"]);
  });
});

describe("disruption budget", () => {
  it.each([
    // [what, maxUnavailable, minAvailable, total, connected, busy, expected]
    ["maxUnavailable alone", 2, undefined, 10, 10, 0, 2],
    ["maxUnavailable minus the busy ones", 2, undefined, 10, 10, 1, 1],
    ["minAvailable alone", undefined, 7, 10, 10, 0, 3],
    ["the smaller of both", 5, 8, 10, 10, 0, 2],
    ["minAvailable ≥ group size never starves: capped at total − 1", undefined, 5, 3, 3, 0, 1],
    ["a single-device group can always update", undefined, 3, 1, 1, 0, 1],
    ["nothing while one of a minAvailable-capped group is busy", undefined, 5, 3, 3, 1, 0],
    ["disconnected devices count as unavailable", undefined, 2, 4, 2, 0, 0],
    ["never negative", 1, undefined, 5, 5, 3, 0],
  ] as const)("%s", (_what, maxUnavailable, minAvailable, total, connected, busy, expected) => {
    expect(budgetAllowance({ maxUnavailable, minAvailable }, { total, connected, busy })).toBe(expected);
  });

  it("per group: one device per store at a time, and the condition says what is held back", () => {
    const f = new Fleet(policy({ disruptionBudget: { groupBy: ["store"], maxUnavailable: 1 } }));
    f.addMany("s1-", 3, { store: "s1" }).addMany("s2-", 2, { store: "s2" });
    const d = f.tick(0);
    expect(f.rendered(d)).toEqual(["s1-01@2", "s2-01@2"]);
    f.tick(S);
    expect(f.last.render).toEqual([]);
    expect(f.condition("RolloutInProgress").message).toBe(
      "Rolling out final implicit batch; disruption budget holds back 3 devices: store=s1: 2 waiting (3 devices, 3 connected, 1 updating; maxUnavailable 1); store=s2: 1 waiting (2 devices, 2 connected, 1 updating; maxUnavailable 1)",
    );
    f.apply("s1-01");
    expect(f.rendered(f.tick(2 * S))).toEqual(["s1-02@2"]);
    f.applyAll().tick(3 * S);
    f.applyAll().tick(4 * S);
    f.applyAll().tick(5 * S);
    expect(f.phase()).toBe("Completed");
  });

  it("minAvailable ≥ group size: still one at a time, never starved", () => {
    const f = new Fleet(policy({ disruptionBudget: { minAvailable: 10 } })).addMany("d", 3);
    for (let i = 0; i < 3; i++) {
      expect(f.tick(i * S).render).toHaveLength(1);
      f.applyAll();
    }
    f.tick(10 * S);
    expect(f.phase()).toBe("Completed");
  });

  it("held back by disconnected devices: the condition says it waits for them to reconnect", () => {
    const f = new Fleet(policy({ disruptionBudget: { minAvailable: 2 } }));
    f.add("a").add("b", {}, { connected: false }).add("c", {}, { connected: false });
    f.tick(0);
    expect(f.last.render).toEqual([]);
    expect(f.condition("RolloutInProgress").message).toContain("nothing is updating there: waiting for its devices to reconnect");
  });

  it("throttles the canary too, and counts a timed-out device as no longer busy", () => {
    const f = new Fleet(policy({ canary: { replicas: 2 }, disruptionBudget: { maxUnavailable: 1 }, defaultUpdateTimeout: "1h" })).addMany("d", 4);
    expect(f.rendered(f.tick(0))).toEqual(["d01@2"]);
    f.updating("d01");
    expect(f.tick(H).render).toEqual([]);
    expect(f.rendered(f.tick(H + 1))).toEqual(["d02@2"]);
  });

  it("reverts are never throttled", () => {
    const f = new Fleet(policy({ canary: { replicas: 2 }, disruptionBudget: { maxUnavailable: 1 } })).addMany("d", 4);
    f.tick(0);
    f.apply("d01").tick(S);
    f.apply("d02");
    const d = f.tick(2 * S, [f.request("abort", "frank", "wrong build")]);
    expect(f.rendered(d)).toEqual(["d01@1", "d02@1"]);
  });
});

describe("pause and abort after the canary", () => {
  it("pause stops new renders; resume continues", () => {
    const f = new Fleet(policy({ disruptionBudget: { maxUnavailable: 1 } })).addMany("d", 3);
    f.tick(0);
    f.applyAll();
    const d = f.tick(S, [f.request("pause", "gina", "night freeze")]);
    expect(d.render).toEqual([]);
    expect(f.phase()).toBe("Paused");
    expect(f.condition("RolloutInProgress")).toMatchObject({ status: "False", reason: "Suspended", message: "Rollout paused by gina: night freeze; resume to continue" });
    expect(f.tick(H).render).toEqual([]);
    expect(f.tick(H + S, [f.request("promote")]).requests[0]).toMatchObject({ outcome: "ignored", message: "the rollout is paused: resume it first" });
    const r = f.tick(H + 2 * S, [f.request("resume", "gina")]);
    expect(r.moves[0]).toEqual({ from: "Paused", to: "RollingOut", by: "operator", actor: "gina" });
    expect(f.rendered(r)).toEqual(["d02@2"]);
  });

  it("abort reverts: everyone not on the previous version gets it back; the rollout ends", () => {
    const f = canaryRunning();
    f.tick(10 * MIN); // canary ended, the final batch rendered
    f.add("newcomer", {}, { renderedTemplateVersion: null }).add("stray", {}, { renderedTemplateVersion: "1.5" });
    const d = f.tick(11 * MIN, [f.request("abort", "hal", "customer report")]);
    expect(d.requests[0]).toMatchObject({ outcome: "applied", message: "rollout aborted; the fleet reverts to version 1" });
    expect(f.phase()).toBe("Aborted");
    expect(d.revertFleetTo).toBe("1");
    expect(f.rendered(d)).toEqual(["a01@1", "a02@1", "a03@1", "a04@1", "a05@1", "newcomer@1", "stray@1"]);
    expect(f.state?.ended).toMatchObject({ actor: "hal", reason: "Aborted" });
    expect(f.condition("RolloutInProgress")).toMatchObject({ reason: "Inactive" });
    // The revert stays asked for while this is the fleet's rollout (idempotent for the fleet controller).
    expect(f.tick(12 * MIN).revertFleetTo).toBe("1");
    expect(f.tick(13 * MIN, [f.request("resume")]).requests[0]).toMatchObject({ outcome: "ignored", message: "the rollout of version 2 has ended (Aborted)" });
  });

  it.each(["Canary", "CanaryPaused", "Suspended", "Paused"])("abort from %s", (from) => {
    // The canary (d01) counts toward batch 1's limit of 2: batch 1 is d02.
    const f = new Fleet(policy({ canary: {}, deviceSelection: { strategy: "BatchSequence", sequence: [{ limit: 2 }] } })).addMany("d", 4);
    f.tick(0);
    if (from === "CanaryPaused") f.tick(S, [f.request("pause")]);
    if (from === "Suspended" || from === "Paused") {
      f.tick(S, [f.request("promote")]);
      if (from === "Suspended") f.fail("d02").tick(2 * S);
      else f.tick(2 * S, [f.request("pause")]);
    }
    expect(f.phase()).toBe(from);
    f.tick(3 * S, [f.request("abort")]);
    expect(f.phase()).toBe("Aborted");
    expect(f.onTarget()).toEqual([]);
  });

  it("canary failed: revert, the rollout ended; later ticks keep the previous version for joiners", () => {
    const f = canaryRunning();
    f.restarts("a01", 6);
    const d = f.tick(MIN);
    expect(f.rendered(d)).toEqual(["a01@1"]);
    expect(d.revertFleetTo).toBe("1");
    expect(f.state?.failure).toMatchObject({ reason: "RestartsExceeded", devices: ["a01"] });
    f.add("late", {}, { renderedTemplateVersion: null });
    expect(f.rendered(f.tick(2 * MIN))).toEqual(["late@1"]);
  });

  it("abort of a first version has nothing to revert to", () => {
    const f = new Fleet(null, "1", null).add("a", {}, { renderedTemplateVersion: null });
    f.tick(0);
    const d = f.tick(S, [f.request("abort")]);
    expect(d.revertFleetTo).toBeNull();
    expect(d.render).toEqual([]);
    expect(d.requests[0]?.message).toContain("there is no previous version to revert to");
  });
});

describe("requests that do not apply", () => {
  it.each([
    ["resume when nothing is paused", "resume", "nothing is paused"],
    ["promote while a batch rolls out", "promote", "nothing waits for approval: final implicit batch is rolling out"],
    ["pause twice", "pause", "already paused"],
  ] as const)("%s", (what, kind, message) => {
    const f = new Fleet(policy({ disruptionBudget: { maxUnavailable: 1 } })).addMany("d", 3);
    f.tick(0);
    if (what === "pause twice") f.tick(S, [f.request("pause")]);
    const d = f.tick(2 * S, [f.request(kind)]);
    expect(d.requests[0]).toMatchObject({ outcome: "ignored" });
    expect(d.requests[0]?.message).toContain(message);
    expect(d.moves).toEqual([]);
  });

  it("a request made before this rollout started is ignored (it was meant for an earlier one)", () => {
    const f = new Fleet(CANARY()).addMany("a", 2);
    f.tick(MIN);
    const d = f.tick(2 * MIN, [f.request("pause", "ivy", undefined, MIN - 1)]);
    expect(d.requests[0]).toMatchObject({ outcome: "ignored" });
    expect(d.requests[0]?.message).toContain("before this rollout");
    expect(f.phase()).toBe("Canary");
  });

  it("a state for another version is refused: supersede first", () => {
    const f = canaryRunning();
    f.target = "3";
    expect(() => f.tick(MIN)).toThrow(RolloutInputError);
  });
});

describe("superseding", () => {
  it("a running rollout ends as Superseded; the new one reverts to the last version that finished", () => {
    const f = canaryRunning();
    f.tick(MIN);
    const old = f.state!;
    const r = supersedeRollout(old, { now: at(2 * MIN), byTemplateVersion: "3" });
    checkMoves(r.moves);
    expect(r.state.phase).toBe("Superseded");
    expect(r.moves).toEqual([{ from: "Canary", to: "Superseded", by: "server", actor: "rollout-controller" }]);
    expect(r.state.ended?.message).toBe("version 3 replaces version 2 before it finished rolling out");
    expect(r.conditions[0]).toMatchObject({ type: "RolloutInProgress", status: "False", reason: "Inactive" });
    expect(revertTargetForNextRollout(r.state)).toBe("1");
    expect(RolloutStateSchema.parse(JSON.parse(JSON.stringify(r.state)))).toEqual(r.state);

    // The new rollout: previous = 1, not the superseded 2. The old canary device is picked again.
    const g = new Fleet(CANARY(), "3", revertTargetForNextRollout(r.state));
    for (const m of f.members.values()) g.members.set(m.name, { ...m });
    const d = g.tick(2 * MIN);
    expect(g.state?.previousTemplateVersion).toBe("1");
    expect(g.rendered(d)).toEqual(["a01@3"]);
    g.restarts("a01", 0).apply("a01", 6);
    const failed = g.tick(3 * MIN);
    expect(failed.revertFleetTo).toBe("1");
  });

  it("superseding a finished rollout changes nothing", () => {
    const f = new Fleet(null).addMany("d", 1);
    f.tick(0);
    f.applyAll().tick(S);
    const r = supersedeRollout(f.state!, { now: at(2 * S), byTemplateVersion: "3" });
    expect(r.state).toEqual(f.state);
    expect(r.moves).toEqual([]);
  });

  it.each([
    ["Completed: its own version", "Completed", "2"],
    ["Superseded: what it would have reverted to", "Superseded", "1"],
    ["CanaryFailed: the version the fleet went back to", "CanaryFailed", "1"],
    ["Aborted: the version the fleet went back to", "Aborted", "1"],
  ] as const)("revert target after %s", (_what, phase, expected) => {
    const f = canaryRunning();
    f.tick(MIN);
    expect(revertTargetForNextRollout({ ...f.state!, phase })).toBe(expected);
  });

  it("no rollout yet: no revert target", () => {
    expect(revertTargetForNextRollout(null)).toBeNull();
  });
});

describe("state, conditions, events, progress", () => {
  it("lastTransitionTime moves only when a condition's status does", () => {
    const f = canaryRunning();
    const t0 = f.condition("RolloutInProgress").lastTransitionTime;
    f.tick(MIN);
    expect(f.condition("RolloutInProgress").lastTransitionTime).toBe(t0);
    f.restarts("a01", 3).tick(2 * MIN);
    expect(f.condition("RolloutInProgress").lastTransitionTime).toBe(at(2 * MIN).toISOString());
    expect(f.condition("CanaryPaused").lastTransitionTime).toBe(at(2 * MIN).toISOString());
  });

  it("events: start, phase changes and batches, each with its actor", () => {
    const f = new Fleet(CANARY()).addMany("a", 2);
    const d = f.tick(0);
    expect(d.events.map((e) => `${e.type}/${e.reason}`)).toEqual(["RolloutStarted/Canary", "RolloutPhaseChanged/Canary"]);
    f.apply("a01");
    const e = f.tick(10 * MIN);
    expect(e.events.map((x) => `${x.type}/${x.reason}`)).toEqual(["RolloutPhaseChanged/RollingOut", "BatchStarted/final implicit batch"]);
    expect(f.tick(11 * MIN).events).toEqual([]); // nothing new, nothing recorded
  });

  it("progress per stage for the console", () => {
    const f = new Fleet(policy({ canary: { replicas: 2 }, deviceSelection: { strategy: "BatchSequence", sequence: [{ limit: 3 }] } })).addMany("d", 5);
    // Progress and conditions describe the fleet as the decision leaves it: just rendered = updating.
    expect(f.tick(0).progress[0]).toMatchObject({ name: "canary", total: 2, waiting: 0, updating: 2 });
    expect(f.condition("RolloutInProgress").message).toBe("Rolling out canary; 0 of 2 canary devices updated; waiting for d01 (updating), d02 (updating)");
    f.apply("d01").updating("d02");
    const d = f.tick(MIN);
    expect(d.progress).toEqual([
      { kind: "canary", name: "canary", status: "active", total: 2, waiting: 0, updating: 1, successful: 1, failed: 0, timedOut: 0, watch: expect.objectContaining({ total: 2, restarting: 0 }) },
      { kind: "batch", name: "batch 1", status: "pending", total: null, waiting: 0, updating: 0, successful: 0, failed: 0, timedOut: 0 },
      { kind: "batch", name: "final implicit batch", status: "pending", total: null, waiting: 0, updating: 0, successful: 0, failed: 0, timedOut: 0 },
    ]);
    f.apply("d02").tick(10 * MIN);
    f.applyAll().tick(11 * MIN);
    expect(f.last.progress.map((p) => `${p.name}:${p.status}:${p.total}`)).toEqual(["canary:done:2", "batch 1:done:1", "final implicit batch:active:2"]);
  });

  it("a stage that ended the rollout says how, never done: the canary that failed it, the stage running at an abort", () => {
    const stages = (f: Fleet) => f.last.progress.map((p) => `${p.name}:${p.status}`);
    const failed = new Fleet(CANARY()).addMany("a", 3);
    failed.tick(0);
    failed.fail("a01").tick(MIN);
    expect(failed.phase()).toBe("CanaryFailed");
    expect(stages(failed)).toEqual(["canary:failed"]);

    const abortedInCanary = new Fleet(CANARY()).addMany("a", 3);
    abortedInCanary.tick(0);
    abortedInCanary.tick(MIN, [abortedInCanary.request("abort", "alice", "wrong build")]);
    expect(abortedInCanary.phase()).toBe("Aborted");
    expect(stages(abortedInCanary)).toEqual(["canary:stopped"]);

    const abortedInBatch = new Fleet(policy({ canary: { replicas: 2 }, deviceSelection: { strategy: "BatchSequence", sequence: [{ limit: 3 }] } })).addMany("d", 5);
    abortedInBatch.tick(0);
    abortedInBatch.apply("d01").apply("d02").tick(10 * MIN);
    abortedInBatch.tick(11 * MIN, [abortedInBatch.request("abort", "alice")]);
    expect(abortedInBatch.phase()).toBe("Aborted");
    expect(stages(abortedInBatch)).toEqual(["canary:done", "batch 1:stopped"]);
  });

  it("deviceRolloutStatus: successful, else failed, else timed out, else updating; waiting before the render", () => {
    const base: RolloutMember = { name: "x", labels: {}, renderedTemplateVersion: "2", renderedAt: at(0), applied: false, updated: "Updating", updateState: "ApplyingUpdate", connected: true, restarts: 0 };
    expect(deviceRolloutStatus({ ...base, renderedTemplateVersion: "1" }, "2", T0, H)).toBe("waiting");
    expect(deviceRolloutStatus({ ...base, applied: true, updated: "UpToDate" }, "2", T0 + 2 * H, H)).toBe("successful");
    expect(deviceRolloutStatus({ ...base, applied: true, updated: "Updating" }, "2", T0, H)).toBe("updating");
    expect(deviceRolloutStatus({ ...base, updateState: "Error" }, "2", T0 + 2 * H, H)).toBe("failed");
    expect(deviceRolloutStatus(base, "2", T0 + H, H)).toBe("updating");
    expect(deviceRolloutStatus(base, "2", T0 + H + 1, H)).toBe("timedOut");
  });

  it("the decision does not touch its input", () => {
    const f = canaryRunning();
    const before = JSON.stringify(f.state);
    const state = f.state!;
    decideRollout({ now: at(H), policy: CANARY(), targetTemplateVersion: "2", previousTemplateVersion: "1", members: [...f.members.values()], state, requests: [f.request("abort")] });
    expect(JSON.stringify(state)).toBe(before);
  });
});

describe("the engine makes only the table's moves", () => {
  it.each(["CanaryPaused", "Paused", "RollingOut", "Suspended"] as const)("supersede from %s is a table move", (phase) => {
    const f = canaryRunning();
    f.tick(MIN);
    const r = supersedeRollout({ ...f.state!, phase }, { now: at(2 * MIN), byTemplateVersion: "3" });
    checkMoves(r.moves);
    expect(r.state.phase).toBe("Superseded");
  });

  it("every move made in the scenarios above is in the table, and every row of the table was exercised", () => {
    const table = new Set(rolloutMachine.transitions.map(moveKey));
    for (const m of SEEN_MOVES) expect(table.has(m), m).toBe(true);
    expect([...table].filter((t) => !SEEN_MOVES.has(t)).sort()).toEqual([]);
  });
});
