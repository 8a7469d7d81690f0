/**
 * The node-action state table (seed 004 "Action States", DESIGN.md §4, AGENT_PROTOCOL.md
 * "Action reports"), row by row. The expected table is written out here from the documents,
 * not read from lib/action-status.ts, so a changed row in the code fails a test.
 */
import { describe, expect, it } from "vitest";
import {
  ACTION_STATES,
  ACTIVE_ACTION_STATES,
  actionMachine,
  canMove,
  FINAL_ACTION_STATES,
  PENDING_ACTION_STATES,
  type ActionState,
} from "./action-status";
import { assertTransition, canTransition, nextStates, TransitionError } from "./state-machine";

type By = "operator" | "agent" | "server";
const ACTORS: By[] = ["operator", "agent", "server"];

/** Seed 004's eight states, verbatim. */
const SEED_STATES = ["CANCELLED", "DONE", "FAILED", "LOST", "NEW", "PENDING_APPROVE", "PENDING_SCHEDULE", "RUNNING"];

/** Every allowed move, who makes it, and the document rule it comes from. */
const TABLE: [from: ActionState, to: ActionState, by: By, rule: string][] = [
  ["PENDING_APPROVE", "PENDING_SCHEDULE", "operator", "an operator approves"],
  ["PENDING_APPROVE", "CANCELLED", "operator", "an operator rejects or cancels"],
  ["PENDING_SCHEDULE", "NEW", "agent", "the agent confirms receipt"],
  ["PENDING_SCHEDULE", "CANCELLED", "operator", "an operator cancels before the agent has it"],
  ["NEW", "RUNNING", "agent", "the agent starts it"],
  ["NEW", "CANCELLED", "agent", "the agent drops it from its queue (cancel)"],
  ["NEW", "LOST", "server", "missing from the heartbeat queue"],
  ["NEW", "LOST", "server", "the device's credential was revoked: it can never report it (issue 23)"],
  ["RUNNING", "DONE", "agent", "finished successfully"],
  ["RUNNING", "FAILED", "agent", "finished unsuccessfully"],
  ["RUNNING", "CANCELLED", "agent", "the agent interrupts it (cancel)"],
  ["RUNNING", "LOST", "server", "missing from the heartbeat queue"],
  ["RUNNING", "LOST", "server", "the device's credential was revoked: it can never report it (issue 23)"],
];

const allowed = (from: string, to: string, by: By) => TABLE.some(([f, t, b]) => f === from && t === to && b === by);

describe("action states", () => {
  it("are exactly the seed's eight", () => {
    expect([...ACTION_STATES].sort()).toEqual(SEED_STATES);
    expect(ACTION_STATES).toHaveLength(8);
  });

  it("start in PENDING_SCHEDULE when no approval is needed", () => {
    expect(actionMachine.initial).toBe("PENDING_SCHEDULE");
  });

  it("are grouped: pending in Core, active on the agent, final ones terminal", () => {
    expect([...PENDING_ACTION_STATES].sort()).toEqual(["PENDING_APPROVE", "PENDING_SCHEDULE"]);
    expect([...ACTIVE_ACTION_STATES].sort()).toEqual(["NEW", "RUNNING"]);
    expect([...FINAL_ACTION_STATES].sort()).toEqual(["CANCELLED", "DONE", "FAILED", "LOST"]);
    for (const s of ACTION_STATES) {
      expect(actionMachine.states[s]?.terminal === true, s).toBe((FINAL_ACTION_STATES as readonly string[]).includes(s));
    }
    // The three groups split the eight states with no overlap.
    expect([...PENDING_ACTION_STATES, ...ACTIVE_ACTION_STATES, ...FINAL_ACTION_STATES].sort()).toEqual(SEED_STATES);
  });

  it("the machine holds exactly the documented moves, no more", () => {
    const actual = actionMachine.transitions.map((t) => `${t.from}->${t.to}:${t.by}`).sort();
    expect(actual).toEqual(TABLE.map(([f, t, b]) => `${f}->${t}:${b}`).sort());
  });
});

describe("canMove: each documented move, for its actor only", () => {
  it.each(TABLE)("%s → %s is allowed for %s (%s)", (from, to, by) => {
    expect(canMove(from, to, by)).toBe(true);
    expect(canTransition(actionMachine, from, to)).toBe(true);
    expect(() => assertTransition(actionMachine, from, to)).not.toThrow();
  });

  it.each(TABLE.flatMap(([from, to, by, rule]) => ACTORS.filter((other) => other !== by).map((other) => [from, to, other, by, rule] as const)))(
    "%s → %s is refused for %s (only %s: %s)",
    (from, to, other) => {
      expect(canMove(from, to, other)).toBe(false);
    },
  );
});

