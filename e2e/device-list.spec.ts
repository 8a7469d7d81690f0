import { test, expect, type Page } from "@playwright/test";
import YAML from "yaml";
import { E2E_ADMIN_PASSWORD } from "../playwright.config";
import { api, approveByApi, axeViolations, createUser, deviceName, onlineDevicePage, signIn, simulate, tokenFor, uniquePrefix } from "./support";

/** WCAG 2.1 A/AA violations on the page as it is (what accessibility.spec.ts checks, here with the selection and the dialogs open). */
async function axe(page: Page): Promise<string[]> {
  return (await axeViolations(page)).flatMap((v) => v.nodes.map((n) => `${v.id}: ${n.html.slice(0, 160)}`));
}

/** The device names of the list's rows, top to bottom. */
async function rowNames(page: Page): Promise<string[]> {
  const ids = await page.locator('[data-testid^="device-row-"]').evaluateAll((rows) => rows.map((r) => r.getAttribute("data-testid") ?? ""));
  return ids.map((id) => id.replace(/^device-row-/, ""));
}

test("device list: sort by a column, label two devices, decommission one in bulk, decommissioned hidden then shown", async ({ page }) => {
  test.setTimeout(120_000);
  const prefix = uniquePrefix("list");
  const names = [1, 2, 3].map((i) => deviceName(prefix, i));
  const admin = await tokenFor("admin", E2E_ADMIN_PASSWORD);
  const sim = simulate(prefix, 3);
  try {
    await approveByApi(admin, names);
    await signIn(page);
    const listUrl = `/devices?labelSelector=${encodeURIComponent(`e2e=${prefix}`)}`;
    await page.goto(listUrl);
    for (const n of names) await expect(page.getByTestId(`device-summary-${n}`)).toHaveText(/Online/, { timeout: 20_000 });

    // A live update refetches the list behind the rows: they stay at full contrast while it is in
    // flight (held here until released). They were dimmed at every update, and axe failed their
    // contrast whenever a check met one in flight.
    const listRequest = /\/api\/trpc\/[^?]*devices\.list/;
    const held: (() => void)[] = [];
    let open = false;
    await page.route(listRequest, async (route) => {
      if (!open) await new Promise<void>((r) => held.push(r));
      await route.continue();
    });
    const release = () => {
      open = true;
      for (const r of held) r();
    };
    const refetch = page.waitForRequest(listRequest);
    expect((await api("PATCH", `/devices/${names[2]}`, admin, { alias: "live-alias" })).status).toBe(200);
    await refetch;
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    const rows = page.getByTestId("devices-table").locator("tbody");
    await expect(rows).not.toHaveClass(/opacity-60/, { timeout: 1 });
    release();
    await expect(page.getByTestId(`device-row-${names[2]}`)).toContainText("live-alias");
    await page.unroute(listRequest);

    // Sorted by name, ascending, by default; the header says so.
    const nameHeader = page.locator("th", { has: page.getByTestId("sort-name") });
    await expect(nameHeader).toHaveAttribute("aria-sort", "ascending");
    expect(await rowNames(page)).toEqual(names);

    // The name header's button (keyboard: focus and Enter) reverses it: the order really changes, and the URL keeps it.
    await page.getByTestId("sort-name").focus();
    await page.keyboard.press("Enter");
    await expect(page).toHaveURL(/order=desc/);
    await expect(nameHeader).toHaveAttribute("aria-sort", "descending");
    await expect.poll(() => rowNames(page)).toEqual([...names].reverse());
    await page.reload();
    await expect(nameHeader).toHaveAttribute("aria-sort", "descending");
    await expect.poll(() => rowNames(page)).toEqual([...names].reverse());

    // Another column: last seen, newest first; the name header is no longer sorted.
    await page.getByTestId("sort-lastSeen").click();
    await expect(page).toHaveURL(/sort=lastSeen/);
    await expect(page.locator("th", { has: page.getByTestId("sort-lastSeen") })).toHaveAttribute("aria-sort", "descending");
    await expect(nameHeader).not.toHaveAttribute("aria-sort", /.+/);
    await page.goto(listUrl);

    // Select two devices and label them.
    await page.getByTestId(`select-${names[0]}`).check();
    await page.getByTestId(`select-${names[1]}`).check();
    await expect(page.getByTestId("selection-count")).toHaveText(/2 selected/);
    expect(await axe(page)).toEqual([]);
    await expect(page).toHaveURL(new RegExp(`/devices\\?labelSelector=`)); // a checkbox click does not open the device
    await page.getByTestId("bulk-label").click();
    expect(await axe(page)).toEqual([]);
    await page.getByTestId("label-key").fill("tier");
    await page.getByTestId("label-value").fill("gold");
    await page.getByTestId("confirm-bulk-label").click();
    await expect(page.getByTestId("bulk-notice")).toHaveText(/Labelled 2 devices/);
    for (const [n, labelled] of [
      [names[0], true],
      [names[1], true],
      [names[2], false],
    ] as const) {
      const d = await api<{ labels: Record<string, string> }>("GET", `/devices/${n}`, admin);
      expect(d.body.labels.tier).toBe(labelled ? "gold" : undefined);
    }

    // Bulk decommission asks first, with a reason.
    await page.getByTestId(`select-${names[2]}`).check();
    await page.getByTestId("bulk-decommission").click();
    const dialog = page.getByTestId("bulk-decommission-dialog");
    await expect(dialog).toBeVisible();
    await expect(dialog).toContainText("Decommission 1 device?");
    await page.getByTestId("bulk-decommission-reason").fill("e2e: retired");
    await page.getByTestId("confirm-bulk-decommission").click();
    await expect(page.getByTestId("bulk-notice")).toHaveText(/Decommissioning requested for 1 device/);
    await expect
      .poll(async () => (await api<{ lifecycle: string }>("GET", `/devices/${names[2]}`, admin)).body.lifecycle, { timeout: 20_000 })
      .toBe("Decommissioned");

    // Hidden by default, counted beside the filters; "show" lists it, through the URL.
    await page.goto(listUrl);
    await expect(page.getByTestId(`device-row-${names[0]}`)).toBeVisible();
    await expect(page.getByTestId(`device-row-${names[2]}`)).toHaveCount(0);
    await expect(page.getByTestId("decommissioned-toggle")).toHaveText(/1 decommissioned hidden · show/);
    await page.getByTestId("show-decommissioned").click();
    await expect(page).toHaveURL(/decommissioned=show/);
    await expect(page.getByTestId(`device-row-${names[2]}`)).toBeVisible();
    await page.getByTestId("hide-decommissioned").click();
    await expect(page.getByTestId(`device-row-${names[2]}`)).toHaveCount(0);
  } finally {
    await sim.stop();
  }
});

