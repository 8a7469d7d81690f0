/**
 * Controller leadership on PostgreSQL (issue 11, server/leader.ts): of three candidates on one
 * database exactly one leads; when the leader stops, or its connection is killed, another
 * takes over within a few seconds, and the one that lost it knows before its next tick.
 * A server says which it is in /metrics. Runs with DROVER_TEST_DATABASE=postgresql.
 */
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startLeaderElection, type Leadership } from "../server/leader";
import { logger } from "../server/logger";
import { ADMIN_PASSWORD, newPgDatabase, startTestServer, testOnPostgres } from "./helpers/server";
import { startServer } from "../server/main";
import { eventually } from "../agent/test-support/agent-process";

const log = logger.child({}, { level: "silent" });

describe.runIf(testOnPostgres)("controller leadership", () => {
  let database: { url: string; drop(): Promise<void> };
  const candidates: { name: string; election: Leadership; changes: boolean[] }[] = [];

  beforeAll(async () => {
    database = await newPgDatabase();
    for (const name of ["a", "b", "c"]) {
      const changes: boolean[] = [];
      candidates.push({ name, changes, election: startLeaderElection({ url: database.url, log, retryMs: 300, onChange: (l) => changes.push(l) }) });
    }
  });
  afterAll(async () => {
    for (const c of candidates) await c.election.stop();
    await database?.drop();
  });

  const leaders = () => candidates.filter((c) => c.election.leader);

  it("exactly one of three leads, and confirms it", async () => {
    await eventually(() => leaders().length === 1, 10_000, "a leader");
    // Give the others several tries: none gets the lock while it is held.
    await new Promise((r) => setTimeout(r, 1_000));
    expect(leaders()).toHaveLength(1);
    expect(await leaders()[0]!.election.confirm()).toBe(true);
    for (const c of candidates.filter((c) => !c.election.leader)) expect(await c.election.confirm()).toBe(false);
  });

  it("a leader whose connection is killed knows it at its next confirm, and another takes over", async () => {
    const old = leaders()[0]!;
    const admin = new pg.Client({ connectionString: database.url });
    await admin.connect();
    try {
      const { rows } = await admin.query<{ pid: number }>(
        "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted AND objid = 1146246738 AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
      );
      expect(rows).toHaveLength(1);
      await admin.query("SELECT pg_terminate_backend($1)", [rows[0]!.pid]);
    } finally {
      await admin.end();
    }
    const started = Date.now();
    await eventually(async () => !(await old.election.confirm()), 5_000, "the old leader to give up");
    expect(old.changes.at(-1)).toBe(false);
    await eventually(() => leaders().length === 1 && leaders()[0] !== old, 5_000, "a new leader");
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it("a leader that stops hands over within a few seconds; the one that stopped never leads again", async () => {
    const old = leaders()[0]!;
    const started = Date.now();
    await old.election.stop();
    await eventually(() => leaders().length === 1 && leaders()[0] !== old, 5_000, "a new leader");
    expect(Date.now() - started).toBeLessThan(3_000);
    await new Promise((r) => setTimeout(r, 700));
    expect(leaders()).toHaveLength(1);
  });

  it("a server shows its leadership in /metrics", async () => {
    const server = await startTestServer();
    try {
      const gauge = async () => {
        const text = await (await fetch(`${server.url}/metrics`)).text();
        return /^drover_controller_leader (\d)$/m.exec(text)?.[1];
      };
      await eventually(async () => (await gauge()) === "1", 10_000, "drover_controller_leader 1");
    } finally {
      await server.close();
    }
  });
});

describe.runIf(testOnPostgres)("servers starting at once on a fresh database", () => {
  it("all three start (one admin user between them), one leads", async () => {
    const database = await newPgDatabase();
    const env = { PORT: "0", HOST: "127.0.0.1", DATABASE_URL: database.url, DROVER_ADMIN_PASSWORD: ADMIN_PASSWORD, LOG_LEVEL: "silent" };
    const started = await Promise.allSettled([0, 1, 2].map(() => startServer({ console: false, env })));
    const running = started.flatMap((r) => (r.status === "fulfilled" ? [r.value] : []));
    try {
      expect(started.map((r) => (r.status === "rejected" ? String(r.reason) : "ok"))).toEqual(["ok", "ok", "ok"]);
      expect(await running[0]!.ctx.db.user.count()).toBe(1);
      await eventually(async () => {
        const flags = await Promise.all(running.map(async (r) => (await (await fetch(`${r.url}/metrics`)).text()).match(/^drover_controller_leader (\d)$/m)?.[1]));
        return flags.sort().join() === "0,0,1";
      }, 10_000, "one leader of three");
    } finally {
      for (const r of running) await r.close();
      await database.drop();
    }
  });
});
