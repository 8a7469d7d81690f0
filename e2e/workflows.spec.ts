import { test, expect } from "@playwright/test";
import { E2E_ADMIN_PASSWORD } from "../playwright.config";
import { api, approveByApi, deviceName, signIn, simulate, tokenFor, uniquePrefix } from "./support";

interface WorkflowRead {
  status: { phase: string; statuses: Record<string, { phase: string; actions: string[] }> };
}

test("a diamond workflow's run view turns every step Succeeded live, in dependency order", async ({ page }) => {
  test.setTimeout(120_000);
  const prefix = uniquePrefix("wf");
  const names = [1, 2, 3, 4].map((i) => deviceName(prefix, i));
  const admin = await tokenFor("admin", E2E_ADMIN_PASSWORD);
  const sim = simulate(prefix, 4);
  try {
    await approveByApi(admin, names);
    await expect
      .poll(async () => (await api<{ items: unknown[] }>("GET", `/devices?labelSelector=${encodeURIComponent(`e2e=${prefix}`)}&summary=Online&lifecycle=Enrolled&limit=10`, admin)).body.items.length, { timeout: 30_000 })
      .toBe(4);
    // A waits for an operator's approval, so the page sees the run before anything ends.
    const job = (device: string, dependencies?: string[], requireApproval = false) => ({
      ...(dependencies ? { dependencies } : {}),
      jobTemplate: { kind: "noop", targets: { devices: [device] }, ...(requireApproval ? { requireApproval } : {}) },
    });
    const created = await api<WorkflowRead>("POST", "/workflows", admin, {
      metadata: { name: prefix },
      spec: { steps: { A: job(names[0]!, undefined, true), B: job(names[1]!, ["A"]), C: job(names[2]!, ["A"]), D: job(names[3]!, ["B", "C"]) } },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const actionA = created.body.status.statuses.A!.actions[0]!;

    await signIn(page);
    await page.goto("/");
    await page.getByRole("link", { name: "Workflows" }).click();
    await expect(page.getByTestId(`workflow-row-phase-${prefix}`)).toHaveText("Running");
    await expect(page.getByTestId(`workflow-row-steps-${prefix}`)).toHaveText("0/4 done");
    // What it waits for, in its row.
    await expect(page.getByTestId(`workflow-row-waiting-${prefix}`)).toHaveText("1 action waiting for approval");
    await page.getByTestId(`workflow-row-${prefix}`).getByRole("link").click();
    await expect(page).toHaveURL(new RegExp(`/workflows/${prefix}$`));

    // The four steps on the canvas: A runs (its action waits for approval), the others wait.
    await expect(page.getByTestId("workflow-phase")).toHaveText("Running");
    for (const s of ["A", "B", "C", "D"]) await expect(page.getByTestId(`step-node-${s}`)).toBeVisible();
    await expect(page.getByTestId("step-node-A")).toHaveAttribute("data-phase", "Running");
    // Says why it waits (it read "0/1 targets" like any running step).
    await expect(page.getByTestId("step-node-progress-A")).toHaveText("0/1 targets, 1 waiting for approval");
    for (const s of ["B", "C", "D"]) await expect(page.getByTestId(`step-node-${s}`)).toHaveAttribute("data-phase", "Pending");
    await expect(page.getByTestId("step-node-progress-D")).toHaveText("waits for B, C");
    await expect(page.getByTestId("step-table").locator("tbody tr")).toHaveCount(4);
    await expect(page.getByTestId("step-table").locator("tbody tr").first()).toHaveAttribute("data-testid", "step-row-A");

    // A step's details: its action links to the action's page.
    await page.getByTestId("step-node-A").click();
    await expect(page.getByTestId("step-details")).toHaveAttribute("data-step", "A");
    await expect(page.getByTestId("step-details-actions").getByRole("link")).toHaveAttribute("href", `/actions/${actionA}`);
    await expect(page.getByTestId("workflow-cancel")).toBeVisible();
    await expect(page.getByTestId("workflow-rerun")).toHaveCount(0);

    // From here on the page is never reloaded: a marker on the window would not survive one.
    await page.evaluate(() => ((window as unknown as { __wfMarker: string }).__wfMarker = "same page"));
    const approved = await api("POST", `/actions/${actionA}/approve`, admin);
    expect(approved.status, JSON.stringify(approved.body)).toBe(200);

    for (const s of ["A", "B", "C", "D"]) await expect(page.getByTestId(`step-node-${s}`)).toHaveAttribute("data-phase", "Succeeded", { timeout: 30_000 });
    await expect(page.getByTestId("workflow-phase")).toHaveText("Succeeded", { timeout: 15_000 });
    await expect(page.getByTestId("step-node-progress-D")).toHaveText("1/1 targets");
    await expect(page.getByTestId("step-row-phase-D")).toHaveText("Succeeded");
    await expect(page.getByTestId("workflow-cancel")).toHaveCount(0);
    await expect(page.getByTestId("workflow-rerun")).toBeVisible();
    await expect(page.getByTestId("events-table")).toContainText("WorkflowEnded");
    expect(await page.evaluate(() => (window as unknown as { __wfMarker?: string }).__wfMarker)).toBe("same page");

    // Delete, confirmed, goes back to the list, where it is gone.
    await page.getByTestId("workflow-delete").click();
    await page.getByTestId("confirm-delete-workflow").click();
    await expect(page).toHaveURL(/\/workflows$/);
    await expect(page.getByTestId(`workflow-row-${prefix}`)).toHaveCount(0);
    expect((await api("GET", `/workflows/${prefix}`, admin)).status).toBe(404);
  } finally {
    await sim.stop();
  }
});