test("device list: a viewer sees no selection controls", async ({ page }) => {
  const admin = await tokenFor("admin", E2E_ADMIN_PASSWORD);
  const username = `viewer_${uniquePrefix("v").slice(-6)}`;
  await createUser(admin, username, "viewer-password-1", "viewer");
  await signIn(page, username, "viewer-password-1");
  await page.goto("/devices");
  await expect(page.getByTestId("devices-table")).toBeVisible();
  await expect(page.getByTestId("sort-name")).toBeVisible();
  await expect(page.getByTestId("select-page")).toHaveCount(0);
  await expect(page.getByTestId("bulk-decommission")).toHaveCount(0);
});

test("YAML view: a device and an action, as the REST API returns them, with a copy button", async ({ page, context }) => {
  test.setTimeout(90_000);
  await context.grantPermissions(["clipboard-read", "clipboard-write"]);
  const { name, admin, sim } = await onlineDevicePage(page, "yaml");
  try {
    await page.getByTestId("yaml-button").click();
    const view = page.getByTestId("yaml-view");
    await expect(view).toBeVisible();
    await expect(view).toContainText(`name: ${name}`);
    expect(await axe(page)).toEqual([]);
    const shown = YAML.parse((await view.textContent()) ?? "") as Record<string, unknown>;
    const rest = (await api<Record<string, unknown>>("GET", `/devices/${name}`, admin)).body;
    for (const key of ["id", "name", "platform", "role", "labels", "lifecycle", "createdAt", "fleet"]) expect(shown[key]).toEqual(rest[key]);
    await page.getByTestId("yaml-view-copy").click();
    await expect(page.getByTestId("yaml-dialog")).toContainText("Copied.");
    expect(await page.evaluate(() => navigator.clipboard.readText())).toContain(`name: ${name}`);
    await page.keyboard.press("Escape");
    await expect(view).toBeHidden();

    const created = await api<{ items: { id: string }[] }>("POST", "/actions", admin, { device: name, kind: "noop", args: {} });
    const id = created.body.items[0]?.id ?? "";
    await page.goto(`/actions/${id}`);
    await page.getByTestId("yaml-button").click();
    await expect(page.getByTestId("yaml-view")).toContainText(`id: ${id}`);
    const action = YAML.parse((await page.getByTestId("yaml-view").textContent()) ?? "") as Record<string, unknown>;
    const restAction = (await api<Record<string, unknown>>("GET", `/actions/${id}`, admin)).body;
    for (const key of ["id", "kind", "device", "args", "origin", "createdAt"]) expect(action[key]).toEqual(restAction[key]);
  } finally {
    await sim.stop();
  }
});
