/**
 * The real `drover` CLI as a child process (the build tests/global-setup.ts made) against a real
 * server: login, get, decisions, actions, nudge, decommission, events (and --follow), exit
 * codes, and --help on every command.
 */
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import YAML from "yaml";
import { startTestServer, ADMIN_PASSWORD, type TestServer } from "../tests/helpers/server";
import { enrollDevice, enrollmentBody, eventually, heartbeat, newSecret, uniqueName } from "../tests/helpers/devices";
import { createUser } from "../server/auth/auth";
import type { Action, ApiToken, Device, DroverEvent, Enrollment } from "./types";

const ROOT = path.resolve(import.meta.dirname, "..");

let s: TestServer;
let dir: string;
/** The admin's login, shared by most tests. */
let config: string;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function start(args: string[], options: { env?: Record<string, string | undefined>; input?: string } = {}): ChildProcess {
  const merged: Record<string, string | undefined> = { ...process.env, DROVER_SERVER: s.url, DROVER_CONFIG: config, DROVER_TOKEN: undefined, ...options.env };
  const env = Object.fromEntries(Object.entries(merged).filter((e): e is [string, string] => e[1] !== undefined));
  const child = spawn(process.execPath, [inject("cliBundle"), ...args], { cwd: ROOT, env: env as NodeJS.ProcessEnv, stdio: ["pipe", "pipe", "pipe"] });
  child.stdin?.end(options.input ?? "");
  return child;
}

function collect(child: ChildProcess): { out: () => string; err: () => string; done: Promise<number | null> } {
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr?.on("data", (d: Buffer) => (stderr += d.toString()));
  const done = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
  return { out: () => stdout, err: () => stderr, done };
}

async function drover(args: string[], options: Parameters<typeof start>[1] = {}): Promise<Run> {
  const c = collect(start(args, options));
  const code = await c.done;
  return { code, stdout: c.out(), stderr: c.err() };
}

/** Runs and expects exit 0, with stderr in the failure message. */
async function ok(args: string[], options: Parameters<typeof start>[1] = {}): Promise<string> {
  const r = await drover(args, options);
  expect(r.code, `drover ${args.join(" ")}\n${r.stderr}`).toBe(0);
  return r.stdout;
}

const json = <T>(text: string) => JSON.parse(text) as T;

async function pendingEnrollment(labels: Record<string, string> = {}): Promise<{ id: string; name: string }> {
  const name = uniqueName("pend");
  const res = await s.agent<{ enrollmentId: string; status: string }>("POST", "/enrollments", enrollmentBody(name, newSecret(), labels));
  expect(res.body.status).toBe("Pending");
  return { id: res.body.enrollmentId, name };
}

