import { describe, expect, it } from "vitest";
import { DEFAULT_TIMING } from "./agent";
import { seededRandom } from "./simulation";
import { Backoff, HEARTBEAT_JITTER, isoTime, jittered, linkedSignal, sleep, Waker } from "./timing";

describe("Backoff (exponential, full jitter)", () => {
  it("doubles the ceiling from base up to the cap", () => {
    const backoff = new Backoff({ baseMs: 1_000, capMs: 30_000, random: () => 0.5 });
    const ceilings: number[] = [];
    for (let i = 0; i < 8; i++) {
      ceilings.push(backoff.ceiling());
      backoff.next();
    }
    expect(ceilings).toEqual([1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000, 30_000]);
  });

  it("every delay lies in [0, ceiling], at both ends of the random range", () => {
    for (const random of [() => 0, () => 0.999999, Math.random]) {
      const backoff = new Backoff({ baseMs: 1_000, capMs: 30_000, random });
      for (let attempt = 0; attempt < 50; attempt++) {
        const ceiling = backoff.ceiling();
        const delay = backoff.next();
        expect(delay).toBeGreaterThanOrEqual(0);
        expect(delay).toBeLessThanOrEqual(ceiling);
        expect(delay).toBeLessThanOrEqual(30_000);
      }
    }
  });

  it("is spread out, not lock-step: many agents at the same attempt wait different times", () => {
    const delays = new Set<number>();
    for (let agent = 0; agent < 200; agent++) {
      const backoff = new Backoff({ baseMs: 1_000, capMs: 30_000 });
      for (let i = 0; i < 4; i++) backoff.next();
      delays.add(backoff.next());
    }
    expect(delays.size).toBeGreaterThan(150);
    const values = [...delays];
    expect(Math.min(...values)).toBeLessThan(4_000);
    expect(Math.max(...values)).toBeGreaterThan(12_000);
  });

  it("starts over after reset", () => {
    const backoff = new Backoff({ baseMs: 100, capMs: 1_000, random: () => 0.999 });
    for (let i = 0; i < 10; i++) backoff.next();
    expect(backoff.ceiling()).toBe(1_000);
    backoff.reset();
    expect(backoff.attempts).toBe(0);
    expect(backoff.next()).toBeLessThanOrEqual(100);
  });

  it("does not overflow after very many attempts", () => {
    const backoff = new Backoff({ baseMs: 1_000, capMs: 30_000, random: () => 0.5 });
    for (let i = 0; i < 5_000; i++) backoff.next();
    expect(backoff.next()).toBe(15_000);
  });
});

describe("jittered", () => {
  it("stays within ±fraction", () => {
    expect(jittered(10_000, 0.2, () => 0)).toBe(8_000);
    expect(jittered(10_000, 0.2, () => 0.999999)).toBe(12_000);
    expect(jittered(10_000, 0, () => 0)).toBe(10_000);
  });
});

describe("the heartbeat schedule after a fleet-wide report", () => {
  it("is spread by default: 1,000 agents that reported at the same instant next heartbeat across the whole ±20% window", () => {
    expect(DEFAULT_TIMING.heartbeatJitter).toBe(HEARTBEAT_JITTER);
    const intervalMs = 5_000;
    // What each agent's heartbeat loop draws after the answer (agent.ts heartbeats()), each
    // with its own seeded stream as in the simulator.
    const next = Array.from({ length: 1_000 }, (_, i) => jittered(intervalMs, DEFAULT_TIMING.heartbeatJitter, seededRandom(i + 1)));
    expect(Math.min(...next)).toBeGreaterThanOrEqual(4_000);
    expect(Math.max(...next)).toBeLessThanOrEqual(6_000);
    // Most of the window is used: the herd is spread, not shifted.
    expect(Math.min(...next)).toBeLessThan(4_100);
    expect(Math.max(...next)).toBeGreaterThan(5_900);
    // Per 100 ms window: 50 expected over the 20 windows; in step it would be all 1,000 in one.
    const perWindow = new Map<number, number>();
    for (const at of next) perWindow.set(Math.floor(at / 100), (perWindow.get(Math.floor(at / 100)) ?? 0) + 1);
    expect(perWindow.size).toBeGreaterThanOrEqual(20);
    expect(Math.max(...perWindow.values())).toBeLessThan(100);
  });
});

