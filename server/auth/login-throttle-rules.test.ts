/**
 * Password guessing, the rules alone (login-throttle-rules.ts): one row per rule, time passed
 * in. The throttle that stores them in the database, across servers, is tests/login-throttle;
 * the cookie helpers of the sign-in guard are pure too and tested here.
 */
import { describe, expect, it } from "vitest";
import { DEFAULT_LOGIN_THROTTLE as O, freshEntry, throttleKeys, waitMs, withAttempt, withFailure, withOutcome, type ThrottleEntry } from "./login-throttle-rules";
import { isLoopbackHost, secureCookies } from "./sign-in-guard";

const entry = (over: Partial<ThrottleEntry> = {}): ThrottleEntry => ({ failures: 0, lastFailure: 0, lockedUntil: 0, pending: 0, pendingSince: 0, ...over });
const T = 10_000_000;

describe("login throttle rules", () => {
  it("keys: the account (case-insensitive, trimmed) then the address; blanks count for nothing", () => {
    expect(throttleKeys({ account: " Alice ", address: "10.0.0.1" })).toEqual([
      ["account", "alice"],
      ["address", "10.0.0.1"],
    ]);
    expect(throttleKeys({ account: " ", address: "" })).toEqual([]);
    expect(throttleKeys({ account: "x".repeat(1000) })[0]![1]).toHaveLength(256);
  });

  it.each([
    ["no entry", "account", null, 0],
    ["failures under the limit", "account", entry({ failures: O.accountLimit - 1, lastFailure: T }), 0],
    ["locked: until the lock ends", "account", entry({ failures: O.accountLimit, lastFailure: T, lockedUntil: T + 5000 }), 5000],
    ["in flight take the tries left", "account", entry({ failures: O.accountLimit - 2, lastFailure: T, pending: 2, pendingSince: T }), 1000],
    ["one try after a lock ends, even at the limit", "account", entry({ failures: O.accountLimit + 3, lastFailure: T - 1, lockedUntil: T }), 0],
    ["...but not two at once", "account", entry({ failures: O.accountLimit + 3, lastFailure: T - 1, lockedUntil: T, pending: 1, pendingSince: T }), 1000],
    ["an address has its own, higher limit", "address", entry({ failures: O.accountLimit, lastFailure: T }), 0],
  ] as const)("wait: %s", (_rule, kind, e, wait) => {
    expect(waitMs(kind, e, T, O)).toBe(wait);
  });

  it("failures lock at the limit, for a delay doubling with each further failure, up to the maximum", () => {
    let e: ThrottleEntry | null = null;
    const locks: (number | null)[] = [];
    for (let i = 0; i < O.accountLimit + 7; i++) {
      const r = withFailure("account", withAttempt(e, T), T, O);
      e = r.entry;
      locks.push(r.lockMs);
    }
    expect(locks.slice(0, O.accountLimit - 1)).toEqual(Array(O.accountLimit - 1).fill(null));
    expect(locks.slice(O.accountLimit - 1)).toEqual([30_000, 60_000, 120_000, 240_000, 480_000, 900_000, 900_000, 900_000]);
    expect(e).toMatchObject({ pending: 0, failures: O.accountLimit + 7, lockedUntil: T + 900_000 });
  });

  it("an attempt in flight counts until its outcome; its start is kept while others join", () => {
    const one = withAttempt(null, T);
    const two = withAttempt(one, T + 5);
    expect(two).toMatchObject({ pending: 2, pendingSince: T });
    expect(withOutcome(withOutcome(two))).toMatchObject({ pending: 0 });
    expect(withOutcome(entry())).toEqual(entry());
  });

  it.each([
    ["kept within the window", entry({ failures: 3, lastFailure: T - O.windowMs + 1 }), entry({ failures: 3, lastFailure: T - O.windowMs + 1 })],
    ["forgotten a quiet window after the last failure", entry({ failures: 3, lastFailure: T - O.windowMs }), null],
    ["counted from the lock's end", entry({ failures: 5, lastFailure: T - O.windowMs - 1, lockedUntil: T - O.windowMs + 1 }), entry({ failures: 5, lastFailure: T - O.windowMs - 1, lockedUntil: T - O.windowMs + 1 })],
    ["forgotten, but an attempt in flight stays", entry({ failures: 3, lastFailure: T - O.windowMs, pending: 1, pendingSince: T - 1 }), entry({ pending: 1, pendingSince: T - 1 })],
    ["an attempt whose outcome never came stops counting", entry({ pending: 2, pendingSince: T - O.pendingTimeoutMs - 1 }), null],
  ] as const)("fresh: %s", (_rule, e, fresh) => {
    expect(freshEntry(e, T, O)).toEqual(fresh);
  });

  it("decides cookie security from the public URL or the server's own TLS, and knows loopback hosts", () => {
    expect(secureCookies(undefined)).toBe(false);
    expect(secureCookies("http://drover.example:3000")).toBe(false);
    expect(secureCookies("https://drover.example")).toBe(true);
    // The server on TLS itself (issue 23): its port only ever serves the console over https.
    expect(secureCookies(undefined, true)).toBe(true);
    expect(secureCookies("http://drover.example:3000", true)).toBe(true);
    for (const host of ["localhost", "app.localhost", "127.0.0.1", "127.1.2.3", "[::1]"]) expect(isLoopbackHost(host)).toBe(true);
    for (const host of ["drover.test", "10.0.0.1", "[fd00::1]", "localhost.example.com"]) expect(isLoopbackHost(host)).toBe(false);
  });
});
