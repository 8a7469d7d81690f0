import { test, expect } from "@playwright/test";
import { E2E_ADMIN_PASSWORD } from "../playwright.config";
import { api, approveByApi, deviceName, signIn, simulate, tokenFor, uniquePrefix } from "./support";

/** A drover/v1 plan: one k0s update of the controller (static), then the workers (by label, two at once). */
function planYaml(prefix: string, controller: string, versionKey = "version"): string {
  return `apiVersion: drover/v1
kind: Plan
metadata:
  name: ${prefix}
spec:
  id: ${prefix}-k0s
  commands:
    - k0supdate:
        ${versionKey}: v1.31.2+k0s.0
        platforms:
          linux-amd64:
            url: https://github.com/k0sproject/k0s/releases/download/v1.31.2+k0s.0/k0s-v1.31.2+k0s.0-amd64
        targets:
          controllers:
            discovery:
              static:
                nodes: [${controller}]
          workers:
            discovery:
              selector:
                labels: e2e=${prefix}-w
            limits:
              concurrent: 2
`;
}

test("a plan imported in the console waits for approval, then every node completes live, controllers first", async ({ page }) => {
  test.setTimeout(120_000);
  const prefix = uniquePrefix("plan");
  const controller = deviceName(`${prefix}-c`, 1);
  const workers = [1, 2, 3].map((i) => deviceName(`${prefix}-w`, i));
  const admin = await tokenFor("admin", E2E_ADMIN_PASSWORD);
  // Each virtual k0s update takes 2 s, so the page has each node's move to follow.
  const controllers = simulate(`${prefix}-c`, 1, ["--role", "controller", "--plan-apply-seconds", "2"]);
  const workerSim = simulate(`${prefix}-w`, 3, ["--role", "worker", "--plan-apply-seconds", "2"]);
  try {
    await approveByApi(admin, [controller, ...workers]);
    await signIn(page);
    await page.goto("/plans");
    await page.getByTestId("import-plan").click();
    const dialog = page.getByTestId("import-plan-dialog");
    await expect(dialog).toBeVisible();

    // A misspelt field is shown at its own line, and nothing can be created.
    const yaml = page.getByTestId("plan-yaml");
    await yaml.fill(planYaml(prefix, controller, "versoin"));
    const problems = page.getByTestId("plan-problems");
    await expect(problems.locator('li[data-line="9"]')).toHaveText('line 9: spec.commands.0.k0supdate: Unrecognized key: "versoin"');
    await expect(problems).toContainText("spec.commands.0.k0supdate.version");
    await expect(page.getByTestId("create-plan")).toBeDisabled();

    await yaml.fill(planYaml(prefix, controller));
    await expect(page.getByTestId("plan-valid")).toBeVisible();
    await expect(page.getByTestId("plan-require-approval")).toBeChecked();
    await page.getByTestId("create-plan").click();

    // The plan's page: discovered, waiting for the approval nobody has given yet.
    await expect(page).toHaveURL(/\/plans\/plan-[0-9a-f]+$/);
    const id = decodeURIComponent(new URL(page.url()).pathname.split("/").at(-1)!);
    await expect(page.getByTestId("plan-title")).toHaveText(prefix);
    // In words, not SchedulableWait (which it also is once approved and running).
    await expect(page.getByTestId("plan-state")).toHaveText("Waiting for approval");
    await expect(page.getByTestId("plan-approval")).toContainText("required, not given yet");
    for (const n of [controller, ...workers]) await expect(page.getByTestId(`node-state-0-${n}`)).toHaveText("SignalPending");
    await expect(page.getByTestId("command-progress-0")).toHaveAttribute("data-total", "4");

    // From here on the page is never reloaded: a marker on the window would not survive one.
    await page.evaluate(() => ((window as unknown as { __planMarker: string }).__planMarker = "same page"));
    // One approval dialog (issue 21): what will run, on how many devices, and a reason it will not go without.
    await page.getByTestId("plan-approve").click();
    const approveDialog = page.getByTestId("approve-plan-dialog");
    await expect(approveDialog.getByTestId("approval-kind")).toHaveText("plan");
    await expect(approveDialog.getByTestId("approval-work")).toHaveText(/^k0supdate /);
    await expect(approveDialog.getByTestId("approval-devices")).toHaveText("4");
    await expect(page.getByTestId("confirm-approve-plan")).toBeDisabled();
    await page.getByTestId("approve-plan-reason").fill("CHG-7: lab upgrade");
    await page.getByTestId("confirm-approve-plan").click();
    await expect(approveDialog).toBeHidden();
    await expect(page.getByTestId("plan-state")).not.toHaveText("Waiting for approval");
    await expect(page.getByTestId("plan-approval")).toContainText("approved by");
    await expect(page.getByTestId("plan-approval-reason")).toHaveText("“CHG-7: lab upgrade”");

    // The controller is signalled alone first: while it updates, no worker is signalled.
    await expect(page.getByTestId(`node-state-0-${controller}`)).toHaveText("SignalSent", { timeout: 15_000 });
    await expect(page.getByTestId("plan-state")).toHaveText("Running on 1 node");
    for (const n of workers) await expect(page.getByTestId(`node-state-0-${n}`)).toHaveText("SignalPending");
    await expect(page.getByTestId(`node-action-0-${controller}`)).toHaveText(/NEW|RUNNING|PENDING_SCHEDULE/);

    // Every node turns SignalCompleted and the plan reaches Completed, live.
    for (const n of [controller, ...workers]) await expect(page.getByTestId(`node-state-0-${n}`)).toHaveText("SignalCompleted", { timeout: 30_000 });
    await expect(page.getByTestId("plan-state")).toHaveText("Completed", { timeout: 15_000 });
    await expect(page.getByTestId("command-state-0")).toHaveText("Completed");
    // The state tables are a click away, each lit at its state.
    for (const [diagram, state] of [["state-diagram-plan", "Completed"], ["state-diagram-command-0", "Completed"], ["state-diagram-node-0", "SignalCompleted"]] as const) {
      await page.getByTestId(`${diagram}-open`).click();
      await expect(page.getByTestId(diagram)).toHaveAttribute("data-current", state);
      await expect(page.getByTestId(diagram).locator('[data-current="true"]')).toBeVisible();
      await page.keyboard.press("Escape");
      await expect(page.getByTestId(diagram)).toHaveCount(0);
    }
    await expect(page.getByTestId("command-progress-0")).toHaveAttribute("data-completed", "4");
    await expect(page.getByTestId(`node-action-0-${workers[0]}`)).toHaveText("DONE");
    // Nothing left to approve, cancel or retry.
    await expect(page.getByTestId("plan-controls")).toHaveCount(0);
    expect(await page.evaluate(() => (window as unknown as { __planMarker?: string }).__planMarker)).toBe("same page");

    // The list says the same.
    await page.goto("/plans");
    await expect(page.getByTestId(`plan-row-state-${id}`)).toHaveText("Completed");
    await expect(page.getByTestId(`plan-row-progress-${id}`)).toHaveText("4/4 completed");
  } finally {
    await Promise.all([controllers.stop(), workerSim.stop()]);
  }
});

