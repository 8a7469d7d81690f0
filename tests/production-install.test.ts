/**
 * Issue 20: production runs the built server (`node dist/server/main.mjs`) in an install
 * without dev dependencies: no tsx, no esbuild, no TypeScript step at start.
 *
 * The built tree (after `scripts/ensure-build.mjs`, a no-op when the build is current) is
 * copied to a temporary folder outside the repository (so nothing resolves from its
 * node_modules) with hard links, pruned to production packages, and its server is started on
 * a fresh SQLite database and checked over HTTP: the console, the operator API, the agent API,
 * install.sh and the agent download; then the same install on an empty PostgreSQL database
 * (its migrations, both APIs). It runs once, in the sqlite project: the copy and the prune are
 * most of its minute, and they do not differ by database.
 *
 * The copy's files are hard links to the repository's: nothing here writes into one. npm
 * rewrites package.json, package-lock.json and node_modules/.package-lock.json, so those are
 * real copies; everything else it only deletes.
 */
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const ROOT = path.resolve(import.meta.dirname, "..");
const run = promisify(execFile);
const onPostgres = process.env.DROVER_TEST_DATABASE === "postgresql";
const PG_URL = process.env.DROVER_TEST_PG_URL ?? "postgresql://postgres:postgres@127.0.0.1:5432/postgres";
const ADMIN_PASSWORD = "production-admin-password";
/** Never copied: built or made elsewhere (.next and dist are copied their own way), or scratch. */
const NOT_COPIED = new Set(["node_modules", ".next", "dist", ".git", ".tmp", "data", "test-results", "playwright-report", "tsconfig.tsbuildinfo", "package.json", "package-lock.json"]);

let dir = "";
const servers: ChildProcess[] = [];
let serverLog = "";
let url = "";
let pgDatabase = "";
let pruneOutput = "";

