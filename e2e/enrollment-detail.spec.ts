import { randomBytes } from "node:crypto";
import { test, expect, type Page } from "@playwright/test";
import { E2E_ADMIN_PASSWORD, E2E_URL } from "../playwright.config";
import { api, axeViolations, deviceName, signIn, simulate, tokenFor, uniquePrefix } from "./support";

/**
 * Issue 10: an enrollment request's page, to check a device before approving it (its host
 * facts, the address it first came from), and labels added at approval, on the page and in
 * the list's approve dialog.
 */

interface Enrollment {
  id: string;
  deviceName: string;
  status: string;
  clientAddress: string | null;
}

/** Asks to enroll the way an agent does, with host facts; stays Pending (no auto-approve rule in e2e). */
async function ask(name: string, labels: Record<string, string> = {}): Promise<string> {
  const system = { hostname: `${name}.lab`, os: { name: "Debian GNU/Linux", version: "12" }, kernel: "6.1.0-18-arm64", arch: "aarch64", ips: ["10.9.8.7"], cpus: 4 };
  const res = await fetch(`${E2E_URL}/api/agent/v1/enrollments`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ deviceName: name, labels, platform: "linux-arm64", role: "worker", agentVersion: "1.0.0", secret: randomBytes(32).toString("base64url"), system }),
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { enrollmentId: string }).enrollmentId;
}

async function axe(page: Page, where: string) {
  const found = (await axeViolations(page)).flatMap((v) => v.nodes.map((n) => `${v.id}: ${n.html.slice(0, 140)}`));
  expect.soft(found, where).toEqual([]);
}

test("a simulated agent asks; the operator checks its host facts and address on its page, approves it with a label, and the device carries it", async ({ page }) => {
  test.setTimeout(90_000);
  const prefix = uniquePrefix("detail");
  const name = deviceName(prefix, 1);
  const admin = await tokenFor("admin", E2E_ADMIN_PASSWORD);
  const sim = simulate(prefix, 1);
  try {
    await signIn(page);
    await page.goto("/enrollments");
    await expect(page.getByTestId(`enrollment-row-${name}`)).toBeVisible({ timeout: 20_000 });
    // The list's host hint (wide screens: the test's 1280 px is one): the simulator's hostname is the device name.
    await expect(page.getByTestId(`enrollment-host-${name}`)).toContainText(name);
    const address = (await api<{ items: Enrollment[] }>("GET", "/enrollments?status=Pending&limit=1000", admin)).body.items.find((e) => e.deviceName === name)?.clientAddress;
    expect(address).toBeTruthy();

    await page.getByTestId(`enrollment-link-${name}`).click();
    await expect(page).toHaveURL(/\/enrollments\/[0-9a-f-]{36}$/);
    await expect(page.getByTestId("enrollment-name")).toHaveText(name);
    await expect(page.getByTestId("enrollment-status")).toHaveText(/Pending/);
    await expect(page.getByTestId("fact-hostname")).toHaveText(name);
    await expect(page.getByTestId("fact-arch")).toHaveText(/\S/);
    await expect(page.getByTestId("fact-os")).toHaveText(/\S/);
    await expect(page.getByTestId("fact-ips")).toContainText(/10\.\d+\.\d+\.\d+/);
    await expect(page.getByTestId("fact-cpus")).toHaveText(/^\d+$/);
    await expect(page.getByTestId("fact-memory")).toHaveText(/GiB/);
    await expect(page.getByTestId("enrollment-first-address")).toHaveText(address!);
    await expect(page.getByTestId("enrollment-requested-labels")).toContainText(`e2e=${prefix}`);
    // The agent waits on its decision meanwhile: it was seen, and the events say it asked.
    await expect(page.getByTestId("enrollment-last-seen")).toHaveText(/ago|just now/);
    await expect(page.locator("main")).toContainText("EnrollmentRequested");
    await axe(page, "enrollment page");

    // Approve with labels: a bad one is refused inline; one added then removed; one kept.
    await page.getByTestId("approve-enrollment").click();
    const dialog = page.locator(`dialog[open][data-testid="approve-dialog"]`);
    await expect(dialog).toBeVisible();
    const input = dialog.getByTestId("labels-editor-input");
    await input.fill("bad!key=x");
    await input.press("Enter");
    await expect(dialog.getByTestId("labels-editor-error")).toContainText("not a valid key");
    await expect(dialog.getByTestId("confirm-approve")).toBeDisabled();
    await axe(page, "approve dialog with an error");
    await input.fill(`site=${prefix}`);
    await input.press("Enter");
    await input.fill("scratch=1");
    await dialog.getByTestId("labels-editor-add").click();
    await expect(dialog.getByTestId("label-chip-scratch")).toBeVisible();
    await dialog.getByTestId("remove-label-scratch").click();
    await expect(dialog.getByTestId("label-chip-scratch")).toHaveCount(0);
    await expect(dialog.getByTestId("label-chip-site")).toHaveText(new RegExp(`site=${prefix}`));
    await expect(dialog.getByTestId("approve-labels-preview")).toContainText(`e2e=${prefix}`);
    await expect(dialog.getByTestId("approve-labels-preview")).toContainText(`site=${prefix}`);
    await dialog.getByTestId("confirm-approve").click();

    await expect(page.getByTestId("enrollment-status")).toHaveText(/Approved/);
    await expect(page.getByTestId("enrollment-approved-labels")).toContainText(`site=${prefix}`);
    await expect(page.getByTestId("approve-enrollment")).toHaveCount(0);

    // The device carries the label at once: the list filtered by it shows the device, Online
    // once its agent has its credential.
    await page.getByTestId("enrollment-device-link").click();
    await expect(page).toHaveURL(new RegExp(`/devices/${name}$`));
    await page.goto(`/devices?labelSelector=${encodeURIComponent(`site=${prefix}`)}`);
    await expect(page.getByTestId(`device-summary-${name}`)).toHaveText(/Online/, { timeout: 20_000 });
    const device = await api<{ labels: Record<string, string> }>("GET", `/devices/${name}`, admin);
    expect(device.body.labels).toEqual({ e2e: prefix, site: prefix });

    // The list's Approved row: its name opens the request, a "device" link its device.
    await page.goto("/enrollments?status=Approved");
    await expect(page.getByTestId(`enrollment-host-${name}`)).toContainText(name);
    await axe(page, "enrollments list, Approved");
  } finally {
    await sim.stop();
  }
});

