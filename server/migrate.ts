/**
 * Applies prisma/migrations at start with Prisma's own `migrate deploy` (offline with the JS
 * engine), so the database file is always at the schema this code expects.
 */
import { execFile } from "node:child_process";
import { createRequire } from "node:module";
import fs from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { sqlitePath } from "./db";

const run = promisify(execFile);
const require = createRequire(import.meta.url);
const root = path.resolve(import.meta.dirname, "..");

export async function migrate(databaseUrl: string): Promise<void> {
  const file = sqlitePath(databaseUrl);
  if (file) fs.mkdirSync(path.dirname(file), { recursive: true });
  const cli = require.resolve("prisma/build/index.js");
  try {
    await run(process.execPath, [cli, "migrate", "deploy"], {
      cwd: root,
      env: { ...process.env, DATABASE_URL: databaseUrl, PRISMA_HIDE_UPDATE_MESSAGE: "1", NO_COLOR: "1" },
    });
  } catch (e) {
    const err = e as { stdout?: string; stderr?: string; message: string };
    throw new Error(`database migration failed: ${err.stderr || err.stdout || err.message}`);
  }
}
