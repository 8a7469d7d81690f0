/**
 * The PostgreSQL twin's migrations (issue 11) bring an empty database to exactly the schema
 * prisma/postgresql/schema.prisma describes: a database migrated by server/migrate.ts and one
 * made straight from the schema (`prisma migrate diff --from-empty`) have the same tables,
 * columns, types, defaults, indexes and constraints. Fails when a schema change lands without
 * its PostgreSQL migration. Runs with DROVER_TEST_DATABASE=postgresql (npm run test:pg).
 */
import { execFile } from "node:child_process";
import { createRequire } from "node:module";
import path from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { migrate } from "../server/migrate";
import { pgAdmin, pgDatabaseUrl, testOnPostgres } from "./helpers/server";

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, "..");

/** Tables, columns, indexes and constraints of the public schema, as comparable text. */
async function catalog(url: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const rows: string[] = [];
    const columns = await client.query<Record<string, string>>(
      `SELECT table_name, column_name, data_type, is_nullable, coalesce(column_default, '') AS d FROM information_schema.columns WHERE table_schema = 'public' AND table_name <> '_drover_migrations'`,
    );
    for (const c of columns.rows) rows.push(`column ${c.table_name}.${c.column_name} ${c.data_type} null=${c.is_nullable} default=${c.d}`);
    const indexes = await client.query<Record<string, string>>(`SELECT indexdef FROM pg_indexes WHERE schemaname = 'public' AND tablename <> '_drover_migrations'`);
    for (const i of indexes.rows) rows.push(`index ${i.indexdef}`);
    const constraints = await client.query<Record<string, string>>(
      `SELECT conrelid::regclass::text AS t, conname, pg_get_constraintdef(oid) AS def FROM pg_constraint WHERE connamespace = 'public'::regnamespace AND conrelid::regclass::text <> '"_drover_migrations"' AND conrelid::regclass::text <> '_drover_migrations'`,
    );
    for (const c of constraints.rows) rows.push(`constraint ${c.t}.${c.conname} ${c.def}`);
    const enums = await client.query<Record<string, string>>(`SELECT t.typname, e.enumlabel FROM pg_enum e JOIN pg_type t ON t.oid = e.enumtypid ORDER BY 1, e.enumsortorder`);
    for (const e of enums.rows) rows.push(`enum ${e.typname} ${e.enumlabel}`);
    return rows.sort();
  } finally {
    await client.end();
  }
}

describe.runIf(testOnPostgres)("PostgreSQL migrations", () => {
  it("bring an empty database to the schema the twin describes", async () => {
    const tag = `${process.pid}_${Date.now().toString(36)}`;
    const [migrated, direct] = [`drover_mig_${tag}`, `drover_schema_${tag}`];
    await pgAdmin(`CREATE DATABASE ${migrated}`);
    await pgAdmin(`CREATE DATABASE ${direct}`);
    try {
      await migrate(pgDatabaseUrl(migrated));
      const { stdout } = await run(
        process.execPath,
        [createRequire(import.meta.url).resolve("prisma/build/index.js"), "migrate", "diff", "--config", "prisma/postgresql/prisma.config.ts", "--from-empty", "--to-schema-datamodel", "prisma/postgresql/schema.prisma", "--script"],
        { cwd: root, env: { ...process.env, PRISMA_HIDE_UPDATE_MESSAGE: "1" } },
      );
      const client = new pg.Client({ connectionString: pgDatabaseUrl(direct) });
      await client.connect();
      await client.query(stdout);
      await client.end();
      expect(await catalog(pgDatabaseUrl(migrated))).toEqual(await catalog(pgDatabaseUrl(direct)));
      // Applying again is a no-op (every server runs it at start).
      await migrate(pgDatabaseUrl(migrated));
    } finally {
      await pgAdmin(`DROP DATABASE IF EXISTS ${migrated} WITH (FORCE)`);
      await pgAdmin(`DROP DATABASE IF EXISTS ${direct} WITH (FORCE)`);
    }
  });

  it("several servers starting at once: one migrates, the others wait, none fails", async () => {
    const name = `drover_race_${process.pid}_${Date.now().toString(36)}`;
    await pgAdmin(`CREATE DATABASE ${name}`);
    try {
      await Promise.all([1, 2, 3].map(() => migrate(pgDatabaseUrl(name))));
      const client = new pg.Client({ connectionString: pgDatabaseUrl(name) });
      await client.connect();
      const { rows } = await client.query<{ n: string }>(`SELECT count(*) AS n FROM "_drover_migrations"`);
      await client.end();
      expect(Number(rows[0]!.n)).toBeGreaterThan(0);
    } finally {
      await pgAdmin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    }
  });
});
