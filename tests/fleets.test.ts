/**
 * Fleets against a real server (issue 7, DESIGN.md §3, OPERATOR_API.md "Fleet"): CRUD in JSON
 * and YAML with strict validation, immutable template versions with diffs, roles, membership
 * (approval, label change, decommission, fleet create/delete, overlapping selectors), rendered
 * specs in the held long-poll, and seed 003's update status with the reason of every
 * OutOfDate device.
 */
import type { Condition } from "../lib/fleet-spec";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "./helpers/server";
import { enrollDevice, eventually, expectError, heartbeat, uniqueName, type EnrolledDevice } from "./helpers/devices";
import { issueOperatorToken } from "../server/auth/auth";
import { createCallerFactory } from "../server/trpc/init";
import { appRouter } from "../server/trpc/router";
import type { Role } from "../server/auth/roles";

let s: TestServer;
const tokens: Record<Role, string> = { admin: "", operator: "", viewer: "" };

function callerAs(role: Role, userId: string, username: string) {
  return createCallerFactory(appRouter)({ server: s.ctx, auth: s.auth, principal: { userId, username, role, via: "token" } });
}

beforeAll(async () => {
  s = await startTestServer({ DROVER_SWEEP_SECONDS: "60" });
  tokens.admin = s.adminToken;
  const admin = await s.ctx.db.user.findUniqueOrThrow({ where: { username: "admin" }, select: { id: true } });
  const asAdmin = callerAs("admin", admin.id, "admin");
  for (const [role, username] of [
    ["viewer", "vera"],
    ["operator", "otto"],
  ] as const) {
    const user = await asAdmin.auth.createUser({ username, password: `${username}-password-1`, role });
    // Issued as the token route does once the password is checked (a scrypt hash: tests/api-tokens tests the route).
    tokens[role] = (await issueOperatorToken(s.ctx.db, user.id, s.ctx.now())).token;
  }
});
afterAll(async () => {
  await s?.close();
});

// ---------------------------------------------------------------------------------------
// Shapes and helpers

interface Fleet {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels: Record<string, string>; generation: number; createdBy: string; updatedBy: string };
  spec: { selector: unknown; template: { spec: { version: string; applications: unknown[] } }; rolloutPolicy?: Record<string, unknown> };
  status: {
    templateVersion: string;
    conditions: Condition[];
    devices: { total: number; upToDate: number; updating: number; outOfDate: number; unknown: number };
    rollout: unknown;
  };
}
interface TemplateVersionView {
  version: string;
  current: boolean;
  author: string;
  createdAt: string;
  outcome: string;
  diff: string;
  spec: { version: string };
}
interface Spec {
  renderedVersion: number;
  templateVersion: string;
  version: string;
  applications: { name: string; command: string[] }[];
  config: { files: { path: string; content: string }[] };
}
interface DeviceView {
  name: string;
  fleet: string | null;
  renderedVersion: number;
  templateVersion: string | null;
  updatedStatus: string;
  updatedInfo: string | null;
  spec: Spec | null;
  renderedAt: string | null;
  conditions: Condition[];
}
interface Work {
  spec?: Spec;
  actions: unknown[];
}

function fleetBody(name: string, matchLabels: Record<string, string>, version = "1.0.0", more: Record<string, unknown> = {}) {
  return {
    metadata: { name },
    spec: {
      selector: { matchLabels },
      template: { spec: { version, applications: [{ name: "web", command: ["/usr/bin/web", "--port", "8080"], env: { MODE: version } }] } },
      ...more,
    },
  };
}

