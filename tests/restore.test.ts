/**
 * Restore (DESIGN.md §2): after the database is restored from a backup, every device is
 * AwaitingReconnect until its agent reports again; nothing is silently overwritten.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { startTestServer, ADMIN_PASSWORD, testOnPostgres, TEST_PG_URL } from "./helpers/server";
import { enrollDevice, heartbeatBody } from "./helpers/devices";
import { startServer, type RunningServer } from "../server/main";
import { sqlitePath } from "../server/db";
import { backupDatabase, restoreDatabase } from "../server/ops/backup";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "drover-restore-"));
let restored: RunningServer | null = null;
afterAll(async () => {
  await restored?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

// Backup and restore copy the embedded SQLite file; on PostgreSQL its own tools do it, and the
// script says so (below).
describe.skipIf(testOnPostgres)("backup and restore", () => {
  it("marks every device AwaitingReconnect until it reports, then derives as usual", async () => {
    const s = await startTestServer();
    const a = await enrollDevice(s);
    const b = await enrollDevice(s);
    for (const d of [a, b]) expect((await s.agent("POST", "/status", heartbeatBody(), d.auth)).status).toBe(200);
    const backup = path.join(dir, "backup.db");
    await backupDatabase(sqlitePath(s.ctx.env.DATABASE_URL)!, backup);
    await s.close();

    const file = path.join(dir, "restored.db");
    restoreDatabase(backup, file);
    restored = await startServer({
      console: false,
      skipMigrate: true,
      env: { PORT: "0", HOST: "127.0.0.1", DATABASE_URL: `file:${file}`, DROVER_ADMIN_PASSWORD: ADMIN_PASSWORD, LOG_LEVEL: "silent" },
    });
    const url = restored.url;
    const token = ((await (await fetch(`${url}/api/v1/auth/token`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ username: "admin", password: ADMIN_PASSWORD }),
    })).json()) as { token: string }).token;
    const get = async (name: string) =>
      (await (await fetch(`${url}/api/v1/devices/${name}`, { headers: { authorization: `Bearer ${token}` } })).json()) as { summary: string };

    expect((await get(a.name)).summary).toBe("AwaitingReconnect");
    expect((await get(b.name)).summary).toBe("AwaitingReconnect");

    // The agent's credential survived the restore; its report ends the wait for that device only.
    const hb = await fetch(`${url}/api/agent/v1/status`, {
      method: "POST",
      headers: { ...a.auth, "content-type": "application/json" },
      body: JSON.stringify(heartbeatBody()),
    });
    expect(hb.status).toBe(200);
    expect((await get(a.name)).summary).toBe("Online");
    expect((await get(b.name)).summary).toBe("AwaitingReconnect");

    const events = (await (await fetch(`${url}/api/v1/events?kind=Server`, { headers: { authorization: `Bearer ${token}` } })).json()) as {
      items: { type: string }[];
    };
    expect(events.items.map((e) => e.type)).toContain("Restored");
  });

  it("refuses to restore from a missing file and leaves the database alone", () => {
    const file = path.join(dir, "untouched.db");
    fs.writeFileSync(file, "keep");
    expect(() => restoreDatabase(path.join(dir, "missing.db"), file)).toThrow(/no backup/);
    expect(fs.readFileSync(file, "utf8")).toBe("keep");
  });
});

describe("backup and restore on PostgreSQL", () => {
  it("are refused with a clear message naming pg_dump, and touch nothing", async () => {
    const target = path.join(dir, "pg-backup.db");
    for (const command of ["backup", "restore"]) {
      const run = promisify(execFile)(process.execPath, ["--import", "tsx", "scripts/backup.ts", command, target], {
        env: { ...process.env, DATABASE_URL: TEST_PG_URL },
      });
      await expect(run).rejects.toMatchObject({ code: 2, stderr: expect.stringMatching(/not supported on PostgreSQL.*pg_dump/) as unknown });
    }
    expect(fs.existsSync(target)).toBe(false);
  });
});