test("a plan cancelled from its page with a reason is retried as a new plan that links back", async ({ page }) => {
  const prefix = uniquePrefix("plancancel");
  const admin = await tokenFor("admin", E2E_ADMIN_PASSWORD);
  const sim = simulate(prefix, 1);
  try {
    await approveByApi(admin, [deviceName(prefix, 1)]);
    const created = await api<{ metadata: { id: string } }>("POST", "/plans?requireApproval=true", admin, {
      apiVersion: "drover/v1",
      kind: "Plan",
      metadata: { name: prefix },
      spec: { commands: [{ action: { kind: "noop", targets: { workers: { discovery: { selector: { labels: `e2e=${prefix}` } } } } } }] },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const id = created.body.metadata.id;

    await signIn(page);
    await page.goto("/plans");
    await expect(page.getByTestId(`plan-row-approval-${id}`)).toHaveText("Needed");
    await page.getByTestId(`plan-row-${id}`).getByRole("link").click();
    await expect(page).toHaveURL(new RegExp(`/plans/${id}$`));
    await expect(page.getByTestId("plan-retry")).toHaveCount(0);

    await page.getByTestId("plan-cancel").click();
    await page.getByTestId("cancel-plan-reason").fill("wrong maintenance window");
    await page.getByTestId("confirm-cancel-plan").click();
    await expect(page.getByTestId("cancel-plan-dialog")).toBeHidden();
    await expect(page.getByTestId("plan-state")).toHaveText("Cancelled");
    await expect(page.getByTestId("plan-cancel")).toHaveCount(0);
    await expect(page.getByTestId("plan-approve")).toHaveCount(0);
    await expect(page.getByTestId("events-table")).toContainText("wrong maintenance window");

    // Retry opens the new plan, which says whose retry it is; the old one lists it.
    await page.getByTestId("plan-retry").click();
    await expect(page).not.toHaveURL(new RegExp(`/plans/${id}$`));
    await expect(page.getByTestId("plan-retry-of")).toHaveText(id);
    const retryId = decodeURIComponent(new URL(page.url()).pathname.split("/").at(-1)!);
    await expect(page.getByTestId("plan-state")).toHaveText("Waiting for approval");
    await page.getByTestId("plan-retry-of").click();
    await expect(page.getByTestId(`plan-retried-by-${retryId}`)).toBeVisible();
  } finally {
    await sim.stop();
  }
});

test("a node stuck on a device in Error is skipped from the plan's page with a reason, and the plan completes without it", async ({ page }) => {
  const prefix = uniquePrefix("planskip");
  const admin = await tokenFor("admin", E2E_ADMIN_PASSWORD);
  // Two devices: one healthy, one whose disk is in Error (it gets no work by default, issue 21).
  const healthy = simulate(prefix, 1);
  const broken = simulate(`${prefix}-x`, 1, ["--error", "1"]);
  try {
    const [ok, stuck] = [deviceName(prefix, 1), deviceName(`${prefix}-x`, 1)];
    await approveByApi(admin, [ok, stuck]);
    const created = await api<{ metadata: { id: string } }>("POST", "/plans", admin, {
      apiVersion: "drover/v1",
      kind: "Plan",
      metadata: { name: prefix },
      spec: { commands: [{ action: { kind: "noop", targets: { workers: { discovery: { static: { nodes: [ok, stuck] } }, limits: { concurrent: 2 } } } } }] },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const id = created.body.metadata.id;

    await signIn(page);
    await page.goto(`/plans/${id}`);
    await expect(page.getByTestId(`node-state-0-${ok}`)).toHaveText("SignalCompleted", { timeout: 30_000 });
    await expect(page.getByTestId(`node-message-0-${stuck}`)).toContainText("it is offered when the device is Online or Degraded", { timeout: 30_000 });
    await expect(page.getByTestId(`node-skip-0-${ok}`)).toHaveCount(0);

    await page.getByTestId(`node-skip-0-${stuck}`).click();
    await expect(page.getByTestId("confirm-skip-node")).toBeDisabled();
    await page.getByTestId("skip-node-reason").fill("disk replaced next week");
    await page.getByTestId("confirm-skip-node").click();
    await expect(page.getByTestId("skip-node-dialog")).toBeHidden();
    await expect(page.getByTestId(`node-state-0-${stuck}`)).toHaveText("SignalSkipped");
    await expect(page.getByTestId(`node-message-0-${stuck}`)).toHaveText("skipped by user:admin: disk replaced next week");
    await expect(page.getByTestId("plan-state")).toHaveText("Completed");
    await expect(page.getByTestId(`node-skip-0-${stuck}`)).toHaveCount(0);
    await expect(page.getByTestId("events-table")).toContainText("disk replaced next week");
  } finally {
    await Promise.all([healthy.stop(), broken.stop()]);
  }
});
