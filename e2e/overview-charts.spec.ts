/**
 * The overview's charts over time (issue 10) against the production server, which samples
 * every 2 s here (DROVER_METRICS_SAMPLE_SECONDS in playwright.config.ts), with real simulated
 * agents: the charts draw, new samples arrive without a reload, the range switch is in the URL
 * and changes the data, and every chart has its text alternative.
 */
import { test, expect } from "@playwright/test";
import { E2E_ADMIN_PASSWORD } from "../playwright.config";
import { approveByApi, deviceName, signIn, simulate, tokenFor, uniquePrefix } from "./support";

test("the overview draws the fleet over time, live, over a range chosen in the URL", async ({ page }) => {
  const prefix = uniquePrefix("charts");
  const names = [1, 2, 3].map((i) => deviceName(prefix, i));
  const admin = await tokenFor("admin", E2E_ADMIN_PASSWORD);
  const sim = simulate(prefix, 3);
  try {
    await approveByApi(admin, names);
    await signIn(page);
    await page.goto("/");
    const card = page.getByTestId("history-charts");
    await expect(card).toBeVisible();

    // Drawn: a canvas per chart once samples exist (at most 2 s after the start).
    const devices = page.getByTestId("chart-devices");
    await expect(devices.locator("[data-chart-canvas] canvas").first()).toBeVisible({ timeout: 15_000 });
    await expect(page.getByTestId("chart-heartbeats").locator("[data-chart-canvas] canvas").first()).toBeVisible();
    await expect(page.getByTestId("chart-actions").locator("[data-chart-canvas] canvas").first()).toBeVisible();

    // The text alternative: a table per chart, its caption naming the chart and the range.
    const summaryTable = devices.locator("table[data-chart-summary]");
    await expect(summaryTable.locator("caption")).toContainText("Devices by status");
    // The three agents come Online and show in the latest sample.
    await expect
      .poll(async () => Number((await summaryTable.locator("tr", { has: page.locator("th", { hasText: /^Online$/ }) }).locator("td").first().textContent())?.replace(/\D/g, "") ?? 0), { timeout: 20_000 })
      .toBeGreaterThanOrEqual(3);
    const heartbeats = page.getByTestId("chart-heartbeats").locator("table[data-chart-summary]");
    await expect(heartbeats.locator("caption")).toContainText("Heartbeats per minute");
    await expect.poll(async () => Number((await heartbeats.locator("tbody td").first().textContent())?.replace(/[^\d.]/g, "") || 0), { timeout: 20_000 }).toBeGreaterThan(0);

    // Live: more samples arrive without a reload.
    const samples = Number(await card.locator("[data-samples]").getAttribute("data-samples"));
    await expect.poll(async () => Number(await card.locator("[data-samples]").getAttribute("data-samples")), { timeout: 15_000 }).toBeGreaterThan(samples);

    // The legend names each series; hovering the plot shows the tooltip with the time and values.
    await expect(devices.getByRole("button", { name: /^Online/ })).toBeVisible();
    const plot = devices.locator("[data-chart-canvas] .u-over");
    const box = (await plot.boundingBox())!;
    await page.mouse.move(box.x + box.width - 4, box.y + box.height / 2);
    await expect(devices.locator(".drover-chart-tip")).toBeVisible();
    await expect(devices.locator(".drover-chart-tip")).toContainText("Online");

    // The range switch: in the URL, and other buckets (2 s samples: 6 s buckets over 1 h, 2 min over 24 h).
    await expect(card.locator("[data-range]")).toHaveAttribute("data-range", "1h");
    await expect(card).toContainText("A point every 6 s");
    await page.getByTestId("history-range-24h").click();
    await expect(page).toHaveURL(/[?&]range=24h/);
    await expect(card.locator("[data-range]")).toHaveAttribute("data-range", "24h");
    await expect(page.getByTestId("history-range-24h")).toHaveAttribute("aria-checked", "true");
    await expect(card).toContainText("A point every 2 min");
    await expect(devices.locator("[data-chart-canvas] canvas").first()).toBeVisible();

    // A link with the range opens on it; 1 h is the default and leaves the URL bare.
    await page.goto("/?range=7d");
    await expect(card.locator("[data-range]")).toHaveAttribute("data-range", "7d");
    await expect(card).toContainText("A point every 14 min");
    await page.getByTestId("history-range-1h").click();
    await expect(page).toHaveURL(/\/$/);
    await expect(card.locator("[data-range]")).toHaveAttribute("data-range", "1h");

    // The stat cards carry the same history as a trend line, with a sentence for screen readers.
    await expect(page.getByTestId("count-online")).toContainText("Online devices over time: latest");
  } finally {
    await sim.stop();
  }
});

test("a chart hides and shows a series from its legend, and follows the dark theme", async ({ page }) => {
  await page.emulateMedia({ colorScheme: "light" });
  await signIn(page);
  await page.goto("/");
  const devices = page.getByTestId("chart-devices");
  await expect(devices.locator("[data-chart-canvas] canvas").first()).toBeVisible({ timeout: 15_000 });
  const legend = devices.getByRole("button", { name: /^Online/ });
  await legend.click();
  await expect(legend).toHaveAttribute("aria-pressed", "false");
  await legend.click();
  await expect(legend).toHaveAttribute("aria-pressed", "true");

  // The canvas is drawn again with the dark palette: its pixels change with the theme.
  const pixels = () => devices.locator("[data-chart-canvas] canvas").first().evaluate((c: HTMLCanvasElement) => c.toDataURL());
  const light = await pixels();
  await page.getByTestId("theme-dark").click();
  await expect(page.locator("html")).toHaveClass(/dark/);
  await expect.poll(pixels).not.toBe(light);
});
