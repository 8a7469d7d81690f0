/**
 * Applies the migrations at start, so the database is always at the schema this code expects:
 * prisma/migrations on SQLite, prisma/postgresql/migrations on PostgreSQL, each by Drover
 * itself in the server's process (no Prisma CLI: `migrate deploy` was a node process of
 * 1.5–6 CPU-s at every first start, and the CLI a runtime dependency for it alone; issue 20).
 *
 * SQLite keeps Prisma's own bookkeeping, `_prisma_migrations` (the same columns, a row per
 * migration with the sha256 of its file), so a database Prisma migrated goes on here and one
 * migrated here stays readable by `prisma migrate status`. Every pending migration is applied
 * in one transaction, foreign keys off (their scripts rebuild tables, as Prisma writes them),
 * checked before the commit: a failure leaves the file as it was.
 *
 * Another process may have the SQLite file open: a backup, a monitoring query, an `sqlite3`
 * shell. When every migration is already applied, which a read-only look at
 * `_prisma_migrations` tells without any lock that readers block, nothing is written; when
 * some are pending and the file is busy, the start waits, saying why, and tries again,
 * instead of exiting.
 */
import { randomUUID, createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { isPostgresUrl, sqlitePath } from "./db";
import { logger as rootLogger, type Logger } from "./logger";
import { ROOT } from "./paths";

const migrationsDir = path.join(ROOT, "prisma", "migrations");

export interface MigrateOptions {
  log?: Logger;
  /** First wait after a busy failure; it doubles up to `maxRetryMs`. */
  retryMs?: number;
  maxRetryMs?: number;
  /** Called before each wait (tests observe the waiting through it). */
  onBusy?: (attempt: number, reason: string) => void;
  /** SQLite's migrations folder (prisma/migrations; tests give their own). */
  sqliteMigrations?: string;
}

/** The migration folders in `dir` (prisma/migrations unless told), in order. */
function knownMigrations(dir = migrationsDir): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isDirectory() && fs.existsSync(path.join(dir, e.name, "migration.sql")))
    .map((e) => e.name)
    .sort();
}

/** Whether every migration is recorded as applied in the SQLite file (read-only, no write lock). */
export function sqliteUpToDate(file: string, dir = migrationsDir): boolean {
  if (!fs.existsSync(file)) return false;
  const db = new Database(file, { readonly: true, fileMustExist: true, timeout: 5_000 });
  try {
    const table = db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name = '_prisma_migrations'`).get();
    if (!table) return false;
    const rows = db.prepare(`SELECT migration_name FROM _prisma_migrations WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL`).all() as { migration_name: string }[];
    const applied = new Set(rows.map((r) => r.migration_name));
    return knownMigrations(dir).every((name) => applied.has(name));
  } finally {
    db.close();
  }
}

const BUSY = /SQLITE_BUSY|database is locked|database table is locked/i;

export async function migrate(databaseUrl: string, options: MigrateOptions = {}): Promise<void> {
  const log = options.log ?? rootLogger;
  if (isPostgresUrl(databaseUrl)) return migratePostgres(databaseUrl, log);
  const file = sqlitePath(databaseUrl);
  if (!file) throw new Error(`DATABASE_URL ${databaseUrl} is neither a SQLite file (file:…) nor PostgreSQL (postgresql://…)`);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  let wait = options.retryMs ?? 1_000;
  for (let attempt = 1; ; attempt++) {
    try {
      if (sqliteUpToDate(file, options.sqliteMigrations)) return;
      for (const name of migrateSqlite(file, options.sqliteMigrations)) log.info({ migration: name }, "database migration applied");
      return;
    } catch (e) {
      const message = e instanceof Error ? e.message : String(e);
      if (!BUSY.test(message)) throw e;
      const reason = `${file} is locked by another process (a backup, a monitoring query or an sqlite3 shell holding a transaction?)`;
      options.onBusy?.(attempt, reason);
      log.warn({ attempt, retryInMs: wait, file }, `database migration waits: ${reason}`);
      await new Promise((r) => setTimeout(r, wait));
      wait = Math.min(wait * 2, options.maxRetryMs ?? 15_000);
    }
  }
}

/** Prisma's table, as `prisma migrate deploy` makes it on SQLite. */
const PRISMA_MIGRATIONS_TABLE = `CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
    "id"                    TEXT PRIMARY KEY NOT NULL,
    "checksum"              TEXT NOT NULL,
    "finished_at"           DATETIME,
    "migration_name"        TEXT NOT NULL,
    "logs"                  TEXT,
    "rolled_back_at"        DATETIME,
    "started_at"            DATETIME NOT NULL DEFAULT current_timestamp,
    "applied_steps_count"   INTEGER UNSIGNED NOT NULL DEFAULT 0
)`;

/** Applies the pending migrations in one transaction; answers their names. Throws SQLITE_BUSY while another process writes. */
function migrateSqlite(file: string, dir = migrationsDir): string[] {
  const db = new Database(file, { timeout: 1_000 });
  try {
    // Outside the transaction (inside, SQLite ignores it): a script that rebuilds a table drops
    // the old one, and with foreign keys on that would delete the rows referring to it.
    db.pragma("foreign_keys = OFF");
    db.exec("BEGIN IMMEDIATE");
    try {
      db.exec(PRISMA_MIGRATIONS_TABLE);
      const rows = db.prepare(`SELECT migration_name, finished_at, rolled_back_at FROM "_prisma_migrations"`).all() as { migration_name: string; finished_at: string | null; rolled_back_at: string | null }[];
      const failed = rows.find((r) => r.finished_at === null && r.rolled_back_at === null);
      if (failed) throw new Error(`database migration ${failed.migration_name} was started and never finished (by an earlier Prisma migrate?): restore the backup taken before it, or mark it with \`prisma migrate resolve\``);
      const applied = new Set(rows.filter((r) => r.rolled_back_at === null).map((r) => r.migration_name));
      const record = db.prepare(`INSERT INTO "_prisma_migrations" ("id", "checksum", "finished_at", "migration_name", "started_at", "applied_steps_count") VALUES (?, ?, ?, ?, ?, 1)`);
      const done: string[] = [];
      for (const name of knownMigrations(dir).filter((n) => !applied.has(n))) {
        const sql = fs.readFileSync(path.join(dir, name, "migration.sql"), "utf8");
        const startedAt = new Date().toISOString();
        try {
          db.exec(sql);
        } catch (e) {
          throw new Error(`database migration ${name} failed: ${e instanceof Error ? e.message : String(e)}`);
        }
        record.run(randomUUID(), createHash("sha256").update(sql).digest("hex"), new Date().toISOString(), name, startedAt);
        done.push(name);
      }
      const broken = db.pragma("foreign_key_check") as unknown[];
      if (broken.length) throw new Error(`database migration left ${broken.length} rows whose foreign keys point nowhere, e.g. ${JSON.stringify(broken[0])}`);
      db.exec("COMMIT");
      return done;
    } catch (e) {
      if (db.inTransaction) db.exec("ROLLBACK");
      throw e;
    }
  } finally {
    db.close();
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
    for (const name of knownMigrations(pgMigrationsDir).filter((n) => !applied.has(n))) {
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
