/**
 * Workflow schedules (DESIGN.md §6 "a recurring schedule (cron)") against a real server on the
 * real clock: a schedule every second starts runs by itself (startedBy "schedule", in
 * status.runs), a tick while a run is in progress is skipped with an event (one run at a time,
 * Argo's concurrencyPolicy Forbid), suspend stops the ticks, ticks missed while the server was
 * down make exactly one catch-up run (a restart on a copy of the database, and a nudge), and a
 * bad cron or time zone is 400 naming the field with nothing written.
 */
import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_PASSWORD, pgAdmin, pgDatabaseUrl, startTestServer, testOnPostgres, type TestServer } from "./helpers/server";
import { eventually, expectError, type EnrolledDevice } from "./helpers/devices";
import { onlineDevice, reportAll, sleep, work } from "./helpers/actions";
import { startServer } from "../server/main";
import type { WorkflowObject, WorkflowSummary } from "../server/workflows/workflows";

let s: TestServer;

beforeAll(async () => {
  // No tick: schedules must run from their own timers (or a nudge).
  s = await startTestServer({ DROVER_SWEEP_SECONDS: "600" });
});
afterAll(async () => {
  await s?.close();
});

const job = (devices: string[]) => ({ jobTemplate: { kind: "noop", args: {}, targets: { devices } } });
const DAY = 24 * 3600 * 1000;