test("the list's approve dialog takes labels too, the operator's winning over the requested", async ({ page }) => {
  const prefix = uniquePrefix("listlabel");
  const name = `${prefix}-1`;
  await ask(name, { site: "unknown", rack: "4" });
  await signIn(page);
  await page.goto("/enrollments");
  await expect(page.getByTestId(`enrollment-host-${name}`)).toHaveText(`${name}.lab · aarch64`);
  await page.getByTestId(`approve-${name}`).click();
  const dialog = page.locator(`dialog[open][data-testid="approve-dialog"]`);
  await dialog.getByTestId("labels-editor-input").fill("site=lab, owner=ops");
  // Typed and not added yet: still sent, so nothing typed is lost.
  await expect(dialog.getByTestId("approve-labels-preview")).toContainText("site=lab");
  await dialog.getByTestId("confirm-approve").click();
  await expect(page.getByTestId(`enrollment-row-${name}`)).toBeHidden();
  const admin = await tokenFor("admin", E2E_ADMIN_PASSWORD);
  expect((await api<{ labels: Record<string, string> }>("GET", `/devices/${name}`, admin)).body.labels).toEqual({ site: "lab", rack: "4", owner: "ops" });
});

test("deny and reopen from the request's page, its history growing", async ({ page }) => {
  const name = `${uniquePrefix("detaildeny")}-1`;
  const id = await ask(name);
  // In dark mode, checked with axe as the first test does in light.
  await page.emulateMedia({ colorScheme: "dark", reducedMotion: "reduce" });
  await signIn(page);
  await page.goto(`/enrollments/${id}`);
  await expect(page.getByTestId("fact-hostname")).toHaveText(`${name}.lab`);
  await expect(page.locator("main")).toContainText("EnrollmentRequested");
  await axe(page, "enrollment page, dark");
  await page.getByTestId("approve-enrollment").click();
  await page.locator(`dialog[open][data-testid="approve-dialog"]`).getByTestId("labels-editor-input").fill("site=lab");
  await page.keyboard.press("Enter");
  await axe(page, "approve dialog, dark");
  await page.keyboard.press("Escape");
  await page.getByTestId("deny-enrollment").click();
  await page.getByTestId("deny-reason").fill("not on the inventory");
  await page.getByTestId("confirm-deny").click();
  await expect(page.getByTestId("enrollment-status")).toHaveText(/Denied/);
  await expect(page.getByTestId("enrollment-reason")).toContainText("not on the inventory");
  await page.getByTestId("reopen-enrollment").click();
  await expect(page.getByTestId("enrollment-status")).toHaveText(/Pending/);
  await expect(page.getByTestId("approve-enrollment")).toBeVisible();
  await expect(page.locator("main")).toContainText("EnrollmentReopened");
  await expect(page.locator("main")).toContainText("EnrollmentDenied");

  await page.goto("/enrollments/no-such-request");
  await expect(page.getByText("No such enrollment request")).toBeVisible();
});