async function pgAdmin(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** Starts `node dist/server/main.mjs` in the copy on a free port; resolves with its URL once it listens. */
function startBuiltServer(databaseUrl: string): Promise<string> {
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    NODE_ENV: "production",
    PORT: "0",
    HOST: "127.0.0.1",
    DATABASE_URL: databaseUrl,
    DROVER_ADMIN_PASSWORD: ADMIN_PASSWORD,
    NEXT_TELEMETRY_DISABLED: "1",
  };
  const child = spawn(process.execPath, ["dist/server/main.mjs"], { cwd: dir, env, stdio: ["ignore", "pipe", "pipe"] });
  servers.push(child);
  serverLog = "";
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the built server did not listen within 90 s:\n${serverLog}`)), 90_000);
    const onData = (chunk: Buffer) => {
      serverLog += chunk.toString();
      const listening = /"url":"(http:\/\/[^"]+)"[^\n]*"msg":"Drover is listening"/.exec(serverLog);
      if (listening?.[1]) {
        clearTimeout(timer);
        // It listens on 127.0.0.1 only; "localhost" may be tried as ::1 first.
        resolve(listening[1].replace("//localhost:", "//127.0.0.1:"));
      }
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`the built server exited (${code}) before listening:\n${serverLog}`));
    });
  });
}

async function stopServer(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once("exit", r));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
  await exited;
  clearTimeout(timer);
}

describe.skipIf(onPostgres)("a production install (npm prune --omit=dev --omit=optional) runs the built server", () => {
  beforeAll(async () => {
    // Builds whatever is missing or outdated (the console too on a fresh clone: minutes).
    await run(process.execPath, [path.join(ROOT, "scripts", "ensure-build.mjs")], { cwd: ROOT, maxBuffer: 64 * 1024 * 1024 });

    dir = fs.mkdtempSync(path.join(os.tmpdir(), "drover-production-"));
    // Hard links need the same file system; a copy of node_modules would take minutes.
    const link = (from: string, to: string) => run("cp", ["-al", from, to]);
    await Promise.all(
      fs
        .readdirSync(ROOT)
        .filter((name) => !NOT_COPIED.has(name))
        .map((name) => link(path.join(ROOT, name), dir)),
    );
    // .next without Next's build cache (hundreds of MB it never reads when serving).
    fs.mkdirSync(path.join(dir, ".next"));
    await Promise.all(
      fs
        .readdirSync(path.join(ROOT, ".next"))
        .filter((name) => name !== "cache")
        .map((name) => link(path.join(ROOT, ".next", name), path.join(dir, ".next"))),
    );
    // The server fills .next/server/route-cache as it serves: the copy starts with none of its
    // own, so nothing is ever written through a link into the repository's build.
    fs.rmSync(path.join(dir, ".next", "server", "route-cache"), { recursive: true, force: true });
    await Promise.all([link(path.join(ROOT, "node_modules"), dir), link(path.join(ROOT, "dist"), dir)]);
    for (const file of ["package.json", "package-lock.json", "node_modules/.package-lock.json"]) {
      fs.rmSync(path.join(dir, file), { force: true });
      fs.copyFileSync(path.join(ROOT, file), path.join(dir, file));
    }

    // --omit=optional too: with --omit=dev alone npm keeps vitest and what it needs (vite,
    // esbuild, tsx), because better-auth names vitest as an optional peer dependency.
    const pruned = await run("npm", ["prune", "--omit=dev", "--omit=optional", "--offline", "--no-audit", "--no-fund"], { cwd: dir, env: { ...process.env, npm_config_update_notifier: "false" } });
    pruneOutput = pruned.stdout + pruned.stderr;

    url = await startBuiltServer(`file:${path.join(dir, "data", "drover.db")}`);
  }, 900_000);

  afterAll(async () => {
    try {
      for (const child of servers) await stopServer(child);
    } finally {
      if (dir) fs.rmSync(dir, { recursive: true, force: true });
      if (pgDatabase) await pgAdmin(`DROP DATABASE IF EXISTS ${pgDatabase} WITH (FORCE)`);
    }
  }, 60_000);

  it("has no tsx, no esbuild and no vitest, and its ensure-build runs what is there", async () => {
    expect(pruneOutput).toMatch(/removed \d+ packages/);
    for (const name of ["tsx", "esbuild", "@esbuild/linux-x64", "vitest"]) expect(fs.existsSync(path.join(dir, "node_modules", name)), name).toBe(false);
    // A bundle that looks older than its sources (a listed source missing) is run as it is.
    const inputs = path.join(dir, "dist", "server", "inputs.json");
    const listed = JSON.parse(fs.readFileSync(inputs, "utf8")) as string[];
    fs.rmSync(inputs); // a hard link: replaced, never written through
    fs.writeFileSync(inputs, JSON.stringify([...listed, "server/no-such-file.ts"]));
    const bundle = fs.statSync(path.join(dir, "dist", "server", "main.mjs"));
    const { stdout, stderr } = await run(process.execPath, ["scripts/ensure-build.mjs"], { cwd: dir });
    expect(stderr).toContain("the server is older than its sources, but esbuild is not installed");
    expect(stdout).not.toContain("rebuilding");
    expect(fs.statSync(path.join(dir, "dist", "server", "main.mjs")).ino).toBe(bundle.ino);
    // The agent command from the sources says why it cannot run, in one line, not a stack.
    const agent = await run(process.execPath, ["bin/drover-agent.mjs", "--help"], { cwd: dir }).catch((e: { code: number; stderr: string }) => e);
    expect(agent).toMatchObject({ code: 1, stderr: expect.stringContaining("tsx, a dev dependency not installed here") });
  });

  it("serves the console's sign-in page", async () => {
    const res = await fetch(`${url}/login`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/html");
    expect(await res.text()).toContain("<title>Sign in");
  });

  it("answers the operator API with a token made from DROVER_ADMIN_PASSWORD, and the agent API", async () => {
    const tokenRes = await fetch(`${url}/api/v1/auth/token`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ username: "admin", password: ADMIN_PASSWORD }) });
    expect(tokenRes.status).toBe(201);
    const { token } = (await tokenRes.json()) as { token: string };
    const auth = { authorization: `Bearer ${token}` };

    const bad = await fetch(`${url}/api/agent/v1/enrollments`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ error: { code: "INVALID_REQUEST", message: expect.stringContaining("deviceName") } });

    const enrollment = { deviceName: "prod-check-1", labels: { site: "a" }, platform: "linux-amd64", role: "worker", agentVersion: "0.1.0", secret: "s".repeat(43) };
    const enrolled = await fetch(`${url}/api/agent/v1/enrollments`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(enrollment) });
    expect(enrolled.status).toBe(201);
    expect(await enrolled.json()).toMatchObject({ status: "Pending" });

    const pending = await fetch(`${url}/api/v1/enrollments?status=Pending`, { headers: auth });
    expect(pending.status).toBe(200);
    expect(await pending.json()).toMatchObject({ items: [expect.objectContaining({ deviceName: "prod-check-1", labels: { site: "a" } })] });
  });

  it("runs the drover CLI as built (dist/cli), without tsx", async () => {
    const tokenRes = await fetch(`${url}/api/v1/auth/token`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ username: "admin", password: ADMIN_PASSWORD }) });
    const { token } = (await tokenRes.json()) as { token: string };
    const env = { ...process.env, DROVER_SERVER: url, DROVER_TOKEN: token, DROVER_CONFIG: path.join(dir, "no-login.json") };
    expect((await run(process.execPath, ["bin/drover.mjs", "--version"], { cwd: dir, env })).stdout).toMatch(/^\d+\.\d+\.\d+\n$/);
    const listed = await run(process.execPath, ["bin/drover.mjs", "get", "enrollments", "-o", "json"], { cwd: dir, env });
    expect(listed.stdout).toContain("prod-check-1");
  });

  it("serves install.sh with its own URL in it, and the agent build with its manifest's sha256", async () => {
    const script = await fetch(`${url}/install.sh`);
    expect(script.status).toBe(200);
    const text = await script.text();
    expect(text).toMatch(/^#!\/bin\/sh/);
    expect(text).toContain(new URL(url).host);

    const manifest = JSON.parse(fs.readFileSync(path.join(dir, "dist", "agent", "manifest.json"), "utf8")) as { sha256: string; size: number };
    const served = await fetch(`${url}/api/agent/v1/download/manifest`);
    expect(await served.json()).toMatchObject({ sha256: manifest.sha256, size: manifest.size });
    const download = await fetch(`${url}/api/agent/v1/download`);
    expect(download.status).toBe(200);
    const bytes = Buffer.from(await download.arrayBuffer());
    expect(createHash("sha256").update(bytes).digest("hex")).toBe(manifest.sha256);
  });

  it("never builds the agent at run time without esbuild: no build is a 404 naming the command", async () => {
    fs.renameSync(path.join(dir, "dist", "agent"), path.join(dir, "dist", "agent-away"));
    const res = await fetch(`${url}/api/agent/v1/download`);
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ error: { code: "NOT_FOUND", message: expect.stringContaining("npm run build:agent") } });
    expect(fs.existsSync(path.join(dir, "dist", "agent"))).toBe(false);
  });

  it("runs on PostgreSQL too: an empty database gets its migrations, and both APIs answer", async () => {
    // An empty database: the bundled server applies prisma/postgresql/migrations itself.
    const name = `drover_production_${process.pid}_${Date.now()}`;
    await pgAdmin(`CREATE DATABASE ${name}`);
    pgDatabase = name;
    const u = new URL(PG_URL);
    u.pathname = `/${name}`;
    const pgUrl = await startBuiltServer(u.toString());
    const tokenRes = await fetch(`${pgUrl}/api/v1/auth/token`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ username: "admin", password: ADMIN_PASSWORD }) });
    expect(tokenRes.status).toBe(201);
    const { token } = (await tokenRes.json()) as { token: string };
    const enrollment = { deviceName: "prod-check-pg", labels: {}, platform: "linux-amd64", role: "worker", agentVersion: "0.1.0", secret: "p".repeat(43) };
    const enrolled = await fetch(`${pgUrl}/api/agent/v1/enrollments`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(enrollment) });
    expect(enrolled.status).toBe(201);
    const pending = await fetch(`${pgUrl}/api/v1/enrollments?status=Pending`, { headers: { authorization: `Bearer ${token}` } });
    expect(await pending.json()).toMatchObject({ items: [expect.objectContaining({ deviceName: "prod-check-pg" })] });
  }, 120_000);
});