async function createAction(device: string, requireApproval = true): Promise<string> {
  // "ping" is not in the server's DROVER_APPROVAL_KINDS: requireApproval decides.
  const res = await s.api<{ items: Action[] }>("POST", "/actions", { device, kind: "ping", args: {}, requireApproval });
  expect(res.status).toBe(201);
  return res.body.items[0]!.id;
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

beforeAll(async () => {
  s = await startTestServer();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "drover-cli-"));
  config = path.join(dir, "admin", "config.json");
});
afterAll(async () => {
  await s?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

describe("login", () => {
  it("--password-stdin stores the token, mode 0600", async () => {
    const out = await ok(["login", "--username", "admin", "--password-stdin"], { input: `${ADMIN_PASSWORD}\n` });
    expect(out).toMatch(/Logged in to .* as admin \(admin\)/);
    const stored = json<Record<string, string>>(fs.readFileSync(config, "utf8"));
    expect(stored).toMatchObject({ server: s.url, username: "admin", role: "admin" });
    expect(stored.token).toMatch(/^drvo_/);
    expect(Date.parse(stored.expiresAt!)).toBeGreaterThan(Date.now());
    expect(fs.statSync(config).mode & 0o777).toBe(0o600);
    expect(fs.readdirSync(path.dirname(config))).toEqual(["config.json"]);
    // The token works.
    expect((await s.api("GET", "/me", undefined, stored.token)).status).toBe(200);
  });

  it("a wrong password exits 3 and stores nothing", async () => {
    const other = path.join(dir, "wrong", "config.json");
    const r = await drover(["login", "-u", "admin", "--password-stdin"], { input: "not-the-password\n", env: { DROVER_CONFIG: other } });
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/error: UNAUTHENTICATED: wrong username or password/);
    expect(fs.existsSync(other)).toBe(false);
  });

  it("asks for username and password when not given (stdin not a terminal: one line each)", async () => {
    const other = path.join(dir, "asked", "config.json");
    await ok(["login"], { input: `admin\n${ADMIN_PASSWORD}\n`, env: { DROVER_CONFIG: other } });
    expect(json<{ username: string }>(fs.readFileSync(other, "utf8")).username).toBe("admin");
  });
});

describe("exit codes", () => {
  it("bin/drover.mjs runs the same CLI", async () => {
    const child = spawn(process.execPath, ["bin/drover.mjs", "--version"], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
    const c = collect(child);
    expect(await c.done).toBe(0);
    expect(c.out()).toMatch(/^\d+\.\d+\.\d+\n$/);
  });


  it("3 without a login, telling to run drover login", async () => {
    const r = await drover(["get", "devices"], { env: { DROVER_CONFIG: path.join(dir, "nobody.json") } });
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/not logged in.*drover login/);
  });

  it("3 when the server refuses the token (401)", async () => {
    const r = await drover(["get", "devices"], { env: { DROVER_TOKEN: "drvo_not-a-token" } });
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/error: UNAUTHENTICATED: .*\n.*drover login/);
  });

  it("4 when the server cannot be reached", async () => {
    const server = `http://127.0.0.1:${await freePort()}`;
    const r = await drover(["get", "devices"], { env: { DROVER_SERVER: server, DROVER_TOKEN: "drvo_x" } });
    expect(r.code).toBe(4);
    expect(r.stderr).toContain(`cannot reach the server at ${server}`);
    const login = await drover(["login", "-u", "admin", "--password-stdin"], { input: ADMIN_PASSWORD, env: { DROVER_SERVER: server } });
    expect(login.code).toBe(4);
  });

  it("2 for usage errors", async () => {
    for (const args of [["get", "devices", "--bogus"], ["get", "spaceships"], ["create", "action", "--kind", "exec"], ["approve", "action"], ["get", "devices", "-o", "xml"]]) {
      const r = await drover(args);
      expect(r.code, args.join(" ")).toBe(2);
      expect(r.stderr, args.join(" ")).toMatch(/error/);
    }
  });

  it("1 when the server refuses: a viewer's write is FORBIDDEN", async () => {
    await createUser(s.auth, s.ctx.db, { username: "vera", password: "viewer-password-1", role: "viewer" });
    const viewerConfig = path.join(dir, "viewer", "config.json");
    await ok(["login", "-u", "vera", "--password-stdin"], { input: "viewer-password-1", env: { DROVER_CONFIG: viewerConfig } });
    const d = await enrollDevice(s);
    const r = await drover(["decommission", d.name, "--yes"], { env: { DROVER_CONFIG: viewerConfig } });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^error: FORBIDDEN: /);
    expect((await s.api<Device>("GET", `/devices/${d.name}`)).body.lifecycle).toBe("Enrolled");
  });
});