async function get(name: string, server: Pick<TestServer, "api"> = s): Promise<WorkflowObject> {
  const res = await server.api<WorkflowObject>("GET", `/workflows/${name}`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

async function events(name: string) {
  const res = await s.api<{ items: { id: number; type: string; reason: string; message: string; actor: string }[] }>("GET", `/events?kind=Workflow&name=${name}&limit=1000`);
  return [...res.body.items].sort((a, b) => a.id - b.id);
}

/** A copy of the test server's database as it is now (SQLite's VACUUM INTO, or pg_dump into a new PostgreSQL database). */
async function copyDatabase(dir: string): Promise<{ url: string; drop(): Promise<void> }> {
  if (!testOnPostgres) {
    const file = path.join(dir, "drover.db");
    await s.ctx.db.$executeRawUnsafe(`VACUUM INTO '${file}'`);
    return { url: `file:${file}`, drop: async () => undefined };
  }
  const name = `drover_copy_${process.pid}_${Date.now()}`;
  await pgAdmin(`CREATE DATABASE ${name}`);
  await promisify(execFile)("bash", ["-o", "pipefail", "-c", `pg_dump --no-owner "$SRC" | psql -q -v ON_ERROR_STOP=1 "$DST"`], {
    env: { ...process.env, SRC: s.ctx.env.DATABASE_URL, DST: pgDatabaseUrl(name) },
  });
  return { url: pgDatabaseUrl(name), drop: () => pgAdmin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}

/** The device takes its one offered action and reports it DONE. */
async function finishOne(d: EnrolledDevice): Promise<void> {
  const id = await eventually(async () => {
    const res = await work(s, d, 0);
    return res.body.actions[0]?.id;
  });
  await reportAll(s, d, id, "NEW", "RUNNING", "DONE");
}

describe("a schedule every second", () => {
  it("starts runs by itself (startedBy schedule), skips a tick while a run is in progress, and suspend stops it", { timeout: 30_000 }, async () => {
    const d = await onlineDevice(s);
    const created = await s.api<WorkflowObject>("POST", "/workflows", { metadata: { name: "every-second" }, spec: { schedule: { cron: "* * * * * *" }, steps: { A: job([d.name]) } } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    // Not started by create: it waits for its schedule.
    expect(created.body.status).toMatchObject({ phase: "Pending", run: 0, runs: [] });
    expect(created.body.status.message).toMatch(/waits for its schedule: next run at /);
    expect(created.body.status.schedule).toMatchObject({ cron: "* * * * * *", timezone: "UTC", suspend: false, lastScheduleTime: null });
    expect(Date.parse(created.body.status.schedule!.nextRunTime!)).toBeGreaterThan(Date.now() - 1000);

    // Run 1 starts at the next second; A's action is offered.
    const one = await eventually(async () => {
      const w = await get("every-second");
      return w.status.run === 1 ? w : undefined;
    });
    expect(one.status.phase).toBe("Running");
    expect(one.status.runs).toMatchObject([{ run: 1, startedBy: "schedule", phase: "Running" }]);
    expect(one.status.schedule!.lastScheduleTime).not.toBeNull();

    // The next tick finds run 1 still Running: skipped, with why.
    const skipped = await eventually(async () => (await events("every-second")).find((e) => e.type === "WorkflowScheduleSkipped"));
    expect(skipped.message).toMatch(/skipped: run 1 is still Running \(one run at a time, concurrencyPolicy Forbid\); next at /);
    expect(skipped.actor).toBe("schedule");
    expect((await get("every-second")).status.run).toBe(1);

    // Run 1 ends; the next tick starts run 2.
    await finishOne(d);
    const two = await eventually(async () => {
      const w = await get("every-second");
      return w.status.run === 2 ? w : undefined;
    });
    expect(two.status.runs).toMatchObject([
      { run: 2, startedBy: "schedule" },
      { run: 1, startedBy: "schedule", phase: "Succeeded" },
    ]);
    const list = await s.api<{ items: WorkflowSummary[] }>("GET", "/workflows");
    expect(list.body.items.find((w) => w.name === "every-second")).toMatchObject({ schedule: "* * * * * *" });

    const types = (await events("every-second")).map((e) => e.type);
    expect(types.slice(0, 3)).toEqual(["WorkflowCreated", "WorkflowScheduled", "WorkflowStarted"]);

    // Suspend (a PUT while run 2 runs: only the schedule changes): no next time, no more ticks.
    const put = await s.api<WorkflowObject>("PUT", "/workflows/every-second", { metadata: { name: "every-second" }, spec: { schedule: { cron: "* * * * * *", suspend: true }, steps: { A: job([d.name]) } } });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect(put.body.status.schedule).toMatchObject({ suspend: true, nextRunTime: null });
    const after = (await events("every-second")).at(-1)!.id;
    await finishOne(d);
    await eventually(async () => ((await get("every-second")).status.phase === "Succeeded" ? true : undefined));
    await sleep(2_500);
    const w = await get("every-second");
    expect(w.status.run).toBe(2);
    expect((await events("every-second")).filter((e) => e.id > after && e.type.startsWith("WorkflowSchedule"))).toEqual([]);
    expect(await s.ctx.db.workflowRun.count({ where: { workflowName: "every-second" } })).toBe(2);

    // Resumed: the schedule counts from now and starts run 3 by itself.
    const resumed = await s.api<WorkflowObject>("PUT", "/workflows/every-second", { metadata: { name: "every-second" }, spec: { schedule: { cron: "* * * * * *" }, steps: { A: job([d.name]) } } });
    expect(resumed.status).toBe(200);
    expect(Date.parse(resumed.body.status.schedule!.nextRunTime!)).toBeGreaterThan(Date.now() - 1000);
    await eventually(async () => ((await get("every-second")).status.run === 3 ? true : undefined));
    // Stopped for good (the server outlives this test).
    expect((await s.api("DELETE", "/workflows/every-second")).status).toBe(200);
  });
});

describe("catch-up", () => {
  it("ticks missed while no server ran start exactly one run when a server starts (a restart on a copy of the database)", { timeout: 30_000 }, async () => {
    const d = await onlineDevice(s);
    const res = await s.api<WorkflowObject>("POST", "/workflows", { metadata: { name: "nightly" }, spec: { schedule: { cron: "0 3 * * *", timezone: "Europe/Paris" }, steps: { A: job([d.name]) } } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.status.phase).toBe("Pending");
    const next = Date.parse(res.body.status.schedule!.nextRunTime!);
    expect(next).toBeGreaterThan(Date.now());
    expect(next).toBeLessThanOrEqual(Date.now() + DAY);
    // 03:00 in Paris is 01:00 or 02:00 UTC.
    expect([1, 2]).toContain(new Date(next).getUTCHours());

    // The server was down for three days: its due time is three days and a bit in the past.
    const due = new Date(Date.now() - 3 * DAY - 60_000);
    await s.ctx.db.workflow.update({ where: { name: "nightly" }, data: { nextScheduleTime: due } });
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "drover-restart-"));
    const copy = await copyDatabase(dir);
    try {
      const b = await startServer({
        console: false,
        skipMigrate: true,
        env: { PORT: "0", HOST: "127.0.0.1", DATABASE_URL: copy.url, DROVER_ADMIN_PASSWORD: ADMIN_PASSWORD, LOG_LEVEL: "silent", DROVER_SWEEP_SECONDS: "600" },
      });
      try {
        const runs = () => b.ctx.db.workflowRun.findMany({ where: { workflowName: "nightly" } });
        await eventually(async () => ((await runs()).length > 0 ? true : undefined));
        await sleep(500);
        expect(await runs()).toMatchObject([{ run: 1, startedBy: "schedule", phase: "Running" }]);
        const wf = await b.ctx.db.workflow.findUniqueOrThrow({ where: { name: "nightly" } });
        expect(wf.lastScheduleTime?.getTime()).toBe(due.getTime());
        expect(wf.nextScheduleTime!.getTime()).toBeGreaterThan(Date.now());
        const scheduled = await b.ctx.db.event.findFirstOrThrow({ where: { objectKind: "Workflow", objectName: "nightly", type: "WorkflowScheduled" } });
        expect(scheduled.message).toMatch(/ \(3 later tick\(s\) missed while no server ran: one catch-up run\): starting run 1; next at /);
      } finally {
        await b.close();
      }
    } finally {
      await copy.drop();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it("a due time in the past, then a nudge: exactly one run, and the next time is in the future", async () => {
    const d = await onlineDevice(s);
    expect((await s.api("POST", "/workflows", { metadata: { name: "hourly" }, spec: { schedule: { cron: "@hourly" }, steps: { A: job([d.name]) } } })).status).toBe(201);
    await s.ctx.db.workflow.update({ where: { name: "hourly" }, data: { nextScheduleTime: new Date(Date.now() - 5 * 3600_000) } });
    expect((await s.api("POST", "/nudge", { kind: "Workflow", name: "hourly" })).status).toBe(200);
    const w = await eventually(async () => {
      const x = await get("hourly");
      return x.status.run > 0 ? x : undefined;
    });
    expect((await s.api("POST", "/nudge", { kind: "Workflow", name: "hourly" })).status).toBe(200);
    await sleep(300);
    expect(w.status.runs).toMatchObject([{ run: 1, startedBy: "schedule" }]);
    expect((await get("hourly")).status.run).toBe(1);
    expect(Date.parse((await get("hourly")).status.schedule!.nextRunTime!)).toBeGreaterThan(Date.now());
    expect((await events("hourly")).filter((e) => e.type === "WorkflowScheduled")).toHaveLength(1);
  });
});

describe("starting a scheduled workflow by hand", () => {
  it("start runs it once now (by the operator) and keeps the schedule; ?start=true at create starts it too", async () => {
    const d = await onlineDevice(s);
    expect((await s.api("POST", "/workflows", { metadata: { name: "weekly" }, spec: { schedule: { cron: "0 4 * * 1" }, steps: { A: job([d.name]) } } })).status).toBe(201);
    const before = (await get("weekly")).status.schedule!.nextRunTime;
    const started = await s.api<WorkflowObject>("POST", "/workflows/weekly/start", {});
    expect(started.status).toBe(200);
    expect(started.body.status.runs).toMatchObject([{ run: 1, startedBy: "user:admin" }]);
    expect(started.body.status.schedule!.nextRunTime).toBe(before);

    const now = await s.api<WorkflowObject>("POST", "/workflows?start=true", { metadata: { name: "weekly-now" }, spec: { schedule: { cron: "0 4 * * 1" }, steps: { A: job([d.name]) } } });
    expect(now.status).toBe(201);
    expect(now.body.status).toMatchObject({ phase: "Running", run: 1 });
    expect(now.body.status.schedule!.nextRunTime).not.toBeNull();
  });

  it("PUT that changes the schedule recomputes the next time; one that leaves it keeps it", async () => {
    const d = await onlineDevice(s);
    const spec = (cron: string, note = "") => ({ metadata: { name: "moving" }, spec: { schedule: { cron }, steps: { A: { jobTemplate: { kind: "noop", args: { note }, targets: { devices: [d.name] } } } } } });
    expect((await s.api("POST", "/workflows", spec("0 4 * * *"))).status).toBe(201);
    const first = (await get("moving")).status.schedule!.nextRunTime!;
    expect(new Date(first).getUTCHours()).toBe(4);
    const same = await s.api<WorkflowObject>("PUT", "/workflows/moving", spec("0 4 * * *", "edited"));
    expect(same.body.status.schedule!.nextRunTime).toBe(first);
    const moved = await s.api<WorkflowObject>("PUT", "/workflows/moving", spec("30 5 * * *", "edited"));
    expect(moved.status).toBe(200);
    expect(new Date(moved.body.status.schedule!.nextRunTime!).getUTCHours()).toBe(5);
    expect(moved.body.status.message).toMatch(/waits for its schedule/);
    expect((await events("moving")).at(-1)!.message).toMatch(/schedule "30 5 \* \* \*" \(UTC\), next run at /);
    // The schedule removed: a draft, nothing armed.
    const removed = await s.api<WorkflowObject>("PUT", "/workflows/moving", { metadata: { name: "moving" }, spec: { steps: spec("").spec.steps } });
    expect(removed.body.status.schedule).toBeNull();
    expect(removed.body.status.message).toMatch(/^draft: not started/);
    expect((await s.ctx.db.workflow.findUniqueOrThrow({ where: { name: "moving" } })).nextScheduleTime).toBeNull();
  });
});

describe("bad schedules", () => {
  it("a bad cron or time zone is 400 naming the field, on create and PUT, and nothing is written", async () => {
    const body = (schedule: unknown) => ({ metadata: { name: "bad-cron" }, spec: { schedule, steps: { A: job(["x"]) } } });
    for (const [schedule, field, why] of [
      [{ cron: "61 * * * *" }, "spec.schedule.cron", /minute/],
      [{ cron: "every day" }, "spec.schedule.cron", /not a cron expression/],
      [{ cron: "2026-01-01T00:00:00" }, "spec.schedule.cron", /not a cron expression/],
      [{ cron: "0 0 30 2 *" }, "spec.schedule.cron", /never falls/],
      [{ cron: "" }, "spec.schedule.cron", /./],
      [{ cron: "0 3 * * *", timezone: "Mars/Olympus" }, "spec.schedule.timezone", /not an IANA time zone/],
      [{ cron: "0 3 * * *", every: "day" }, "spec.schedule", /every/],
      [{ cron: "0 3 * * *", suspend: "yes" }, "spec.schedule.suspend", /boolean/],
    ] as const) {
      const e = expectError(await s.api("POST", "/workflows", body(schedule)), 400, "INVALID_REQUEST");
      expect(e.error.message).toContain(field);
      expect(e.error.message).toMatch(why);
    }
    expect((await s.api("GET", "/workflows/bad-cron")).status).toBe(404);
    expect(await events("bad-cron")).toEqual([]);

    expect((await s.api("POST", "/workflows", { metadata: { name: "good-cron" }, spec: { schedule: { cron: "0 3 * * *" }, steps: { A: job(["x"]) } } })).status).toBe(201);
    const before = await get("good-cron");
    expectError(await s.api("PUT", "/workflows/good-cron", { metadata: { name: "good-cron" }, spec: { schedule: { cron: "0 25 * * *" }, steps: { A: job(["x"]) } } }), 400, "INVALID_REQUEST", /spec\.schedule\.cron/);
    const after = await get("good-cron");
    expect(after.spec).toEqual(before.spec);
    expect(after.metadata.generation).toBe(before.metadata.generation);
    expect(after.status.schedule).toEqual(before.status.schedule);
  });
});
