import { defineConfig } from "vitest/config";
import os from "node:os";
import path from "node:path";

/**
 * Three projects, one pool (docs/architecture.md "Tests"):
 *  - unit: everything outside tests/ — pure modules, the console's logic, the agent, the CLI
 *    (the CLI and agent process tests talk to a real server on SQLite): runs once;
 *  - sqlite and postgresql: tests/, the integration suite against a real server and database,
 *    once on each database. A test that touches SQL belongs in tests/; one that cannot differ
 *    between the databases lives beside its module.
 * `npm run test:unit|test:sqlite|test:pg` run one project; `npx vitest run` all three.
 */
const integration = ["tests/**/*.test.ts"];
const unit = ["lib/**/*.test.ts", "server/**/*.test.ts", "agent/**/*.test.ts", "cli/**/*.test.ts", "components/**/*.test.ts"];

export default defineConfig({
  resolve: { alias: { "@": path.resolve(import.meta.dirname) } },
  test: {
    environment: "node",
    // A journey of CLI or agent processes takes 15–40 s on a quiet machine and ran past 30 s in a
    // loaded CI (each node process ≈ 0.3 CPU-s). A timeout costs time only when a test hangs.
    testTimeout: 90_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Most of a test file's time is spent waiting on sockets, child processes and the
    // database, not on the CPU: twice the cores keeps both busy (vitest's default is cores − 1).
    maxWorkers: Number(process.env.DROVER_TEST_WORKERS ?? Math.max(2, os.availableParallelism() * 2)),
    globalSetup: ["tests/global-setup.ts"],
    // DROVER_TEST_CPU=FILE: each test file's CPU-s appended to FILE (tests/helpers/cpu-usage.ts).
    setupFiles: process.env.DROVER_TEST_CPU ? ["tests/helpers/cpu-usage.ts"] : [],
    // Transformed modules kept on disk (in node_modules, so a reinstall clears them) and shared by
    // the projects: the sqlite and postgresql projects load the same files, and a run after a
    // change transforms only what changed (the sqlite project: transform 10 → 2.4 s, import 26 →
    // 18 s warm; `npx vitest --clearCache` empties it).
    experimental: { fsModuleCache: true },
    projects: [
      // Every file shares its worker's modules (isolate: false): each would otherwise load the
      // whole server and both Prisma clients again, ≈ 2–5 s a file (the unit project's workers
      // spent 108 s importing). A file leaves no module state behind; every server it starts is its own.
      { extends: true, test: { name: "unit", include: unit, isolate: false } },
      { extends: true, test: { name: "sqlite", include: integration, isolate: false } },
      { extends: true, test: { name: "postgresql", include: integration, isolate: false, env: { DROVER_TEST_DATABASE: "postgresql" } } },
    ],
    coverage: {
      provider: "v8",
      include: ["server/**/*.ts", "lib/**/*.ts", "agent/**/*.ts", "cli/**/*.ts"],
      exclude: ["**/*.test.ts", "server/generated/**", "**/test-support/**"],
      reporter: ["text-summary", "json-summary"],
      // A failing test still leaves the figures of the rest.
      reportOnFailure: true,
    },
  },
});