describe("get", () => {
  const suite = `cli${process.pid}`;
  const names: string[] = [];

  beforeAll(async () => {
    const lab = await enrollDevice(s, `${suite}-a`, { suite, site: "lab", env: "dev" });
    await enrollDevice(s, `${suite}-b`, { suite, site: "lab" });
    await enrollDevice(s, `${suite}-c`, { suite, site: "hq" });
    expect((await heartbeat(s, lab)).status).toBe(200);
    names.push(`${suite}-a`, `${suite}-b`, `${suite}-c`);
  });

  it("devices -l … -o json prints the API's page", async () => {
    const page = json<{ items: Device[]; total: number; nextCursor: string | null }>(await ok(["get", "devices", "-l", `suite=${suite},site=lab`, "-o", "json"]));
    expect(page.items.map((d) => d.name)).toEqual([`${suite}-a`, `${suite}-b`]);
    expect(page.total).toBe(2);
    expect(page.items[0]).toMatchObject({ summary: "Online", lifecycle: "Enrolled", labels: { suite, site: "lab", env: "dev" } });
  });

  it("devices -o yaml", async () => {
    const page = YAML.parse(await ok(["get", "devices", "-l", `suite=${suite},site=hq`, "-o", "yaml"])) as { items: Device[] };
    expect(page.items.map((d) => d.name)).toEqual([`${suite}-c`]);
  });

  it("devices as a table, aligned, with labels", async () => {
    const out = await ok(["get", "devices", "-l", `suite=${suite}`]);
    const lines = out.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^NAME\s+FLEET\s+SUMMARY\s+UPDATED\s+APPS\s+LIFECYCLE\s+LAST-SEEN\s+LABELS$/);
    expect(lines).toHaveLength(4);
    expect(lines[1]).toMatch(new RegExp(`^${suite}-a\\s+<none>\\s+Online\\s+\\S+\\s+\\S+\\s+Enrolled\\s+\\d+s\\s+env=dev,site=lab,suite=${suite}$`));
    expect(lines[3]).toMatch(/Offline .*<never>/);
    // Columns line up: every line has SUMMARY's column at the same offset.
    const at = lines[0]!.indexOf("SUMMARY");
    for (const line of lines.slice(1)) expect(line.slice(at - 3, at)).toBe("   ");
  });

  it("one device by name; a missing one is NOT_FOUND (exit 1)", async () => {
    const d = json<Device & { conditions: unknown[] }>(await ok(["get", "device", `${suite}-a`, "-o", "json"]));
    expect(d.name).toBe(`${suite}-a`);
    expect(Array.isArray(d.conditions)).toBe(true);
    const r = await drover(["get", "device", `${suite}-zzz`]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/error: NOT_FOUND: /);
  });

  it("--limit pages; --all follows nextCursor", async () => {
    const r = await drover(["get", "devices", "-l", `suite=${suite}`, "--limit", "1"]);
    expect(r.code).toBe(0);
    expect(r.stdout.trimEnd().split("\n")).toHaveLength(2);
    expect(r.stderr).toMatch(/1 of 3 shown: --all/);
    const all = json<{ items: Device[]; nextCursor: null }>(await ok(["get", "devices", "-l", `suite=${suite}`, "--limit", "1", "--all", "-o", "json"]));
    expect(all.items.map((d) => d.name)).toEqual(names);
    expect(all.nextCursor).toBeNull();
  });

  it("an empty list says so on stderr", async () => {
    const r = await drover(["get", "devices", "-l", `suite=${suite},site=mars`]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("");
    expect(r.stderr).toMatch(/No devices found/);
  });

  it("enrollments, --status, and one by device name", async () => {
    const p = await pendingEnrollment({ rack: "4" });
    const table = await ok(["get", "enrollments"]);
    expect(table.split("\n")[0]).toMatch(/^ID\s+DEVICE\s+STATUS\s+LABELS\s+ADDRESS\s+AGE$/);
    expect(table).toMatch(new RegExp(`${p.id}\\s+${p.name}\\s+Pending\\s+rack=4\\s+127\\.0\\.0\\.1\\s+\\d+s`));
    const pending = json<{ items: Enrollment[] }>(await ok(["get", "enrollments", "--status", "Pending", "-o", "json"]));
    expect(pending.items.map((e) => e.id)).toContain(p.id);
    expect(pending.items.every((e) => e.status === "Pending")).toBe(true);
    expect(json<Enrollment>(await ok(["get", "enrollment", p.name, "-o", "json"])).id).toBe(p.id);
  });
});

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
    expect(new Set(all.map((t) => t.username))).toEqual(new Set(["admin", "vera", "tina"]));
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
    expect((await s.api<Action & { args: unknown }>("GET", `/actions/${id}`)).body.args).toEqual({ command: "uptime" });
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

describe("decommission", () => {
  it("--yes requests it", async () => {
    const d = await enrollDevice(s);
    expect(await ok(["decommission", d.name, "--yes"])).toContain(`device/${d.name}: decommissioning requested`);
    expect((await s.api<Device>("GET", `/devices/${d.name}`)).body.lifecycle).toBe("Decommissioning");
  });

  it("without --yes and stdin not a terminal: refused (exit 2), nothing changes", async () => {
    const d = await enrollDevice(s);
    const r = await drover(["decommission", d.name], { input: `${d.name}\n` });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--yes/);
    expect((await s.api<Device>("GET", `/devices/${d.name}`)).body.lifecycle).toBe("Enrolled");
  });
});

