import { test, expect } from "@playwright/test";
import { E2E_ADMIN_PASSWORD } from "../playwright.config";
import { api, approveByApi, deviceName, signIn, simulate, tokenFor, uniquePrefix } from "./support";

interface TargetsRead {
  items: { target: string; actionId: string | null; phase: string }[];
}

test("a workflow step's targets are retried and skipped from the step panel with a reason, and the run Succeeds without the stuck device", async ({ page }) => {
  test.setTimeout(120_000);
  const prefix = uniquePrefix("wftarget");
  const admin = await tokenFor("admin", E2E_ADMIN_PASSWORD);
  // One healthy device, one whose disk is in Error: it gets no work by default (issue 21), so its targets wait.
  const healthy = simulate(prefix, 1);
  const broken = simulate(`${prefix}-x`, 1, ["--error", "1"]);
  try {
    const [ok, stuck] = [deviceName(prefix, 1), deviceName(`${prefix}-x`, 1)];
    await approveByApi(admin, [ok, stuck]);
    const job = (devices: string[]) => ({ jobTemplate: { kind: "noop", targets: { devices } } });
    const created = await api("POST", "/workflows", admin, { metadata: { name: prefix }, spec: { failFast: false, steps: { A: job([ok, stuck]), B: job([stuck]) } } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    // B's action cancelled by hand: its target Failed, the step Failed, the run still Running (A waits).
    const b = await api<TargetsRead>("GET", `/workflows/${prefix}/steps/B/targets`, admin);
    expect((await api("POST", `/actions/${b.body.items[0]!.actionId}/cancel`, admin, { reason: "by mistake" })).status).toBe(200);

    await signIn(page);
    await page.goto(`/workflows/${prefix}`);
    await expect(page.getByTestId("step-node-B")).toHaveAttribute("data-phase", "Failed", { timeout: 30_000 });

    // Retry B's failed target: the step runs again.
    await page.getByTestId("step-node-B").click();
    const bTarget = page.getByTestId("step-targets").locator(`[data-target="${stuck}"]`);
    await expect(bTarget.getByTestId("step-target-phase")).toHaveText("Failed");
    await page.getByTestId(`target-retry-${stuck}`).click();
    await expect(page.getByTestId("confirm-target-move")).toBeDisabled();
    await page.getByTestId("target-move-reason").fill("cancelled by mistake");
    await page.getByTestId("confirm-target-move").click();
    await expect(page.getByTestId("target-move-dialog")).toBeHidden();
    await expect(page.getByTestId("step-node-B")).toHaveAttribute("data-phase", "Running");
    await expect(bTarget.getByTestId("step-target-phase")).toHaveText("Waiting");
    await expect(page.getByTestId(`target-retry-${stuck}`)).toHaveCount(0);

    // A: the healthy device is done (no buttons); the stuck one is skipped.
    await page.getByTestId("step-node-A").click();
    await expect(page.getByTestId("step-details")).toHaveAttribute("data-step", "A");
    const aOk = page.getByTestId("step-targets").locator(`[data-target="${ok}"]`);
    await expect(aOk.getByTestId("step-target-phase")).toHaveText("Done", { timeout: 30_000 });
    await expect(aOk.getByRole("button")).toHaveCount(0);
    await page.getByTestId(`target-skip-${stuck}`).click();
    await page.getByTestId("target-move-reason").fill("disk replaced next week");
    await page.getByTestId("confirm-target-move").click();
    await expect(page.getByTestId("step-node-A")).toHaveAttribute("data-phase", "Succeeded");
    await expect(page.getByTestId("step-targets").locator(`[data-target="${stuck}"]`)).toContainText("skipped by user:admin: disk replaced next week");

    // B's retried target skipped too: the run Succeeds, and the events name the operator's moves.
    await page.getByTestId("step-node-B").click();
    await page.getByTestId(`target-skip-${stuck}`).click();
    await page.getByTestId("target-move-reason").fill("not needed after all");
    await page.getByTestId("confirm-target-move").click();
    await expect(page.getByTestId("workflow-phase")).toHaveText("Succeeded");
    await expect(page.getByTestId("events-table")).toContainText("disk replaced next week");
  } finally {
    await Promise.all([healthy.stop(), broken.stop()]);
  }
});
