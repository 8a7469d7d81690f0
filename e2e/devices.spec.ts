import { test, expect } from "@playwright/test";
import { E2E_ADMIN_PASSWORD } from "../playwright.config";
import { approveByApi, askToEnroll, createUser, api, deviceName, onlineDevicePage, signIn, simulate, tokenFor, uniquePrefix } from "./support";

test("simulated agents enroll, are approved in the browser, go Online, then Offline when stopped — live", async ({ page }) => {
  const prefix = uniquePrefix("life");
  const names = [1, 2, 3].map((i) => deviceName(prefix, i));
  await signIn(page);
  const sim = simulate(prefix, 3);
  try {
    await page.goto("/enrollments");
    // The requests arrive while the page is open: no reload.
    for (const n of names) await expect(page.getByTestId(`enrollment-row-${n}`)).toBeVisible({ timeout: 20_000 });

    // Approve two at once, the third on its own.
    await page.getByTestId(`select-${names[0]}`).check();
    await page.getByTestId(`select-${names[1]}`).check();
    // Approving asks first (labels to add, issue 10): confirm as it is.
    await page.getByTestId("approve-selected").click();
    await page.getByTestId("confirm-approve").click();
    await expect(page.getByTestId("approve-dialog")).toBeHidden();
    await page.getByTestId(`approve-${names[2]}`).click();
    await page.getByTestId("confirm-approve").click();
    for (const n of names) await expect(page.getByTestId(`enrollment-row-${n}`)).toBeHidden();

    await page.goto(`/devices/${names[0]}`);
    await expect(page.getByTestId("device-summary")).toHaveText(/Online/, { timeout: 15_000 });
    await expect(page.getByTestId("device-lifecycle")).toHaveText(/Enrolled/);
    // The derived status, from the same table the server derives with; a state's badge says what it means.
    await expect(page.getByTestId("device-status-summary")).toHaveText(/Online/);
    await expect(page.getByTestId("device-summary")).toHaveAttribute("title", /\w+ \w+ \w+/);
    // The escape hatch says what it does, and does it.
    const check = page.getByTestId("nudge-device");
    await expect(check).toHaveText("Check now");
    await expect(check).toHaveAttribute("title", /re-check this device's status now/);
    await check.click();
    await expect(page.getByTestId("nudge-device-done")).toHaveText("Checked");

    // The agents stop; the sweep marks the device Offline after the 6 s disconnection timeout.
    await sim.stop();
    await expect(page.getByTestId("device-summary")).toHaveText(/Offline/, { timeout: 20_000 });
    await expect(page.getByTestId("device-status-summary")).toHaveText(/Offline/);
    // "last seen" keeps counting, to the second (it lagged by up to 10 s).
    const lastSeen = page.getByTestId("device-last-seen");
    await expect(lastSeen).toHaveText(/\d+s ago/);
    const before = await lastSeen.textContent();
    await expect(lastSeen).not.toHaveText(before ?? "", { timeout: 2_500 });

    // The device list shows the same, filtered by label selector through the URL.
    await page.goto(`/devices?labelSelector=${encodeURIComponent(`e2e=${prefix}`)}`);
    for (const n of names) await expect(page.getByTestId(`device-summary-${n}`)).toHaveText(/Offline/);
    // The filter applies (other tests' devices share this database): exactly these three.
    await expect(page.getByText("3 devices match these filters")).toBeVisible();
    await expect(page.getByTestId("label-selector")).toHaveValue(`e2e=${prefix}`);
  } finally {
    await sim.stop();
  }
});

test("decommission asks for confirmation, then the agent completes it live", async ({ page }) => {
  const { name, admin, sim } = await onlineDevicePage(page, "decom");
  try {
    await page.getByTestId("decommission-button").click();
    const confirm = page.getByTestId("confirm-decommission");
    await expect(confirm).toBeDisabled();
    await page.getByTestId("confirm-input").fill("not-the-name");
    await expect(confirm).toBeDisabled();
    await page.getByTestId("confirm-input").fill(name);
    await confirm.click();

    await expect(page.getByTestId("device-lifecycle")).toHaveText(/Decommissioned/, { timeout: 15_000 });
    await expect(page.getByTestId("decommission-button")).toHaveCount(0);
    // A record now: nothing to edit or nudge, and its last report is said to be that.
    await expect(page.getByTestId("device-decommissioned")).toBeVisible();
    await expect(page.getByTestId("nudge-device")).toHaveCount(0);
    await expect(page.getByTestId("edit-device-button")).toHaveCount(0);
    // Offline at once (its credential is revoked), not after the disconnection timeout.
    await expect(page.getByTestId("device-summary")).toHaveText(/Offline/, { timeout: 3_000 });
    const device = await api<{ lifecycle: string; decommissioning: string; credentialRevokedAt: string | null }>("GET", `/devices/${name}`, admin);
    expect(device.body.lifecycle).toBe("Decommissioned");
    expect(device.body.decommissioning).toBe("Completed");
    expect(device.body.credentialRevokedAt).not.toBeNull();
  } finally {
    await sim.stop();
  }
});

test("revoking a credential asks for a reason, then the device shows it revoked and its decommission completes at once", async ({ page }) => {
  const { name, admin, sim } = await onlineDevicePage(page, "revoke");
  try {
    await page.getByTestId("revoke-button").click();
    const dialog = page.getByTestId("revoke-dialog");
    await expect(dialog).toBeVisible();
    await expect(dialog.getByRole("heading")).toHaveText(`Revoke ${name}'s credential?`);
    await expect(dialog).toContainText("end as LOST");
    const confirm = page.getByTestId("confirm-revoke");
    // The reason is required: blank is not one.
    await expect(confirm).toBeDisabled();
    const reason = page.getByTestId("revoke-reason");
    await expect(reason).toBeFocused();
    await expect(reason).toHaveAttribute("maxlength", "500");
    await expect(reason).toHaveAccessibleDescription(/shown with the device and in its events/);
    await reason.fill("   ");
    await expect(confirm).toBeDisabled();
    // Cancelled, it changes nothing, and opens again empty.
    await reason.fill("not this one");
    await dialog.getByRole("button", { name: "Cancel" }).click();
    await expect(dialog).toBeHidden();
    await page.getByTestId("revoke-button").click();
    await expect(reason).toHaveValue("");
    await reason.fill("  e2e: key on a lost laptop ");
    await confirm.click();
    await expect(dialog).toBeHidden();

    await expect(page.getByTestId("device-revoked-badge")).toBeVisible();
    await expect(page.getByTestId("device-revoked")).toContainText("(revoked by admin: e2e: key on a lost laptop)");
    await expect(page.getByTestId("revoke-button")).toHaveCount(0);
    const device = await api<{ credentialRevokedAt: string | null; conditions: { type: string; message: string }[] }>("GET", `/devices/${name}`, admin);
    expect(device.body.credentialRevokedAt).not.toBeNull();
    expect(device.body.conditions.find((c) => c.type === "CredentialRevoked")?.message).toBe("revoked by admin: e2e: key on a lost laptop");

    // Its decommission completes at once, without its agent.
    await page.getByTestId("decommission-button").click();
    await page.getByTestId("confirm-input").fill(name);
    await page.getByTestId("confirm-decommission").click();
    await expect(page.getByTestId("device-lifecycle")).toHaveText(/Decommissioned/, { timeout: 15_000 });
  } finally {
    await sim.stop();
  }
});

test("a viewer sees no mutating controls and the API refuses them", async ({ page }) => {
  const prefix = uniquePrefix("viewer");
  const [enrolled, pending] = [deviceName(prefix, 1), deviceName(prefix, 2)];
  const admin = await tokenFor("admin", E2E_ADMIN_PASSWORD);
  const viewerName = `viewer_${prefix.slice(-6)}`;
  await createUser(admin, viewerName, "viewer-password", "viewer");
  const viewer = await tokenFor(viewerName, "viewer-password");
  // Devices that asked with no agent behind them (none needs to be Online: an operator sees
  // Decommission on any Enrolled device, and the viewer must not).
  await askToEnroll(enrolled);
  await askToEnroll(pending);
  await approveByApi(admin, [enrolled]);
  await signIn(page, viewerName, "viewer-password");
  await page.goto(`/devices/${enrolled}`);
  await expect(page.getByTestId("current-role")).toHaveText(/viewer/);
  await expect(page.getByTestId("device-lifecycle")).toHaveText(/Enrolled/, { timeout: 15_000 });
  await expect(page.getByTestId("decommission-button")).toHaveCount(0);

  await page.goto("/enrollments");
  await expect(page.getByTestId(`enrollment-row-${pending}`)).toBeVisible({ timeout: 15_000 });
  await expect(page.getByTestId(`approve-${pending}`)).toHaveCount(0);
  await expect(page.getByTestId("approve-selected")).toHaveCount(0);
  await expect(page.getByTestId(`select-${pending}`)).toHaveCount(0);

  const refused = await api<{ error: { code: string } }>("POST", `/devices/${enrolled}/decommission`, viewer);
  expect(refused.status).toBe(403);
  expect(refused.body.error.code).toBe("FORBIDDEN");
  const list = await api<{ items: { id: string; deviceName: string }[] }>("GET", "/enrollments?status=Pending", viewer);
  const id = list.body.items.find((e) => e.deviceName === pending)?.id;
  expect((await api("POST", `/enrollments/${id}/approve`, viewer)).status).toBe(403);

  // Nothing changed.
  expect((await api<{ lifecycle: string }>("GET", `/devices/${enrolled}`, admin)).body.lifecycle).toBe("Enrolled");
  expect((await api<{ status: string }[]>("GET", "/enrollments?status=Pending", admin)).status).toBe(200);
  const still = await api<{ items: { deviceName: string }[] }>("GET", "/enrollments?status=Pending", admin);
  expect(still.body.items.some((e) => e.deviceName === pending)).toBe(true);
});

test("sign-in is required and a wrong password is refused", async ({ page }) => {
  await page.goto("/devices");
  await expect(page).toHaveURL(/\/login/);
  await page.getByLabel(/username/i).fill("admin");
  await page.getByLabel(/password/i).fill("wrong-password");
  await page.getByRole("button", { name: /sign in/i }).click();
  await expect(page.getByText(/wrong username or password/i)).toBeVisible();
  await expect(page).toHaveURL(/\/login/);
});
