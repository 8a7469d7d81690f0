import { defineConfig } from "@playwright/test";
import { existsSync } from "node:fs";

/**
 * End-to-end tests against the production build (`npm start`'s server, dist/server/main.mjs)
 * with Debian's Chromium; real simulated agents talk to the same server over HTTP.
 *
 * E2E_WORKERS (2 by default) spec files run side by side, each worker against a server of its
 * own with its own database (ports E2E_PORT, E2E_PORT + 1, …): no test sees another's devices,
 * counts or sign-in attempts. Playwright loads this file again in every worker with
 * TEST_PARALLEL_INDEX set, so E2E_URL there is that worker's server. Two on these 2 cores: the
 * suite is bound by Chromium's CPU, and was bound harder before the console stopped animating
 * for ever (one worker ran it in 22 min, two now in about half that; issue 20).
 */
/**
 * Debian's old headless shell (package chromium-headless-shell, the build Playwright itself uses
 * for headless runs) when installed, else the full browser: the shell has no GPU process and no
 * extensions, and took a fifth less CPU and wall time over the same pages (issue 20).
 */
const CHROMIUM = process.env.CHROMIUM_PATH ?? ["/usr/bin/chromium-headless-shell", "/usr/bin/chromium"].find((p) => existsSync(p)) ?? "/usr/bin/chromium";
const BASE_PORT = Number(process.env.E2E_PORT ?? 3210);
const WORKERS = Number(process.env.E2E_WORKERS ?? 2);
export const E2E_URL = `http://localhost:${BASE_PORT + Number(process.env.TEST_PARALLEL_INDEX ?? 0)}`;
export const E2E_ADMIN_PASSWORD = "e2e-admin-password";

export default defineConfig({
  testDir: "./e2e",
  // The simulator built once for the run (e2e/global-setup.ts).
  globalSetup: "./e2e/global-setup.ts",
  // A long journey takes 50–60 s on a loaded machine.
  timeout: 120_000,
  expect: { timeout: 10_000 },
  // The files of the suite are spread over the workers; the tests of one file run in order.
  fullyParallel: false,
  workers: WORKERS,
  retries: 0,
  reporter: [["list"], ["json", { outputFile: ".tmp/e2e-report.json" }]],
  use: {
    baseURL: E2E_URL,
    // A trace records every action, DOM snapshot and network response of every test, and was a
    // quarter of the suite's CPU (4 specs: 157 CPU-s with retain-on-failure, 115 without): off,
    // unless E2E_TRACE=1 (then kept for a failing test). A failure still leaves its screenshot
    // and error-context.md (the page's accessibility snapshot) in test-results/.
    trace: process.env.E2E_TRACE === "1" ? "retain-on-failure" : "off",
    screenshot: "only-on-failure",
    // The console stops its animations for a reader who asks for less motion (app/globals.css).
    // Software rendering repaints every frame of one on the CPU: an idle page with the live dot
    // pinging cost Chromium 0.6 of a core, one that holds still 0.1 (issue 20).
    reducedMotion: "reduce",
    launchOptions: {
      executablePath: CHROMIUM,
      args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
    },
  },
  webServer: Array.from({ length: WORKERS }, (_, i) => ({
    // Each server's database under its port: two runs on different E2E_PORTs never share one.
    command: `rm -rf .tmp/e2e-${BASE_PORT + i} && node dist/server/main.mjs`,
    url: `http://localhost:${BASE_PORT + i}/healthz`,
    reuseExistingServer: false,
    timeout: 120_000,
    stdout: "ignore" as const,
    stderr: "pipe" as const,
    env: {
      NODE_ENV: "production",
      PORT: String(BASE_PORT + i),
      DATABASE_URL: `file:./.tmp/e2e-${BASE_PORT + i}/drover.db`,
      DROVER_ADMIN_PASSWORD: E2E_ADMIN_PASSWORD,
      DROVER_DISCONNECTION_TIMEOUT_SECONDS: "6",
      // The controllers' pass every second (2 by default): live transitions within a test's
      // patience. At 0.5 s it was a quarter more of each server's CPU while idle (issue 20).
      DROVER_SWEEP_SECONDS: "1",
      // Every test signs in from 127.0.0.1: the suite makes more than 30 a minute (the default wall).
      DROVER_SIGN_IN_PER_MINUTE: "1000",
      // The overview's history samples every 2 s here (a minute by default): charts fill within a test.
      DROVER_METRICS_SAMPLE_SECONDS: "2",
      NEXT_TELEMETRY_DISABLED: "1",
    },
  })),
});
