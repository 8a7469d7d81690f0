/**
 * Applies prisma/migrations at start with Prisma's own `migrate deploy` (offline with the JS
 * engine), so the database file is always at the schema this code expects.
 *
 * Another process may have the SQLite file open: a backup, a monitoring query, an `sqlite3`
 * shell. Prisma's migrate takes write locks even when there is nothing to apply, and fails
 * with SQLITE_BUSY (logged by Prisma as "unknown variant `SocketTimeout`") while a reader
 * holds a transaction. So: when every migration is already applied, which a read-only look
 * at `_prisma_migrations` tells without any lock that readers block, Prisma is not run at
 * all; when some are pending and the file is busy, the start waits, saying why, and tries
 * again, instead of exiting.
 */
import { execFile } from "node:child_process";
import { createRequire } from "node:module";
import fs from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import Database from "better-sqlite3";
import pg from "pg";
import { isPostgresUrl, sqlitePath } from "./db";
import { logger as rootLogger, type Logger } from "./logger";
import { ROOT } from "./paths";

const run = promisify(execFile);
const require = createRequire(import.meta.url);
const migrationsDir = path.join(ROOT, "prisma", "migrations");

export interface MigrateOptions {
  log?: Logger;
  /** First wait after a busy failure; it doubles up to `maxRetryMs`. */
  retryMs?: number;
  maxRetryMs?: number;
  /** Called before each wait (tests observe the waiting through it). */
  onBusy?: (attempt: number, reason: string) => void;
}

/** Migration folders in prisma/migrations, in order. */
function knownMigrations(): string[] {
  return fs
    .readdirSync(migrationsDir, { withFileTypes: true })
    .filter((e) => e.isDirectory() && fs.existsSync(path.join(migrationsDir, e.name, "migration.sql")))
    .map((e) => e.name)
    .sort();
}

/** Whether every migration is recorded as applied in the SQLite file (read-only, no write lock). */
export function sqliteUpToDate(file: string): boolean {
  if (!fs.existsSync(file)) return false;
  const db = new Database(file, { readonly: true, fileMustExist: true, timeout: 5_000 });
  try {
    const table = db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name = '_prisma_migrations'`).get();
    if (!table) return false;
    const rows = db.prepare(`SELECT migration_name FROM _prisma_migrations WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL`).all() as { migration_name: string }[];
    const applied = new Set(rows.map((r) => r.migration_name));
    return knownMigrations().every((name) => applied.has(name));
  } finally {
    db.close();
  }
}

const BUSY = /SQLITE_BUSY|database is locked|SocketTimeout|database table is locked/i;

export async function migrate(databaseUrl: string, options: MigrateOptions = {}): Promise<void> {
  const log = options.log ?? rootLogger;
  if (isPostgresUrl(databaseUrl)) return migratePostgres(databaseUrl, log);
  const file = sqlitePath(databaseUrl);
  if (file) fs.mkdirSync(path.dirname(file), { recursive: true });
  let wait = options.retryMs ?? 1_000;
  for (let attempt = 1; ; attempt++) {
    try {
      if (file && sqliteUpToDate(file)) return;
      await deploy(databaseUrl);
      return;
    } catch (e) {
      const message = e instanceof Error ? e.message : String(e);
      if (!file || !BUSY.test(message)) throw e;
      const reason = `${file} is locked by another process (a backup, a monitoring query or an sqlite3 shell holding a transaction?)`;
      options.onBusy?.(attempt, reason);
      log.warn({ attempt, retryInMs: wait, file }, `database migration waits: ${reason}`);
      await new Promise((r) => setTimeout(r, wait));
      wait = Math.min(wait * 2, options.maxRetryMs ?? 15_000);
    }
  }
}

async function deploy(databaseUrl: string): Promise<void> {
  const cli = require.resolve("prisma/build/index.js");
  try {
    await run(process.execPath, [cli, "migrate", "deploy"], {
      cwd: ROOT,
      env: { ...process.env, DATABASE_URL: databaseUrl, PRISMA_HIDE_UPDATE_MESSAGE: "1", NO_COLOR: "1" },
    });
  } catch (e) {
    const err = e as { stdout?: string; stderr?: string; message: string };
    throw new Error(`database migration failed: ${err.stderr || err.stdout || err.message}`);
  }
}

const pgMigrationsDir = path.join(ROOT, "prisma", "postgresql", "migrations");
/** Any constant: the advisory lock that lets one server at a time migrate (several start at once). */
const MIGRATE_LOCK = 72_410_911;

/**
 * PostgreSQL (issue 11): prisma/postgresql/migrations, applied here rather than by Prisma
 * (migrate through @prisma/adapter-pg fails in 6.19, ../shared/STACK.md). Several servers
 * starting together take turns on an advisory lock; each migration runs in its own
 * transaction with its row in `_drover_migrations`, so a crash leaves it applied or not.
 */
async function migratePostgres(databaseUrl: string, log: Logger): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query("SELECT pg_advisory_lock($1)", [MIGRATE_LOCK]);
    await client.query(`CREATE TABLE IF NOT EXISTS "_drover_migrations" ("name" TEXT PRIMARY KEY, "appliedAt" TIMESTAMPTZ NOT NULL DEFAULT now())`);
    const applied = new Set((await client.query<{ name: string }>(`SELECT "name" FROM "_drover_migrations"`)).rows.map((r) => r.name));
    const names = fs
      .readdirSync(pgMigrationsDir, { withFileTypes: true })
      .filter((e) => e.isDirectory() && fs.existsSync(path.join(pgMigrationsDir, e.name, "migration.sql")))
      .map((e) => e.name)
      .sort();
    for (const name of names.filter((n) => !applied.has(n))) {
      const sql = fs.readFileSync(path.join(pgMigrationsDir, name, "migration.sql"), "utf8");
      try {
        await client.query("BEGIN");
        await client.query(sql);
        await client.query(`INSERT INTO "_drover_migrations" ("name") VALUES ($1)`, [name]);
        await client.query("COMMIT");
      } catch (e) {
        await client.query("ROLLBACK");
        throw new Error(`database migration ${name} failed: ${e instanceof Error ? e.message : String(e)}`);
      }
      log.info({ migration: name }, "database migration applied");
    }
  } finally {
    await client.query("SELECT pg_advisory_unlock_all()").catch(() => undefined);
    await client.end();
  }
}
