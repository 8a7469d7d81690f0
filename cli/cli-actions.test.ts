/**
 * The real `drover` CLI against a real server (cli-suite.ts): enrollment decisions, tokens,
 * actions, requests and nudge.
 */
import { beforeAll, describe, expect, it } from "vitest";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { ADMIN_PASSWORD } from "../tests/helpers/server";
import { enrollDevice } from "../tests/helpers/devices";
import { createUser } from "../server/auth/auth";
import type { Action, ApiToken, Device, DroverEvent, Enrollment } from "./types";
import { cliSuite, type CliSuite } from "./cli-suite";

const suite = cliSuite({ login: true });
const { drover, ok, json, pendingEnrollment, createAction } = suite;

let s: CliSuite["s"];
let dir: string;
beforeAll(() => void ({ s, dir } = suite.state));

describe("enrollment decisions", () => {
  it("approve enrollment: the device is enrolled; again is CONFLICT", async () => {
    const p = await pendingEnrollment();
    expect(await ok(["approve", "enrollment", p.id, "--reason", "rack 4"])).toContain(`enrollment/${p.id} approved (device ${p.name})`);
    expect((await s.api<Device>("GET", `/devices/${p.name}`)).body.lifecycle).toBe("Enrolled");
    const again = await drover(["approve", "enrollment", p.id]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/^error: CONFLICT: /);
  });

  it("deny several at once", async () => {
    const [a, b] = [await pendingEnrollment(), await pendingEnrollment()];
    const out = await ok(["deny", "enrollment", a.id, b.id, "--reason", "unknown hardware"]);
    expect(out.trimEnd().split("\n")).toHaveLength(2);
    const list = (await s.api<{ items: Enrollment[] }>("GET", "/enrollments?status=Denied&limit=1000")).body.items.map((e) => e.id);
    expect(list).toEqual(expect.arrayContaining([a.id, b.id]));
  });

  it("reopen enrollment: a denial reverted, Pending again; reopening a Pending one is CONFLICT", async () => {
    const p = await pendingEnrollment();
    await ok(["deny", "enrollment", p.id]);
    expect(await ok(["reopen", "enrollment", p.id])).toContain(`enrollment/${p.id} reopened: Pending again (device ${p.name})`);
    expect((await s.api<Enrollment>("GET", `/enrollments?status=Pending&limit=1000`)).status).toBe(200);
    const again = await drover(["reopen", "enrollment", p.id]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/^error: CONFLICT: .*only a Denied request can be reopened/);
  });

  it("deny enrollments --all-pending --address: only that address's; then --all-pending: the rest", async () => {
    // This server trusts no proxy: every request here comes from 127.0.0.1.
    const [a, b] = [await pendingEnrollment(), await pendingEnrollment()];
    const none = await drover(["deny", "enrollments", "--all-pending", "--address", "192.0.2.1"]);
    expect(none.code).toBe(0);
    expect(none.stdout).toBe("");
    expect(none.stderr).toContain("0 pending enrollment requests from 192.0.2.1 denied.");
    expect((await s.api<{ items: Enrollment[] }>("GET", "/enrollments?status=Pending&limit=1000")).body.items.map((e) => e.id)).toEqual(expect.arrayContaining([a.id, b.id]));

    const r = await drover(["deny", "enrollments", "--all-pending", "--address", "127.0.0.1", "--reason", "flood"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`enrollment/${a.id} denied (device ${a.name})`);
    expect(r.stdout).toContain(`enrollment/${b.id} denied (device ${b.name})`);
    expect(r.stderr).toMatch(/\d+ pending enrollment requests from 127\.0\.0\.1 denied\./);
    const denied = (await s.api<{ items: (Enrollment & { reason: string })[] }>("GET", "/enrollments?status=Denied&limit=1000")).body.items;
    expect(denied.find((e) => e.id === a.id)?.reason).toBe("flood");

    const c = await pendingEnrollment();
    expect(await ok(["deny", "enrollments", "--all-pending"])).toContain(`enrollment/${c.id} denied`);
    expect((await s.api<{ items: Enrollment[] }>("GET", "/enrollments?status=Pending")).body.items).toEqual([]);
  });

  it("deny enrollments: ids and --all-pending together, neither, or --address alone are usage errors (2)", async () => {
    const p = await pendingEnrollment();
    for (const args of [["deny", "enrollments"], ["deny", "enrollments", p.id, "--all-pending"], ["deny", "enrollment", p.id, "--address", "127.0.0.1"]]) {
      const r = await drover(args);
      expect(r.code, args.join(" ")).toBe(2);
      expect(r.stderr, args.join(" ")).toMatch(/error: /);
    }
    expect((await s.api<{ items: Enrollment[] }>("GET", "/enrollments?status=Pending")).body.items.map((e) => e.id)).toContain(p.id);
  });

  it("get enrollments --address filters by client address", async () => {
    const p = await pendingEnrollment();
    const mine = json<{ items: Enrollment[] }>(await ok(["get", "enrollments", "--status", "Pending", "--address", "127.0.0.1", "-o", "json"]));
    expect(mine.items.map((e) => e.id)).toContain(p.id);
    expect(mine.items.every((e) => e.clientAddress === "127.0.0.1")).toBe(true);
    const r = await drover(["get", "enrollments", "--address", "192.0.2.1"]);
    expect(r.stderr).toMatch(/No enrollment requests found/);
  });
});

describe("tokens", () => {
  it("login names the token after the host; get tokens marks the current one; revoke token refuses it afterwards", async () => {
    const own = path.join(dir, "tokens", "config.json");
    await ok(["login", "-u", "admin", "--password-stdin"], { input: ADMIN_PASSWORD, env: { DROVER_CONFIG: own } });
    const stored = json<{ token: string }>(fs.readFileSync(own, "utf8"));
    const listed = json<{ items: ApiToken[] }>(await ok(["get", "tokens", "-o", "json"], { env: { DROVER_CONFIG: own } })).items;
    const current = listed.find((t) => t.current)!;
    expect(current).toMatchObject({ name: `drover@${os.hostname()}`.slice(0, 64), username: "admin", status: "Active" });
    expect(JSON.stringify(listed)).not.toContain(stored.token);

    const table = (await ok(["get", "tokens"], { env: { DROVER_CONFIG: own } })).trimEnd().split("\n");
    expect(table[0]).toMatch(/^CURRENT\s+ID\s+NAME\s+USER\s+STATUS\s+LAST-USED\s+AGE$/);
    expect(table.find((l) => l.startsWith("*"))).toMatch(new RegExp(`^\\*\\s+${current.id}\\s`));

    const r = await drover(["revoke", "token", current.id], { env: { DROVER_CONFIG: own } });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(`token/${current.id} revoked (${current.name}, user admin)\n`);
    expect(r.stderr).toMatch(/drover login/);
    const after = await drover(["get", "devices"], { env: { DROVER_CONFIG: own } });
    expect(after.code).toBe(3);
    expect(after.stderr).toMatch(/UNAUTHENTICATED/);
    expect((await s.api("GET", "/me", undefined, stored.token)).status).toBe(401);
  });

  it("--token-name names it; a viewer sees only their own and cannot revoke the admin's (exit 1, FORBIDDEN)", async () => {
    await createUser(s.auth, s.ctx.db, { username: "tina", password: "viewer-password-2", role: "viewer" });
    const tina = path.join(dir, "tina", "config.json");
    await ok(["login", "-u", "tina", "--password-stdin", "--token-name", "ci-pipeline"], { input: "viewer-password-2", env: { DROVER_CONFIG: tina } });
    const mine = json<{ items: ApiToken[] }>(await ok(["get", "tokens", "-o", "json"], { env: { DROVER_CONFIG: tina } })).items;
    expect(mine.map((t) => [t.username, t.name])).toEqual([["tina", "ci-pipeline"]]);

    const adminTokens = json<{ items: ApiToken[] }>(await ok(["get", "tokens", "--user", "admin", "-o", "json"])).items;
    const target = adminTokens.find((t) => t.current)!;
    const r = await drover(["revoke", "token", target.id], { env: { DROVER_CONFIG: tina } });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^error: FORBIDDEN: /);
    expect((await s.api("GET", "/me")).status).toBe(200);

    // The admin lists everyone's, and revokes tina's.
    const all = json<{ items: ApiToken[] }>(await ok(["get", "tokens", "-o", "json"])).items;
    expect(new Set(all.map((t) => t.username))).toEqual(new Set(["admin", "tina"]));
    expect(await ok(["revoke", "token", mine[0]!.id])).toContain(`token/${mine[0]!.id} revoked (ci-pipeline, user tina)`);
    expect((await drover(["get", "tokens"], { env: { DROVER_CONFIG: tina } })).code).toBe(3);
  });

  it("revoke token with an unknown id: NOT_FOUND (exit 1)", async () => {
    const r = await drover(["revoke", "token", "00000000-0000-0000-0000-000000000000"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^error: NOT_FOUND: /);
  });
});

describe("actions", () => {
  const suite = `act${process.pid}`;
  let device: string;

  beforeAll(async () => {
    device = (await enrollDevice(s, `${suite}-1`, { suite, ring: "canary" })).name;
    await enrollDevice(s, `${suite}-2`, { suite, ring: "canary" });
    await enrollDevice(s, `${suite}-3`, { suite, ring: "main" });
  });

  it("create for a device, table output", async () => {
    const out = await ok(["create", "action", "--device", device, "--kind", "exec", "--args", '{"command":"uptime"}', "--require-approval"]);
    const lines = out.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^ID\s+DEVICE\s+KIND\s+STATE\s+ORIGIN\s+AGE$/);
    expect(lines).toHaveLength(2);
    expect(lines[1]).toMatch(new RegExp(`^[0-9a-f-]{36}\\s+${device}\\s+exec\\s+PENDING_APPROVE\\s+user\\s+\\d+s$`));
    const id = lines[1]!.split(/\s+/)[0]!;
    expect((await s.api<Action & { args: unknown; healthPolicy: string }>("GET", `/actions/${id}`)).body).toMatchObject({ args: { command: "uptime" }, healthPolicy: "Degraded" });
  });

  it("create --health-policy Online: only for Online devices; a policy that is not one is a usage error (2)", async () => {
    const created = json<{ items: (Action & { healthPolicy: string })[] }>(await ok(["create", "action", "--device", device, "--kind", "ping", "--health-policy", "Online", "-o", "json"]));
    expect(created.items[0]!.healthPolicy).toBe("Online");
    const bad = await drover(["create", "action", "--device", device, "--kind", "ping", "--health-policy", "Offline"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/Allowed choices are Online, Degraded, Error/);
  });

  it("create for a label selector, json output", async () => {
    const created = json<{ items: Action[] }>(await ok(["create", "action", "-l", `suite=${suite},ring=canary`, "--kind", "ping", "-o", "json"]));
    expect(created.items.map((a) => a.device).sort()).toEqual([`${suite}-1`, `${suite}-2`]);
    expect(created.items.every((a) => a.kind === "ping" && a.state === "PENDING_SCHEDULE")).toBe(true);
    const none = await drover(["create", "action", "-l", `suite=${suite},ring=none`, "--kind", "reboot"]);
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/error: INVALID_REQUEST: .*matches no Enrolled device/);
  });

  it("create --expires-in: the action carries its expiry; a bad duration is a usage error (2)", async () => {
    const created = json<{ items: (Action & { expiresAt: string; createdAt: string })[] }>(await ok(["create", "action", "--device", device, "--kind", "noop", "--expires-in", "10m", "-o", "json"]));
    const a = created.items[0]!;
    expect(new Date(a.expiresAt).getTime() - new Date(a.createdAt).getTime()).toBe(600_000);
    const bad = await drover(["create", "action", "--device", device, "--kind", "noop", "--expires-in", "soon"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/not a duration/);
  });

  it("get actions filters by device, state and selector", async () => {
    const id = await createAction(device);
    const byDevice = json<{ items: Action[] }>(await ok(["get", "actions", "--device", device, "--state", "pending_approve", "-o", "json"]));
    expect(byDevice.items.map((a) => a.id)).toContain(id);
    expect(byDevice.items.every((a) => a.device === device && a.state === "PENDING_APPROVE")).toBe(true);
    const bySelector = json<{ items: Action[] }>(await ok(["get", "actions", "-l", `suite=${suite},ring=main`, "-o", "json"]));
    expect(bySelector.items).toEqual([]);
    expect(json<Action>(await ok(["get", "action", id, "-o", "json"])).id).toBe(id);
  });

  it("approve with --reason; a second approve exits 1 with CONFLICT", async () => {
    const id = await createAction(device);
    expect(await ok(["approve", "action", id, "--reason", "change 42"])).toMatch(new RegExp(`action/${id} approved .*PENDING_SCHEDULE`));
    const row = (await s.api<{ state: string; decisionReason: string; decidedBy: string }>("GET", `/actions/${id}`)).body;
    expect(row).toMatchObject({ state: "PENDING_SCHEDULE", decisionReason: "change 42", decidedBy: "user:admin" });
    const again = await drover(["approve", "action", id]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/^error: CONFLICT: .*already decided/);
  });

  it("approve several at once is all or nothing", async () => {
    const [a, b] = [await createAction(device), await createAction(device)];
    expect((await ok(["approve", "action", a, b])).trimEnd().split("\n")).toHaveLength(2);
    const c = await createAction(device);
    const r = await drover(["approve", "action", c, a]);
    expect(r.code).toBe(1);
    expect((await s.api<Action>("GET", `/actions/${c}`)).body.state).toBe("PENDING_APPROVE");
  });

  it("reject", async () => {
    const id = await createAction(device);
    expect(await ok(["reject", "action", id, "--reason", "not now"])).toContain(`action/${id} rejected`);
    expect((await s.api<Action>("GET", `/actions/${id}`)).body.state).toBe("CANCELLED");
  });

  it("requests: get requests --pending lists a selector's request once; approve request moves all its actions; again is CONFLICT", async () => {
    const created = json<{ items: (Action & { requestId: string })[] }>(
      await ok(["create", "action", "-l", `suite=${suite},ring=canary`, "--kind", "noop", "--require-approval", "-o", "json"]),
    );
    expect(created.items).toHaveLength(2);
    const requestId = created.items[0]!.requestId;
    const table = await ok(["get", "requests", "--pending"]);
    expect(table).toMatch(/^ID\s+REQUEST\s+ORIGIN\s+BY\s+DECISION\s+PROGRESS\s+AGE/);
    const row = table.split("\n").find((l) => l.startsWith(requestId))!;
    expect(row).toContain(`noop on 2 devices matching suite=${suite},ring=canary`);
    expect(row).toContain("0/2 done, 2 waiting (2 for approval), 0 failed");
    expect(await ok(["get", "request", requestId])).toMatch(/2 waiting: Approval \(e\.g\. waits for an operator/);
    expect(await ok(["approve", "request", requestId, "--reason", "change 7"])).toMatch(new RegExp(`^request/${requestId} approved: 2 actions \\(noop on 2 devices`));
    for (const a of created.items) expect((await s.api<{ state: string; decisionReason: string }>("GET", `/actions/${a.id}`)).body).toMatchObject({ state: "PENDING_SCHEDULE", decisionReason: "change 7" });
    const again = await drover(["reject", "request", requestId]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/^error: CONFLICT: .*already decided/);
    expect(json<{ items: { id: string }[] }>(await ok(["get", "requests", "--pending", "-o", "json"])).items.map((r) => r.id)).not.toContain(requestId);
    expect((await drover(["approve", "request", "nope"])).stderr).toMatch(/NOT_FOUND/);
  });

  it("reject request: its waiting actions end CANCELLED", async () => {
    const id = await createAction(device);
    const requestId = (await s.api<{ requestId: string }>("GET", `/actions/${id}`)).body.requestId;
    expect(await ok(["reject", "request", requestId])).toContain(`request/${requestId} rejected: 1 action`);
    expect((await s.api<Action>("GET", `/actions/${id}`)).body.state).toBe("CANCELLED");
  });

  it("cancel; cancelling a finished action is CONFLICT", async () => {
    const id = await createAction(device, false);
    expect(await ok(["cancel", "action", id, "--reason", "typo"])).toContain(`action/${id} cancelled`);
    expect((await s.api<Action>("GET", `/actions/${id}`)).body.state).toBe("CANCELLED");
    const again = await drover(["cancel", "action", id]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/error: CONFLICT: /);
  });

  it("nudge device, action and plan", async () => {
    const id = await createAction(device);
    expect(await ok(["nudge", "device", device])).toBe(`Device/${device} nudged\n`);
    expect(await ok(["nudge", "action", id])).toBe(`Action/${id} nudged\n`);
    const events = (await s.api<{ items: DroverEvent[] }>("GET", `/events?name=${id}`)).body.items;
    expect(events.map((e) => e.type)).toContain("Nudged");
    const plan = await s.api<{ metadata: { id: string } }>("POST", "/plans", {
      apiVersion: "drover/v1",
      kind: "Plan",
      spec: { commands: [{ action: { kind: "noop", targets: { workers: { discovery: { static: { nodes: ["nobody"] } } } } } }] },
    });
    expect(await ok(["nudge", "plan", plan.body.metadata.id])).toBe(`Plan/${plan.body.metadata.id} nudged\n`);
  });
});
