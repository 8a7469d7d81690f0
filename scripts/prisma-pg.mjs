// The PostgreSQL twin of prisma/schema.prisma (issue 11). Prisma fixes the provider per schema
// file, so prisma/postgresql/schema.prisma is generated from the one source of truth, never
// edited: the same models, provider "postgresql", its own generated client. `--check` fails
// (exit 1) when the twin is not what prisma/schema.prisma makes (npm run check runs it), and
// also when prisma/postgresql/migrations does not bring an empty database to that schema.
import fs from "node:fs";
import path from "node:path";

const root = path.resolve(import.meta.dirname, "..");
const source = path.join(root, "prisma", "schema.prisma");
const target = path.join(root, "prisma", "postgresql", "schema.prisma");

export function postgresSchema(text) {
  const swaps = [
    [/provider\s*=\s*"sqlite"/, 'provider = "postgresql"'],
    [/output\s*=\s*"\.\.\/server\/generated\/prisma"/, 'output     = "../../server/generated/prisma-pg"'],
  ];
  let out = text;
  for (const [from, to] of swaps) {
    if (!from.test(out)) throw new Error(`prisma-pg: ${from} not found in prisma/schema.prisma`);
    out = out.replace(from, to);
  }
  return `// GENERATED from prisma/schema.prisma by scripts/prisma-pg.mjs: do not edit (npm run prisma:pg).\n${out}`;
}

const want = postgresSchema(fs.readFileSync(source, "utf8"));
if (process.argv.includes("--check")) {
  const have = fs.existsSync(target) ? fs.readFileSync(target, "utf8") : "";
  if (have !== want) {
    console.error("prisma/postgresql/schema.prisma is not what prisma/schema.prisma makes: run npm run prisma:pg (and add a PostgreSQL migration)");
    process.exit(1);
  }
} else {
  fs.mkdirSync(path.dirname(target), { recursive: true });
  fs.writeFileSync(target, want);
}
