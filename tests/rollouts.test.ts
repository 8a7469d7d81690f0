/**
 * The rollout controller against a real server, with devices driven by hand over the agent
 * protocol (each heartbeat chosen, so boundaries are exact): the canary starts in the
 * template change's own request, the restart thresholds at max and max + 1 (only restarts on
 * the new version count), pause / resume / promote / abort as requests with who and why,
 * manual validation, superseding, joiners during a rollout, and the refusals (a viewer's 403,
 * 409 when there is nothing to act on) that write nothing.
 */
import type { Condition } from "../lib/fleet-spec";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "./helpers/server";
import { enrollDevice, eventually, expectError, heartbeat, uniqueName, type EnrolledDevice } from "./helpers/devices";
import { createCallerFactory } from "../server/trpc/init";
import { appRouter } from "../server/trpc/router";
import { runRollouts } from "../server/rollouts/controller";

let s: TestServer;
let viewerToken = "";

beforeAll(async () => {
  // No sweep during the tests: every move here must come from the reactive paths (requests, heartbeats, joins).
  s = await startTestServer({ DROVER_SWEEP_SECONDS: "600", DROVER_HEARTBEAT_SECONDS: "1" });
  const admin = await s.ctx.db.user.findUniqueOrThrow({ where: { username: "admin" }, select: { id: true } });
  const asAdmin = createCallerFactory(appRouter)({ server: s.ctx, auth: s.auth, principal: { userId: admin.id, username: "admin", role: "admin", via: "token" } });
  await asAdmin.auth.createUser({ username: "rita", password: "rita-password-1", role: "viewer" });
  viewerToken = (await s.api<{ token: string }>("POST", "/auth/token", { username: "rita", password: "rita-password-1" })).body.token;
});
afterAll(async () => {
  await s?.close();
});

// ---------------------------------------------------------------------------------------
// Shapes and helpers

interface Rollout {
  templateVersion: string;
  previousVersion: string | null;
  phase: string;
  canaryDevices: string[];
  pause: { source: string; reason: string; message: string; devices: string[]; actor: string } | null;
  progress: { kind: string; name: string; status: string; total: number | null; successful: number }[];
  canary: { autoPauseOverride: { actor: string } | null } | null;
}
interface Fleet {
  metadata: { name: string; generation: number };
  spec: { template: { spec: { version: string } } };
  status: { templateVersion: string; conditions: Condition[]; rollout: Rollout | null; devices: { total: number; upToDate: number } };
}
interface DeviceView {
  name: string;
  renderedVersion: number;
  templateVersion: string | null;
  updatedStatus: string;
  updatedInfo: string | null;
}
interface Version {
  version: string;
  outcome: string;
  outcomeMessage: string | null;
}
interface EventRow {
  type: string;
  reason: string;
  message: string;
  actor: string;
}

const condition = (f: Fleet, type: string) => f.status.conditions.find((c) => c.type === type);

const template = (version: string) => ({ spec: { version, applications: [{ name: "web", command: ["/usr/bin/web"] }] } });

function fleetBody(name: string, suite: string, version: string, rolloutPolicy?: Record<string, unknown>) {
  return { metadata: { name }, spec: { selector: { matchLabels: { suite } }, template: template(version), ...(rolloutPolicy ? { rolloutPolicy } : {}) } };
}

/** A canary of one device that does not end by itself within a test. */
const canaryPolicy = (canary: Record<string, unknown> = {}) => ({ canary: { replicas: 1, duration: "1h", ...canary } });

