import { test, expect } from "@playwright/test";
import { E2E_ADMIN_PASSWORD } from "../playwright.config";
import { approveByApi, askToEnroll, deviceName, signIn, tokenFor, uniquePrefix } from "./support";

test("an unknown address answers 404 and keeps the console's navigation", async ({ page }) => {
  await signIn(page);
  const response = await page.goto("/no-such-page");
  expect(response?.status()).toBe(404);
  await expect(page.getByTestId("not-found")).toBeVisible();
  await page.getByRole("link", { name: "Devices" }).click();
  await expect(page).toHaveURL(/\/devices$/);
});

test("a link prefetches its page when the pointer comes to it, not on every page view", async ({ page }) => {
  await signIn(page);
  // Next's router fetches a route's server payload with an `rsc` header, prefetch or navigation.
  const fetched: string[] = [];
  page.on("request", (r) => {
    if (r.headers()["rsc"]) fetched.push(new URL(r.url()).pathname);
  });
  await page.goto("/devices");
  const nav = page.getByRole("navigation", { name: "Main" });
  await expect(nav.getByRole("link", { name: "Fleets" })).toBeVisible();
  await page.waitForLoadState("networkidle");
  expect(fetched).toEqual([]);
  await nav.getByRole("link", { name: "Fleets" }).hover();
  await expect.poll(() => fetched).toContain("/fleets");
  expect(fetched.filter((p) => p !== "/fleets")).toEqual([]);
  await nav.getByRole("link", { name: "Fleets" }).click();
  await expect(page).toHaveURL(/\/fleets$/);

  // Every link of the console does the same: the workflows list no longer fetches the editor's page.
  fetched.length = 0;
  await page.goto("/workflows");
  await expect(page.getByTestId("new-workflow")).toBeVisible();
  await page.waitForLoadState("networkidle");
  expect(fetched).toEqual([]);
});

test("the enrollments bulk bar and select-all show only where pending requests are listed", async ({ page }) => {
  await signIn(page);
  await page.goto("/enrollments");
  for (const tab of ["Approved", "Denied"]) {
    await page.getByTestId(`status-tab-${tab}`).click();
    await expect(page.getByTestId(`status-tab-${tab}`)).toHaveAttribute("aria-selected", "true");
    await expect(page.getByTestId("select-all")).toHaveCount(0);
    await expect(page.getByTestId("approve-selected")).toHaveCount(0);
    await expect(page.getByTestId("deny-all-pending")).toHaveCount(0);
  }
  await page.getByTestId("status-tab-Pending").click();
  await expect(page.getByTestId("approve-selected")).toBeVisible();
});

test("the first tab stop skips the navigation to the page", async ({ page }) => {
  await signIn(page);
  await page.goto("/devices");
  await page.keyboard.press("Tab");
  const skip = page.getByTestId("skip-link");
  await expect(skip).toBeFocused();
  await expect(skip).toBeVisible();
  await page.keyboard.press("Enter");
  await expect(page.locator("main#main")).toBeFocused();
});

// Issue 10: a row was three tab stops. Now its name, and for an operator the row's selection
// checkbox before it (issue 10's bulk operations): nothing else in the row takes focus.
test("a device row is one tab stop, its name, plus its selection checkbox for an operator", async ({ page }) => {
  const prefix = uniquePrefix("tabs");
  const name = deviceName(prefix, 1);
  // A device that asked with no agent behind it: a row is the same whatever its status.
  await askToEnroll(name, { e2e: prefix });
  await approveByApi(await tokenFor("admin", E2E_ADMIN_PASSWORD), [name]);
  await signIn(page);
  await page.goto(`/devices?labelSelector=${encodeURIComponent(`e2e=${prefix}`)}`);
  const row = page.getByTestId(`device-row-${name}`);
  await expect(row).toBeVisible({ timeout: 15_000 });
  const stops = await row.evaluate((r) =>
    [...r.querySelectorAll<HTMLElement>("a,button,input,select,textarea,[tabindex]")].filter((el) => el.tabIndex >= 0).map((el) => el.getAttribute("aria-label") || el.textContent),
  );
  expect(stops).toEqual([`Select ${name}`, name]);
});
