import { test, expect } from "@playwright/test";
import { E2E_ADMIN_PASSWORD, E2E_URL } from "../playwright.config";
import { api, signIn, uniquePrefix } from "./support";

test("an admin revokes an API token in the console; the next REST call with it is 401", async ({ page }) => {
  const name = uniquePrefix("token");
  const res = await fetch(`${E2E_URL}/api/v1/auth/token`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ username: "admin", password: E2E_ADMIN_PASSWORD, name }),
  });
  expect(res.status).toBe(201);
  const { id, token } = (await res.json()) as { id: string; token: string };
  expect((await api("GET", "/me", token)).status).toBe(200);

  await signIn(page);
  await page.goto("/");
  await page.getByRole("link", { name: "API tokens" }).click();
  await expect(page).toHaveURL(/\/tokens$/);
  const row = page.getByTestId(`token-row-${id}`);
  await expect(row).toContainText(name);
  await expect(page.getByTestId(`token-status-${id}`)).toHaveText(/Active/);
  // The token itself is never on the page.
  await expect(page.locator("body")).not.toContainText(token);

  await page.getByTestId(`revoke-${id}`).click();
  await expect(page.getByTestId("revoke-token-dialog")).toContainText(name);
  await page.getByTestId("confirm-revoke-token").click();
  await expect(page.getByTestId(`token-status-${id}`)).toHaveText(/Revoked/);
  await expect(row).toContainText(/by admin/);
  await expect(page.getByTestId(`revoke-${id}`)).toHaveCount(0);
  await expect(page.getByTestId("token-notice")).toContainText(name);

  const after = await api<{ error: { code: string } }>("GET", "/me", token);
  expect(after.status).toBe(401);
  expect(after.body.error.code).toBe("UNAUTHENTICATED");

  // The revocation is in the event log.
  await page.goto("/events?kind=User&name=admin");
  await expect(page.getByText("ApiTokenRevoked").first()).toBeVisible();
});