async function fleet(name: string): Promise<Fleet> {
  const res = await s.api<Fleet>("GET", `/fleets/${name}`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

async function device(name: string): Promise<DeviceView> {
  return (await s.api<DeviceView>("GET", `/devices/${name}`)).body;
}

async function versions(name: string): Promise<Version[]> {
  return (await s.api<{ items: Version[] }>("GET", `/fleets/${name}/templateversions`)).body.items;
}

async function events(name: string): Promise<EventRow[]> {
  return (await s.api<{ items: EventRow[] }>("GET", `/events?kind=Fleet&name=${name}&limit=200`)).body.items;
}

/** The device reports running its rendered spec, its application having restarted `restarts` times. */
async function applied(d: EnrolledDevice, restarts = 0): Promise<DeviceView> {
  const view = await device(d.name);
  const res = await heartbeat(s, d, {
    renderedVersion: view.renderedVersion,
    applications: [{ name: "web", status: "Running", restarts }],
    conditions: { updating: { status: false, reason: "Updated" } },
  });
  expect(res.status).toBe(200);
  return view;
}

function control(name: string, kind: "pause" | "resume" | "promote" | "abort", body: unknown = {}, token?: string) {
  return s.api<Fleet>("POST", `/fleets/${name}/rollout/${kind}`, body, token);
}

/** A fleet of `count` hand-driven devices, all UpToDate at version 1.0.0 (template version 1). */
async function setup(count: number, rolloutPolicy: Record<string, unknown> | undefined) {
  const name = uniqueName("ro");
  const suite = uniqueName("suite");
  const devices: EnrolledDevice[] = [];
  for (let i = 0; i < count; i++) devices.push(await enrollDevice(s, `${name}-d${i}`, { suite }));
  const created = await s.api<Fleet>("POST", "/fleets", fleetBody(name, suite, "1.0.0", rolloutPolicy));
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  // The fleet's first version goes to every member at once: no rollout.
  expect(created.body.status.rollout).toBeNull();
  for (const d of devices) await applied(d);
  await eventually(async () => ((await fleet(name)).status.devices.upToDate === count ? true : undefined));
  return { name, suite, devices, change: (version: string, policy = rolloutPolicy) => s.api<Fleet>("PUT", `/fleets/${name}`, fleetBody(name, suite, version, policy)) };
}

// ---------------------------------------------------------------------------------------

describe("canary start and the restart thresholds", () => {
  it("only the canary gets the new version, in the template change's own answer; restarts = max does not pause, max + 1 does, within a heartbeat", async () => {
    const f = await setup(3, canaryPolicy({ autoPause: { maxRestarts: 2 }, autoFail: { maxRestarts: 5 } }));
    const [canary, second, third] = f.devices as [EnrolledDevice, EnrolledDevice, EnrolledDevice];
    const before = await device(canary.name);

    const put = await f.change("2.0.0");
    expect(put.status).toBe(200);
    expect(put.body.status.templateVersion).toBe("2");
    expect(put.body.status.rollout).toMatchObject({ templateVersion: "2", previousVersion: "1", phase: "Canary", canaryDevices: [canary.name] });
    expect(condition(put.body, "RolloutInProgress")).toMatchObject({ status: "True", reason: "Active" });
    expect(condition(put.body, "CanaryPaused")).toMatchObject({ status: "False" });
    expect(put.body.status.rollout?.progress.map((p) => [p.kind, p.name, p.status, p.total])).toEqual([
      ["canary", "canary", "active", 1],
      ["batch", "final implicit batch", "pending", null],
    ]);
    // The canary device has version 2 already; the others keep version 1 and say why they are OutOfDate.
    expect(await device(canary.name)).toMatchObject({ templateVersion: "2", renderedVersion: before.renderedVersion + 1 });
    for (const d of [second, third]) {
      const v = await device(d.name);
      expect(v).toMatchObject({ templateVersion: "1", updatedStatus: "OutOfDate" });
      expect(v.updatedInfo).toBe(`fleet ${f.name} is at template version 2; this device's spec is version 1; waiting for the canary of version 2 to end`);
    }

    // Restarts reported while still running version 1 do not count.
    const old = await device(canary.name);
    await heartbeat(s, canary, { renderedVersion: old.renderedVersion - 1, applications: [{ name: "web", status: "Running", restarts: 9 }] });
    await new Promise((r) => setTimeout(r, 500));
    expect((await fleet(f.name)).status.rollout?.phase).toBe("Canary");

    // Applied, then restarts up to the maximum: still Canary.
    await applied(canary, 0);
    await applied(canary, 2);
    await new Promise((r) => setTimeout(r, 600));
    expect((await fleet(f.name)).status.rollout?.phase).toBe("Canary");

    // One more: paused within a heartbeat (not at a sweep), naming the device.
    const sent = Date.now();
    await applied(canary, 3);
    const paused = await eventually(async () => {
      const now = await fleet(f.name);
      return now.status.rollout?.phase === "CanaryPaused" ? now : undefined;
    }, 3_000, 20);
    const latency = Date.now() - sent;
    console.log(`[rollouts] heartbeat with restarts 3 → CanaryPaused seen: ${latency} ms`);
    expect(latency).toBeLessThan(1_500);
    expect(condition(paused, "CanaryPaused")).toMatchObject({ status: "True", reason: "RestartsExceeded" });
    expect(condition(paused, "CanaryPaused")?.message).toContain(`${canary.name} restarted 3 times on version 2 (autoPause.maxRestarts 2)`);
    expect(condition(paused, "RolloutInProgress")).toMatchObject({ status: "False", reason: "Suspended" });
    expect(paused.status.rollout?.pause).toMatchObject({ source: "auto", devices: [canary.name] });
    // Nothing else gets the new version while paused.
    await new Promise((r) => setTimeout(r, 600));
    for (const d of [second, third]) expect((await device(d.name)).templateVersion).toBe("1");
    const list = (await s.api<{ items: DeviceView[] }>("GET", `/devices?fleet=${f.name}`)).body.items;
    expect(list.find((d) => d.name === second.name)?.updatedInfo).toContain("; the canary of version 2 is paused (" + canary.name + " restarted 3 times");
    const v2 = (await versions(f.name)).find((v) => v.version === "2");
    expect(v2?.outcome).toBe("RollingOut");
    // A tick with nothing new writes nothing (decided outside a transaction first).
    await runRollouts(s.ctx);
    const row = () => s.ctx.db.rollout.findFirstOrThrow({ where: { fleet: { name: f.name } }, select: { updatedAt: true, state: true } });
    const settled = await row();
    const eventsSettled = (await events(f.name)).length;
    await runRollouts(s.ctx);
    await runRollouts(s.ctx);
    expect(await row()).toEqual(settled);
    expect((await events(f.name)).length).toBe(eventsSettled);
    expect((await events(f.name)).map((e) => `${e.type}/${e.reason}/${e.actor}`)).toContain("RolloutPhaseChanged/CanaryPaused/rollout-controller");
  });

  it("resume overrides the auto-pause (no more auto-pause in this canary), auto-fail still applies: CanaryFailed reverts the fleet to version 1 itself", async () => {
    const f = await setup(2, canaryPolicy({ autoPause: { maxRestarts: 1 }, autoFail: { maxRestarts: 4 } }));
    const [canary, other] = f.devices as [EnrolledDevice, EnrolledDevice];
    await f.change("2.0.0");
    await applied(canary, 2);
    await eventually(async () => ((await fleet(f.name)).status.rollout?.phase === "CanaryPaused" ? true : undefined), 3_000, 20);

    const resumed = await control(f.name, "resume");
    expect(resumed.status, JSON.stringify(resumed.body)).toBe(200);
    // The answer is the fleet after the controller ran.
    expect(resumed.body.status.rollout).toMatchObject({ phase: "Canary", canary: { autoPauseOverride: { actor: "user:admin" } } });
    expect(condition(resumed.body, "CanaryPaused")).toMatchObject({ status: "False" });
    await applied(canary, 4);
    await new Promise((r) => setTimeout(r, 600));
    expect((await fleet(f.name)).status.rollout?.phase).toBe("Canary");

    // Over autoFail.maxRestarts: CanaryFailed, and the fleet goes back to version 1 (no version 3, no new rollout).
    const before = await device(canary.name);
    await applied(canary, 5);
    const failed = await eventually(async () => {
      const now = await fleet(f.name);
      return now.status.rollout?.phase === "CanaryFailed" ? now : undefined;
    }, 3_000, 20);
    expect(failed.status.templateVersion).toBe("1");
    expect(failed.spec.template.spec.version).toBe("1.0.0");
    expect(condition(failed, "CanaryFailed")).toMatchObject({ status: "True", reason: "RestartsExceeded" });
    expect(condition(failed, "CanaryFailed")?.message).toContain("(autoFail.maxRestarts 4)");
    expect(condition(failed, "RolloutInProgress")).toMatchObject({ status: "False", reason: "Inactive" });
    const back = await device(canary.name);
    expect(back).toMatchObject({ templateVersion: "1", renderedVersion: before.renderedVersion + 1 });
    expect((await device(other.name)).updatedStatus).toBe("UpToDate");
    await applied(canary, 0);
    await eventually(async () => ((await device(canary.name)).updatedStatus === "UpToDate" ? true : undefined));
    const vs = await versions(f.name);
    expect(vs.map((v) => [v.version, v.outcome])).toEqual([
      ["2", "Failed"],
      ["1", "Active"],
    ]);
    expect(vs[0]?.outcomeMessage).toMatch(/^RestartsExceeded: /);
    const log = await events(f.name);
    expect(log.map((e) => `${e.type}/${e.reason}/${e.actor}`)).toEqual(
      expect.arrayContaining(["RolloutPhaseChanged/Canary/user:admin", "RolloutPhaseChanged/CanaryFailed/rollout-controller", "TemplateReverted/1/fleet-controller"]),
    );
    // Nothing left to act on.
    expectError(await control(f.name, "pause"), 409, "CONFLICT", /no rollout in progress to pause: the rollout of version 2 ended CanaryFailed/);
  });
});

describe("manual controls", () => {
  it("an operator's pause and resume record who and why; promote ends a manual-validation canary, which nothing else ends", async () => {
    const f = await setup(3, canaryPolicy({ validationMode: "manual", duration: undefined }));
    const [canary, ...rest] = f.devices as [EnrolledDevice, EnrolledDevice, EnrolledDevice];
    await f.change("2.0.0");
    await applied(canary);
    const waiting = await eventually(async () => {
      const now = await fleet(f.name);
      return condition(now, "RolloutInProgress")?.reason === "Waiting" ? now : undefined;
    });
    expect(condition(waiting, "RolloutInProgress")?.message).toContain("Waiting for canary to be promoted");

    const paused = await control(f.name, "pause", { reason: "checking the logs" });
    expect(paused.status).toBe(200);
    expect(paused.body.status.rollout?.phase).toBe("CanaryPaused");
    expect(condition(paused.body, "CanaryPaused")).toMatchObject({ status: "True", reason: "PausedByOperator", message: "paused by user:admin: checking the logs" });
    expectError(await control(f.name, "pause"), 409, "CONFLICT", /already paused/);
    const resumed = await control(f.name, "resume");
    expect(resumed.body.status.rollout?.phase).toBe("Canary");
    expect(condition(resumed.body, "CanaryPaused")?.status).toBe("False");

    // Well past any duration: a manual canary still waits.
    await new Promise((r) => setTimeout(r, 800));
    expect((await fleet(f.name)).status.rollout?.phase).toBe("Canary");
    for (const d of rest) expect((await device(d.name)).templateVersion).toBe("1");

    const promoted = await control(f.name, "promote");
    expect(promoted.status).toBe(200);
    expect(promoted.body.status.rollout?.phase).toBe("RollingOut");
    for (const d of rest) expect((await device(d.name)).templateVersion).toBe("2");
    for (const d of rest) await applied(d);
    const done = await eventually(async () => {
      const now = await fleet(f.name);
      return now.status.rollout?.phase === "Completed" ? now : undefined;
    });
    expect(condition(done, "RolloutInProgress")).toMatchObject({ status: "False", reason: "Inactive" });
    expect((await versions(f.name)).map((v) => [v.version, v.outcome])).toEqual([
      ["2", "Active"],
      ["1", "Superseded"],
    ]);
    const log = (await events(f.name)).map((e) => `${e.type}/${e.reason}/${e.actor}: ${e.message}`);
    expect(log).toEqual(
      expect.arrayContaining([
        "RolloutPhaseChanged/CanaryPaused/user:admin: Canary → CanaryPaused: paused by user:admin: checking the logs",
        "RolloutPhaseChanged/RollingOut/user:admin: Canary → RollingOut: promoted by user:admin",
      ]),
    );
    expectError(await control(f.name, "promote"), 409, "CONFLICT", /ended Completed/);
  });

  it("abort reverts the fleet to the previous version and gives the canary its spec back; who and why are recorded", async () => {
    const f = await setup(2, canaryPolicy({ validationMode: "manual", duration: undefined }));
    const [canary, other] = f.devices as [EnrolledDevice, EnrolledDevice];
    await f.change("2.0.0");
    await applied(canary);
    const before = await device(canary.name);
    const aborted = await control(f.name, "abort", { reason: "wrong config file" });
    expect(aborted.status, JSON.stringify(aborted.body)).toBe(200);
    expect(aborted.body.status.templateVersion).toBe("1");
    expect(aborted.body.status.rollout).toMatchObject({ phase: "Aborted", templateVersion: "2" });
    expect(await device(canary.name)).toMatchObject({ templateVersion: "1", renderedVersion: before.renderedVersion + 1 });
    expect((await device(other.name)).updatedStatus).toBe("UpToDate");
    const v2 = (await versions(f.name)).find((v) => v.version === "2");
    expect(v2).toMatchObject({ outcome: "Failed", outcomeMessage: "aborted by user:admin: wrong config file" });
    const log = (await events(f.name)).map((e) => `${e.type}/${e.reason}/${e.actor}`);
    expect(log).toEqual(expect.arrayContaining(["RolloutPhaseChanged/Aborted/user:admin", "TemplateReverted/1/fleet-controller"]));
    const rows = await s.ctx.db.rolloutRequest.findMany({ where: { fleet: { name: f.name } }, select: { kind: true, reason: true, actor: true, outcome: true, handledAt: true } });
    expect(rows).toEqual([{ kind: "abort", reason: "wrong config file", actor: "user:admin", outcome: "Applied", handledAt: expect.any(Date) as Date }]);
  });

  it("a viewer's pause is 403; a request with nothing to act on is 409; neither writes anything", async () => {
    const f = await setup(2, canaryPolicy({ validationMode: "manual", duration: undefined }));
    await f.change("2.0.0");
    const requests = () => s.ctx.db.rolloutRequest.count({ where: { fleet: { name: f.name } } });
    const eventCount = async () => (await events(f.name)).length;
    const eventsBefore = await eventCount();

    expectError(await control(f.name, "pause", { reason: "viewer" }, viewerToken), 403, "FORBIDDEN");
    const caller = createCallerFactory(appRouter)({ server: s.ctx, auth: s.auth, principal: { userId: "v", username: "rita", role: "viewer", via: "token" } });
    await expect(caller.fleets.abort({ name: f.name })).rejects.toMatchObject({ code: "FORBIDDEN" });
    expectError(await control(f.name, "resume"), 409, "CONFLICT", /cannot resume the rollout of fleet .*: nothing is paused/);
    expectError(await control(f.name, "pause", { reason: 42 }), 400, "INVALID_REQUEST");
    expectError(await control("no-such-fleet", "pause"), 404, "NOT_FOUND");
    expect(await requests()).toBe(0);
    expect(await eventCount()).toBe(eventsBefore);
    expect((await fleet(f.name)).status.rollout?.phase).toBe("Canary");

    // A fleet without a policy: a change goes to all at once, no rollout to pause.
    const plain = await setup(1, undefined);
    const put = await plain.change("2.0.0");
    expect(put.body.status.rollout).toBeNull();
    expect((await device(plain.devices[0]!.name)).templateVersion).toBe("2");
    expectError(await control(plain.name, "pause"), 409, "CONFLICT", /has no rollout in progress/);
    expect(await s.ctx.db.rollout.count({ where: { fleet: { name: plain.name } } })).toBe(0);
  });
});

it("the OpenAPI document lists the four controls, with {reason?} for pause and abort", async () => {
  const doc = (await s.api<{ paths: Record<string, { post?: { requestBody?: { content: Record<string, { schema: { properties?: Record<string, unknown> } }> } } }> }>("GET", "/openapi.json", undefined, "")).body;
  for (const kind of ["pause", "resume", "promote", "abort"]) {
    const op = doc.paths[`/fleets/{name}/rollout/${kind}`]?.post;
    expect(op, kind).toBeDefined();
    const props = Object.keys(op?.requestBody?.content["application/json"]?.schema.properties ?? {});
    expect(props, kind).toEqual(kind === "pause" || kind === "abort" ? ["reason"] : []);
  }
});

describe("update failures", () => {
  it("a failed update fails the canary; a failure the device reported for an earlier spec does not fail the next canary", async () => {
    const f = await setup(2, canaryPolicy({ validationMode: "manual", duration: undefined }));
    const [canary] = f.devices as [EnrolledDevice, EnrolledDevice];
    await f.change("2.0.0");
    const v2 = await device(canary.name);
    await heartbeat(s, canary, {
      renderedVersion: v2.renderedVersion - 1,
      applications: [{ name: "web", status: "Running", restarts: 0 }],
      conditions: { updating: { status: false, reason: "Error", info: "simulated failure applying version 2.0.0" } },
    });
    const failed = await eventually(async () => {
      const now = await fleet(f.name);
      return now.status.rollout?.phase === "CanaryFailed" ? now : undefined;
    }, 3_000, 20);
    expect(condition(failed, "CanaryFailed")).toMatchObject({ status: "True", reason: "UpdateFailed" });
    expect(condition(failed, "CanaryFailed")?.message).toContain(`${canary.name} failed to update to version 2 (update state Error)`);
    expect(failed.status.templateVersion).toBe("1");

    // Version 3 goes to the same canary before it reports again: its Error is about version 2.
    const put = await f.change("3.0.0");
    expect(put.body.status.rollout).toMatchObject({ phase: "Canary", canaryDevices: [canary.name], previousVersion: "1" });
    const paused = await control(f.name, "pause", { reason: "look first" });
    expect(paused.status, JSON.stringify(paused.body)).toBe(200);
    expect(paused.body.status.rollout?.phase).toBe("CanaryPaused");
  });
});

describe("superseding and joiners", () => {
  it("a new template change supersedes the running rollout; the new one reverts to the last version that finished rolling out", async () => {
    const f = await setup(2, canaryPolicy({ validationMode: "manual", duration: undefined }));
    const [canary, other] = f.devices as [EnrolledDevice, EnrolledDevice];
    await f.change("2.0.0");
    await applied(canary);
    const put = await f.change("3.0.0");
    expect(put.body.status.rollout).toMatchObject({ templateVersion: "3", previousVersion: "1", phase: "Canary", canaryDevices: [canary.name] });
    expect((await device(canary.name)).templateVersion).toBe("3");
    expect((await device(other.name)).templateVersion).toBe("1");
    expect((await versions(f.name)).map((v) => [v.version, v.outcome])).toEqual([
      ["3", "RollingOut"],
      ["2", "Superseded"],
      ["1", "Active"],
    ]);
    const rows = await s.ctx.db.rollout.findMany({ where: { fleet: { name: f.name } }, orderBy: { createdAt: "asc" }, select: { templateVersion: true, phase: true, endedAt: true } });
    expect(rows.map((r) => [r.templateVersion, r.phase, r.endedAt !== null])).toEqual([
      ["2", "Superseded", true],
      ["3", "Canary", false],
    ]);
    expect((await events(f.name)).some((e) => e.type === "RolloutPhaseChanged" && e.reason === "Superseded" && e.message.includes("version 3 replaces version 2"))).toBe(true);

    // Aborting the new one reverts to version 1, never to the superseded 2.
    const aborted = await control(f.name, "abort");
    expect(aborted.body.status.templateVersion).toBe("1");
    expect((await device(canary.name)).templateVersion).toBe("1");
  });

  it("a device that joins during the canary gets the previous version; the final batch gives it the new one", async () => {
    const f = await setup(2, canaryPolicy({ validationMode: "manual", duration: undefined }));
    await f.change("2.0.0");
    const late = await enrollDevice(s, `${f.name}-late`, { suite: f.suite });
    expect((await device(late.name)).templateVersion).toBe("1");
    const promoted = await control(f.name, "promote");
    expect(promoted.status).toBe(200);
    expect((await device(late.name)).templateVersion).toBe("2");
  });
});
