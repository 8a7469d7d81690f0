/**
 * `drover rollout` against a real server, its fleet's devices driven by
 * hand over the agent protocol: status (phase, conditions, stages), pause / resume / promote
 * / abort with the server's refusal printed as is, and --watch following a rollout to its end
 * (exit 0 when Completed, 1 when aborted).
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../tests/helpers/server";
import { enrollDevice, eventually, heartbeat, uniqueName, type EnrolledDevice } from "../tests/helpers/devices";
import { createUser } from "../server/auth/auth";
import { cliRunner } from "./test-support";

let s: TestServer;
let dir: string;

const cli = cliRunner(() => ({ url: s.url, adminToken: s.adminToken, dir }));
const start = (args: string[], token?: string) => cli.start(args, token ? { token } : {});
const drover = (args: string[], token?: string) => cli.drover(args, token ? { token } : {});
const ok = (args: string[]) => cli.ok(args);

beforeAll(async () => {
  s = await startTestServer({ DROVER_SWEEP_SECONDS: "600", DROVER_HEARTBEAT_SECONDS: "1" });
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "drover-cli-rollout-"));
});
afterAll(async () => {
  await s?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

const policy = { canary: { replicas: 1, validationMode: "manual" } };
const body = (name: string, suite: string, version: string) => ({
  metadata: { name },
  spec: { selector: { matchLabels: { suite } }, template: { spec: { version } }, rolloutPolicy: policy },
});

async function applied(d: EnrolledDevice): Promise<void> {
  const view = (await s.api<{ renderedVersion: number }>("GET", `/devices/${d.name}`)).body;
  await heartbeat(s, d, { renderedVersion: view.renderedVersion, conditions: { updating: { status: false, reason: "Updated" } } });
}

/** A fleet of two hand-driven devices on version 1, with version 2's manual canary started. */
async function rolloutOfTwo() {
  const name = uniqueName("clir");
  const suite = uniqueName("suite");
  const devices = [await enrollDevice(s, `${name}-a`, { suite }), await enrollDevice(s, `${name}-b`, { suite })];
  expect((await s.api("POST", "/fleets", body(name, suite, "1.0.0"))).status).toBe(201);
  for (const d of devices) await applied(d);
  expect((await s.api("PUT", `/fleets/${name}`, body(name, suite, "2.0.0"))).status).toBe(200);
  return { name, devices };
}

it("status shows the phase, the rollout's conditions and a row per stage; pause and resume print the phase after; a refusal is the server's message, exit 1", async () => {
  const { name, devices } = await rolloutOfTwo();
  const status = await ok(["rollout", "status", name]);
  const lines = status.split("\n");
  expect(lines[0]).toBe(`fleet/${name}: rollout of template version 2 (from 1): Canary`);
  expect(lines[1]).toBe(`canary devices: ${devices[0]!.name}`);
  expect(status).toMatch(/^CONDITION +STATUS +REASON +MESSAGE$/m);
  expect(status).toMatch(/^RolloutInProgress +True +Active +Rolling out canary; 0 of 1 canary device updated/m);
  expect(status).toMatch(/^CanaryPaused +False +NotPaused$/m);
  expect(status).toMatch(/^STAGE +STATUS +DEVICES +UPDATED +UPDATING +WAITING +FAILED +TIMED-OUT$/m);
  expect(status).toMatch(/^canary +active +1 +0 +1 +0 +0 +0$/m);
  expect(status).toMatch(/^final implicit batch +pending +- +- +- +- +- +-$/m);

  expect(await ok(["rollout", "pause", name, "--reason", "checking the logs"])).toBe(`fleet/${name} rollout paused (CanaryPaused)\n`);
  const again = await drover(["rollout", "pause", name]);
  expect(again.code).toBe(1);
  expect(again.stderr).toContain(`error: CONFLICT: cannot pause the rollout of fleet ${name}: already paused (paused by user:admin: checking the logs)`);
  const json = JSON.parse(await ok(["rollout", "status", name, "-o", "json"])) as { rollout: { phase: string; pause: { message: string } } };
  expect(json.rollout).toMatchObject({ phase: "CanaryPaused", pause: { message: "paused by user:admin: checking the logs" } });
  expect(await ok(["rollout", "resume", name])).toBe(`fleet/${name} rollout resumed (Canary)\n`);

  // A viewer is refused; a missing argument is a usage error.
  await createUser(s.auth, s.ctx.db, { username: "rollviewer", password: "rollviewer-pass-1", role: "viewer" });
  const token = (await s.api<{ token: string }>("POST", "/auth/token", { username: "rollviewer", password: "rollviewer-pass-1" })).body.token;
  const viewer = await drover(["rollout", "pause", name], token);
  expect(viewer.code).toBe(1);
  expect(viewer.stderr).toContain("FORBIDDEN");
  expect((await drover(["rollout", "pause"])).code).toBe(2);
  expect((await drover(["rollout", "status", "no-such-fleet"])).stderr).toContain("NOT_FOUND");
});

it("--watch re-prints on change and ends with the rollout: 0 when it completes", async () => {
  const { name, devices } = await rolloutOfTwo();
  const watching = start(["rollout", "status", name, "--watch", "--interval", "100"]);
  await eventually(async () => (watching.run.stdout.includes(": Canary") ? true : undefined), 10_000);
  await applied(devices[0]!);
  await eventually(async () => (watching.run.stdout.includes("Waiting for canary to be promoted") ? true : undefined), 10_000);
  expect(await ok(["rollout", "promote", name])).toBe(`fleet/${name} rollout promoted (RollingOut)\n`);
  await applied(devices[1]!);
  const done = await watching.done;
  expect(done.code, done.stderr).toBe(0);
  const headlines = done.stdout.split("\n").filter((l) => l.startsWith(`fleet/${name}:`));
  expect(headlines[0]).toMatch(/: Canary$/);
  expect(headlines.at(-1)).toMatch(/: Completed$/);
  expect(headlines.some((l) => l.endsWith(": RollingOut"))).toBe(true);
});

it("abort prints the version the fleet is back on; --watch on an aborted rollout exits 1", async () => {
  const { name } = await rolloutOfTwo();
  expect(await ok(["rollout", "abort", name, "--reason", "bad config"])).toBe(`fleet/${name} rollout aborted (Aborted); template version 1\n`);
  const watched = await drover(["rollout", "status", name, "--watch"]);
  expect(watched.code).toBe(1);
  expect(watched.stdout).toContain(": Aborted");
  expect(watched.stderr).toContain("error: the rollout of template version 2 ended Aborted: Rollout is not in progress: Aborted, aborted by user:admin: bad config");
  const events = await s.api<{ items: { type: string; reason: string; message: string; actor: string }[] }>("GET", `/events?kind=Fleet&name=${name}`);
  expect(events.body.items.some((e) => e.reason === "Aborted" && e.actor === "user:admin" && e.message.includes("bad config"))).toBe(true);
});
