/**
 * "The database is unreachable", recognised once (issue 22): one row per kind of error the
 * drivers give for it, with the shapes they really have (PostgreSQL's were read off a stopped
 * cluster, tests/db-outage.test.ts; SQLite's busy timeout is made here, a file locked by
 * another connection), and the errors that
 * must stay what they are. Then one server's view of it (DatabaseHealth).
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { PrismaBetterSQLite3 } from "@prisma/adapter-better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { PrismaClient } from "./generated/prisma/client";
import { DatabaseHealth, isDatabaseUnreachable, unavailableRetryAfterSeconds } from "./database-health";
import { AppError, toAppError } from "./errors";
import { logger } from "./logger";

const log = logger.child({}, { level: "silent" });
const pgError = (code: string, message: string) => Object.assign(new Error(message), { code, severity: "FATAL" });
const socketError = (code: string) => Object.assign(new Error(`connect ${code} 127.0.0.1:5432`), { code, errno: -111, syscall: "connect" });

describe("isDatabaseUnreachable: the database could not be asked", () => {
  it.each([
    // Prisma over @prisma/adapter-pg, PostgreSQL stopped (fast shutdown) under a pooled connection:
    ["a query on a connection PostgreSQL ended (DriverAdapterError, postgres 57P01 admin_shutdown)", Object.assign(new Error("terminating connection due to administrator command"), { name: "DriverAdapterError", cause: { kind: "postgres", code: "57P01", message: "terminating connection due to administrator command" } })],
    ["Prisma P1001, can't reach database server", Object.assign(new Error("Can't reach database server at 127.0.0.1:5432"), { code: "P1001", meta: { driverAdapterError: { name: "DriverAdapterError", cause: { kind: "DatabaseNotReachable", host: "127.0.0.1", port: 5432 } } } })],
    ["a raw query (P2010) whose adapter error is DatabaseNotReachable", Object.assign(new Error("Raw query failed. Code: `N/A`."), { code: "P2010", meta: { driverAdapterError: { name: "DriverAdapterError", cause: { kind: "DatabaseNotReachable" } } } })],
    ["Prisma P1017, server closed the connection", Object.assign(new Error("Server has closed the connection."), { code: "P1017" })],
    ["Prisma P2024, timed out fetching a connection from the pool", Object.assign(new Error("Timed out fetching a new connection from the connection pool."), { code: "P2024" })],
    ["Prisma P2028, a transaction that could not start in time", Object.assign(new Error("Transaction API error: Unable to start a transaction in the given time."), { code: "P2028" })],
    ["adapter ConnectionClosed (ECONNRESET)", Object.assign(new Error("ConnectionClosed"), { name: "DriverAdapterError", cause: { kind: "ConnectionClosed" } })],
    ["adapter TooManyConnections", Object.assign(new Error("TooManyConnections"), { name: "DriverAdapterError", cause: { kind: "TooManyConnections" } })],
    // `pg` directly (the agent hot path, the bus, the leader):
    ["pg ECONNREFUSED", socketError("ECONNREFUSED")],
    ["pg ECONNRESET", socketError("ECONNRESET")],
    ["pg 57P01 admin_shutdown", pgError("57P01", "terminating connection due to administrator command")],
    ["pg 57P03 cannot_connect_now (starting up)", pgError("57P03", "the database system is starting up")],
    ["pg 08006 connection_failure", pgError("08006", "connection failure")],
    ["pg 53300 too_many_connections", pgError("53300", "sorry, too many clients already")],
    ["pg: connection terminated unexpectedly", new Error("Connection terminated unexpectedly")],
    ["pg-pool: connect timeout", new Error("timeout exceeded when trying to connect")],
    ["pg: a client that is not queryable", new Error("Client has encountered a connection error and is not queryable")],
    // SQLite (better-sqlite3 directly: the agent hot path):
    ["SQLite SQLITE_BUSY past the busy timeout", Object.assign(new Error("database is locked"), { code: "SQLITE_BUSY" })],
    ["SQLite SQLITE_IOERR_SHORT_READ", Object.assign(new Error("disk I/O error"), { code: "SQLITE_IOERR_SHORT_READ" })],
    ["SQLite SQLITE_CANTOPEN", Object.assign(new Error("unable to open database file"), { code: "SQLITE_CANTOPEN" })],
  ] as [string, unknown][])("%s", (_what, error) => {
    expect(isDatabaseUnreachable(error)).toBe(true);
    const app = toAppError(error);
    expect(app.code).toBe("UNAVAILABLE");
    expect(app.status).toBe(503);
    expect(app.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    // The protocol's words only: nothing of the driver's message.
    expect(app.message).toBe("the database is unreachable; try again shortly");
  });

  it.each([
    ["a unique violation (P2002)", Object.assign(new Error("Unique constraint failed"), { code: "P2002" })],
    ["adapter UniqueConstraintViolation", Object.assign(new Error("x"), { name: "DriverAdapterError", cause: { kind: "UniqueConstraintViolation" } })],
    ["pg 40P01 deadlock (retried where it matters, else a fault)", pgError("40P01", "deadlock detected")],
    ["pg 23505 unique_violation", pgError("23505", "duplicate key value violates unique constraint")],
    ["SQLite SQLITE_CONSTRAINT_UNIQUE", Object.assign(new Error("UNIQUE constraint failed"), { code: "SQLITE_CONSTRAINT_UNIQUE" })],
    ["a bug", new TypeError("cannot read properties of undefined")],
    ["a domain error", new AppError("CONFLICT", "no")],
    ["not an error at all", "boom"],
    ["nothing", null],
  ] as [string, unknown][])("not: %s", (_what, error) => {
    expect(isDatabaseUnreachable(error)).toBe(false);
    expect(toAppError(error).code).not.toBe("UNAVAILABLE");
  });

  it("follows a cycle of causes without looping", () => {
    const a: { cause?: unknown; message: string } = { message: "a" };
    a.cause = { message: "b", cause: a };
    expect(isDatabaseUnreachable(a)).toBe(false);
  });

  it("Retry-After is 1 to 3 s, spread", () => {
    expect([0, 0.5, 0.999].map((r) => unavailableRetryAfterSeconds(r))).toEqual([1, 2, 3]);
  });
});

describe("SQLite's real errors", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "drover-db-health-"));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it("a write past the busy timeout while another connection holds the lock, through Prisma and directly", async () => {
    const file = path.join(dir, "locked.db");
    const holder = new Database(file);
    holder.exec("CREATE TABLE t (x INTEGER)");
    holder.exec("BEGIN IMMEDIATE");
    const direct = new Database(file, { timeout: 10 });
    const prisma = new PrismaClient({ adapter: new PrismaBetterSQLite3({ url: `file:${file}`, timeout: 10 }) });
    try {
      let thrown: unknown;
      try {
        direct.exec("INSERT INTO t VALUES (1)");
      } catch (error) {
        thrown = error;
      }
      expect((thrown as { code?: string }).code).toBe("SQLITE_BUSY");
      expect(isDatabaseUnreachable(thrown)).toBe(true);
      const viaPrisma = await prisma.$executeRawUnsafe("INSERT INTO t VALUES (1)").then(
        () => null,
        (error: unknown) => error,
      );
      expect(viaPrisma).not.toBeNull();
      expect(isDatabaseUnreachable(viaPrisma)).toBe(true);
    } finally {
      holder.exec("ROLLBACK");
      holder.close();
      direct.close();
      await prisma.$disconnect();
    }
  });
});

describe("DatabaseHealth: one server's view", () => {
  const until = async (check: () => boolean) => {
    const deadline = Date.now() + 2_000;
    while (!check()) {
      if (Date.now() > deadline) throw new Error("condition not met within 2 s");
      await new Promise((r) => setTimeout(r, 5));
    }
  };

  it("an unreachable error makes it unreachable, probes until the database answers, and says since when", async () => {
    let up = true;
    let pings = 0;
    let clock = 1_000;
    const health = new DatabaseHealth({
      ping: () => (pings++, up ? Promise.resolve(1) : Promise.reject(Object.assign(new Error("refused"), { code: "ECONNREFUSED" }))),
      now: () => new Date(clock),
      log,
      cacheMs: 1_000,
      retryMs: 10,
    });
    try {
      expect(await health.ready()).toBe(true);
      expect(await health.ready()).toBe(true);
      expect(pings, "a second probe within the cache time asks nothing").toBe(1);
      expect(health.reachableSince).toBeNull();

      expect(health.noteError(new TypeError("a bug"))).toBe(false);
      expect(health.reachable).toBe(true);

      up = false;
      expect(health.noteError(socketError("ECONNREFUSED"))).toBe(true);
      expect(health.reachable).toBe(false);
      expect(await health.ready(), "not ready at once, without waiting for the cache").toBe(false);
      await until(() => pings >= 3);
      expect(health.reachable).toBe(false);

      clock = 5_000;
      up = true;
      await until(() => health.reachable);
      expect(health.reachableSince).toEqual(new Date(5_000));
      expect(await health.ready()).toBe(true);
    } finally {
      health.close();
    }
  });

  it("a lone refusal the next probe does not confirm (a pool timeout under load) grants no grace", async () => {
    let pings = 0;
    const health = new DatabaseHealth({ ping: () => (pings++, Promise.resolve(1)), now: () => new Date(9_000), log, retryMs: 10 });
    try {
      expect(health.noteError(Object.assign(new Error("Timed out fetching a new connection from the connection pool."), { code: "P2024" }))).toBe(true);
      expect(health.reachable).toBe(false);
      await until(() => health.reachable);
      expect(pings).toBe(1);
      expect(health.reachableSince).toBeNull();
    } finally {
      health.close();
    }
  });
});
