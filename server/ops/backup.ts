/**
 * Backup and restore of the embedded database (DESIGN.md §2, "AwaitingReconnect and
 * ConflictPaused come from restore"). A backup is SQLite's online backup of the live file. A
 * restore copies a backup into place while the server is stopped and records `restoredAt`:
 * from then on every device is AwaitingReconnect until it reports again, and one that reports
 * a renderedVersion newer than the restored service knows is ConflictPaused until resumed.
 */
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { sqliteDate } from "../devices/sqlite-driver";

export async function backupDatabase(databaseFile: string, target: string): Promise<void> {
  if (!fs.existsSync(databaseFile)) throw new Error(`no database at ${databaseFile}`);
  fs.mkdirSync(path.dirname(path.resolve(target)), { recursive: true });
  const db = new Database(databaseFile, { readonly: true, fileMustExist: true });
  try {
    await db.backup(target);
  } finally {
    db.close();
  }
}

export function restoreDatabase(backupFile: string, databaseFile: string, now = new Date()): void {
  if (!fs.existsSync(backupFile)) throw new Error(`no backup at ${backupFile}`);
  fs.mkdirSync(path.dirname(databaseFile), { recursive: true });
  for (const suffix of ["", "-wal", "-shm"]) fs.rmSync(databaseFile + suffix, { force: true });
  fs.copyFileSync(backupFile, databaseFile);
  const db = new Database(databaseFile, { fileMustExist: true });
  try {
    const at = sqliteDate(now);
    db.transaction(() => {
      db.prepare(`INSERT INTO "ServerState" ("key", "value") VALUES ('restoredAt', ?) ON CONFLICT("key") DO UPDATE SET "value" = excluded."value"`).run(
        now.toISOString(),
      );
      // Every device waits for its agent: the derived column says so until the next report.
      db.prepare(`UPDATE "Device" SET "summary" = 'AwaitingReconnect', "updatedAt" = ? WHERE "conflictPaused" = 0`).run(at);
      db.prepare(
        `INSERT INTO "Event" ("time", "objectKind", "objectName", "type", "reason", "message", "actor") VALUES (?, 'Server', 'database', 'Restored', 'Restored', ?, 'restore')`,
      ).run(at, `restored from ${path.basename(backupFile)}`);
    })();
  } finally {
    db.close();
  }
}
