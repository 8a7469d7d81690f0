/**
 * A real Drover server for integration tests: its own SQLite file in a temp folder, migrated
 * with Prisma, on a random port, console off (API surfaces only).
 */
import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { startServer, type RunningServer, type StartOptions } from "../../server/main";
import { migrate } from "../../server/migrate";

export const ADMIN_PASSWORD = "admin-password-1";

export interface TestServer extends RunningServer {
  dir: string;
  /** An operator API token for the admin. */
  adminToken: string;
  api<T = unknown>(method: string, path: string, body?: unknown, token?: string): Promise<{ status: number; body: T }>;
  agent<T = unknown>(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<{ status: number; body: T }>;
}

const migrationsDir = path.resolve(import.meta.dirname, "../../prisma/migrations");

function migrationsHash(): string {
  const hash = createHash("sha256");
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else hash.update(path.relative(migrationsDir, full)).update(fs.readFileSync(full));
    }
  };
  walk(migrationsDir);
  return hash.digest("hex").slice(0, 16);
}

/**
 * `prisma migrate deploy` takes seconds; run it once per migration set into a template file
 * (shared by test files and runs, keyed by the migrations' hash) and copy that per server.
 */
async function templateDatabase(): Promise<string> {
  const template = path.join(os.tmpdir(), `drover-test-template-${migrationsHash()}.db`);
  if (fs.existsSync(template)) return template;
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "drover-template-"));
  try {
    const file = path.join(scratch, "template.db");
    await migrate(`file:${file}`);
    // Atomic: a concurrent test file either sees no template or a complete one.
    fs.renameSync(file, template);
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
  return template;
}

export async function startTestServer(env: StartOptions["env"] = {}, options: Pick<StartOptions, "fastPath" | "deadlines"> = {}): Promise<TestServer> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "drover-test-"));
  fs.copyFileSync(await templateDatabase(), path.join(dir, "drover.db"));
  const running = await startServer({
    ...options,
    console: false,
    skipMigrate: true,
    env: {
      PORT: "0",
      HOST: "127.0.0.1",
      DATABASE_URL: `file:${path.join(dir, "drover.db")}`,
      DROVER_ADMIN_PASSWORD: ADMIN_PASSWORD,
      LOG_LEVEL: "silent",
      ...env,
    },
  });
  const call = async <T>(url: string, method: string, body: unknown, headers: Record<string, string>) => {
    const res = await fetch(url, {
      method,
      headers: { ...(body !== undefined ? { "content-type": "application/json" } : {}), ...headers },
      body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : undefined) as T };
  };
  const tokenRes = await call<{ token: string }>(`${running.url}/api/v1/auth/token`, "POST", { username: "admin", password: ADMIN_PASSWORD }, {});
  if (tokenRes.status !== 201) throw new Error(`could not get an admin token: ${JSON.stringify(tokenRes.body)}`);
  const adminToken = tokenRes.body.token;
  return {
    ...running,
    dir,
    adminToken,
    api: (method, p, body, token = adminToken) => call(`${running.url}/api/v1${p}`, method, body, { authorization: `Bearer ${token}` }),
    agent: (method, p, body, headers = {}) => call(`${running.url}/api/agent/v1${p}`, method, body, headers),
    async close() {
      await running.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