describe("sleep and Waker", () => {
  it("sleep ends early on abort", async () => {
    const controller = new AbortController();
    const started = Date.now();
    setTimeout(() => controller.abort(), 20);
    await sleep(10_000, controller.signal);
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it("a wake cuts the sleep short; a wake with nobody asleep is kept for the next sleep", async () => {
    const waker = new Waker();
    setTimeout(() => waker.wake(), 20);
    expect(await waker.sleep(10_000)).toBe(true);
    waker.wake();
    const started = Date.now();
    expect(await waker.sleep(10_000)).toBe(true);
    expect(Date.now() - started).toBeLessThan(100);
    expect(await waker.sleep(10)).toBe(false);
  });

  it("the signal aborting ends the sleep with false; a wake after it is kept for the next sleep", async () => {
    const waker = new Waker();
    const controller = new AbortController();
    const started = Date.now();
    setTimeout(() => controller.abort(), 20);
    expect(await waker.sleep(10_000, controller.signal)).toBe(false);
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(await waker.sleep(10_000, controller.signal)).toBe(false); // already aborted
    waker.wake();
    expect(await waker.sleep(10_000, controller.signal)).toBe(true); // the pending wake first
  });

  it("a wake ends the sleep without an AbortController (whose abort() builds a DOMException)", async () => {
    const Original = globalThis.AbortController;
    let made = 0;
    globalThis.AbortController = class extends Original {
      constructor() {
        super();
        made++;
      }
    };
    try {
      const waker = new Waker();
      const parent = new Original();
      setTimeout(() => waker.wake(), 10);
      expect(await waker.sleep(10_000, parent.signal)).toBe(true);
      expect(made).toBe(0);
      expect(parent.signal.aborted).toBe(false);
    } finally {
      globalThis.AbortController = Original;
    }
  });
});

describe("linkedSignal", () => {
  it("aborts with a parent, and says it was not a timeout", () => {
    const parent = new AbortController();
    const linked = linkedSignal([parent.signal, undefined], 10_000);
    parent.abort();
    expect(linked.signal.aborted).toBe(true);
    expect(linked.timedOut()).toBe(false);
    linked.dispose();
  });

  it("aborts on its timeout", async () => {
    const linked = linkedSignal([new AbortController().signal], 20);
    await sleep(200, linked.signal);
    expect(linked.signal.aborted).toBe(true);
    expect(linked.timedOut()).toBe(true);
    linked.dispose();
  });

  it("is aborted at once when a parent already is", () => {
    const parent = new AbortController();
    parent.abort();
    expect(linkedSignal([parent.signal]).signal.aborted).toBe(true);
  });

  it("after dispose, neither the parent nor the timer touches it", async () => {
    const parent = new AbortController();
    const linked = linkedSignal([parent.signal], 20);
    linked.dispose();
    await sleep(60);
    parent.abort();
    expect(linked.signal.aborted).toBe(false);
  });
});

describe("isoTime", () => {
  it("is toISOString's text, for numbers and Dates, in and out of years 0–9999, and throws its RangeError", () => {
    const times = [0, 5, -1, Date.now(), 951_782_400_000, -62_198_755_200_000, -62_198_755_200_001, 253_402_300_799_999, 253_402_300_800_000, 8.64e15, -8.64e15];
    for (let i = 0; i < 1_000; i++) times.push(Math.round((Math.random() - 0.5) * 2 * 8.64e15));
    for (const t of times) {
      expect(isoTime(t)).toBe(new Date(t).toISOString());
      expect(isoTime(new Date(t))).toBe(new Date(t).toISOString());
    }
    expect(() => isoTime(Number.NaN)).toThrow(RangeError);
    expect(() => isoTime(new Date("not a date"))).toThrow(RangeError);
    expect(isoTime()).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });
});
