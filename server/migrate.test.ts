/**
 * Issue 6, finding 3: the server must start while another process has the SQLite file open
 * (a backup, a monitoring query, an sqlite3 shell), and wait, saying why, when it truly
 * cannot migrate yet.
 *
 * SQLite's file locks only: it runs once, beside the module (unit project), not on both databases.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { migrate, sqliteUpToDate } from "./migrate";
import { startServer } from "./main";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});
function scratch(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "drover-migrate-"));
  dirs.push(dir);
  return path.join(dir, "drover.db");
}

describe("start-time migration with other processes on the file", () => {
  it("starts while a reader holds a transaction open", async () => {
    const file = scratch();
    const url = `file:${file}`;
    // A server ran once: migrated, WAL mode.
    const first = await startServer({ console: false, env: { PORT: "0", HOST: "127.0.0.1", DATABASE_URL: url, DROVER_ADMIN_PASSWORD: "admin-password-1", LOG_LEVEL: "silent" } });
    await first.close();

    const reader = new Database(file, { readonly: true });
    reader.prepare("BEGIN").run();
    reader.prepare(`SELECT count(*) FROM "Device"`).get();
    try {
      const again = await startServer({ console: false, env: { PORT: "0", HOST: "127.0.0.1", DATABASE_URL: url, LOG_LEVEL: "silent" } });
      const res = await fetch(`${again.url}/healthz`);
      expect(res.status).toBe(200);
      await again.close();
    } finally {
      reader.prepare("COMMIT").run();
      reader.close();
    }
  });

  it("with migrations pending and the file locked, waits and says why, then migrates once the lock goes", async () => {
    const file = scratch();
    const holder = new Database(file);
    holder.prepare("BEGIN IMMEDIATE").run();
    const reasons: string[] = [];
    let released = false;
    const done = migrate(`file:${file}`, {
      retryMs: 100,
      maxRetryMs: 200,
      onBusy: (_attempt, reason) => {
        reasons.push(reason);
        if (!released && reasons.length >= 2) {
          released = true;
          holder.prepare("COMMIT").run();
          holder.close();
        }
      },
    });
    await done;
    expect(reasons.length).toBeGreaterThanOrEqual(2);
    expect(reasons[0]).toMatch(/locked by another process/);
    expect(sqliteUpToDate(file)).toBe(true);
  }, 60_000);
});