describe("canMove: forbidden moves are refused for everyone", () => {
  const FORBIDDEN: [from: ActionState, to: ActionState, why: string][] = [
    ["DONE", "RUNNING", "a finished action does not run again"],
    ["PENDING_APPROVE", "NEW", "an agent never sees an unapproved action"],
    ["PENDING_APPROVE", "RUNNING", "an agent never runs an unapproved action"],
    ["PENDING_APPROVE", "DONE", "approval cannot be skipped"],
    ["LOST", "DONE", "a lost action stays lost"],
    ["LOST", "RUNNING", "a lost action stays lost"],
    ["NEW", "DONE", "an action runs before it finishes"],
    ["NEW", "FAILED", "an action runs before it fails"],
    ["PENDING_SCHEDULE", "RUNNING", "the agent confirms receipt (NEW) first"],
    ["PENDING_SCHEDULE", "DONE", "the agent confirms receipt (NEW) first"],
    ["PENDING_SCHEDULE", "LOST", "the agent never had it"],
    ["PENDING_SCHEDULE", "PENDING_APPROVE", "approval is not taken back"],
    ["RUNNING", "NEW", "no going back to the queue"],
    ["NEW", "PENDING_SCHEDULE", "no going back to the server"],
    ["CANCELLED", "PENDING_SCHEDULE", "a cancelled action is not revived"],
    ["FAILED", "DONE", "an outcome is final"],
    ["DONE", "FAILED", "an outcome is final"],
  ];

  it.each(FORBIDDEN)("%s → %s (%s)", (from, to) => {
    for (const by of ACTORS) expect(canMove(from, to, by), by).toBe(false);
    expect(canTransition(actionMachine, from, to)).toBe(false);
    expect(() => assertTransition(actionMachine, from, to)).toThrow(TransitionError);
  });

  it("every (from, to, actor) outside the table is refused", () => {
    const wrong: string[] = [];
    for (const from of ACTION_STATES) {
      for (const to of ACTION_STATES) {
        for (const by of ACTORS) {
          if (canMove(from, to, by) !== allowed(from, to, by)) wrong.push(`${from}->${to}:${by}`);
        }
      }
    }
    expect(wrong).toEqual([]);
  });
});

describe("final states have no way out", () => {
  it.each(FINAL_ACTION_STATES.map((s) => [s]))("%s", (from) => {
    expect(nextStates(actionMachine, from)).toEqual([]);
    for (const to of ACTION_STATES) {
      for (const by of ACTORS) expect(canMove(from, to, by), `${from}->${to}:${by}`).toBe(false);
    }
  });

  it("every non-final state has a way to a final one", () => {
    for (const s of ACTION_STATES) {
      if ((FINAL_ACTION_STATES as readonly string[]).includes(s)) continue;
      expect(nextStates(actionMachine, s).length, s).toBeGreaterThan(0);
    }
  });
});

describe("who moves what", () => {
  it("an operator only moves pending actions, and only towards PENDING_SCHEDULE or CANCELLED", () => {
    const moves = actionMachine.transitions.filter((t) => t.by === "operator");
    expect(moves.every((t) => (PENDING_ACTION_STATES as readonly string[]).includes(t.from))).toBe(true);
    expect(new Set(moves.map((t) => t.to))).toEqual(new Set(["PENDING_SCHEDULE", "CANCELLED"]));
  });

  it("the server on its own only ever marks active actions LOST: missing from the heartbeat, or the device revoked", () => {
    const moves = actionMachine.transitions.filter((t) => t.by === "server");
    expect(moves.map((t) => `${t.from}->${t.to}: ${t.label}`).sort()).toEqual([
      "NEW->LOST: not reported",
      "NEW->LOST: revoked",
      "RUNNING->LOST: not reported",
      "RUNNING->LOST: revoked",
    ]);
  });

  it("the agent reports only the protocol's states (NEW, RUNNING, DONE, FAILED, CANCELLED)", () => {
    const targets = new Set(actionMachine.transitions.filter((t) => t.by === "agent").map((t) => t.to));
    expect([...targets].sort()).toEqual(["CANCELLED", "DONE", "FAILED", "NEW", "RUNNING"]);
  });
});
