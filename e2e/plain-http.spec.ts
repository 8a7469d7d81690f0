/**
 * Signing in to a server reached by a plain-http address that is not localhost (issue 6):
 * a browser drops `Secure` / `__Secure-` cookies there, so the session cookie must be a plain
 * one unless DROVER_PUBLIC_URL is https. Its own Chromium, with `drover.test` resolving to
 * this machine.
 */
import { randomBytes } from "node:crypto";
import { test, expect, chromium } from "@playwright/test";
import config, { E2E_ADMIN_PASSWORD, E2E_URL } from "../playwright.config";
import { createUser, tokenFor } from "./support";

test("signing in at http://drover.test (not localhost) lands on the console with a non-Secure session cookie", async () => {
  const launch = config.use?.launchOptions ?? {};
  const browser = await chromium.launch({ ...launch, args: [...(launch.args ?? []), "--host-resolver-rules=MAP drover.test 127.0.0.1"] });
  try {
    const context = await browser.newContext();
    const page = await context.newPage();
    const base = `http://drover.test:${new URL(E2E_URL).port}`;
    await page.goto(`${base}/login`);
    await page.getByLabel(/username/i).fill("admin");
    await page.getByLabel(/password/i).fill(E2E_ADMIN_PASSWORD);
    await page.getByRole("button", { name: /sign in/i }).click();
    await expect(page).not.toHaveURL(/\/login/);
    expect(new URL(page.url()).host).toBe(new URL(base).host);
    // The console's shell, which only a session gets to see.
    await expect(page.getByTestId("current-user")).toContainText("admin");

    const cookies = await context.cookies(base);
    const session = cookies.find((c) => c.name.endsWith("session_token"));
    expect(session, JSON.stringify(cookies.map((c) => c.name))).toBeDefined();
    expect(session?.name).not.toMatch(/^__Secure-/);
    expect(session?.secure).toBe(false);
    expect(session?.httpOnly).toBe(true);
  } finally {
    await browser.close();
  }
});

test("a locked account gets a readable wait on the login form", async ({ page }) => {
  const name = `lock_${randomBytes(3).toString("hex")}`;
  await createUser(await tokenFor("admin", E2E_ADMIN_PASSWORD), name, "the-right-password", "viewer");
  // A guessing loop on the token route locks the account for the console's sign-in too.
  let status = 0;
  for (let i = 0; i < 10 && status !== 429; i++) {
    const res = await fetch(`${E2E_URL}/api/v1/auth/token`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ username: name, password: `guess-${i}` }),
    });
    status = res.status;
  }
  expect(status).toBe(429);
  await page.goto("/login");
  await page.getByLabel(/username/i).fill(name);
  await page.getByLabel(/password/i).fill("the-right-password");
  await page.getByRole("button", { name: /sign in/i }).click();
  await expect(page.getByText(/too many sign-in attempts\. try again in \d+ s\./i)).toBeVisible();
  await expect(page).toHaveURL(/\/login/);
});
