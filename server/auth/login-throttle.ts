/**
 * Password-guessing throttle, shared by every way in that checks a password: the operator
 * token route (`auth.createToken`, REST `POST /api/v1/auth/token`) and the console's sign-in
 * (better-auth `/sign-in/username`, `/sign-in/email`).
 *
 * It counts failed attempts per account (the name tried, whether or not it exists, so
 * guessing names costs the same as guessing passwords) and per client address. A key that
 * reaches its limit locks for a delay that doubles with each further failure; while locked,
 * every attempt is refused before the password hash is computed, the right password too. A
 * success clears the account's count (not the address's: one valid account must not reset an
 * address that is guessing others). Failures are forgotten after a quiet window.
 *
 * Attempts in flight count against the limit too, so a burst of parallel guesses cannot all
 * pass the check before the first failure is recorded. In memory, per process, bounded.
 */
import { AppError } from "../errors";

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
  /** Entries kept per map (accounts, addresses); the stalest are dropped past it. */
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

interface Entry {
  failures: number;
  lastFailure: number;
  lockedUntil: number;
  pending: number;
  pendingSince: number;
}

type Kind = "account" | "address";

const MAX_KEY_LENGTH = 256;

/** Account names are case-insensitive (better-auth and Drover lowercase them). */
export function accountKey(name: string): string {
  return name.trim().toLowerCase().slice(0, MAX_KEY_LENGTH);
}

export class LoginThrottle {
  readonly options: LoginThrottleOptions;
  private readonly maps: Record<Kind, Map<string, Entry>> = { account: new Map(), address: new Map() };

  /**
   * `clock`: milliseconds now; each method also takes `now` for tests of the rules alone.
   * `onLock`: told each time a key locks (for the log: someone is guessing).
   */
  constructor(
    options: Partial<LoginThrottleOptions> = {},
    private readonly clock: () => number = Date.now,
    private readonly onLock?: (lock: { kind: "account" | "address"; key: string; failures: number; seconds: number }) => void,
  ) {
    this.options = { ...DEFAULT_LOGIN_THROTTLE, ...options };
  }

  /**
   * Before the password is checked: refuses with RATE_LIMITED (and how long to wait) when the
   * account or the address is locked, or when attempts in flight already reach its limit.
   * Otherwise the attempt counts as in flight until `failed`, `succeeded` or `settled`.
   */
  begin(attempt: LoginAttempt, now = this.clock()): void {
    let waitMs = 0;
    for (const [kind, key] of this.keys(attempt)) {
      const entry = this.fresh(kind, key, now);
      if (!entry) continue;
      if (entry.lockedUntil > now) waitMs = Math.max(waitMs, entry.lockedUntil - now);
      // Tries left before the lock (one after each lock ends) are taken by attempts in flight.
      else if (entry.pending >= Math.max(1, this.limit(kind) - entry.failures)) waitMs = Math.max(waitMs, 1000);
    }
    if (waitMs > 0) {
      const seconds = Math.ceil(waitMs / 1000);
      throw new AppError("RATE_LIMITED", `too many failed sign-in attempts; try again in ${seconds} s`, seconds);
    }
    for (const [kind, key] of this.keys(attempt)) {
      const entry = this.fresh(kind, key, now) ?? this.create(kind, key);
      if (entry.pending === 0) entry.pendingSince = now;
      entry.pending++;
      this.touch(kind, key, entry, now);
    }
  }

  /** A wrong name or password: counts against both keys, locking any that reach the limit. */
  failed(attempt: LoginAttempt, now = this.clock()): void {
    for (const [kind, key] of this.keys(attempt)) {
      const entry = this.fresh(kind, key, now) ?? this.create(kind, key);
      if (entry.pending > 0) entry.pending--;
      entry.failures++;
      entry.lastFailure = now;
      const over = entry.failures - this.limit(kind);
      if (over >= 0) {
        const lock = Math.min(this.options.maxLockMs, this.options.baseLockMs * 2 ** Math.min(over, 30));
        entry.lockedUntil = Math.max(entry.lockedUntil, now + lock);
        this.onLock?.({ kind, key, failures: entry.failures, seconds: Math.ceil(lock / 1000) });
      }
      this.touch(kind, key, entry, now);
    }
  }

  /** The right password: the account starts over; the address only stops counting it in flight. */
  succeeded(attempt: LoginAttempt, now = this.clock()): void {
    if (attempt.account !== undefined) this.maps.account.delete(accountKey(attempt.account));
    this.settled({ address: attempt.address }, now);
  }

  /** An attempt that neither failed nor succeeded on the password (a malformed request). */
  settled(attempt: LoginAttempt, now = this.clock()): void {
    for (const [kind, key] of this.keys(attempt)) {
      const entry = this.fresh(kind, key, now);
      if (entry && entry.pending > 0) entry.pending--;
    }
  }

  /** Entries held, for tests and to prove the bound. */
  size(): { accounts: number; addresses: number } {
    return { accounts: this.maps.account.size, addresses: this.maps.address.size };
  }

  private limit(kind: Kind): number {
    return kind === "account" ? this.options.accountLimit : this.options.addressLimit;
  }

  private keys(attempt: LoginAttempt): [Kind, string][] {
    const keys: [Kind, string][] = [];
    if (attempt.account !== undefined && attempt.account.trim() !== "") keys.push(["account", accountKey(attempt.account)]);
    if (attempt.address !== undefined && attempt.address !== "") keys.push(["address", attempt.address.slice(0, MAX_KEY_LENGTH)]);
    return keys;
  }

  private create(kind: Kind, key: string): Entry {
    const entry: Entry = { failures: 0, lastFailure: 0, lockedUntil: 0, pending: 0, pendingSince: 0 };
    this.maps[kind].set(key, entry);
    return entry;
  }

  /** The key's entry with forgotten failures and stale in-flight attempts cleared; undefined when nothing is left. */
  private fresh(kind: Kind, key: string, now: number): Entry | undefined {
    const map = this.maps[kind];
    const entry = map.get(key);
    if (!entry) return undefined;
    if (entry.pending > 0 && now - entry.pendingSince > this.options.pendingTimeoutMs) entry.pending = 0;
    if (this.quiet(entry, now)) {
      entry.failures = 0;
      entry.lockedUntil = 0;
      if (entry.pending === 0) {
        map.delete(key);
        return undefined;
      }
    }
    return entry;
  }

  /** Quiet: no failure for a whole window after the last failure and after the lock ended. */
  private quiet(entry: Entry, now: number): boolean {
    return now - Math.max(entry.lastFailure, entry.lockedUntil) >= this.options.windowMs;
  }

  /** Moves the key to the map's end (so the map's order is least recently used first) and keeps the bound. */
  private touch(kind: Kind, key: string, entry: Entry, now: number): void {
    const map = this.maps[kind];
    map.delete(key);
    map.set(key, entry);
    if (map.size <= this.options.maxEntries) return;
    for (const [k, e] of map) {
      if (e.pending === 0 && this.quiet(e, now)) map.delete(k);
    }
    // Still full of live keys (a guessing flood from many addresses): drop the stalest tenth.
    if (map.size > this.options.maxEntries) {
      let drop = map.size - Math.floor(this.options.maxEntries * 0.9);
      for (const k of map.keys()) {
        if (drop-- <= 0) break;
        map.delete(k);
      }
    }
  }
}
