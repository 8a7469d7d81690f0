import { describe, expect, it } from "vitest";
import {
  assertTransition,
  canTransition,
  defineStateMachine,
  isState,
  nextStates,
  stateNames,
  TransitionError,
} from "./state-machine";

const traffic = defineStateMachine({
  name: "Traffic",
  initial: "Red",
  states: {
    Red: { description: "stop" },
    Green: { description: "go" },
    Amber: { description: "careful" },
    Broken: { description: "out of order", terminal: true },
  },
  transitions: [
    { from: "Red", to: "Green" },
    { from: "Green", to: "Amber" },
    { from: "Amber", to: "Red" },
    { from: "Amber", to: "Broken", label: "on error" },
  ],
});
type Light = keyof typeof traffic.states;

describe("defineStateMachine", () => {
  it("returns the machine it was given when every transition names known states", () => {
    expect(traffic.name).toBe("Traffic");
    expect(stateNames(traffic)).toEqual(["Red", "Green", "Amber", "Broken"]);
  });

  it.each([
    ["an unknown source state", { from: "Blue", to: "Red" }],
    ["an unknown target state", { from: "Red", to: "Blue" }],
    ["unknown states on both ends", { from: "Blue", to: "Purple" }],
  ])("rejects a transition naming %s", (_what, transition) => {
    expect(() =>
      defineStateMachine({
        name: "Bad",
        initial: "Red",
        states: { Red: { description: "" }, Green: { description: "" } },
        // The type system already refuses unknown names; cast to check the runtime guard.
        transitions: [{ from: "Red", to: "Green" }, transition as { from: "Red"; to: "Green" }],
      }),
    ).toThrow(/Bad: transition .* names an unknown state/);
  });

  it("rejects an initial state that is not one of its states", () => {
    expect(() =>
      defineStateMachine({
        name: "NoStart",
        initial: "Nowhere" as "A",
        states: { A: { description: "" } },
        transitions: [],
      }),
    ).toThrow(/NoStart: initial state Nowhere/);
  });

  it("does not treat inherited object keys as states", () => {
    expect(() =>
      defineStateMachine({
        name: "Proto",
        initial: "A",
        states: { A: { description: "" } },
        transitions: [{ from: "A", to: "toString" as "A" }],
      }),
    ).toThrow(/unknown state/);
  });
});

describe("isState", () => {
  it.each([
    ["Red", true],
    ["Broken", true],
    ["red", false],
    ["", false],
    ["toString", false],
    ["constructor", false],
  ])("%j → %s", (value, expected) => {
    expect(isState(traffic, value)).toBe(expected);
  });
});

describe("canTransition", () => {
  const rows: [Light, Light, boolean][] = [
    ["Red", "Green", true],
    ["Green", "Amber", true],
    ["Amber", "Red", true],
    ["Amber", "Broken", true],
    // not in the table
    ["Red", "Amber", false],
    ["Green", "Red", false],
    ["Broken", "Red", false],
    ["Red", "Broken", false],
    // staying put is always allowed (idempotent reports)
    ["Red", "Red", true],
    ["Broken", "Broken", true],
  ];
  it.each(rows)("%s → %s: %s", (from, to, expected) => {
    expect(canTransition(traffic, from, to)).toBe(expected);
  });
});

describe("assertTransition", () => {
  it("passes for a listed move and for staying put", () => {
    expect(() => assertTransition(traffic, "Red", "Green")).not.toThrow();
    expect(() => assertTransition(traffic, "Amber", "Amber")).not.toThrow();
  });

  it("throws a TransitionError naming the machine and both states for an unlisted move", () => {
    let caught: unknown;
    try {
      assertTransition(traffic, "Broken", "Green");
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(TransitionError);
    const err = caught as TransitionError;
    expect(err.machine).toBe("Traffic");
    expect(err.from).toBe("Broken");
    expect(err.to).toBe("Green");
    expect(err.message).toBe("Traffic: cannot move from Broken to Green");
  });
});

describe("nextStates", () => {
  it.each([
    ["Red", ["Green"]],
    ["Green", ["Amber"]],
    ["Amber", ["Red", "Broken"]],
    ["Broken", []],
  ] as [Light, Light[]][])("from %s: %j", (from, expected) => {
    expect(nextStates(traffic, from)).toEqual(expected);
  });
});
