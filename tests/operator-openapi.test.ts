/**
 * The operator OpenAPI document against the code: every route documents its success body (or
 * says it has none), every route is called on a real server and its real answer parsed with
 * the route's documented schema (server/rest/responses.ts, strict objects: a field renamed,
 * dropped or added without the schema fails), and the CLI's generated types
 * (cli/operator-api.d.ts) are what the served document generates today.
 */
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, testOnPostgres, type TestServer } from "./helpers/server";
import { enrollDevice, enrollmentBody, heartbeat, newSecret, uniqueName, type EnrolledDevice } from "./helpers/devices";
import { restRoutes, type RestRoute } from "../server/rest/routes";
import { generateOperatorTypes, OPERATOR_TYPES_FILE, REGENERATE_COMMAND } from "../scripts/openapi-types";

let s: TestServer;
const called = new Set<RestRoute>();

beforeAll(async () => {
  s = await startTestServer({ DROVER_SWEEP_SECONDS: "600" });
});
afterAll(async () => {
  await s?.close();
});

const key = (r: Pick<RestRoute, "method" | "path">) => `${r.method} ${r.path}`;
const compiled = restRoutes.map((route) => ({ route, pattern: new RegExp("^" + route.path.replace(/\{\w+\}/g, "[^/]+") + "$") }));

/** Calls a route for real and checks its answer against the route's documented response; answers the body. */
async function call<T = Record<string, unknown>>(method: RestRoute["method"], url: string, body?: unknown): Promise<T> {
  const pathname = url.split("?")[0]!;
  const route = compiled.find((c) => c.route.method === method && c.pattern.test(pathname))?.route;
  if (!route) throw new Error(`no route for ${method} ${pathname}`);
  const res = await s.api<unknown>(method, url, body);
  expect(res.status, `${method} ${url}: ${JSON.stringify(res.body)}`).toBe(route.status ?? (route.response === null ? 204 : 200));
  if (route.response === null) {
    expect(res.body, `${key(route)} is documented without a body`).toBeFalsy();
  } else {
    const parsed = route.response.safeParse(res.body);
    expect(parsed.error?.issues, `${key(route)}'s answer does not match its documented response`).toBeUndefined();
  }
  called.add(route);
  return res.body as T;
}

const label = () => uniqueName("oas");

async function applied(d: EnrolledDevice): Promise<void> {
  const view = (await s.api<{ renderedVersion: number }>("GET", `/devices/${d.name}`)).body;
  await heartbeat(s, d, { renderedVersion: view.renderedVersion, conditions: { updating: { status: false, reason: "Updated" } } });
}

async function pendingEnrollment(): Promise<string> {
  const res = await s.agent<{ enrollmentId: string }>("POST", "/enrollments", enrollmentBody(uniqueName("oas-pend"), newSecret()));
  expect(res.status).toBe(201);
  return res.body.enrollmentId;
}

