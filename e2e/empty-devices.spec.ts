/**
 * The Devices page of a server that has none yet points to where devices come from: Add
 * devices (an enrollment token and its install command) and the Enrollments page.
 *
 * Its own server on a fresh database: the worker's server holds the devices of every other
 * test, and a filter that matches nothing shows "No devices match these filters" instead.
 */
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { test, expect } from "@playwright/test";
import { E2E_ADMIN_PASSWORD, E2E_URL } from "../playwright.config";

const root = path.resolve(import.meta.dirname, "..");
// Beside the workers' ports (E2E_PORT + worker index), under this run's E2E_PORT.
const port = Number(new URL(E2E_URL).port) + 40;
const base = `http://localhost:${port}`;
let server: ChildProcess | null = null;

test.beforeAll(async () => {
  test.setTimeout(120_000);
  const dataDir = path.join(root, ".tmp", `e2e-empty-${port}`);
  fs.rmSync(dataDir, { recursive: true, force: true });
  server = spawn(process.execPath, [path.join(root, "dist", "server", "main.mjs")], {
    cwd: root,
    stdio: ["ignore", "ignore", "inherit"],
    env: {
      ...process.env,
      NODE_ENV: "production",
      PORT: String(port),
      DATABASE_URL: `file:${path.join(dataDir, "drover.db")}`,
      DROVER_ADMIN_PASSWORD: E2E_ADMIN_PASSWORD,
      NEXT_TELEMETRY_DISABLED: "1",
    },
  });
  await expect
    .poll(async () => (await fetch(`${base}/healthz`).catch(() => null))?.status ?? 0, { timeout: 110_000, intervals: [250, 500, 1000] })
    .toBe(200);
});

test.afterAll(async () => {
  const child = server;
  if (!child || child.exitCode !== null) return;
  await new Promise<void>((resolve) => {
    child.once("exit", () => resolve());
    child.kill("SIGTERM");
  });
});

test("an empty device list links to Add devices and to Enrollments", async ({ page }) => {
  const res = await page.request.post(`${base}/api/auth/sign-in/username`, { data: { username: "admin", password: E2E_ADMIN_PASSWORD }, headers: { origin: base } });
  expect(res.status(), await res.text()).toBe(200);
  await page.goto(`${base}/devices`);
  const empty = page.getByTestId("empty-state");
  await expect(empty).toContainText("No devices yet");
  await expect(empty.getByRole("link", { name: "Enrollments" })).toHaveAttribute("href", "/enrollments");
  await empty.getByRole("link", { name: "Add devices" }).click();
  await expect(page).toHaveURL(`${base}/enrollment-tokens`);
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Add devices");
});
