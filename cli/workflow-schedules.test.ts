/**
 * `drover` with drafts and schedules, against a real server: apply --draft
 * saves without starting and `workflow start` runs it; a scheduled workflow shows NEXT-RUN in
 * `get workflows` and its schedule in `describe workflow`. The cells on hand-built rows.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../tests/helpers/server";
import { uniqueName } from "../tests/helpers/devices";
import { onlineDevice } from "../tests/helpers/actions";
import type { WorkflowObject } from "../server/workflows/workflows";
import { formatSchedule, nextRunCell, workflowColumnsFor, workflowColumns } from "./workflow-output";
import { cliRunner } from "./test-support";

let s: TestServer;
let dir: string;

const { ok, file } = cliRunner(() => ({ url: s.url, adminToken: s.adminToken, dir }));

beforeAll(async () => {
  s = await startTestServer({ DROVER_SWEEP_SECONDS: "600" });
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "drover-cli-schedules-"));
});
afterAll(async () => {
  await s?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

const yaml = (name: string, device: string, schedule = "") => `apiVersion: drover/v1
kind: Workflow
metadata: {name: ${name}}
spec:
${schedule ? `  schedule: ${schedule}\n` : ""}  steps:
    A: {jobTemplate: {kind: noop, targets: {devices: [${device}]}}}
`;

describe("drafts and schedules from the command line", () => {
  it("apply --draft, then workflow start; a schedule's NEXT-RUN and describe's Schedule line", { timeout: 60_000 }, async () => {
    const device = await onlineDevice(s);
    const draft = uniqueName("draft");
    expect(await ok(["apply", "-f", file("draft.yaml", yaml(draft, device.name)), "--draft"])).toBe(`workflow/${draft} created (draft, not started)\n`);
    expect((await s.api<WorkflowObject>("GET", `/workflows/${draft}`)).body.status).toMatchObject({ phase: "Pending", run: 0 });
    expect(await ok(["workflow", "start", draft])).toBe(`workflow/${draft} started: run 1 Running\n`);

    const nightly = uniqueName("nightly");
    expect(await ok(["apply", "-f", file("nightly.yaml", yaml(nightly, device.name, `{cron: "0 3 * * *", timezone: Europe/Paris}`))])).toBe(`workflow/${nightly} created\n`);
    const table = (await ok(["get", "workflows"])).trimEnd().split("\n");
    expect(table[0]).toMatch(/^NAME +PHASE +STEPS +FAILED +RUN +STARTED +AGE +NEXT-RUN$/);
    expect(table.find((l) => l.startsWith(`${nightly} `))).toMatch(/ +Pending +0\/1 +0 +0 +- +\d+s +in \d+(s|m|h)[\dmsh]*$/);
    expect(table.find((l) => l.startsWith(`${draft} `))).toMatch(/ +-$/);
    const wide = (await ok(["get", "workflows", "-o", "wide"])).split("\n");
    expect(wide[0]).toMatch(/ +SCHEDULE +NEXT-RUN +COMPLETED /);

    const text = await ok(["describe", "workflow", nightly]);
    expect(text).toMatch(/^Schedule: +"0 3 \* \* \*" \(Europe\/Paris\), next run \d{4}-\d\d-\d\dT\d\d:00:00Z \(in .+\)$/m);
  });
});

describe("the cells", () => {
  const now = new Date("2026-03-10T12:00:00.000Z");
  it("NEXT-RUN: in …, suspended, -, due; the column only once a row has a schedule", () => {
    expect(nextRunCell({ schedule: "0 3 * * *", nextRunTime: "2026-03-11T03:00:00.000Z" }, now)).toBe("in 15h");
    expect(nextRunCell({ schedule: "0 3 * * *", nextRunTime: null }, now)).toBe("suspended");
    expect(nextRunCell({ schedule: null, nextRunTime: null }, now)).toBe("-");
    expect(nextRunCell({ schedule: "* * * * *", nextRunTime: "2026-03-10T11:59:00.000Z" }, now)).toBe("due");
    const row = { schedule: null } as Parameters<typeof workflowColumnsFor>[0][number];
    expect(workflowColumnsFor([row])).toBe(workflowColumns);
    expect(workflowColumnsFor([row, { ...row, schedule: "@daily" }]).map((c) => c.header).at(-1)).toBe("NEXT-RUN");
  });

  it("describe's Schedule: cron and zone, next run or suspended, last tick", () => {
    expect(formatSchedule({ cron: "0 3 * * *", timezone: "UTC", suspend: false, nextRunTime: "2026-03-11T03:00:00.000Z", lastScheduleTime: "2026-03-10T03:00:00.000Z" }, now)).toBe(
      `"0 3 * * *" (UTC), next run 2026-03-11T03:00:00Z (in 15h), last tick 2026-03-10T03:00:00Z (9h ago)`,
    );
    expect(formatSchedule({ cron: "@daily", timezone: "Europe/Paris", suspend: true, nextRunTime: null, lastScheduleTime: null }, now)).toBe(`"@daily" (Europe/Paris), suspended`);
  });
});
