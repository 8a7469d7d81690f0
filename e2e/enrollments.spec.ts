import { randomBytes } from "node:crypto";
import { test, expect } from "@playwright/test";
import { E2E_ADMIN_PASSWORD, E2E_URL } from "../playwright.config";
import { api, signIn, tokenFor, uniquePrefix } from "./support";

interface Enrollment {
  id: string;
  deviceName: string;
  status: string;
  reason: string | null;
  clientAddress: string | null;
}

/** Asks to enroll the way an agent does; stays Pending (no auto-approve rule in e2e). */
async function ask(name: string): Promise<string> {
  const res = await fetch(`${E2E_URL}/api/agent/v1/enrollments`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ deviceName: name, labels: {}, platform: "linux-amd64", role: "worker", agentVersion: "1.0.0", secret: randomBytes(32).toString("base64url") }),
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { enrollmentId: string }).enrollmentId;
}

test("the Enrollments page shows client addresses, denies selected rows, then all pending from one address", async ({ page }) => {
  const prefix = uniquePrefix("flood");
  const names = [1, 2, 3, 4].map((i) => `${prefix}-${i}`);
  for (const n of names) await ask(n);
  const admin = await tokenFor("admin", E2E_ADMIN_PASSWORD);
  const pending = (await api<{ items: Enrollment[] }>("GET", "/enrollments?status=Pending&limit=1000", admin)).body.items;
  const address = pending.find((e) => e.deviceName === names[0])!.clientAddress!;
  expect(address).toBeTruthy();

  await signIn(page);
  await page.goto("/enrollments");
  for (const n of names) await expect(page.getByTestId(`enrollment-address-${n}`)).toHaveText(address);

  // Deny two selected rows.
  await page.getByTestId(`select-${names[0]}`).check();
  await page.getByTestId(`select-${names[1]}`).check();
  await page.getByTestId("deny-selected").click();
  await page.getByTestId("confirm-deny").click();
  for (const n of names.slice(0, 2)) await expect(page.getByTestId(`enrollment-row-${n}`)).toBeHidden();

  // Narrow to the address by clicking it, then deny all its pending requests with a reason.
  await page.getByTestId(`enrollment-address-${names[2]}`).getByRole("link").click();
  await expect(page.getByTestId("address-filter")).toContainText(address);
  const button = page.getByTestId("deny-all-pending");
  await expect(button).toHaveText(new RegExp(`Deny all pending from ${address.replace(/[.:]/g, "\\$&")} \\(\\d+\\)`));
  await button.click();
  await expect(page.getByTestId("deny-all-dialog")).toContainText(address);
  await page.getByTestId("deny-all-reason").fill("flood from one address");
  await page.getByTestId("confirm-deny-all").click();
  await expect(page.getByTestId("enrollment-notice")).toContainText(/Denied \d+ pending requests? from/);
  for (const n of names.slice(2)) await expect(page.getByTestId(`enrollment-row-${n}`)).toBeHidden();
  await expect(page.getByTestId("empty-state")).toBeVisible();

  const denied = (await api<{ items: Enrollment[] }>("GET", "/enrollments?status=Denied&limit=1000", admin)).body.items;
  for (const n of names) expect(denied.find((e) => e.deviceName === n)?.status).toBe("Denied");
  expect(denied.find((e) => e.deviceName === names[3])?.reason).toBe("flood from one address");
});

test("a mistaken denial is reopened from the Denied tab and approved", async ({ page }) => {
  const name = `${uniquePrefix("oops")}-1`;
  const id = await ask(name);
  const admin = await tokenFor("admin", E2E_ADMIN_PASSWORD);
  expect((await api("POST", `/enrollments/${id}/deny`, admin, { reason: "misread the name" })).status).toBe(200);

  await signIn(page);
  await page.goto("/enrollments?status=Denied");
  await expect(page.getByTestId(`enrollment-status-${name}`)).toHaveText(/Denied/);
  await page.getByTestId(`reopen-${name}`).click();
  await expect(page.getByTestId("enrollment-notice")).toContainText(`Reopened ${name}`);
  await expect(page.getByTestId(`enrollment-row-${name}`)).toBeHidden();

  await page.getByTestId("status-tab-Pending").click();
  await page.getByTestId(`approve-${name}`).click();
  await page.getByTestId("confirm-approve").click();
  await expect(page.getByTestId(`enrollment-row-${name}`)).toBeHidden();
  const row = (await api<{ items: Enrollment[] }>("GET", "/enrollments?status=Approved&limit=1000", admin)).body.items.find((e) => e.deviceName === name);
  expect(row?.status).toBe("Approved");
});
