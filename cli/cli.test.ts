/**
 * The `drover` CLI against a real server (cli-suite.ts): login, get, exit codes, decommission,
 * events (and --follow). Login, the exit codes and --follow run the real program as a child
 * process; the rest run in this process (runInProcess). Decisions, tokens and actions are in
 * cli-actions.test.ts, --help on every command in cli-help.test.ts.
 */
import { beforeAll, describe, expect, it } from "vitest";
import fs from "node:fs";
import path from "node:path";
import YAML from "yaml";
import { ADMIN_PASSWORD } from "../tests/helpers/server";
import { enrollDevice, eventually, heartbeat } from "../tests/helpers/devices";
import { createUser } from "../server/auth/auth";
import type { Device, DroverEvent, Enrollment } from "./types";
import { cliSuite, ROOT, type CliSuite } from "./cli-suite";
import { spawn } from "node:child_process";

const suite = cliSuite({ login: false });
const { start, collect, drover, ok, json, pendingEnrollment, freePort } = suite;

let s: CliSuite["s"];
let dir: string;
let config: string;
beforeAll(() => void ({ s, dir, config } = suite.state));

describe("login", () => {
  it("--password-stdin stores the token, mode 0600", async () => {
    const out = await ok(["login", "--username", "admin", "--password-stdin"], { input: `${ADMIN_PASSWORD}\n`, process: true });
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
    const r = await drover(["login", "-u", "admin", "--password-stdin"], { input: "not-the-password\n", env: { DROVER_CONFIG: other }, process: true });
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/error: UNAUTHENTICATED: wrong username or password/);
    expect(fs.existsSync(other)).toBe(false);
  });

  it("asks for username and password when not given (stdin not a terminal: one line each)", async () => {
    const other = path.join(dir, "asked", "config.json");
    await ok(["login"], { input: `admin\n${ADMIN_PASSWORD}\n`, env: { DROVER_CONFIG: other }, process: true });
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
    const r = await drover(["get", "devices"], { env: { DROVER_CONFIG: path.join(dir, "nobody.json") }, process: true });
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/not logged in.*drover login/);
  });

  it("3 when the server refuses the token (401)", async () => {
    const r = await drover(["get", "devices"], { env: { DROVER_TOKEN: "drvo_not-a-token" }, process: true });
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/error: UNAUTHENTICATED: .*\n.*drover login/);
  });

  it("4 when the server cannot be reached", async () => {
    const server = `http://127.0.0.1:${await freePort()}`;
    const r = await drover(["get", "devices"], { env: { DROVER_SERVER: server, DROVER_TOKEN: "drvo_x" }, process: true });
    expect(r.code).toBe(4);
    expect(r.stderr).toContain(`cannot reach the server at ${server}`);
    const login = await drover(["login", "-u", "admin", "--password-stdin"], { input: ADMIN_PASSWORD, env: { DROVER_SERVER: server } });
    expect(login.code).toBe(4);
  });

  it("2 for usage errors", async () => {
    for (const args of [["get", "devices", "--bogus"], ["get", "spaceships"], ["create", "action", "--kind", "exec"], ["approve", "action"], ["get", "devices", "-o", "xml"]]) {
      const r = await drover(args, { process: true });
      expect(r.code, args.join(" ")).toBe(2);
      expect(r.stderr, args.join(" ")).toMatch(/error/);
    }
  });

  it("1 when the server refuses: a viewer's write is FORBIDDEN", async () => {
    await createUser(s.auth, s.ctx.db, { username: "vera", password: "viewer-password-1", role: "viewer" });
    const viewerConfig = path.join(dir, "viewer", "config.json");
    await ok(["login", "-u", "vera", "--password-stdin"], { input: "viewer-password-1", env: { DROVER_CONFIG: viewerConfig } });
    const d = await enrollDevice(s);
    const r = await drover(["decommission", d.name, "--yes"], { env: { DROVER_CONFIG: viewerConfig }, process: true });
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

describe("revoke device", () => {
  it("--reason and --yes revoke its credential; again: no change; without --reason a usage error; not a terminal without --yes: refused", async () => {
    const d = await enrollDevice(s);
    const r = await drover(["revoke", "device", d.name], { input: `${d.name}\n` });
    expect(r.code).toBe(2);
    const noTty = await drover(["revoke", "device", d.name, "--reason", "stolen"], { input: `${d.name}\n` });
    expect(noTty.code).toBe(2);
    expect(noTty.stderr).toMatch(/--yes/);
    expect((await s.api<Device>("GET", `/devices/${d.name}`)).body.credentialRevokedAt).toBeNull();

    expect(await ok(["revoke", "device", d.name, "--reason", "stolen", "--yes"])).toMatch(new RegExp(`^device/${d.name}: credential revoked at \\d{4}-`));
    const first = (await s.api<Device>("GET", `/devices/${d.name}`)).body.credentialRevokedAt;
    expect(first).not.toBeNull();
    expect(await ok(["revoke", "device", d.name, "--reason", "again", "--yes"])).toContain(`credential revoked at ${first}`);
    expect((await heartbeat(s, d)).status).toBe(401);
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
