import { describe, expect, it } from "vitest";
import { Arrivals, Deadlines, PollBudget, type Timed } from "./poll-budget";

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

describe("PollBudget: places for held polls", () => {
  const entry = (log: string[], name: string) => ({ supersede: () => log.push(name) });

  it("past the per-key cap the key's oldest is superseded and gives its place back", () => {
    const log: string[] = [];
    const b = new PollBudget(10, 2);
    const [a, c, d] = [entry(log, "a"), entry(log, "c"), entry(log, "d")];
    b.admit("k", a);
    b.admit("k", c);
    b.admit("k", d);
    expect(log).toEqual(["a"]);
    expect(b.size).toBe(2);
    expect(b.release("k", a)).toBe(false); // already out
    expect(b.release("k", c)).toBe(true);
    expect(b.release("k", d)).toBe(true);
    expect(b.size).toBe(0);
  });

  it("past the global budget a new key is refused with 429; supersedeAll answers every entry of a key", () => {
    const log: string[] = [];
    const b = new PollBudget(2, 2);
    b.admit("x", entry(log, "x1"));
    b.admit("x", entry(log, "x2"));
    expect(() => b.admit("y", entry(log, "y"))).toThrow(/limit/);
    b.supersedeAll("x");
    expect(log).toEqual(["x1", "x2"]);
    expect(b.size).toBe(0);
  });
});

describe("Deadlines: one timer for every held poll", () => {
  it("expires each item at its deadline, in order across wait lengths, and skips answered ones", async () => {
    const expired: string[] = [];
    const d = new Deadlines<Timed & { name: string; done: boolean }>();
    const item = (name: string, waitMs: number) => {
      const it = { name, done: false, deadline: Date.now() + waitMs, expire: () => expired.push(name) };
      d.add(it, waitMs);
      return it;
    };
    item("long", 120);
    const answered = item("answered", 40);
    item("short", 40);
    item("shortest", 10);
    answered.done = true;
    await new Promise((r) => setTimeout(r, 80));
    expect(expired).toEqual(["shortest", "short"]);
    await new Promise((r) => setTimeout(r, 80));
    expect(expired).toEqual(["shortest", "short", "long"]);
    expect(d.queued).toBe(0);
  });
});
