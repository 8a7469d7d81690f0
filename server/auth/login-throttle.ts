/**
 * Password-guessing throttle, shared by every way in that checks a password: the operator
 * token route (`auth.createToken`, REST `POST /api/v1/auth/token`) and the console's sign-in
 * (better-auth `/sign-in/username`, `/sign-in/email`). The rules are login-throttle-rules.ts.
 *
 * The counts live in the database (`LoginThrottleEntry`, one row per account and per address),
 * so every server sharing it counts the same guesses: N servers allow no more than one (issue
 * 22). Each change reads the key's row, applies a rule, and writes the result with one UPDATE
 * guarded by the row's `version` (a new key: one INSERT that a concurrent one makes fail); a
 * write that finds the row changed reads it again and decides again. So two attempts on two
 * servers never both take the last try, without any lock beyond the one row's own write.
 */
import type { Db, Prisma } from "../db";
import { AppError } from "../errors";
import { executeRaw } from "../lib/dialect-sql";
import {
  accountKey,
  DEFAULT_LOGIN_THROTTLE,
  freshEntry,
  quietFrom,
  throttleKeys,
  waitMs,
  withAttempt,
  withFailure,
  withOutcome,
  type LoginAttempt,
  type LoginThrottleOptions,
  type ThrottleEntry,
  type ThrottleKind,
} from "./login-throttle-rules";

export { DEFAULT_LOGIN_THROTTLE, accountKey, type LoginAttempt, type LoginThrottleOptions } from "./login-throttle-rules";

/** Reads and guarded writes of one key before giving up (each failed write means another server's write succeeded). */
const MAX_TRIES = 50;

interface Read {
  entry: ThrottleEntry;
  version: number;
}

const entrySelect = { failures: true, lastFailure: true, lockedUntil: true, pending: true, pendingSince: true, version: true } satisfies Prisma.LoginThrottleEntrySelect;

export type LockNotice = { kind: ThrottleKind; key: string; failures: number; seconds: number };

export class LoginThrottle {
  readonly options: LoginThrottleOptions;
  private created = 0;

  /**
   * `clock`: milliseconds now; each method also takes `now` for tests of time alone.
   * `onLock`: told each time a key locks (for the log: someone is guessing).
   */
  constructor(
    private readonly db: Db,
    options: Partial<LoginThrottleOptions> = {},
    private readonly clock: () => number = Date.now,
    private readonly onLock?: (lock: LockNotice) => void,
    private readonly onGiveUp?: (what: string) => void,
  ) {
    this.options = { ...DEFAULT_LOGIN_THROTTLE, ...options };
  }

  /**
   * Before the password is checked: refuses with RATE_LIMITED (and how long to wait) when the
   * account or the address is locked, or when attempts in flight already reach its limit.
   * Otherwise the attempt counts as in flight until `failed`, `succeeded` or `settled`.
   */
  async begin(attempt: LoginAttempt, now = this.clock()): Promise<void> {
    const taken: [ThrottleKind, string][] = [];
    for (const [kind, key] of throttleKeys(attempt)) {
      let wait = 0;
      const done = await this.change(kind, key, now, (e) => {
        wait = waitMs(kind, e, now, this.options);
        return wait > 0 ? undefined : withAttempt(e, now);
      });
      if (!done) wait = Math.max(wait, 1000);
      if (wait > 0) {
        // Nothing of this attempt stays counted; the answer names the longest wait of its keys.
        for (const [k, kk] of taken) await this.change(k, kk, now, (e) => withOutcome(e));
        for (const [k, kk] of throttleKeys(attempt)) wait = Math.max(wait, waitMs(k, freshEntry((await this.read(k, kk))?.entry ?? null, now, this.options), now, this.options));
        const seconds = Math.ceil(wait / 1000);
        throw new AppError("RATE_LIMITED", `too many failed sign-in attempts; try again in ${seconds} s`, seconds);
      }
      taken.push([kind, key]);
    }
  }

  /** A wrong name or password: counts against both keys, locking any that reach the limit. */
  async failed(attempt: LoginAttempt, now = this.clock()): Promise<void> {
    for (const [kind, key] of throttleKeys(attempt)) {
      let result: ReturnType<typeof withFailure> | null = null;
      const done = await this.change(kind, key, now, (e) => (result = withFailure(kind, e, now, this.options)).entry);
      const locked = result as ReturnType<typeof withFailure> | null;
      if (done && locked?.lockMs) this.onLock?.({ kind, key, failures: locked.entry.failures, seconds: Math.ceil(locked.lockMs / 1000) });
    }
  }

  /** The right password: the account starts over; the address only stops counting it in flight. */
  async succeeded(attempt: LoginAttempt, now = this.clock()): Promise<void> {
    if (attempt.account !== undefined && attempt.account.trim() !== "") {
      await executeRaw(this.db, `DELETE FROM "LoginThrottleEntry" WHERE "kind" = 'account' AND "key" = ?`, accountKey(attempt.account));
    }
    await this.settled({ address: attempt.address }, now);
  }

