/**
 * `npm run backup -- FILE`            online backup of the embedded database
 * `npm run restore -- FILE`           restore it (stop the server first); devices then show
 *                                     AwaitingReconnect until their agents report again
 */
import { readEnv } from "../server/env";
import { isPostgresUrl, sqlitePath } from "../server/db";
import { backupDatabase, restoreDatabase } from "../server/ops/backup";

const [command, file] = process.argv.slice(2);
const databaseFile = sqlitePath(readEnv().DATABASE_URL);
if (!databaseFile) {
  // PostgreSQL has its own tools, which know its locks, roles and versions better than a copy here could.
  process.stderr.write(
    isPostgresUrl(readEnv().DATABASE_URL)
      ? "backup and restore are not supported on PostgreSQL here: use pg_dump and pg_restore\n"
      : "backup and restore work on the embedded SQLite database (DATABASE_URL=file:...)\n",
  );
  process.exit(2);
}
if ((command !== "backup" && command !== "restore") || !file) {
  process.stderr.write("usage: npm run backup -- FILE | npm run restore -- FILE\n");
  process.exit(2);
}
try {
  if (command === "backup") {
    await backupDatabase(databaseFile, file);
    process.stdout.write(`backed up ${databaseFile} to ${file}\n`);
  } else {
    restoreDatabase(file, databaseFile);
    process.stdout.write(`restored ${file} into ${databaseFile}; devices are AwaitingReconnect until they report\n`);
  }
} catch (e) {
  process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
}
