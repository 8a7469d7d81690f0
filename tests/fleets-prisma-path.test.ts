/**
 * Fleets without the SQLite fast path (the Prisma paths PostgreSQL will take): the heartbeat
 * derives UpToDate against the owner fleet's template version, and the long-poll reads the
 * rendered spec through Prisma.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { startTestServer, type TestServer } from "./helpers/server";
import { enrollDevice, heartbeat, uniqueName } from "./helpers/devices";

let s: TestServer;

beforeAll(async () => {
  s = await startTestServer({ DROVER_SWEEP_SECONDS: "60" }, { fastPath: false });
});
afterAll(async () => {
  await s?.close();
});

it("membership, rendering, the held long-poll and UpToDate → OutOfDate → UpToDate", async () => {
  expect(s.ctx.fast).toBeNull();
  const body = (version: string) => ({ metadata: { name: "plain" }, spec: { selector: { matchLabels: { path: "prisma" } }, template: { spec: { version } } } });
  expect((await s.api("POST", "/fleets", body("1.0.0"))).status).toBe(201);
  const d = await enrollDevice(s, uniqueName("dev"), { path: "prisma" });
  await heartbeat(s, d, { renderedVersion: 1 });
  const view = async () => (await s.api<{ fleet: string; updatedStatus: string; updatedInfo: string | null }>("GET", `/devices/${d.name}`)).body;
  expect(await view()).toMatchObject({ fleet: "plain", updatedStatus: "UpToDate" });

  const held = s.agent<{ spec?: { renderedVersion: number; version: string } }>("GET", "/work?specVersion=1&wait=20", undefined, d.auth);
  await new Promise((r) => setTimeout(r, 100));
  expect((await s.api("PUT", "/fleets/plain", body("2.0.0"))).status).toBe(200);
  expect((await held).body.spec).toMatchObject({ renderedVersion: 2, version: "2.0.0" });
  expect(await view()).toMatchObject({ updatedStatus: "OutOfDate", updatedInfo: "running renderedVersion 1 of 2" });
  await heartbeat(s, d, { renderedVersion: 2 });
  expect(await view()).toMatchObject({ updatedStatus: "UpToDate", updatedInfo: null });
});