  /** An attempt that neither failed nor succeeded on the password (a malformed request). */
  async settled(attempt: LoginAttempt, now = this.clock()): Promise<void> {
    for (const [kind, key] of throttleKeys(attempt)) await this.change(kind, key, now, (e) => withOutcome(e));
  }

  /** Rows held, for tests and to prove the bound. */
  async size(): Promise<{ accounts: number; addresses: number }> {
    const [accounts, addresses] = await Promise.all([
      this.db.loginThrottleEntry.count({ where: { kind: "account" } }),
      this.db.loginThrottleEntry.count({ where: { kind: "address" } }),
    ]);
    return { accounts, addresses };
  }

  private async read(kind: ThrottleKind, key: string): Promise<Read | null> {
    const row = await this.db.loginThrottleEntry.findUnique({ where: { kind_key: { kind, key } }, select: entrySelect });
    if (!row) return null;
    const ms = (d: Date) => d.getTime();
    return {
      entry: { failures: row.failures, lastFailure: ms(row.lastFailure), lockedUntil: ms(row.lockedUntil), pending: row.pending, pendingSince: ms(row.pendingSince) },
      version: row.version,
    };
  }

  /**
   * Read the key, let `decide` say what its fresh entry becomes (undefined: leave it as it is),
   * write that if the row is still the one read; else again. False when it never got through.
   */
  private async change(kind: ThrottleKind, key: string, now: number, decide: (fresh: ThrottleEntry | null) => ThrottleEntry | null | undefined): Promise<boolean> {
    for (let i = 0; i < MAX_TRIES; i++) {
      const read = await this.read(kind, key);
      const next = decide(freshEntry(read?.entry ?? null, now, this.options));
      if (next === undefined || (await this.write(kind, key, read, next, now))) return true;
    }
    this.onGiveUp?.(`${kind} ${key}: ${MAX_TRIES} writes lost to other servers' writes`);
    return false;
  }

  /**
   * One guarded statement: true when it applied to the row as it was read. Plain SQL, each
   * statement its own transaction (Prisma's updateMany and deleteMany may open one around
   * theirs: on SQLite that would hold the file's write lock across an await).
   */
  private async write(kind: ThrottleKind, key: string, read: Read | null, next: ThrottleEntry | null, now: number): Promise<boolean> {
    if (next === null) {
      if (!read) return true;
      return (await executeRaw(this.db, `DELETE FROM "LoginThrottleEntry" WHERE "kind" = ? AND "key" = ? AND "version" = ?`, kind, key, read.version)) === 1;
    }
    const values = [next.failures, new Date(next.lastFailure), new Date(next.lockedUntil), next.pending, new Date(next.pendingSince), new Date(quietFrom(next)), new Date(now)];
    if (read) {
      const sql = `UPDATE "LoginThrottleEntry" SET "failures" = ?, "lastFailure" = ?, "lockedUntil" = ?, "pending" = ?, "pendingSince" = ?, "quietFrom" = ?, "touchedAt" = ?, "version" = "version" + 1
        WHERE "kind" = ? AND "key" = ? AND "version" = ?`;
      return (await executeRaw(this.db, sql, ...values, kind, key, read.version)) === 1;
    }
    // A key another server created meanwhile: nothing inserted, read again.
    const sql = `INSERT INTO "LoginThrottleEntry" ("failures", "lastFailure", "lockedUntil", "pending", "pendingSince", "quietFrom", "touchedAt", "kind", "key", "version")
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 0) ON CONFLICT ("kind", "key") DO NOTHING`;
    if ((await executeRaw(this.db, sql, ...values, kind, key)) !== 1) return false;
    if (++this.created % Math.max(1, Math.floor(this.options.maxEntries / 100)) === 0) await this.prune(kind, now);
    return true;
  }

  /**
   * The bound: rows with nothing left to count go, then, past `maxEntries` live ones (a
   * guessing flood from many names or addresses), the stalest tenth. Run every
   * maxEntries / 100 new rows a server writes, so the table holds about maxEntries per kind.
   */
  private async prune(kind: ThrottleKind, now: number): Promise<void> {
    const t = this.db.loginThrottleEntry;
    await executeRaw(
      this.db,
      `DELETE FROM "LoginThrottleEntry" WHERE "kind" = ? AND "quietFrom" <= ? AND ("pending" = 0 OR "pendingSince" < ?)`,
      kind,
      new Date(now - this.options.windowMs),
      new Date(now - this.options.pendingTimeoutMs),
    );
    const keep = Math.floor(this.options.maxEntries * 0.9);
    if ((await t.count({ where: { kind } })) <= this.options.maxEntries) return;
    const [cutoff] = await t.findMany({ where: { kind }, orderBy: { touchedAt: "desc" }, skip: keep, take: 1, select: { touchedAt: true } });
    if (cutoff) await executeRaw(this.db, `DELETE FROM "LoginThrottleEntry" WHERE "kind" = ? AND "touchedAt" <= ?`, kind, cutoff.touchedAt);
  }
}
