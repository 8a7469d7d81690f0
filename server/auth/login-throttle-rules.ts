/**
 * Password guessing, the rules alone (pure: no database, time passed in). The throttle
 * (login-throttle.ts) reads a key's entry, asks these functions what the entry becomes, and
 * writes it back only if no other server changed it meanwhile.
 *
 * Failed attempts count per account (the name tried, whether or not it exists, so guessing
 * names costs the same as guessing passwords) and per client address. A key that reaches its
 * limit locks for a delay that doubles with each further failure; while locked, every attempt
 * is refused before the password hash is computed, the right password too. A success clears
 * the account's count (not the address's: one valid account must not reset an address that is
 * guessing others). Failures are forgotten after a quiet window. Attempts in flight count
 * against the limit too, so a burst of parallel guesses cannot all pass the check before the
 * first failure is recorded.
 */

export interface LoginThrottleOptions {
  /** Failures an account may have before it locks. */
  accountLimit: number;
  /** Failures one client address may have (over all accounts) before it locks. */
  addressLimit: number;
  /** Failures are forgotten once a key has been quiet (no failure, no lock) this long. */
  windowMs: number;
  /** The first lock; each further failure doubles it. */
  baseLockMs: number;
  maxLockMs: number;
  /** Entries kept per kind (accounts, addresses); the stalest are dropped past it. */
  maxEntries: number;
  /** An attempt whose outcome never came (a crashed request) stops counting after this. */
  pendingTimeoutMs: number;
}

/**
 * What a user of a console expects: a few typos are free, a guessing loop is not. 5 failures
 * lock an account for 30 s, then 1, 2, 4, 8 min, then 15 min a try; an address gets 20
 * (several people behind one NAT). 15 quiet minutes forget everything.
 */
export const DEFAULT_LOGIN_THROTTLE: LoginThrottleOptions = {
  accountLimit: 5,
  addressLimit: 20,
  windowMs: 15 * 60_000,
  baseLockMs: 30_000,
  maxLockMs: 15 * 60_000,
  maxEntries: 10_000,
  pendingTimeoutMs: 60_000,
};

/** Who is trying: the account name tried and the client's address (either may be unknown). */
export interface LoginAttempt {
  account?: string | undefined;
  address?: string | undefined;
}

export type ThrottleKind = "account" | "address";

/** One key's counts; times in milliseconds (0: never). */
export interface ThrottleEntry {
  failures: number;
  lastFailure: number;
  lockedUntil: number;
  pending: number;
  pendingSince: number;
}

const EMPTY: ThrottleEntry = { failures: 0, lastFailure: 0, lockedUntil: 0, pending: 0, pendingSince: 0 };

const MAX_KEY_LENGTH = 256;

/** Account names are case-insensitive (better-auth and Drover lowercase them). */
export function accountKey(name: string): string {
  return name.trim().toLowerCase().slice(0, MAX_KEY_LENGTH);
}

/** The keys an attempt counts against: its account, then its address (always in this order). */
export function throttleKeys(attempt: LoginAttempt): [ThrottleKind, string][] {
  const keys: [ThrottleKind, string][] = [];
  if (attempt.account !== undefined && attempt.account.trim() !== "") keys.push(["account", accountKey(attempt.account)]);
  if (attempt.address !== undefined && attempt.address !== "") keys.push(["address", attempt.address.slice(0, MAX_KEY_LENGTH)]);
  return keys;
}

export function limitOf(kind: ThrottleKind, options: LoginThrottleOptions): number {
  return kind === "account" ? options.accountLimit : options.addressLimit;
}

/** The moment from which a quiet window is counted: the last failure or the lock's end. */
export const quietFrom = (e: ThrottleEntry) => Math.max(e.lastFailure, e.lockedUntil);

/** The entry with stale in-flight attempts and forgotten failures cleared; null when nothing is left. */
export function freshEntry(entry: ThrottleEntry | null, now: number, options: LoginThrottleOptions): ThrottleEntry | null {
  if (!entry) return null;
  let e = entry;
  if (e.pending > 0 && now - e.pendingSince > options.pendingTimeoutMs) e = { ...e, pending: 0 };
  if (now - quietFrom(e) >= options.windowMs) {
    if (e.pending === 0) return null;
    e = { ...e, failures: 0, lastFailure: 0, lockedUntil: 0 };
  }
  return e;
}

/** How long an attempt must wait for this key (0: it may go). `entry` is fresh. */
export function waitMs(kind: ThrottleKind, entry: ThrottleEntry | null, now: number, options: LoginThrottleOptions): number {
  if (!entry) return 0;
  if (entry.lockedUntil > now) return entry.lockedUntil - now;
  // Tries left before the lock (one after each lock ends) are taken by attempts in flight.
  if (entry.pending >= Math.max(1, limitOf(kind, options) - entry.failures)) return 1000;
  return 0;
}

/** An attempt begins: it counts as in flight. */
export function withAttempt(entry: ThrottleEntry | null, now: number): ThrottleEntry {
  const e = entry ?? EMPTY;
  return { ...e, pending: e.pending + 1, pendingSince: e.pending === 0 ? now : e.pendingSince };
}

/** A wrong name or password; `lockMs` when the key locks with it. */
export function withFailure(kind: ThrottleKind, entry: ThrottleEntry | null, now: number, options: LoginThrottleOptions): { entry: ThrottleEntry; lockMs: number | null } {
  const e = entry ?? EMPTY;
  const failures = e.failures + 1;
  const next = { ...e, pending: Math.max(0, e.pending - 1), failures, lastFailure: now };
  const over = failures - limitOf(kind, options);
  if (over < 0) return { entry: next, lockMs: null };
  const lockMs = Math.min(options.maxLockMs, options.baseLockMs * 2 ** Math.min(over, 30));
  return { entry: { ...next, lockedUntil: Math.max(e.lockedUntil, now + lockMs) }, lockMs };
}

/** An attempt ended without a failure to count (a success for the address, a malformed request). */
export function withOutcome(entry: ThrottleEntry | null): ThrottleEntry | null {
  if (!entry || entry.pending === 0) return entry;
  return { ...entry, pending: entry.pending - 1 };
}
