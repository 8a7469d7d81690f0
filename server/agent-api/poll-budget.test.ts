import { describe, expect, it } from "vitest";
import { Arrivals } from "./poll-budget";

describe("Arrivals: which polls tell the other servers", () => {
  it("a key's first poll, and its first after the window, are news; the polls between are not", () => {
    const a = new Arrivals(1_000, 10);
    expect(a.arrive("device:1", 0)).toBe(true);
    expect(a.arrive("device:1", 500)).toBe(false);
    expect(a.arrive("device:1", 1_400)).toBe(false); // within the window of the last poll, not the first
    expect(a.arrive("device:1", 2_401)).toBe(true);
    expect(a.arrive("device:2", 2_401)).toBe(true);
  });

  it("keeps at most maxEntries keys, forgetting the stalest (which then count as news again)", () => {
    const a = new Arrivals(60_000, 2);
    a.arrive("a", 0);
    a.arrive("b", 1);
    a.arrive("a", 2); // a is the freshest now
    a.arrive("c", 3); // b, the stalest, goes
    expect(a.arrive("a", 4)).toBe(false);
    expect(a.arrive("c", 5)).toBe(false);
    expect(a.arrive("b", 6)).toBe(true);
  });
});
