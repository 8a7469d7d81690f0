import { test, expect, type Page } from "@playwright/test";
import { E2E_ADMIN_PASSWORD } from "../playwright.config";
import { api, approveByApi, axeViolations, deviceName, signIn, simulate, tokenFor, uniquePrefix } from "./support";

/** axe's WCAG 2.1 A/AA findings inside `selector`, one line each. */
async function axe(page: Page, selector: string): Promise<string[]> {
  return (await axeViolations(page, selector)).flatMap((v) => v.nodes.map((n) => `${v.id}: ${n.html.slice(0, 120)}`));
}

test("an exec over a selector is one request in Approvals, approved all at once, and its progress reaches done live", async ({ page }) => {
  const prefix = uniquePrefix("req");
  const names = [1, 2, 3, 4].map((i) => deviceName(prefix, i));
  const admin = await tokenFor("admin", E2E_ADMIN_PASSWORD);
  // Simulated agents; each exec takes a few seconds, so the request page sees it move.
  const sim = simulate(prefix, 4, ["--action-seconds", "3-4"]);
  try {
    await approveByApi(admin, names);
    await expect
      .poll(async () => (await api<{ items: { summary: string }[] }>("GET", `/devices?labelSelector=${encodeURIComponent(`e2e=${prefix}`)}`, admin)).body.items.filter((d) => d.summary === "Online").length, {
        timeout: 20_000,
      })
      .toBe(4);
    await signIn(page);

    // Create in the browser over a selector: exec needs approval; the dialog opens the request.
    await page.goto("/actions");
    await page.getByTestId("new-action").click();
    await page.getByTestId("target-mode-selector").click();
    await page.getByTestId("action-selector").fill(`e2e=${prefix}`);
    await page.getByTestId("action-kind").selectOption("exec");
    await page.getByTestId("action-args").fill(JSON.stringify({ command: "uptime" }));
    await expect(page.getByTestId("preview-count")).toHaveAttribute("data-count", "4");
    await page.getByTestId("create-action-submit").click();
    await expect(page).toHaveURL(/\/requests\/[0-9a-f-]{36}$/);
    const id = page.url().split("/").pop()!;
    await expect(page.getByTestId("request-title")).toHaveText(`exec on 4 devices matching e2e=${prefix}`);
    await expect(page.getByTestId("request-decision")).toHaveText("Pending");
    await expect(page.getByTestId("request-progress-reasons").locator('[data-reason="Approval"]')).toHaveAttribute("data-count", "4");

    // The inbox shows it as one row, with its four actions underneath on expand.
    await page.goto("/approvals");
    const row = page.getByTestId(`request-row-${id}`);
    await expect(row.getByTestId("request-summary")).toHaveText(`exec on 4 devices matching e2e=${prefix}`);
    await expect(row).toContainText("by admin");
    await expect(page.getByTestId(`approve-request-${id}`)).toHaveText("Approve all 4");
    await page.getByTestId(`expand-request-${id}`).click();
    await expect(page.getByTestId(`request-actions-${id}`).locator("li")).toHaveCount(4);
    for (const name of names) await expect(page.getByTestId(`request-actions-${id}`)).toContainText(name);
    expect(await axe(page, '[data-testid="pending-requests"]')).toEqual([]);
    // The per-action rows are still there for deciding one by one.
    await expect(page.getByTestId("approvals-table").locator('[data-testid^="approval-row-"]')).not.toHaveCount(0);

    // Approve all four at once.
    await page.getByTestId(`approve-request-${id}`).click();
    await page.getByTestId("request-decision-reason").fill("change 9: lab check");
    await page.getByTestId("confirm-request-decision").click();
    await expect(page.getByTestId("decision-notice")).toContainText(`Approved 4 actions of “exec on 4 devices matching e2e=${prefix}”`);
    await expect(row).toBeHidden();
    const left = await api<{ items: { id: string; state: string }[] }>("GET", `/actions?request=${id}`, admin);
    expect(left.body.items.filter((a) => a.state === "PENDING_APPROVE")).toEqual([]);

    // The request page follows its actions without a reload until all four are done.
    await page.goto(`/requests/${id}`);
    await expect(page.getByTestId("request-decision")).toHaveText("Approved");
    await expect(page.getByTestId("request-decided")).toContainText("change 9: lab check");
    const progress = page.getByTestId("request-progress");
    const doneAtFirst = Number(await progress.getAttribute("data-done"));
    expect(doneAtFirst).toBeLessThan(4);
    await expect(progress).toHaveAttribute("data-done", "4", { timeout: 30_000 });
    await expect(page.getByTestId("request-progress-line")).toHaveText("4/4 done, 0 waiting, 0 failed");
    await expect(page.getByTestId("request-ended")).toBeVisible();
    expect(await axe(page, "main")).toEqual([]);
    await expect(page.getByTestId("actions-table").getByText("DONE")).toHaveCount(4);

    // The actions list filters by the request.
    await page.goto(`/actions?request=${id}`);
    await expect(page.getByTestId("request-filter")).toContainText(`exec on 4 devices matching e2e=${prefix}`);
    await expect(page.getByTestId("actions-table").locator("tbody tr")).toHaveCount(4);
  } finally {
    await sim.stop();
  }
});
