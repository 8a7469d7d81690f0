/**
 * Issue 12, "Add devices": an operator makes an enrollment token on the page, copies the
 * one-line install command, a machine enrolls with the token in it (the real agent, started with
 * the token read from the copied text), and the device appears in the open device list without
 * a reload, approved, with the token's labels. Then the token is revoked after confirmation.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { test, expect } from "@playwright/test";
import { E2E_ADMIN_PASSWORD, E2E_URL } from "../playwright.config";
import { api, axeViolations, signIn, tokenFor, uniquePrefix } from "./support";

const root = path.resolve(import.meta.dirname, "..");

/** The device agent itself (as `node drover-agent.mjs …` runs it), from the sources. */
function startAgent(name: string, token: string, stateDir: string) {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", path.join(root, "agent", "main.ts"), "--server", E2E_URL, "--name", name, "--state-dir", stateDir, "--labels", "site=home,rack=r1", "--enrollment-token", token, "--log-level", "warn"],
    { cwd: root, stdio: ["ignore", "ignore", "inherit"] },
  );
  return {
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
      }),
  };
}

test("create a token on Add devices, copy the command, a device enrolled with it appears live, approved, with its labels", async ({ page, context }) => {
  // The agent starts through tsx: on this shared 2-core machine under load that alone can take a minute.
  test.setTimeout(180_000);
  await context.grantPermissions(["clipboard-read", "clipboard-write"]);
  const site = uniquePrefix("add");
  const name = `${site}-dev`;
  const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), "drover-e2e-add-"));

  await signIn(page);
  await page.goto("/devices");
  await page.getByTestId("add-devices-link").click();
  await expect(page).toHaveURL(/\/enrollment-tokens$/);
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Add devices");

  // A bad label is flagged as typed, and nothing is sent.
  await page.getByTestId("token-name").fill(`racks ${site}`);
  await page.getByTestId("token-labels").fill("site");
  await expect(page.getByTestId("create-token-form").getByRole("alert")).toBeVisible();
  await page.getByTestId("token-labels").fill(`site=${site}, tier=edge`);
  await expect(page.getByTestId("token-labels-preview")).toContainText(`site=${site}`);
  await page.getByTestId("token-max-uses").fill("5");
  await page.getByTestId("token-auto-approve").check();
  await page.getByTestId("create-token").click();

  const command = page.getByTestId("install-command");
  await expect(command).toBeVisible();
  await page.getByTestId("install-command-copy").click();
  await expect(page.getByTestId("install-command-copied")).toHaveText("Copied.");
  const copied = await page.evaluate(() => navigator.clipboard.readText());
  expect(copied).toBe(await command.textContent());
  const match = /^curl -fsSL (\S+)\/install\.sh \| sudo sh -s -- --token (drvt_[A-Za-z0-9_-]{43})$/.exec(copied);
  expect(match, copied).not.toBeNull();
  expect(match?.[1]).toBe(E2E_URL);
  const token = match?.[2] ?? "";

  // The by-hand variant carries the same token.
  await page.getByText("Without systemd, or by hand").click();
  await expect(page.getByTestId("install-command-manual")).toContainText(`--enrollment-token ${token}`);
  await expect(page.getByTestId("install-command-no-service")).toContainText(`--no-service`);

  // The table lists it by its first characters, never the secret.
  const row = page.getByTestId("enrollment-tokens-table").locator("tr", { hasText: `racks ${site}` });
  await expect(row).toContainText(token.slice(0, 11));
  await expect(row).toContainText("0 / 5");
  await expect(row).toContainText("at once");

  // WCAG 2.1 AA with the command, the table and the open variants on screen, light and dark.
  for (const colorScheme of ["light", "dark"] as const) {
    await page.emulateMedia({ colorScheme });
    await expect(page.locator("html")).toHaveClass(colorScheme === "dark" ? /\bdark\b/ : /^(?!.*\bdark\b)/);
    expect((await axeViolations(page)).map((v) => `${colorScheme} ${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`)).toEqual([]);
  }
  await page.emulateMedia({ colorScheme: "light" });

  // Done: the secret leaves the page for good.
  await page.getByTestId("install-command-done").click();
  await expect(page.locator("body")).not.toContainText(token);

  // The device list is open, filtered to this batch, when the machine enrolls.
  await page.goto(`/devices?labelSelector=${encodeURIComponent(`site=${site}`)}`);
  await expect(page.getByText("0 devices match these filters")).toBeVisible();
  const agent = startAgent(name, token, stateDir);
  try {
    const deviceRow = page.getByTestId(`device-row-${name}`);
    await expect(deviceRow).toBeVisible({ timeout: 90_000 });
    // The token's labels over the agent's own (site), and the agent's others kept (rack).
    await expect(deviceRow).toContainText(`site=${site}`);
    await expect(deviceRow).toContainText("tier=edge");
    await expect(deviceRow).toContainText("rack=r1");
    await expect(page.getByTestId(`device-summary-${name}`)).not.toHaveText(/Offline|Unknown/, { timeout: 20_000 });

    // The request's page says which token it came with.
    const admin = await tokenFor("admin", E2E_ADMIN_PASSWORD);
    const requests = await api<{ items: { id: string; deviceName: string; status: string }[] }>("GET", "/enrollments?status=Approved&limit=1000", admin);
    const request = requests.body.items.find((r) => r.deviceName === name);
    expect(request?.status).toBe("Approved");
    await page.goto(`/enrollments/${request?.id ?? ""}`);
    await expect(page.getByTestId("enrollment-token-used")).toContainText(`racks ${site}`);

    // The use is counted; revoking asks first, then the token is Revoked.
    await page.goto("/enrollment-tokens");
    await expect(row).toContainText("1 / 5");
    await row.getByRole("button", { name: /Revoke/ }).click();
    await expect(page.getByTestId("revoke-enrollment-token-dialog")).toContainText("The device it enrolled stays as it is.");
    await page.getByTestId("confirm-revoke-enrollment-token").click();
    await expect(row).toContainText("Revoked");
    await expect(row.getByRole("button", { name: /Revoke/ })).toHaveCount(0);
    await expect(page.getByTestId("enrollment-token-notice")).toContainText(`racks ${site}`);
  } finally {
    await agent.stop();
    fs.rmSync(stateDir, { recursive: true, force: true });
  }
});
