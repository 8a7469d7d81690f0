import { defineConfig } from "prisma/config";
import { PrismaBetterSQLite3 } from "@prisma/adapter-better-sqlite3";

// Prisma 6.19 with the JS engine runs fully offline (../shared/STACK.md).
// The schema reads env("DATABASE_URL"): give it the default so `prisma generate` works bare.
process.env.DATABASE_URL ??= "file:./data/drover.db";
const url = process.env.DATABASE_URL;

export default defineConfig({
  schema: "prisma/schema.prisma",
  migrations: { path: "prisma/migrations" },
  engine: "js",
  experimental: { adapter: true },
  async adapter() {
    return new PrismaBetterSQLite3({ url });
  },
});
