/**
 * The database: Prisma 6.19 on embedded SQLite through better-sqlite3 (../shared/STACK.md), or
 * on PostgreSQL through @prisma/adapter-pg when DATABASE_URL is postgresql:// (issue 11). The
 * two generated clients come from one schema (prisma/schema.prisma and its generated twin,
 * scripts/prisma-pg.mjs) and have the same models, so the rest of the server sees one `Db`.
 * Only server/ imports this.
 */
import path from "node:path";
import fs from "node:fs";
import { PrismaPg } from "@prisma/adapter-pg";
import { GatedSQLite3, WriteGate } from "./write-gate";
import { PrismaClient, Prisma } from "./generated/prisma/client";
import { PrismaClient as PgPrismaClient } from "./generated/prisma-pg/client";
import { registerPostgres } from "./lib/transactions";

export { Prisma };
export type Db = PrismaClient;
export type Tx = Prisma.TransactionClient;

/** `file:./x.db` is relative to the working directory; make sure its folder exists. */
export function sqlitePath(url: string): string | null {
  if (!url.startsWith("file:")) return null;
  return path.resolve(url.slice("file:".length).split("?")[0] ?? "");
}

export function isPostgresUrl(url: string): boolean {
  return /^postgres(ql)?:\/\//.test(url);
}

/** Which database a URL names, for the few places where SQL differs (raw statements). */
export type Dialect = "sqlite" | "postgresql";
export function dialectOf(url: string): Dialect {
  return isPostgresUrl(url) ? "postgresql" : "sqlite";
}

/** `gate`: shared with the fast path, so that its commits never land inside a Prisma transaction (write-gate.ts). */
export async function openDb(url: string, gate: WriteGate = new WriteGate(), options: { pgPoolSize?: number } = {}): Promise<Db> {
  if (isPostgresUrl(url)) {
    // The same models through the PostgreSQL client; its type differs from the SQLite
    // client's only in provider-specific options the server does not use.
    // Interactive transactions lock what they decide for, through lib/transactions.ts.
    const poolSize = options.pgPoolSize ?? 10;
    const db = new PgPrismaClient({ adapter: new PrismaPg({ connectionString: url, max: poolSize }) });
    registerPostgres(db, poolSize);
    return db as unknown as Db;
  }
  const file = sqlitePath(url);
  if (file) fs.mkdirSync(path.dirname(file), { recursive: true });
  const db = new PrismaClient({ adapter: new GatedSQLite3({ url }, gate) });
  if (file) {
    // WAL lets readers go on while the heartbeat path writes; NORMAL sync is durable across
    // process crashes (not power loss mid-checkpoint), the usual trade for a server.
    // The busy timeout first: switching to WAL waits for another process's lock like any write.
    await db.$queryRawUnsafe("PRAGMA busy_timeout = 5000");
    await db.$queryRawUnsafe("PRAGMA journal_mode = WAL");
    await db.$queryRawUnsafe("PRAGMA synchronous = NORMAL");
    await db.$queryRawUnsafe("PRAGMA foreign_keys = ON");
  }
  return db;
}