describe("events", () => {
  it("prints the log oldest to newest, filtered", async () => {
    const d = await enrollDevice(s);
    expect((await heartbeat(s, d)).status).toBe(200);
    const { items } = json<{ items: DroverEvent[] }>(await ok(["events", "--kind", "Device", "--name", d.name, "-o", "json"]));
    expect(items.length).toBeGreaterThanOrEqual(2);
    expect(items.every((e) => e.objectKind === "Device" && e.objectName === d.name)).toBe(true);
    expect(items.map((e) => e.id)).toEqual(items.map((e) => e.id).sort((a, b) => a - b));
    expect(items[0]!.type).toBe("DeviceEnrolled");

    const table = (await ok(["events", "--kind", "Device", "--name", d.name])).trimEnd().split("\n");
    expect(table[0]).toMatch(/^TIME\s+OBJECT\s+TYPE\s+REASON\s+ACTOR\s+MESSAGE$/);
    expect(table[1]).toMatch(new RegExp(`^\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ\\s+Device/${d.name}\\s+DeviceEnrolled\\s`));
  });

  it("--follow prints new events until SIGINT, then exits 0", async () => {
    const d = await enrollDevice(s);
    const child = start(["events", "--follow", "--name", d.name]);
    const c = collect(child);
    await eventually(async () => (c.out().includes("DeviceEnrolled") ? true : undefined), 10_000);
    expect(c.out()).not.toContain("Nudged");
    expect((await s.api("POST", "/nudge", { kind: "Device", name: d.name })).status).toBe(200);
    await eventually(async () => (c.out().includes("Nudged") ? true : undefined), 5_000);
    child.kill("SIGINT");
    expect(await c.done).toBe(0);
    const lines = c.out().trimEnd().split("\n");
    expect(lines[0]).toMatch(/^TIME\s+OBJECT/);
    expect(lines.filter((l) => l.includes("Nudged"))).toHaveLength(1);
    expect(lines.at(-1)).toMatch(/Nudged/);
    expect(c.err()).toBe("");
  });

  it("--follow -o json prints one event per line, each once", async () => {
    const d = await enrollDevice(s);
    const child = start(["events", "-f", "--name", d.name, "-o", "json"]);
    const c = collect(child);
    await eventually(async () => (c.out().includes("DeviceEnrolled") ? true : undefined), 10_000);
    for (let i = 0; i < 3; i++) expect((await s.api("POST", "/nudge", { kind: "Device", name: d.name })).status).toBe(200);
    await eventually(async () => (c.out().split("Nudged").length === 4 ? true : undefined), 5_000);
    // Another poll or two must not repeat them.
    await new Promise((r) => setTimeout(r, 2_000));
    child.kill("SIGINT");
    expect(await c.done).toBe(0);
    const events = c.out().trimEnd().split("\n").map((l) => json<DroverEvent>(l));
    const ids = events.map((e) => e.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(events.filter((e) => e.type === "Nudged")).toHaveLength(3);
  });
});

describe("--help", () => {
  const commands = [
    [],
    ["login"],
    ["get"],
    ["get", "devices"],
    ["get", "fleets"],
    ["apply"],
    ["get", "actions"],
    ["get", "enrollments"],
    ["get", "tokens"],
    ["get", "requests"],
    ["approve"],
    ["approve", "action"],
    ["approve", "enrollment"],
    ["approve", "request"],
    ["reject"],
    ["reject", "action"],
    ["reject", "request"],
    ["deny"],
    ["deny", "enrollment"],
    ["reopen"],
    ["reopen", "enrollment"],
    ["create"],
    ["create", "action"],
    ["cancel"],
    ["cancel", "action"],
    ["decommission"],
    ["nudge"],
    ["nudge", "device"],
    ["nudge", "action"],
    ["events"],
    ["revoke"],
    ["revoke", "token"],
    ["rollout"],
    ["rollout", "pause"],
    ["rollout", "resume"],
    ["rollout", "promote"],
    ["rollout", "abort"],
    ["rollout", "status"],
    ["get", "plans"],
    ["describe"],
    ["describe", "plan"],
    ["plan"],
    ["plan", "approve"],
    ["plan", "cancel"],
    ["plan", "retry"],
    ["plan", "watch"],
    ["nudge", "plan"],
    ["get", "workflows"],
    ["describe", "workflow"],
    ["workflow"],
    ["workflow", "start"],
    ["workflow", "rerun"],
    ["workflow", "cancel"],
    ["workflow", "delete"],
    ["create", "enrollment-token"],
    ["get", "enrollment-tokens"],
    ["revoke", "enrollment-token"],
    ["rerun"],
    ["rerun", "action"],
  ];

  it("every command has --help, exit 0, needing no login or server; the list above is all of them", { timeout: 300_000 }, async () => {
    const env = { DROVER_CONFIG: path.join(dir, "nobody.json"), DROVER_SERVER: "http://127.0.0.1:1" };
    const seen: string[] = [];
    // Walks the tree of commands through their own help: the "Commands:" section names the subcommands.
    const walk = async (args: string[]): Promise<void> => {
      const name = args.join(" ");
      const r = await drover([...args, "--help"], { env });
      expect(r.code, `drover ${name} --help: ${r.stderr}`).toBe(0);
      expect(r.stdout, name).toMatch(new RegExp(`^Usage: drover${name ? " " + args.join("[|\\w]* ") : ""}`));
      seen.push(name);
      const section = r.stdout.split("Commands:\n")[1]?.split("\n\n")[0] ?? "";
      const subs = [...section.matchAll(/^ {2}([\w-]+)/gm)].map((m) => m[1]!).filter((n) => n !== "help");
      await Promise.all(subs.map((sub) => walk([...args, sub])));
    };
    await walk([]);
    expect(seen.sort()).toEqual(commands.map((c) => c.join(" ")).sort());
  });
});
