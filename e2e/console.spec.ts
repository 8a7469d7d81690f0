import { test, expect } from "@playwright/test";
import { signIn } from "./support";

test("an unknown address answers 404 and keeps the console's navigation", async ({ page }) => {
  await signIn(page);
  const response = await page.goto("/no-such-page");
  expect(response?.status()).toBe(404);
  await expect(page.getByTestId("not-found")).toBeVisible();
  await page.getByRole("link", { name: "Devices" }).click();
  await expect(page).toHaveURL(/\/devices$/);
});
