/**
 * The inventory (issue 10) in the console with a real simulated agent: its host facts and
 * usage chart on its page, following the heartbeats; the Edit dialog (alias and labels) with
 * inline validation, and the result in the list; a viewer gets no Edit.
 */
import { expect, test, type Page } from "@playwright/test";
import { api, axeViolations, createUser, onlineDevicePage, signIn, tokenFor } from "./support";

/** axe (WCAG 2.1 A/AA) on one part of the page: the rules and element of each finding. */
async function axeFindings(page: Page, selector: string): Promise<string[]> {
  return (await axeViolations(page, selector)).flatMap((v) => v.nodes.map((n) => `${v.id}: ${n.html.slice(0, 120)}`));
}

test("a simulated device's facts and usage chart show on its page and follow its heartbeats", async ({ page }) => {
  const { name, sim } = await onlineDevicePage(page, "inv");
  try {
    const card = page.getByTestId("inventory-card");
    await expect(card).toBeVisible();
    await expect(page.getByTestId("inventory-hostname")).toHaveText(name, { timeout: 15_000 });
    await expect(page.getByTestId("inventory-os")).toHaveText(/Debian|Ubuntu|Rocky|Alpine/);
    await expect(page.getByTestId("inventory-arch")).toHaveText(/x86_64 · \d+ CPUs/);
    await expect(page.getByTestId("inventory-booted")).toHaveText(/\d+ (d|h)/);
    await expect(page.getByTestId("inventory-agent-up")).toHaveText(/\d+ (s|m)/);
    await expect(page.getByTestId("inventory-ips")).toHaveText(/10\.\d+\.\d+\.\d+/);
    await expect(page.getByTestId("usage-memory")).toHaveText(/^\d+ %$/);
    await expect(page.getByTestId("usage-disk")).toHaveText(/^\d+ %$/);
    for (const chart of ["usage-cpu-chart", "usage-memory-chart", "usage-disk-chart"]) {
      await expect(page.getByTestId(chart)).toHaveAttribute("data-points", /^[1-9]\d*$/);
    }
    // Live: the cpu reading moves as heartbeats arrive (every 2 s here), without a reload.
    const cpu = page.getByTestId("usage-cpu");
    await expect(cpu).toHaveText(/^\d+\.\d %$/);
    const first = await cpu.textContent();
    await expect.poll(() => cpu.textContent(), { timeout: 20_000 }).not.toBe(first);
    expect(await axeFindings(page, '[data-testid="inventory-card"]')).toEqual([]);
  } finally {
    await sim.stop();
  }
});

test("labels and alias edited in the dialog, validated inline, show in the list; a viewer has no Edit", async ({ page }) => {
  const { name, prefix, admin, sim } = await onlineDevicePage(page, "alias");
  try {
    await page.getByTestId("edit-device-button").click();
    const dialog = page.getByTestId("edit-device-dialog");
    await expect(dialog).toBeVisible();
    // The simulator's label is there to edit.
    await expect(page.getByTestId("edit-label-key-0")).toHaveValue("e2e");

    // Bad input is shown inline and not sent.
    await page.getByTestId("edit-alias").fill("two\tlines");
    await expect(page.getByTestId("edit-alias-error")).toHaveText(/no control characters/);
    await page.getByTestId("edit-add-label").click();
    await page.getByTestId("edit-label-key-1").fill("bad key!");
    await page.getByTestId("edit-label-value-1").fill("v");
    await page.getByTestId("edit-device-save").click();
    await expect(page.getByTestId("edit-label-key-error-1")).toBeVisible();
    await expect(dialog).toBeVisible();
    expect(await axeFindings(page, '[data-testid="edit-device-dialog"]')).toEqual([]);

    // Fixed: saved in one request.
    const alias = `Boiler room ${prefix.slice(-6)}`;
    await page.getByTestId("edit-alias").fill(alias);
    await page.getByTestId("edit-label-key-1").fill("room");
    await page.getByTestId("edit-label-value-1").fill("boiler-2");
    await expect(page.getByTestId("edit-label-key-error-1")).toHaveCount(0);
    await page.getByTestId("edit-device-save").click();
    await expect(dialog).toBeHidden();
    await expect(page.getByTestId("device-alias")).toHaveText(alias);

    const stored = await api<{ alias: string | null; labels: Record<string, string> }>("GET", `/devices/${name}`, admin);
    expect(stored.body.alias).toBe(alias);
    expect(stored.body.labels).toEqual({ e2e: prefix, room: "boiler-2" });

    // The list: the alias beside the name; the search finds the device by its alias.
    await page.goto(`/devices?q=${encodeURIComponent(alias)}`);
    await expect(page.getByTestId(`device-alias-${name}`)).toHaveText(alias);
    await expect(page.locator('[data-testid^="device-row-"]')).toHaveCount(1);

    // A viewer sees the alias but may not edit.
    const viewer = `viewer_${prefix.slice(-6)}`;
    await createUser(admin, viewer, "viewer-password-1", "viewer");
    expect(await tokenFor(viewer, "viewer-password-1")).toBeTruthy();
    await page.context().clearCookies();
    await signIn(page, viewer, "viewer-password-1");
    await page.goto(`/devices/${name}`);
    await expect(page.getByTestId("device-alias")).toHaveText(alias);
    await expect(page.getByTestId("edit-device-button")).toHaveCount(0);
  } finally {
    await sim.stop();
  }
});