async function createFleet(body: unknown): Promise<Fleet> {
  const res = await s.api<Fleet>("POST", "/fleets", body);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

async function putFleet(name: string, body: unknown, token?: string) {
  return s.api<Fleet>("PUT", `/fleets/${name}`, body, token);
}

async function device(name: string): Promise<DeviceView> {
  const res = await s.api<DeviceView>("GET", `/devices/${name}`);
  expect(res.status).toBe(200);
  return res.body;
}

async function fleet(name: string): Promise<Fleet> {
  const res = await s.api<Fleet>("GET", `/fleets/${name}`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

function work(d: EnrolledDevice, specVersion: number, wait = 0) {
  return s.agent<Work>("GET", `/work?specVersion=${specVersion}&wait=${wait}`, undefined, d.auth);
}

/** Sends a body as YAML. */
async function sendYaml(method: string, path: string, text: string, token = s.adminToken, type = "application/yaml") {
  const res = await fetch(`${s.url}/api/v1${path}`, { method, headers: { authorization: `Bearer ${token}`, "content-type": type }, body: text });
  const body = await res.text();
  return { status: res.status, body: (body ? JSON.parse(body) : undefined) as unknown };
}

const label = () => uniqueName("suite");

/** Sets `value` at `path` in a JSON object (the last key is added). */
function setPath(target: object, path: string[], value: unknown): void {
  let node = target as Record<string, unknown>;
  for (const key of path.slice(0, -1)) node = node[key] as Record<string, unknown>;
  node[path[path.length - 1]!] = value;
}
const condition = (conditions: Condition[], type: string) => conditions.find((c) => c.type === type);

// ---------------------------------------------------------------------------------------

describe("CRUD and validation", () => {
  it("POST creates a fleet: version 1, the Kubernetes-style object, events", async () => {
    const name = uniqueName("fleet");
    const created = await createFleet(fleetBody(name, { suite: label() }));
    expect(created).toMatchObject({
      apiVersion: "drover/v1",
      kind: "Fleet",
      metadata: { name, labels: {}, generation: 1, createdBy: "user:admin", updatedBy: "user:admin" },
      spec: { template: { spec: { version: "1.0.0", config: { files: [] }, hooks: {} } } },
      status: { templateVersion: "1", devices: { total: 0, upToDate: 0, updating: 0, outOfDate: 0, unknown: 0 }, rollout: null },
    });
    expect(condition(created.status.conditions, "DevicesUpToDate")).toMatchObject({ status: "True", reason: "NoDevices" });
    expect(condition(created.status.conditions, "OverlappingSelectors")).toMatchObject({ status: "False" });
    const list = await s.api<{ items: Fleet[] }>("GET", "/fleets");
    expect(list.body.items.map((f) => f.metadata.name)).toContain(name);
    const events = await s.api<{ items: { type: string; reason: string }[] }>("GET", `/events?kind=Fleet&name=${name}`);
    expect(events.body.items.map((e) => e.type).sort()).toEqual(["FleetConditionChanged", "FleetConditionChanged", "FleetCreated", "TemplateVersionCreated"]);
    expectError(await s.api("POST", "/fleets", fleetBody(name, { suite: label() })), 409, "CONFLICT", /already exists/);
    expectError(await s.api("GET", "/fleets/no-such-fleet"), 404, "NOT_FOUND", /no-such-fleet/);
  });

  it.each([
    ["a top-level field", ["extra"], /body: Unrecognized key: "extra"/],
    ["a template field", ["spec", "template", "spec", "replicas"], /spec\.template\.spec: Unrecognized key: "replicas"/],
    ["a metadata field", ["metadata", "namespace"], /metadata: Unrecognized key: "namespace"/],
    ["a selector field", ["spec", "selector", "matchLabel"], /spec\.selector: Unrecognized key: "matchLabel"/],
    ["an application field", ["spec", "template", "spec", "applications", "0", "cmd"], /spec\.template\.spec\.applications\.0: Unrecognized key: "cmd"/],
  ])("an unknown field (%s) is 400 naming it, and nothing is created", async (_what, path, message) => {
    const name = uniqueName("bad");
    const body = fleetBody(name, { suite: label() });
    setPath(body, path, "surprise");
    const before = await s.ctx.db.event.count();
    expectError(await s.api("POST", "/fleets", body), 400, "INVALID_REQUEST", message);
    expect(await s.ctx.db.fleet.count({ where: { name } })).toBe(0);
    expect(await s.ctx.db.event.count()).toBe(before);
  });

  it.each([
    [{ canary: { autoPause: { maxRestarts: 3 }, autoFail: { maxRestarts: 3 } } }, /autoFail\.maxRestarts must be higher than autoPause\.maxRestarts/],
    [{ canary: { validationMode: "manual", duration: "5m" } }, /canary duration does not have effect with validationMode=manual/],
    [{ canary: { duration: "10m", autoFail: { canaryTimeout: "5m" } } }, /canaryTimeout must be greater than the canary duration/],
    [{ successThreshold: "120%" }, /rolloutPolicy\.successThreshold: at most 100%/],
    [{ disruptionBudget: { groupBy: ["store"] } }, /maxUnavailable, minAvailable or both/],
  ])("rollout policy validation (EDS rules) surfaces as 400: %j", async (policy, message) => {
    const name = uniqueName("bad");
    expectError(await s.api("POST", "/fleets", fleetBody(name, { suite: label() }, "1.0.0", { rolloutPolicy: policy })), 400, "INVALID_REQUEST", message);
    expect(await s.ctx.db.fleet.count({ where: { name } })).toBe(0);
  });

  it("a valid rollout policy is kept with its defaults, and applying it again changes nothing", async () => {
    const name = uniqueName("fleet");
    const body = fleetBody(name, { suite: label() }, "1.0.0", { rolloutPolicy: { canary: { replicas: "10%" } } });
    const created = await createFleet(body);
    expect(created.spec.rolloutPolicy).toMatchObject({
      canary: { replicas: "10%", autoPause: { enabled: true, maxRestarts: 2 }, autoFail: { enabled: true, maxRestarts: 5 }, validationMode: "auto" },
      successThreshold: "90%",
      defaultUpdateTimeout: "24h",
    });
    // The object as read (status, server metadata and defaults included) applies as unchanged.
    const again = await putFleet(name, created);
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect(again.body.metadata.generation).toBe(1);
    expect(again.body.status.templateVersion).toBe("1");
  });

  it("PUT: the name in the path must be metadata.name; unknown fleet is 404", async () => {
    const name = uniqueName("fleet");
    await createFleet(fleetBody(name, { suite: label() }));
    expectError(await putFleet(name, fleetBody("other-name", { suite: label() })), 400, "INVALID_REQUEST", /metadata\.name: "other-name" is not the fleet in the path/);
    expectError(await putFleet("missing-fleet", fleetBody("missing-fleet", { suite: label() })), 404, "NOT_FOUND");
    expectError(await putFleet(name, { metadata: { name }, spec: { selector: {} } }), 400, "INVALID_REQUEST", /spec\.template/);
  });

  it("YAML bodies (application/yaml) create and update; bad YAML and other media types are refused", async () => {
    const name = uniqueName("yaml");
    const suite = label();
    const text = `
metadata: {name: ${name}, labels: {team: edge}}
spec:
  selector: {matchLabels: {suite: ${suite}}}
  template:
    spec:
      version: "2.1.0"
      config: {files: [{path: /etc/app.conf, content: "port=8080\\n"}]}
      applications: [{name: web, command: ["/usr/bin/web", "--port", "8080"], env: {A: "1"}}]
`;
    const created = await sendYaml("POST", "/fleets", text);
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body).toMatchObject({ metadata: { name, labels: { team: "edge" } }, spec: { template: { spec: { version: "2.1.0" } } } });

    const updated = await sendYaml("PUT", `/fleets/${name}`, text.replace('"2.1.0"', '"2.2.0"'), s.adminToken, "application/x-yaml; charset=utf-8");
    expect(updated.status, JSON.stringify(updated.body)).toBe(200);
    expect(updated.body).toMatchObject({ status: { templateVersion: "2" }, spec: { template: { spec: { version: "2.2.0" } } } });

    const unknown = await sendYaml("PUT", `/fleets/${name}`, text.replace("version:", "verison:"));
    expectError(unknown, 400, "INVALID_REQUEST", /Unrecognized key: "verison"/);
    expectError(await sendYaml("POST", "/fleets", "metadata: {name: x\n  spec: ["), 400, "INVALID_REQUEST", /not valid YAML/);
    expectError(await sendYaml("POST", "/fleets", "a: 1\na: 2\n"), 400, "INVALID_REQUEST", /not valid YAML/);
    expectError(await sendYaml("POST", "/fleets", "---\na: 1\n---\nb: 2\n"), 400, "INVALID_REQUEST", /not valid YAML/);
    expectError(await sendYaml("POST", "/fleets", `metadata: {name: ${uniqueName("p")}, __proto__: {x: 1}}\n`), 400, "INVALID_REQUEST", /__proto__/);
    expectError(await sendYaml("POST", "/fleets", "- 1\n- 2\n"), 400, "INVALID_REQUEST", /body: expected an object/);
    // Aliases are bounded (no "billion laughs").
    const laughs = ["a: &a [x, x, x, x, x, x, x, x, x, x]", ...Array.from({ length: 8 }, (_, i) => `${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [${Array(10).fill(`*${String.fromCharCode(97 + i)}`).join(", ")}]`)].join("\n");
    expectError(await sendYaml("POST", "/fleets", laughs), 400, "INVALID_REQUEST", /YAML/);
    // Other media types: 415 at the door; YAML only where a route takes it.
    expectError(await sendYaml("POST", "/fleets", text, s.adminToken, "text/plain"), 415, "UNSUPPORTED_MEDIA_TYPE", /application\/json or application\/yaml/);
    expectError(await sendYaml("POST", "/actions", "device: x\nkind: noop\n"), 415, "UNSUPPORTED_MEDIA_TYPE");
    expect((await fleet(name)).status.templateVersion).toBe("2");
  });

  it("an oversized YAML body is 413 at the door; the OpenAPI document lists the routes, with YAML where taken", async () => {
    const big = `metadata: {name: big}\nspec: {}\n# ${"x".repeat(1024 * 1024)}\n`;
    expectError(await sendYaml("POST", "/fleets", big), 413, "TOO_LARGE");
    const doc = (await (await fetch(`${s.url}/api/v1/openapi.json`)).json()) as { paths: Record<string, Record<string, { requestBody?: { content: Record<string, unknown> } }>> };
    expect(Object.keys(doc.paths["/fleets"]!).sort()).toEqual(["get", "post"]);
    expect(Object.keys(doc.paths["/fleets/{name}"]!).sort()).toEqual(["delete", "get", "put"]);
    expect(Object.keys(doc.paths["/fleets/{name}"]!.put!.requestBody!.content).sort()).toEqual(["application/json", "application/yaml"]);
    expect(JSON.stringify(doc.paths["/fleets"]!.post!.requestBody)).toContain("rolloutPolicy");
    expect(doc.paths["/fleets/{name}/templateversions"]?.get).toBeDefined();
    expect(doc.paths["/devices/{name}/labels"]?.put).toBeDefined();
  });

  it("a viewer reads fleets, and its writes are 403 and change nothing", async () => {
    const name = uniqueName("fleet");
    await createFleet(fleetBody(name, { suite: label() }));
    expect((await s.api("GET", "/fleets", undefined, tokens.viewer)).status).toBe(200);
    expect((await s.api("GET", `/fleets/${name}`, undefined, tokens.viewer)).status).toBe(200);
    expect((await s.api("GET", `/fleets/${name}/templateversions`, undefined, tokens.viewer)).status).toBe(200);
    const before = { events: await s.ctx.db.event.count(), fleets: await s.ctx.db.fleet.count(), versions: await s.ctx.db.templateVersion.count() };
    expectError(await s.api("POST", "/fleets", fleetBody(uniqueName("v"), { suite: label() }), tokens.viewer), 403, "FORBIDDEN");
    expectError(await putFleet(name, fleetBody(name, { suite: label() }, "9.9.9"), tokens.viewer), 403, "FORBIDDEN");
    expectError(await s.api("DELETE", `/fleets/${name}`, undefined, tokens.viewer), 403, "FORBIDDEN");
    expectError(await sendYaml("POST", "/fleets", "metadata: {name: yaml-by-viewer}\n", tokens.viewer), 403, "FORBIDDEN");
    expect({ events: await s.ctx.db.event.count(), fleets: await s.ctx.db.fleet.count(), versions: await s.ctx.db.templateVersion.count() }).toEqual(before);
    // An operator may.
    expect((await putFleet(name, fleetBody(name, { suite: label() }, "2.0.0"), tokens.operator)).body.metadata.updatedBy).toBe("user:otto");
  });
});

// ---------------------------------------------------------------------------------------

describe("template versions", () => {
  it("every template change is a new immutable version with author, diff and outcome; other changes make none", async () => {
    const name = uniqueName("fleet");
    const suite = label();
    await createFleet(fleetBody(name, { suite }));
    // Selector only: a new generation, no new version.
    const selectorOnly = await putFleet(name, fleetBody(name, { suite, tier: "a" }));
    expect(selectorOnly.body).toMatchObject({ metadata: { generation: 2 }, status: { templateVersion: "1" } });
    // Template: version 2, by the operator.
    const v2 = await putFleet(name, fleetBody(name, { suite, tier: "a" }, "1.1.0"), tokens.operator);
    expect(v2.body).toMatchObject({ metadata: { generation: 3 }, status: { templateVersion: "2" } });
    // The same again: nothing.
    const same = await putFleet(name, fleetBody(name, { suite, tier: "a" }, "1.1.0"));
    expect(same.body.metadata.generation).toBe(3);
    // Policy only: no new version.
    expect((await putFleet(name, fleetBody(name, { suite, tier: "a" }, "1.1.0", { rolloutPolicy: { successThreshold: "80%" } }))).body.status.templateVersion).toBe("2");

    const versions = (await s.api<{ items: TemplateVersionView[] }>("GET", `/fleets/${name}/templateversions`)).body.items;
    expect(versions.map((v) => [v.version, v.author, v.outcome, v.current])).toEqual([
      ["2", "user:otto", "Active", true],
      ["1", "user:admin", "Superseded", false],
    ]);
    expect(versions[0]!.diff).toBe(
      ["--- version 1", "+++ version 2", "@@ -1,4 +1,4 @@", "-version: 1.0.0", "+version: 1.1.0", " config:", "   files: []", " applications:", "@@ -8,5 +8,5 @@", "       - --port", "       - \"8080\"", "     env:", "-      MODE: 1.0.0", "+      MODE: 1.1.0", " hooks: {}", ""].join("\n"),
    );
    expect(versions[1]!.diff).toMatch(/^--- \/dev\/null\n\+\+\+ version 1\n@@ -0,0 \+1,\d+ @@\n\+version: 1\.0\.0\n/);
    expect(Date.parse(versions[0]!.createdAt)).toBeGreaterThanOrEqual(Date.parse(versions[1]!.createdAt));
    expect(versions[0]!.spec.version).toBe("1.1.0");

    const events = (await s.api<{ items: { type: string; reason: string }[] }>("GET", `/events?kind=Fleet&name=${name}&limit=50`)).body.items.filter((e) => e.type !== "FleetConditionChanged");
    expect(events.map((e) => `${e.type}:${e.reason}`).reverse()).toEqual([
      "FleetCreated:Created",
      "TemplateVersionCreated:1",
      "FleetUpdated:Updated",
      "FleetUpdated:Updated",
      "TemplateVersionCreated:2",
      "FleetUpdated:Updated",
    ]);
  });
});

// ---------------------------------------------------------------------------------------

describe("membership", () => {
  it("a device approved with matching labels joins at once and gets its fleet's spec before it first polls", async () => {
    const suite = label();
    const name = uniqueName("fleet");
    await createFleet(fleetBody(name, { suite }, "3.0.0"));
    const d = await enrollDevice(s, uniqueName("dev"), { suite });
    const view = await device(d.name);
    expect(view).toMatchObject({ fleet: name, templateVersion: "1", renderedVersion: 1, spec: { renderedVersion: 1, templateVersion: "1", version: "3.0.0" } });
    expect(view.renderedAt).not.toBeNull();
    const w = await work(d, 0);
    expect(w.body.spec).toMatchObject({ renderedVersion: 1, templateVersion: "1", version: "3.0.0", applications: [{ name: "web", command: ["/usr/bin/web", "--port", "8080"] }] });
    const events = await s.api<{ items: { type: string; reason: string }[] }>("GET", `/events?kind=Device&name=${d.name}`);
    expect(events.body.items.map((e) => e.type)).toEqual(expect.arrayContaining(["DeviceEnrolled", "FleetJoined", "SpecRendered"]));
    expect((await fleet(name)).status.devices.total).toBe(1);
  });

  it("a label change moves a device at once: it leaves (keeping its spec, unmanaged) and joins another", async () => {
    const a = label();
    const b = label();
    const fa = uniqueName("fleet");
    const fb = uniqueName("fleet");
    await createFleet(fleetBody(fa, { suite: a }, "a-1"));
    await createFleet(fleetBody(fb, { suite: b }, "b-1"));
    const d = await enrollDevice(s, uniqueName("dev"), { suite: a });
    expect((await device(d.name)).fleet).toBe(fa);
    expect((await heartbeat(s, d, { renderedVersion: 1 })).status).toBe(200);
    expect((await device(d.name)).updatedStatus).toBe("UpToDate");

    // Out of every fleet: unmanaged, same spec, same renderedVersion, still UpToDate.
    const off = await s.api<DeviceView>("PUT", `/devices/${d.name}/labels`, { labels: { suite: "none-" + a } });
    expect(off.status, JSON.stringify(off.body)).toBe(200);
    expect(off.body).toMatchObject({ fleet: null, renderedVersion: 1, templateVersion: "1", updatedStatus: "UpToDate", spec: { version: "a-1", renderedVersion: 1 } });
    expect((await fleet(fa)).status.devices.total).toBe(0);

    // Into fleet b: its spec at once, renderedVersion 2, OutOfDate until the device reports it.
    const poll = work(d, 1, 10);
    const moved = await s.api<DeviceView>("PUT", `/devices/${d.name}/labels`, { labels: { suite: b } });
    expect(moved.body).toMatchObject({ fleet: fb, renderedVersion: 2, templateVersion: "1", updatedStatus: "OutOfDate", spec: { version: "b-1" } });
    expect(moved.body.updatedInfo).toBe("running renderedVersion 1 of 2");
    expect((await poll).body.spec).toMatchObject({ renderedVersion: 2, version: "b-1" });
    const events = (await s.api<{ items: { type: string; reason: string }[] }>("GET", `/events?kind=Device&name=${d.name}`)).body.items.map((e) => `${e.type}:${e.reason}`);
    expect(events).toEqual(expect.arrayContaining([`FleetLeft:${fa}`, `FleetJoined:${fb}`, "LabelsChanged:Updated", "SpecRendered:2", "UpdatedStatusChanged:OutOfDate"]));
    // Bad labels: 400, nothing changes.
    expectError(await s.api("PUT", `/devices/${d.name}/labels`, { labels: { "bad key!": "x" } }), 400, "INVALID_REQUEST");
    expectError(await s.api("PUT", `/devices/${d.name}/labels`, { labels: { suite: a } }, tokens.viewer), 403, "FORBIDDEN");
    expect((await device(d.name)).fleet).toBe(fb);
  });

  it("a decommission request takes the device out of its fleet", async () => {
    const suite = label();
    const name = uniqueName("fleet");
    await createFleet(fleetBody(name, { suite }));
    const d = await enrollDevice(s, uniqueName("dev"), { suite });
    expect((await fleet(name)).status.devices.total).toBe(1);
    expect((await s.api("POST", `/devices/${d.name}/decommission`)).status).toBe(200);
    expect(await device(d.name)).toMatchObject({ fleet: null, renderedVersion: 1 });
    expect((await fleet(name)).status.devices.total).toBe(0);
    // A template change no longer reaches it.
    await putFleet(name, fleetBody(name, { suite }, "2.0.0"));
    expect((await device(d.name)).renderedVersion).toBe(1);
  });

  it("creating a fleet takes in the devices it selects; deleting it releases them with their spec", async () => {
    const suite = label();
    const devices = [await enrollDevice(s, uniqueName("dev"), { suite }), await enrollDevice(s, uniqueName("dev"), { suite })];
    const other = await enrollDevice(s, uniqueName("dev"), { suite: label() });
    const name = uniqueName("fleet");
    const created = await createFleet(fleetBody(name, { suite }, "5.0.0"));
    expect(created.status.devices.total).toBe(2);
    for (const d of devices) expect(await device(d.name)).toMatchObject({ fleet: name, renderedVersion: 1, spec: { version: "5.0.0" } });
    expect((await device(other.name)).fleet).toBeNull();

    const deleted = await s.api<{ deleted: string; devicesReleased: number }>("DELETE", `/fleets/${name}`);
    expect(deleted.body).toEqual({ deleted: name, devicesReleased: 2 });
    expectError(await s.api("GET", `/fleets/${name}`), 404, "NOT_FOUND");
    for (const d of devices) {
      // Kept: the same spec at the same renderedVersion (the agent has nothing to do).
      expect(await device(d.name)).toMatchObject({ fleet: null, renderedVersion: 1, templateVersion: "1", spec: { renderedVersion: 1, version: "5.0.0" } });
      expect((await work(d, 0)).body.spec).toMatchObject({ renderedVersion: 1, version: "5.0.0" });
      expect((await work(d, 1)).body.spec).toBeUndefined();
    }
    expect(await s.ctx.db.templateVersion.count({ where: { fleet: { name } } })).toBe(0);
    const events = (await s.api<{ items: { type: string }[] }>("GET", `/events?kind=Fleet&name=${name}`)).body.items.map((e) => e.type);
    expect(events).toContain("FleetDeleted");
    expectError(await s.api("DELETE", `/fleets/${name}`), 404, "NOT_FOUND");
  });

  it("overlapping selectors: the device stays where it is, with a condition naming both fleets; one in none joins the oldest", async () => {
    const suite = label();
    const older = uniqueName("fleet-old");
    const newer = uniqueName("fleet-new");
    await createFleet(fleetBody(older, { suite }, "old"));
    const d = await enrollDevice(s, uniqueName("dev"), { suite, zone: "z1" });
    expect((await device(d.name)).fleet).toBe(older);

    // A newer fleet that also matches: the device stays, and says so.
    await createFleet(fleetBody(newer, { zone: "z1", suite }, "new"));
    const view = await device(d.name);
    expect(view.fleet).toBe(older);
    expect(view.spec?.version).toBe("old");
    const overlap = condition(view.conditions, "MultipleOwners");
    expect(overlap).toMatchObject({ status: "True", reason: "MultipleOwners" });
    expect(overlap?.message).toContain(older);
    expect(overlap?.message).toContain(newer);
    const fNew = await fleet(newer);
    expect(fNew.status.devices.total).toBe(0);
    expect(condition(fNew.status.conditions, "OverlappingSelectors")).toMatchObject({ status: "True", reason: "MultipleOwners" });
    expect(condition(fNew.status.conditions, "OverlappingSelectors")?.message).toContain(older);
    expect(condition((await fleet(older)).status.conditions, "OverlappingSelectors")?.message).toContain(newer);

    // A device in neither that matches both joins the older one.
    const fresh = await enrollDevice(s, uniqueName("dev"), { suite, zone: "z1" });
    expect((await device(fresh.name)).fleet).toBe(older);

    // The newer fleet's selector stops overlapping: the conditions clear.
    await putFleet(newer, fleetBody(newer, { zone: "z2", suite }, "new"));
    expect(condition((await device(d.name)).conditions, "MultipleOwners")).toBeUndefined();
    expect(condition((await fleet(older)).status.conditions, "OverlappingSelectors")?.status).toBe("False");

    // The older fleet goes: its members join the one that still matches.
    await putFleet(newer, fleetBody(newer, { zone: "z1", suite }, "new"));
    expect((await device(d.name)).fleet).toBe(older);
    expect((await s.api("DELETE", `/fleets/${older}`)).status).toBe(200);
    const after = await device(d.name);
    expect(after).toMatchObject({ fleet: newer, spec: { version: "new" } });
    expect(condition(after.conditions, "MultipleOwners")).toBeUndefined();
    expect((await fleet(newer)).status.devices.total).toBe(2);
  });

  it("the device list filters by fleet (REST and tRPC), with the fleet and the OutOfDate reason on each row", async () => {
    const suite = label();
    const name = uniqueName("fleet");
    await createFleet(fleetBody(name, { suite }));
    const members = [await enrollDevice(s, uniqueName("dev"), { suite }), await enrollDevice(s, uniqueName("dev"), { suite })];
    await enrollDevice(s, uniqueName("dev"), { suite: label() });
    const page = await s.api<{ items: (DeviceView & { updatedInfo: string | null })[]; total: number }>("GET", `/devices?fleet=${name}`);
    expect(page.body.total).toBe(2);
    expect(page.body.items.map((d) => d.name).sort()).toEqual(members.map((m) => m.name).sort());
    expect(page.body.items.every((d) => d.fleet === name)).toBe(true);
    // With the other filters.
    expect((await s.api<{ total: number }>("GET", `/devices?fleet=${name}&summary=Online`)).body.total).toBe(0);
    await heartbeat(s, members[0]!, { renderedVersion: 0 });
    const outOfDate = await s.api<{ items: { name: string; updatedInfo: string }[] }>("GET", `/devices?fleet=${name}&updated=OutOfDate`);
    expect(outOfDate.body.items).toEqual([expect.objectContaining({ name: members[0]!.name, updatedInfo: "running renderedVersion 0 of 1" })]);
    const admin = await s.ctx.db.user.findUniqueOrThrow({ where: { username: "admin" }, select: { id: true } });
    const viaTrpc = await callerAs("viewer", admin.id, "admin").devices.list({ fleet: name, labelSelector: `suite=${suite}` });
    expect(viaTrpc.total).toBe(2);
  });
});

// ---------------------------------------------------------------------------------------

describe("rendering and update status (seed 003)", () => {
  it("a template change answers the held long-poll with the new spec and renderedVersion + 1; UpToDate → OutOfDate (with reason) → Updating → UpToDate", async () => {
    const suite = label();
    const name = uniqueName("fleet");
    await createFleet(fleetBody(name, { suite }, "1.0.0"));
    const d = await enrollDevice(s, uniqueName("dev"), { suite });
    const first = (await work(d, 0)).body.spec!;
    expect(first.renderedVersion).toBe(1);
    await heartbeat(s, d, { renderedVersion: 1 });
    expect(await device(d.name)).toMatchObject({ updatedStatus: "UpToDate", updatedInfo: null });
    // Heartbeats do not wait for the fleet controller: it recounts right after.
    await eventually(async () => ((await fleet(name)).status.devices.upToDate === 1 ? true : undefined));

    // The agent's long-poll is held; the operator changes the template.
    const held = work(d, 1, 30);
    await new Promise((r) => setTimeout(r, 100));
    const started = Date.now();
    const put = await putFleet(name, fleetBody(name, { suite }, "2.0.0"));
    expect(put.status).toBe(200);
    const answer = await held;
    const latency = Date.now() - started;
    expect(answer.body.spec).toMatchObject({ renderedVersion: 2, templateVersion: "2", version: "2.0.0", applications: [{ name: "web" }] });
    expect(latency).toBeLessThan(10_000);

    // OutOfDate with its reason, and the fleet counts it.
    const out = await device(d.name);
    expect(out).toMatchObject({ updatedStatus: "OutOfDate", renderedVersion: 2, templateVersion: "2", updatedInfo: "running renderedVersion 1 of 2" });
    const f = await fleet(name);
    expect(f.status.devices).toMatchObject({ total: 1, outOfDate: 1, upToDate: 0 });
    expect(condition(f.status.conditions, "DevicesUpToDate")).toMatchObject({ status: "False", reason: "OutOfDate" });

    // The agent applies it: Updating, then UpToDate.
    await heartbeat(s, d, { renderedVersion: 1, conditions: { updating: { status: true, reason: "ApplyingUpdate" } } });
    expect(await device(d.name)).toMatchObject({ updatedStatus: "Updating", updatedInfo: null });
    await eventually(async () => ((await fleet(name)).status.devices.updating === 1 ? true : undefined));
    await heartbeat(s, d, { renderedVersion: 2, conditions: { updating: { status: false, reason: "Updated" } } });
    expect(await device(d.name)).toMatchObject({ updatedStatus: "UpToDate", updatedInfo: null });
    const done = await eventually(async () => {
      const now = await fleet(name);
      return now.status.devices.upToDate === 1 ? now : undefined;
    });
    expect(condition(done.status.conditions, "DevicesUpToDate")).toMatchObject({ status: "True", reason: "AllUpToDate" });

    const history = (await s.api<{ items: { type: string; reason: string; actor: string }[] }>("GET", `/events?kind=Device&name=${d.name}&limit=100`)).body.items
      .filter((e) => e.type === "UpdatedStatusChanged")
      .map((e) => `${e.reason}:${e.actor}`)
      .reverse();
    expect(history).toEqual([`UpToDate:device:${d.name}`, "OutOfDate:user:admin", `Updating:device:${d.name}`, `UpToDate:device:${d.name}`]);
  });

  it("a device whose spec is at an older template version than its fleet's is OutOfDate with that reason", async () => {
    const suite = label();
    const name = uniqueName("fleet");
    await createFleet(fleetBody(name, { suite }, "1.0.0"));
    const d = await enrollDevice(s, uniqueName("dev"), { suite });
    await heartbeat(s, d, { renderedVersion: 1 });
    // As the rollout controller will leave a device it has not reached yet: the fleet moves on,
    // the device's rendered spec stays at version 1.
    const f = await s.ctx.db.fleet.findUniqueOrThrow({ where: { name } });
    await s.ctx.db.templateVersion.create({ data: { fleetId: f.id, version: 2, spec: JSON.stringify({ version: "2.0.0" }), author: "test" } });
    await s.ctx.db.fleet.update({ where: { id: f.id }, data: { templateVersion: "2" } });
    await heartbeat(s, d, { renderedVersion: 1 });
    expect(await device(d.name)).toMatchObject({
      updatedStatus: "OutOfDate",
      updatedInfo: `fleet ${name} is at template version 2; this device's spec is version 1`,
    });
  });

  it("resuming a ConflictPaused member sends it its fleet's spec again, numbered past the device's", async () => {
    const suite = label();
    const name = uniqueName("fleet");
    await createFleet(fleetBody(name, { suite }, "1.0.0"));
    const d = await enrollDevice(s, uniqueName("dev"), { suite });
    // As after a restore: the device runs a renderedVersion the service never gave.
    await heartbeat(s, d, { renderedVersion: 9 });
    expect((await device(d.name)) as unknown).toMatchObject({ summary: "ConflictPaused" });
    expect((await s.api("POST", `/devices/${d.name}/resume`, {})).status).toBe(200);
    expect(await device(d.name)).toMatchObject({ renderedVersion: 10, templateVersion: "1", spec: { renderedVersion: 10, version: "1.0.0" } });
    expect((await work(d, 9)).body.spec).toMatchObject({ renderedVersion: 10, version: "1.0.0" });
    await heartbeat(s, d, { renderedVersion: 9 });
    expect(await device(d.name)).toMatchObject({ updatedStatus: "OutOfDate", updatedInfo: "running renderedVersion 9 of 10" });
    await heartbeat(s, d, { renderedVersion: 10 });
    expect(await device(d.name)).toMatchObject({ updatedStatus: "UpToDate" });
  });

  it("a failed update shows why", async () => {
    const suite = label();
    const name = uniqueName("fleet");
    await createFleet(fleetBody(name, { suite }, "1.0.0"));
    const d = await enrollDevice(s, uniqueName("dev"), { suite });
    await heartbeat(s, d, { renderedVersion: 0, conditions: { updating: { status: false, reason: "Error", info: "sha256 mismatch" } } });
    expect(await device(d.name)).toMatchObject({ updatedStatus: "OutOfDate", updatedInfo: "running renderedVersion 0 of 1; the last update failed: sha256 mismatch" });
  });
});
