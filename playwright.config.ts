import { defineConfig } from "@playwright/test";

/**
 * End-to-end tests against the production build (`npm start`'s server) with Debian's
 * Chromium; real simulated agents talk to the same server over HTTP.
 */
const PORT = Number(process.env.E2E_PORT ?? 3210);
export const E2E_URL = `http://localhost:${PORT}`;
export const E2E_ADMIN_PASSWORD = "e2e-admin-password";

export default defineConfig({
  testDir: "./e2e",
  timeout: 60_000,
  expect: { timeout: 10_000 },
  fullyParallel: false,
  workers: 1,
  retries: 0,
  reporter: [["list"]],
  use: {
    baseURL: E2E_URL,
    trace: "retain-on-failure",
    screenshot: "only-on-failure",
    launchOptions: {
      executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
      args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
    },
  },
  webServer: {
    command: "rm -rf .tmp/e2e && node dist/server/main.mjs",
    url: `${E2E_URL}/healthz`,
    reuseExistingServer: false,
    timeout: 120_000,
    stdout: "ignore",
    stderr: "pipe",
    env: {
      NODE_ENV: "production",
      PORT: String(PORT),
      DATABASE_URL: "file:./.tmp/e2e/drover.db",
      DROVER_ADMIN_PASSWORD: E2E_ADMIN_PASSWORD,
      DROVER_DISCONNECTION_TIMEOUT_SECONDS: "6",
      DROVER_SWEEP_SECONDS: "0.5",
      // Every test signs in from 127.0.0.1: the suite makes more than 30 a minute (the default wall).
      DROVER_SIGN_IN_PER_MINUTE: "1000",
      // The overview's history samples every 2 s here (a minute by default): charts fill within a test.
      DROVER_METRICS_SAMPLE_SECONDS: "2",
      NEXT_TELEMETRY_DISABLED: "1",
    },
  },
});