describe("the operator OpenAPI document", () => {
  it("documents a success body for every route, or says it has none", async () => {
    const doc = (await s.api<{ paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema: unknown }> }> }>> }>("GET", "/openapi.json"))
      .body;
    const undocumented = restRoutes.filter((route) => {
      const op = doc.paths[route.path]?.[route.method.toLowerCase()];
      const success = op?.responses[String(route.status ?? (route.response === null ? 204 : 200))];
      if (!success) return true;
      return route.response === null ? success.content !== undefined : success.content?.["application/json"]?.schema === undefined;
    });
    expect(undocumented.map(key)).toEqual([]);
    expect(restRoutes.length).toBeGreaterThanOrEqual(65);
  });

  it("every route's real answer parses with its documented response schema", async () => {
    // auth and tokens
    const created = await call<{ id: string }>("POST", "/auth/token", { username: "admin", password: "admin-password-1", name: "oas-test" });
    await call("GET", "/me");
    await call("GET", "/tokens?limit=5");
    await call("POST", `/tokens/${created.id}/revoke`);

    // enrollments, one by one and in bulk
    await call("POST", `/enrollments/${await pendingEnrollment()}/approve`, { labels: { oas: "one" } });
    const denied = await pendingEnrollment();
    await call("POST", `/enrollments/${denied}/deny`, { reason: "not ours" });
    await call("POST", `/enrollments/${denied}/reopen`);
    await call("POST", "/enrollments/approve", { ids: [denied] });
    const two = [await pendingEnrollment(), await pendingEnrollment()];
    await call("POST", "/enrollments/deny", { ids: two });
    await call("POST", "/enrollments/reopen", { ids: two });
    await call("POST", "/enrollments/deny", { allPending: true });
    await call("GET", "/enrollments?limit=10");
    await call("GET", `/enrollments/${denied}`);

    // enrollment tokens
    const token = await call<{ id: string }>("POST", "/enrollment-tokens", { name: "oas racks", labels: { rack: "r1" }, maxUses: 3 });
    await call("GET", "/enrollment-tokens");
    await call("GET", `/enrollment-tokens/${token.id}`);
    await call("DELETE", `/enrollment-tokens/${token.id}`);

    // devices: one reporting in full, the other conflict-paused then resumed
    const suite = label();
    const [a, b] = [await enrollDevice(s, `${suite}-a`, { suite }), await enrollDevice(s, `${suite}-b`, { suite })];
    await heartbeat(s, a!, { system: { hostname: "a", cpus: 2, usage: { cpuPercent: 12 } } } as never);
    await call("GET", `/devices?labelSelector=suite=${suite}&summary=Online,Offline&limit=1`);
    await call("GET", `/devices/${a!.name}`);
    await call("PATCH", `/devices/${a!.name}`, { alias: "the first" });
    await call("PUT", `/devices/${a!.name}/labels`, { labels: { suite, extra: "x" } });
    await call("POST", "/devices/labels", { names: [a!.name, b!.name], add: { extra: "y" } });
    await s.ctx.db.device.update({ where: { name: b!.name }, data: { conflictPaused: true } });
    await call("POST", `/devices/${b!.name}/resume`);
    await call("POST", "/devices/resume", { names: [b!.name] });

    // fleets and a manual canary's controls
    const fleet = label();
    const fleetBody = (version: string) => ({
      metadata: { name: fleet },
      spec: { selector: { matchLabels: { suite } }, template: { spec: { version } }, rolloutPolicy: { canary: { replicas: 1, validationMode: "manual" } } },
    });
    await call("POST", "/fleets", fleetBody("1.0.0"));
    for (const d of [a!, b!]) await applied(d);
    await call("PUT", `/fleets/${fleet}`, fleetBody("2.0.0"));
    await call("POST", `/fleets/${fleet}/rollout/pause`, { reason: "a look" });
    await call("POST", `/fleets/${fleet}/rollout/resume`);
    await call("POST", `/fleets/${fleet}/rollout/promote`);
    await call("POST", `/fleets/${fleet}/rollout/abort`, { reason: "enough" });
    await call("GET", "/fleets");
    await call("GET", `/fleets/${fleet}`);
    await call("GET", `/fleets/${fleet}/templateversions`);
    await call("DELETE", `/fleets/${fleet}`);

    // actions and requests
    const [one] = await call<{ items: [{ id: string }] }>("POST", "/actions", { device: a!.name, kind: "noop", requireApproval: true }).then((r) => r.items);
    await call("POST", `/actions/${one.id}/approve`, { reason: "fine" });
    const [two1] = (await call<{ items: [{ id: string }] }>("POST", "/actions", { device: a!.name, kind: "noop", requireApproval: true })).items;
    await call("POST", `/actions/${two1.id}/reject`);
    const bulk = (await call<{ items: { id: string; requestId: string }[] }>("POST", "/actions", { labelSelector: `suite=${suite}`, kind: "noop", requireApproval: true })).items;
    await call("POST", "/actions/approve", { ids: [bulk[0]!.id] });
    await call("POST", "/actions/reject", { ids: [bulk[1]!.id] });
    await call("GET", `/actions/${one.id}`);
    await call("GET", `/actions?device=${a!.name}&state=PENDING_SCHEDULE,NEW,CANCELLED&limit=5`);
    await call("POST", `/actions/${one.id}/cancel`, { reason: "not now" });
    await call("POST", `/actions/${one.id}/rerun`);
    await call("POST", "/nudge", { kind: "Device", name: a!.name });
    const held = (await call<{ items: [{ requestId: string }] }>("POST", "/actions", { labelSelector: `suite=${suite}`, kind: "noop", requireApproval: true })).items;
    await call("GET", "/requests?pendingApproval=true&limit=5");
    await call("GET", `/requests/${held[0].requestId}?limit=1`);
    await call("GET", `/requests/${held[0].requestId}/outputs?limit=5&devices=1`);
    await call("POST", `/requests/${held[0].requestId}/approve`, { reason: "all of them" });
    const held2 = (await call<{ items: [{ requestId: string }] }>("POST", "/actions", { device: b!.name, kind: "noop", requireApproval: true })).items;
    await call("POST", `/requests/${held2[0].requestId}/reject`);

    // plans
    const planBody = { apiVersion: "drover/v1", kind: "Plan", spec: { commands: [{ action: { kind: "noop", targets: { workers: { discovery: { static: { nodes: [a!.name] } } } } } }] } };
    const waiting = await call<{ metadata: { id: string } }>("POST", "/plans?requireApproval=true&deadline=30m", planBody);
    await call("POST", `/plans/${waiting.metadata.id}/approve`);
    await call("POST", `/plans/${waiting.metadata.id}/cancel`, { reason: "enough" });
    const retried = await call<{ metadata: { id: string } }>("POST", `/plans/${waiting.metadata.id}/retry`);
    await call("POST", `/plans/${retried.metadata.id}/nodes/${a!.name}/skip`, { reason: "not this one" });
    await call("GET", "/plans?state=NewPlan,SchedulableWait,Schedulable,Cancelled&limit=5");
    await call("GET", `/plans/${waiting.metadata.id}`);

    // workflows
    const wf = label();
    const workflowBody = { metadata: { name: wf }, spec: { steps: { first: { jobTemplate: { kind: "noop", args: {}, targets: { devices: [b!.name] } } } } } };
    await call("POST", "/workflows?start=false", workflowBody);
    // issue 21: a cancelled target retried, a waiting one skipped (another step keeps the run going)
    const job = (device: string) => ({ jobTemplate: { kind: "noop", args: {}, targets: { devices: [device] } } });
    await call("POST", "/workflows", { metadata: { name: `${wf}-t` }, spec: { failFast: false, steps: { first: job(b!.name), other: job(a!.name) } } });
    const listed = await call<{ items: [{ actionId: string }] }>("GET", `/workflows/${wf}-t/steps/first/targets`);
    await call("POST", `/actions/${listed.items[0].actionId}/cancel`, { reason: "to retry it" });
    await call("GET", `/workflows/${wf}-t/steps/first/outputs?search=${b!.name}`);
    await call("POST", `/workflows/${wf}-t/steps/first/targets/${b!.name}/retry`, { reason: "again" });
    await call("POST", `/workflows/${wf}-t/steps/other/targets/${a!.name}/skip`, { reason: "not this one" });
    await call("DELETE", `/workflows/${wf}-t`);
    await call("PUT", `/workflows/${wf}`, { ...workflowBody, spec: { ...workflowBody.spec, schedule: { cron: "0 5 * * *", timezone: "UTC", suspend: true } } });
    await call("POST", `/workflows/${wf}/start`);
    await call("POST", `/workflows/${wf}/cancel`, { reason: "enough" });
    await call("POST", `/workflows/${wf}/rerun`);
    await call("GET", "/workflows?phase=Pending,Running&limit=5");
    await call("GET", `/workflows/${wf}`);
    await call("DELETE", `/workflows/${wf}`);

    // events, metrics, and the device leaving
    await call("GET", "/events?limit=20");
    await call("GET", "/metrics/history?range=1h");
    await call("POST", `/devices/${a!.name}/decommission`);
    await call("POST", `/devices/${b!.name}/revoke`, { reason: "a key thought stolen" });
    await call("POST", "/devices/decommission", { names: [a!.name, b!.name], reason: "done" });

    expect(restRoutes.filter((r) => !called.has(r)).map(key), "routes this test does not call yet").toEqual([]);
  }, 60_000);

  // The served document does not depend on the database: generated and compared once, on SQLite.
  it.skipIf(testOnPostgres)(`the CLI's generated types are the served document's (regenerate: ${REGENERATE_COMMAND})`, async () => {
    const doc = (await s.api("GET", "/openapi.json")).body;
    const generated = await generateOperatorTypes(doc);
    const committed = fs.readFileSync(path.resolve(import.meta.dirname, "..", OPERATOR_TYPES_FILE), "utf8");
    expect(generated === committed, `${OPERATOR_TYPES_FILE} is out of date with the served OpenAPI document: run ${REGENERATE_COMMAND}`).toBe(true);
  });
});
