import { test, expect } from "@playwright/test";
import { E2E_ADMIN_PASSWORD } from "../playwright.config";
import { api, signIn, tokenFor, uniquePrefix } from "./support";

interface WorkflowRead {
  status: { phase: string; run: number; schedule: { nextRunTime: string | null } | null };
}

test("a workflow page shows its schedule and the runs the schedule started; a draft shows it has not run", async ({ page }) => {
  test.setTimeout(60_000);
  const admin = await tokenFor("admin", E2E_ADMIN_PASSWORD);
  const prefix = uniquePrefix("wfsched");
  // Its one job targets a device that does not exist: each run fails at once, so ticks start runs, not skips.
  const spec = (suspend: boolean) => ({ schedule: { cron: "* * * * * *", suspend }, steps: { A: { jobTemplate: { kind: "noop", targets: { devices: [`${prefix}-nowhere`] } } } } });
  const created = await api<WorkflowRead>("POST", "/workflows", admin, { metadata: { name: prefix }, spec: spec(false) });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  expect(created.body.status.phase).toBe("Pending");
  try {
    await expect.poll(async () => (await api<WorkflowRead>("GET", `/workflows/${prefix}`, admin)).body.status.run, { timeout: 15_000 }).toBeGreaterThanOrEqual(2);
    // Suspended: the history stops growing while the page is checked.
    expect((await api("PUT", `/workflows/${prefix}`, admin, { metadata: { name: prefix }, spec: spec(true) })).status).toBe(200);

    await signIn(page);
    await page.goto(`/workflows/${prefix}`);
    await expect(page.getByTestId("workflow-schedule")).toContainText("* * * * * *");
    await expect(page.getByTestId("workflow-schedule")).toContainText("(UTC)");
    await expect(page.getByTestId("workflow-schedule")).toContainText("suspended");
    await expect(page.getByTestId("workflow-schedule")).toContainText("last tick");
    await expect(page.getByTestId("run-history")).toBeVisible();
    await expect(page.getByTestId("run-row-1")).toBeVisible();
    await expect(page.getByTestId("run-row-by-1")).toHaveText("schedule");
    await expect(page.getByTestId("run-row-phase-1")).toHaveText("Failed");
    await expect(page.getByTestId("run-row-1")).toContainText("StepFailed");
    // Newest first.
    const first = await page.getByTestId("run-history").locator("tbody tr").first().getAttribute("data-testid");
    const { body } = await api<WorkflowRead>("GET", `/workflows/${prefix}`, admin);
    expect(first).toBe(`run-row-${body.status.run}`);

    // A draft: no schedule line, no runs yet.
    const draft = `${prefix}-draft`;
    const saved = await api<WorkflowRead>("POST", "/workflows?start=false", admin, { metadata: { name: draft }, spec: { steps: spec(false).steps } });
    expect(saved.status, JSON.stringify(saved.body)).toBe(201);
    await page.goto(`/workflows/${draft}`);
    await expect(page.getByTestId("workflow-phase")).toHaveText("Pending");
    await expect(page.getByTestId("workflow-message")).toContainText("draft: not started");
    await expect(page.getByTestId("run-history-empty")).toHaveText("Not run yet.");
    await expect(page.getByTestId("workflow-schedule")).toHaveCount(0);
    // Start it from its page: its first run, by the operator.
    await page.getByTestId("workflow-start").click();
    await expect(page.getByTestId("run-row-by-1")).toHaveText("user:admin", { timeout: 10_000 });
    await expect(page.getByTestId("workflow-start")).toHaveCount(0);
    await api("DELETE", `/workflows/${draft}`, admin);
  } finally {
    await api("DELETE", `/workflows/${prefix}`, admin);
  }
});
