/**
 * `drover rerun action ID` against a real server (issue 10): a new action
 * with the same device, kind and args, linked by rerunOf; an action that has not ended is
 * CONFLICT (exit 1), nothing created; each invocation sends an Idempotency-Key of its own.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../tests/helpers/server";
import { createAction, offeredIds, onlineDevice, reportAll } from "../tests/helpers/actions";
import { cliRunner } from "./test-support";

let s: TestServer;
let dir: string;
const cli = cliRunner(() => ({ url: s.url, adminToken: s.adminToken, dir }));

beforeAll(async () => {
  s = await startTestServer({ DROVER_SWEEP_SECONDS: "600" });
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "drover-cli-rerun-"));
});
afterAll(async () => {
  await s?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

it("reruns an ended action; one still running is CONFLICT", async () => {
  const d = await onlineDevice(s);
  const a = await createAction(s, d.name, "sleep", { args: { seconds: 2 } });
  expect(await offeredIds(s, d)).toContain(a.id);
  await reportAll(s, d, a.id, "NEW", "RUNNING");

  const running = await cli.drover(["rerun", "action", a.id]);
  expect(running.code).toBe(1);
  expect(running.stderr).toMatch(/error: CONFLICT: .*RUNNING/);
  expect(await s.ctx.db.action.count({ where: { rerunOf: a.id } })).toBe(0);

  await reportAll(s, d, a.id, "DONE");
  const text = await cli.ok(["rerun", "action", a.id]);
  const rerun = await s.ctx.db.action.findFirstOrThrow({ where: { rerunOf: a.id } });
  expect(text).toBe(`action/${rerun.id} created (PENDING_SCHEDULE), a rerun of action/${a.id}\n`);
  expect(rerun).toMatchObject({ deviceId: expect.any(String), kind: "sleep", args: JSON.stringify({ seconds: 2 }) });

  const json = JSON.parse(await cli.ok(["rerun", "action", a.id, "-o", "json"])) as { id: string; rerunOf: string; device: string };
  expect(json).toMatchObject({ rerunOf: a.id, device: d.name });
  expect(json.id).not.toBe(rerun.id);

  // Each invocation sent a key of its own (issue 22), recorded with the request it created; the refused one none.
  const keys = await s.ctx.db.idempotencyKey.findMany({ where: { operation: "actions.rerun" }, select: { key: true, ref: true, scope: true } });
  const requests = await s.ctx.db.action.findMany({ where: { rerunOf: a.id }, select: { requestId: true } });
  expect(keys.map((k) => k.ref).sort()).toEqual(requests.map((r) => `ActionRequest/${r.requestId}`).sort());
  expect(new Set(keys.map((k) => k.key)).size).toBe(2);
  expect(keys.every((k) => k.scope === "user:admin")).toBe(true);
});
