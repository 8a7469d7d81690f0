import { test, expect } from "@playwright/test";
import { E2E_ADMIN_PASSWORD } from "../playwright.config";
import { api, approveByApi, askToEnroll, deviceName, onlineDevicePage, signIn, tokenFor, uniquePrefix } from "./support";

test("an action created in the browser waits in the inbox, is approved with a reason, and its DONE output appears live", async ({ page }) => {
  // A simulated agent: exec is simulated there, with real scheduling, reports and output.
  const { sim, admin } = await onlineDevicePage(page, "act", ["--action-seconds", "0.2-0.4"]);
  try {

    // Create from the device page: exec needs approval by server policy.
    await page.getByTestId("new-action").click();
    await page.getByTestId("action-kind").selectOption("exec");
    await expect(page.getByTestId("approval-note")).toBeVisible();
    await page.getByTestId("action-args").fill(JSON.stringify({ command: "uptime" }));
    // Online and Degraded devices by default; this one for Online devices only (issue 21).
    await expect(page.getByTestId("health-policy")).toHaveValue("Degraded");
    await page.getByTestId("health-policy").selectOption("Online");
    await expect(page.getByTestId("preview-count")).toHaveAttribute("data-count", "1");
    await expect(page.getByTestId("create-action-submit")).toBeEnabled();
    await page.getByTestId("create-action-submit").click();
    await expect(page).toHaveURL(/\/actions\/[0-9a-f-]{36}$/);
    const id = page.url().split("/").pop()!;
    await expect(page.getByTestId("action-state")).toHaveText(/PENDING_APPROVE/);
    expect((await api<{ healthPolicy: string }>("GET", `/actions/${id}`, admin)).body.healthPolicy).toBe("Online");

    // The inbox has it, and the nav counts it from every page.
    await page.goto("/approvals");
    await expect(page.getByTestId(`approval-row-${id}`)).toBeVisible();
    await expect(page.getByTestId("nav-pending-approvals")).toBeVisible();
    await page.getByTestId(`approval-select-${id}`).check();
    await page.getByTestId("approve-actions").click();
    await page.getByTestId("decision-reason").fill("change 42: looks fine");
    await page.getByTestId("confirm-decision").click();
    await expect(page.getByTestId(`approval-row-${id}`)).toBeHidden();

    // The agent gets it through its held poll, runs it, and the page follows without a reload.
    await page.goto(`/actions/${id}`);
    await expect(page.getByTestId("action-state")).toHaveText(/DONE/, { timeout: 20_000 });
    await expect(page.getByTestId("approval-reason")).toHaveText(/change 42: looks fine/);
    await expect(page.getByTestId("approval-decided-by")).toHaveText(/admin/);
    await expect(page.getByTestId("action-output")).toContainText(/uptime/);
    // An ended action offers no Nudge: it would have nothing to do.
    await expect(page.getByTestId("nudge-action")).toHaveCount(0);
  } finally {
    await sim.stop();
  }
});

test("a waiting action says why, live, and is cancelled when its expiry passes", async ({ page }) => {
  // A device that has never reported is Offline from the start: no agent to start and then wait
  // out the disconnection timeout for (devices.spec.ts watches a stopped agent go Offline).
  const name = deviceName(uniquePrefix("wait"), 1);
  const admin = await tokenFor("admin", E2E_ADMIN_PASSWORD);
  await askToEnroll(name);
  await approveByApi(admin, [name]);
  expect((await api<{ summary: string }>("GET", `/devices/${name}`, admin)).body.summary).toBe("Offline");
  await signIn(page);
  const created = await api<{ items: { id: string }[] }>("POST", "/actions", admin, { device: name, kind: "noop", args: {}, expiresInSeconds: 8 });
  expect(created.status).toBe(201);
  const id = created.body.items[0]!.id;

  await page.goto(`/actions/${id}`);
  const waiting = page.getByTestId("action-waiting");
  await expect(waiting).toHaveAttribute("data-reason", "DeviceNotOnline");
  await expect(waiting).toContainText(`device ${name} is Offline: this action goes to devices that are Online or Degraded`);
  await expect(waiting).toContainText("cancelled if not started by");
  await expect(page.getByTestId("action-expires")).toBeVisible();

  // The expiry passes: CANCELLED by the server, with the reason, and no longer waiting.
  await expect(page.getByTestId("action-state")).toHaveText(/CANCELLED/, { timeout: 20_000 });
  await expect(waiting).toHaveCount(0);
  await expect(page.getByText("expired: not started within 8s of its creation").first()).toBeVisible();
});

test("an exec off the device's allow-list is warned about before it is created, and on its page", async ({ page }) => {
  const { sim } = await onlineDevicePage(page, "refuse", ["--allow-exec", "uptime"]);
  try {
    await page.getByTestId("new-action").click();
    await page.getByTestId("action-kind").selectOption("exec");
    await page.getByTestId("action-args").fill(JSON.stringify({ command: "uptime" }));
    await expect(page.getByTestId("preview-count")).toHaveAttribute("data-count", "1");
    await expect(page.getByTestId("refusal-warning")).toHaveCount(0);
    await page.getByTestId("action-args").fill(JSON.stringify({ command: "rm", args: ["-rf", "/"] }));
    const warning = page.getByTestId("refusal-warning");
    await expect(warning).toContainText("This device will refuse it");
    await expect(warning).toContainText(`command "rm" is not in its agent's allow-list (--allow-exec: uptime)`);

    // Created anyway (the operator may know better): its page says so while it waits for approval.
    await page.getByTestId("create-action-submit").click();
    await expect(page).toHaveURL(/\/actions\/[0-9a-f-]{36}$/);
    await expect(page.getByTestId("action-refusal")).toContainText(`command "rm" is not in its agent's allow-list`);
    const id = page.url().split("/").pop()!;

    // Approving warns too: in the inbox row, and in the dialog before it is confirmed.
    await page.goto("/approvals");
    await expect(page.getByTestId(`approval-refusal-${id}`)).toContainText(`"rm" is not in its agent's allow-list`);
    await page.getByTestId(`approve-action-${id}`).click();
    await expect(page.getByTestId("decision-refusal")).toContainText("The device will refuse it");
  } finally {
    await sim.stop();
  }
});
