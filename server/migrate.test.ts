/**
 * Issue 6, finding 3: the server must start while another process has the SQLite file open
 * (a backup, a monitoring query, an sqlite3 shell), and wait, saying why, when it truly
 * cannot migrate yet. Issue 20: Drover applies SQLite's migrations itself, in one transaction,
 * recorded as Prisma records them.
 *
 * SQLite's file locks only: it runs once, beside the module (unit project), not on both databases.
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { migrate, sqliteUpToDate } from "./migrate";
import { startServer } from "./main";
import { ROOT } from "./paths";

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

describe("SQLite migrations, applied by Drover", () => {
  /** A migrations folder of its own: name → SQL. */
  function folder(migrations: Record<string, string>): string {
    const dir = path.join(path.dirname(scratch()), "migrations");
    for (const [name, sql] of Object.entries(migrations)) {
      fs.mkdirSync(path.join(dir, name), { recursive: true });
      fs.writeFileSync(path.join(dir, name, "migration.sql"), sql);
    }
    return dir;
  }
  const PARENT_AND_CHILD = `CREATE TABLE "Parent" ("id" TEXT NOT NULL PRIMARY KEY);
CREATE TABLE "Child" ("id" TEXT NOT NULL PRIMARY KEY, "parentId" TEXT NOT NULL, CONSTRAINT "Child_parentId_fkey" FOREIGN KEY ("parentId") REFERENCES "Parent" ("id") ON DELETE CASCADE);
INSERT INTO "Parent" VALUES ('p1');
INSERT INTO "Child" VALUES ('c1', 'p1');`;
  // As Prisma writes a column change on SQLite: a new table, the rows copied, the old one dropped.
  const REBUILD_PARENT = `PRAGMA defer_foreign_keys=ON;
PRAGMA foreign_keys=OFF;
CREATE TABLE "new_Parent" ("id" TEXT NOT NULL PRIMARY KEY, "name" TEXT NOT NULL DEFAULT '');
INSERT INTO "new_Parent" ("id") SELECT "id" FROM "Parent";
DROP TABLE "Parent";
ALTER TABLE "new_Parent" RENAME TO "Parent";
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;`;

  it("a fresh file gets every migration, each recorded with its file's sha256; Prisma reads the records as up to date", async () => {
    const file = scratch();
    await migrate(`file:${file}`);
    const db = new Database(file, { readonly: true });
    const rows = db.prepare(`SELECT migration_name, checksum, finished_at, applied_steps_count FROM "_prisma_migrations" ORDER BY migration_name`).all() as { migration_name: string; checksum: string; finished_at: string; applied_steps_count: number }[];
    db.close();
    const dir = path.join(ROOT, "prisma", "migrations");
    const names = fs.readdirSync(dir).filter((n) => fs.existsSync(path.join(dir, n, "migration.sql"))).sort();
    expect(rows.map((r) => r.migration_name)).toEqual(names);
    for (const r of rows) {
      expect(r.checksum).toBe(createHash("sha256").update(fs.readFileSync(path.join(dir, r.migration_name, "migration.sql"))).digest("hex"));
      expect(Date.parse(r.finished_at)).not.toBeNaN();
      expect(r.applied_steps_count).toBe(1);
    }
    expect(sqliteUpToDate(file)).toBe(true);
    // Prisma's own CLI (a development tool here) agrees.
    const status = execFileSync(process.execPath, [createRequire(import.meta.url).resolve("prisma/build/index.js"), "migrate", "status"], {
      cwd: ROOT,
      env: { ...process.env, DATABASE_URL: `file:${file}`, PRISMA_HIDE_UPDATE_MESSAGE: "1", NO_COLOR: "1" },
      encoding: "utf8",
    });
    expect(status).toContain("Database schema is up to date!");
  });

  it("goes on from the last one applied; a table rebuilt keeps the rows that refer to it", async () => {
    const file = scratch();
    const first = folder({ "1_parent_and_child": PARENT_AND_CHILD });
    await migrate(`file:${file}`, { sqliteMigrations: first });
    const second = folder({ "2_rebuild_parent": REBUILD_PARENT });
    await migrate(`file:${file}`, { sqliteMigrations: second });
    const db = new Database(file, { readonly: true });
    expect(db.prepare(`SELECT migration_name FROM "_prisma_migrations" ORDER BY migration_name`).all()).toEqual([{ migration_name: "1_parent_and_child" }, { migration_name: "2_rebuild_parent" }]);
    // With foreign keys on, DROP TABLE "Parent" would have deleted the child (ON DELETE CASCADE).
    expect(db.prepare(`SELECT * FROM "Child"`).all()).toEqual([{ id: "c1", parentId: "p1" }]);
    expect(db.prepare(`SELECT * FROM "Parent"`).all()).toEqual([{ id: "p1", name: "" }]);
    db.close();
  });

  it("a migration that fails leaves the file as it was: none of the pending ones applied, nothing recorded", async () => {
    const file = scratch();
    const dir = folder({ "1_parent_and_child": PARENT_AND_CHILD, "2_broken": `ALTER TABLE "Parent" ADD COLUMN "x" TEXT;\nALTER TABLE "NoSuchTable" ADD COLUMN "y" TEXT;` });
    await expect(migrate(`file:${file}`, { sqliteMigrations: dir })).rejects.toThrow(/database migration 2_broken failed: .*no such table: NoSuchTable/);
    const db = new Database(file, { readonly: true });
    expect(db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`).all()).toEqual([]);
    db.close();
  });
});
