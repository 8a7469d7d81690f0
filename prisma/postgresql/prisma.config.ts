import { defineConfig } from "prisma/config";
import { PrismaPg } from "@prisma/adapter-pg";

// The PostgreSQL twin's Prisma config (issue 11): `prisma generate` and
// `prisma migrate diff` for prisma/postgresql/schema.prisma, offline with the JS engine.
// Migrations are applied by server/migrate.ts, not by Prisma (../shared/STACK.md: migrate
// through @prisma/adapter-pg fails in 6.19).
process.env.DATABASE_URL ??= "postgresql://postgres:postgres@127.0.0.1:5432/postgres";
const connectionString = process.env.DATABASE_URL;

export default defineConfig({
  schema: "schema.prisma",
  migrations: { path: "migrations" },
  engine: "js",
  experimental: { adapter: true },
  async adapter() {
    // allowExitOnIdle: the CLI exits when it is done instead of waiting out the idle pool (10 s).
    return new PrismaPg({ connectionString, allowExitOnIdle: true });
  },
});
