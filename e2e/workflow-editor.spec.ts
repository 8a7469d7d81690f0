import { test, expect, type Page } from "@playwright/test";
import { E2E_ADMIN_PASSWORD } from "../playwright.config";
import { api, approveByApi, deviceName, signIn, simulate, tokenFor, uniquePrefix } from "./support";

interface WorkflowRead {
  spec: { steps: Record<string, { dependencies?: string[] }> };
  status: { phase: string; statuses: Record<string, { phase: string; actions: string[] }> };
}

/** Drags from one step's source handle (right) to another's target handle (left), as an operator does with the mouse. */
async function connect(page: Page, from: string, to: string) {
  const s = await page.getByTestId(`handle-source-${from}`).boundingBox();
  const t = await page.getByTestId(`handle-target-${to}`).boundingBox();
  if (!s || !t) throw new Error(`handles of ${from} or ${to} not on screen`);
  const start = { x: s.x + s.width / 2, y: s.y + s.height / 2 };
  // Nothing (a panel, the minimap) may cover the handle where the drag starts.
  const covered = await page.evaluate(([x, y, id]) => !document.elementFromPoint(x, y)?.closest(`[data-testid="${id}"]`), [start.x, start.y, `handle-source-${from}`] as const);
  if (covered) throw new Error(`the source handle of ${from} is covered at ${start.x},${start.y}`);
  await page.mouse.move(start.x, start.y);
  await page.mouse.down();
  // First a little way towards the target: a handle near the canvas's edge starts React Flow's
  // auto-pan, which stops once the pointer leaves the edge; then the target, where it is now.
  const dx = t.x - s.x;
  const dy = t.y - s.y;
  const len = Math.max(1, Math.hypot(dx, dy));
  await page.mouse.move(start.x + (dx / len) * 50, start.y + (dy / len) * 50, { steps: 5 });
  await page.waitForTimeout(100);
  const t2 = (await page.getByTestId(`handle-target-${to}`).boundingBox()) ?? t;
  await page.mouse.move(t2.x + t2.width / 2, t2.y + t2.height / 2, { steps: 12 });
  await page.mouse.up();
}

const edge = (page: Page, source: string, target: string) => page.locator(`[data-testid="rf__edge-${source}->${target}"]`);

/** Selects a step on the canvas and gives it a name and targets in the side panel. */
async function configure(page: Page, current: string, name: string, selector: string, expectCount: number) {
  await page.getByTestId(`editor-node-${current}`).click();
  await expect(page.getByTestId("step-panel")).toHaveAttribute("data-step", current);
  await page.getByTestId("step-name").fill(name);
  await page.getByTestId("step-name").press("Enter");
  await expect(page.getByTestId("step-panel")).toHaveAttribute("data-step", name);
  await page.getByTestId("targets-mode-selector").click();
  await page.getByTestId("step-targets").fill(selector);
  // The live preview: the devices this selector matches now.
  await expect(page.getByTestId("targets-preview")).toHaveAttribute("data-count", String(expectCount), { timeout: 10_000 });
}

test("draw a diamond by dragging, a cycle is refused with its reason, save the draft, run it and watch it turn green", async ({ page }) => {
  test.setTimeout(150_000);
  const prefix = uniquePrefix("wfed");
  const names = [1, 2].map((i) => deviceName(prefix, i));
  const admin = await tokenFor("admin", E2E_ADMIN_PASSWORD);
  const sim = simulate(prefix, 2);
  try {
    await approveByApi(admin, names);
    await expect
      .poll(async () => (await api<{ items: unknown[] }>("GET", `/devices?labelSelector=${encodeURIComponent(`e2e=${prefix}`)}&summary=Online&lifecycle=Enrolled&limit=10`, admin)).body.items.length, { timeout: 30_000 })
      .toBe(2);

    await signIn(page);
    await page.goto("/");
    await page.getByRole("link", { name: "Workflows" }).click();
    await page.getByTestId("new-workflow").click();
    await expect(page).toHaveURL(/\/workflows\/new$/);
    await page.getByTestId("workflow-name").fill(prefix);

    // Three steps by click, the fourth dragged from the palette onto the canvas.
    for (let i = 0; i < 3; i++) await page.getByTestId("palette-job-noop").click();
    await page.getByTestId("palette-job-noop").dragTo(page.getByTestId("editor-canvas"), { targetPosition: { x: 110, y: 60 } });
    for (const n of ["noop", "noop-2", "noop-3", "noop-4"]) await expect(page.getByTestId(`editor-node-${n}`)).toBeVisible();
    // A new job has no targets yet: its node carries the problem, and Save waits.
    await expect(page.getByTestId("editor-node-problem-noop")).toBeVisible();
    await expect(page.getByTestId("editor-node-message-noop")).toHaveText("jobTemplate.targets: give exactly one of devices or selector");
    await expect(page.getByTestId("editor-save")).toBeDisabled();

    const selector = `e2e=${prefix}`;
    await configure(page, "noop", "a", selector, 2);
    // a waits for an operator's approval, so the run view shows the run before anything ends.
    await page.getByTestId("step-approval").check();
    await configure(page, "noop-2", "b", selector, 2);
    await configure(page, "noop-3", "c", selector, 2);
    await configure(page, "noop-4", "d", selector, 2);
    await expect(page.getByTestId("editor-valid")).toBeVisible();

    // Lay them out and draw the diamond, handle to handle.
    await page.getByTestId("editor-layout").click();
    await page.waitForTimeout(400);
    await connect(page, "a", "b");
    await expect(edge(page, "a", "b")).toHaveCount(1);
    await connect(page, "a", "c");
    await connect(page, "b", "d");
    await connect(page, "c", "d");
    for (const [s, t] of [["a", "b"], ["a", "c"], ["b", "d"], ["c", "d"]] as const) await expect(edge(page, s, t)).toHaveCount(1);

    // d → a would close a cycle: refused, with the path; no edge drawn.
    await connect(page, "d", "a");
    await expect(page.getByTestId("editor-refusal")).toHaveText(/refused: dependency cycle a->d->b->a/);
    await expect(edge(page, "d", "a")).toHaveCount(0);
    // So is a step depending on itself, and the same dependency twice.
    await connect(page, "b", "b");
    await expect(page.getByTestId("editor-refusal")).toHaveText(/refused: dependency cycle b->b/);
    await connect(page, "a", "b");
    await expect(page.getByTestId("editor-refusal")).toHaveText(/refused: b already depends on a/);

    // The YAML view says the same graph.
    await page.getByTestId("editor-tab-yaml").click();
    const yaml = await page.getByTestId("editor-yaml").inputValue();
    expect(yaml).toContain(`name: ${prefix}`);
    expect(yaml).toMatch(/d:\n\s+dependencies:\n\s+- b\n\s+- c/);
    await page.getByTestId("editor-tab-canvas").click();
    await page.getByTestId("editor-layout").click();
    // The minimap shows from 9 steps, or on demand.
    await expect(page.locator(".react-flow__minimap")).toHaveCount(0);
    await page.getByTestId("editor-minimap").click();
    await expect(page.locator(".react-flow__minimap")).toBeVisible();

    // Save the draft: created, not started.
    await page.getByTestId("editor-save").click();
    await expect(page).toHaveURL(new RegExp(`/workflows/${prefix}/edit$`));
    const draft = await api<WorkflowRead>("GET", `/workflows/${prefix}`, admin);
    expect(draft.status).toBe(200);
    expect(draft.body.status.phase).toBe("Pending");
    expect(draft.body.spec.steps.d?.dependencies).toEqual(["b", "c"]);
    await expect(page.getByTestId("editor-node-d")).toBeVisible();

    // Run: the run view, live.
    await page.getByTestId("editor-run").click();
    await expect(page).toHaveURL(new RegExp(`/workflows/${prefix}$`));
    await expect(page.getByTestId("workflow-phase")).toHaveText("Running");
    await expect(page.getByTestId("step-node-a")).toHaveAttribute("data-phase", "Running");
    await expect(page.getByTestId("step-node-d")).toHaveAttribute("data-phase", "Pending");
    const running = await api<WorkflowRead>("GET", `/workflows/${prefix}`, admin);
    for (const id of running.body.status.statuses.a!.actions) expect((await api("POST", `/actions/${id}/approve`, admin)).status).toBe(200);
    for (const s of ["a", "b", "c", "d"]) await expect(page.getByTestId(`step-node-${s}`)).toHaveAttribute("data-phase", "Succeeded", { timeout: 30_000 });
    await expect(page.getByTestId("workflow-phase")).toHaveText("Succeeded", { timeout: 15_000 });
  } finally {
    await api("DELETE", `/workflows/${prefix}`, admin);
    await sim.stop();
  }
});

test("editing a running workflow: a started step is locked, new steps can be added and saved; undo, redo, copy and paste", async ({ page }) => {
  test.setTimeout(120_000);
  const prefix = uniquePrefix("wfedr");
  const device = deviceName(prefix, 1);
  const admin = await tokenFor("admin", E2E_ADMIN_PASSWORD);
  const sim = simulate(prefix, 1);
  try {
    await approveByApi(admin, [device]);
    const job = (dependencies?: string[], requireApproval = false) => ({
      ...(dependencies ? { dependencies } : {}),
      jobTemplate: { kind: "noop", targets: { devices: [device] }, ...(requireApproval ? { requireApproval } : {}) },
    });
    // A waits for approval: it stays Running (started) while B waits.
    const created = await api<WorkflowRead>("POST", "/workflows", admin, { metadata: { name: prefix }, spec: { steps: { A: job(undefined, true), B: job(["A"]) } } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);

    await signIn(page);
    await page.goto(`/workflows/${prefix}`);
    await page.getByTestId("workflow-edit").click();
    await expect(page).toHaveURL(new RegExp(`/workflows/${prefix}/edit$`));
    await expect(page.getByTestId("editor-workflow-phase")).toHaveText("Running");
    await expect(page.getByTestId("editor-node-A")).toHaveAttribute("data-locked", "true");
    await expect(page.getByTestId("editor-node-locked-A")).toContainText("Running");
    await expect(page.getByTestId("editor-node-B")).toHaveAttribute("data-locked", "false");

    // The locked step: shown, not editable, not deletable.
    await page.getByTestId("editor-node-A").click();
    await expect(page.getByTestId("step-locked")).toBeVisible();
    await expect(page.getByTestId("step-name")).toBeDisabled();
    await expect(page.getByTestId("step-delete")).toBeDisabled();
    await page.keyboard.press("Delete");
    await expect(page.getByTestId("editor-refusal")).toHaveText(/refused: step A has started, it cannot be deleted/);
    await expect(page.getByTestId("editor-node-A")).toBeVisible();

    // A new step after B, drawn by dragging.
    await page.getByTestId("editor-node-B").click();
    await page.getByTestId("palette-job-sleep").click();
    await expect(page.getByTestId("editor-node-sleep")).toBeVisible();
    await page.getByTestId("step-targets").fill(device);
    await expect(page.getByTestId("targets-preview")).toHaveAttribute("data-count", "1");
    await page.getByTestId("step-args").fill('{"seconds": 1}');
    await page.getByTestId("editor-fit").click();
    await page.waitForTimeout(400);
    await connect(page, "B", "sleep");
    await expect(edge(page, "B", "sleep")).toHaveCount(1);
    // Nothing can be added to the locked step's dependencies.
    await connect(page, "sleep", "A");
    await expect(page.getByTestId("editor-refusal")).toContainText("refused:");
    await expect(edge(page, "sleep", "A")).toHaveCount(0);

    // Copy and paste (fresh name), undo, redo, delete: from the keyboard.
    await page.getByTestId("editor-node-sleep").click();
    await page.keyboard.press("Control+c");
    await page.keyboard.press("Control+v");
    await expect(page.getByTestId("editor-node-sleep-2")).toBeVisible();
    await page.keyboard.press("Control+z");
    await expect(page.getByTestId("editor-node-sleep-2")).toHaveCount(0);
    await page.keyboard.press("Control+Shift+z");
    await expect(page.getByTestId("editor-node-sleep-2")).toBeVisible();
    await page.keyboard.press("Delete");
    await expect(page.getByTestId("editor-node-sleep-2")).toHaveCount(0);

    // The YAML tab: a valid edit redraws the canvas; an invalid one shows its problem at its
    // line and leaves the canvas as it was; undo goes back and the YAML follows the canvas again.
    await page.getByTestId("editor-tab-yaml").click();
    const text = await page.getByTestId("editor-yaml").inputValue();
    const withStep = text.replace("  steps:\n", `  steps:\n    from-yaml:\n      dependencies: [B]\n      jobTemplate: {kind: noop, targets: {devices: [${device}]}}\n`);
    expect(withStep).not.toBe(text);
    await page.getByTestId("editor-yaml").fill(withStep);
    await expect(page.getByTestId("editor-yaml-valid")).toBeVisible();
    await page.getByTestId("editor-yaml").fill(`${withStep}    broken: [\n`);
    await expect(page.getByTestId("editor-yaml-problems").locator("li").first()).toHaveAttribute("data-line", /^\d+$/);
    await page.getByTestId("editor-tab-canvas").click();
    await expect(page.getByTestId("editor-node-from-yaml")).toBeVisible();
    await expect(page.getByTestId("editor-node-sleep")).toBeVisible();
    await expect(page.getByTestId("editor-yaml-invalid")).toBeVisible();
    await expect(page.getByTestId("editor-save")).toBeDisabled();
    await page.getByTestId("editor-undo").click();
    await expect(page.getByTestId("editor-node-from-yaml")).toHaveCount(0);
    await expect(page.getByTestId("editor-yaml-invalid")).toHaveCount(0);
    await expect(page.getByTestId("editor-save")).toBeEnabled();

    // Save: the running run picks the new step up.
    await page.getByTestId("editor-save").click();
    await expect(page.getByTestId("editor-saved")).toContainText("Saved");
    const saved = await api<WorkflowRead>("GET", `/workflows/${prefix}`, admin);
    expect(saved.body.spec.steps.sleep?.dependencies).toEqual(["B"]);
    expect(saved.body.status.statuses.sleep?.phase).toBe("Pending");
    expect(saved.body.status.statuses.A?.phase).toBe("Running");
  } finally {
    await api("DELETE", `/workflows/${prefix}`, admin);
    await sim.stop();
  }
});

test("leaving the editor with unsaved steps asks first", async ({ page }) => {
  await signIn(page);
  await page.goto("/workflows/new");
  await page.getByTestId("palette-job-noop").click();
  const asked = page.waitForEvent("dialog");
  void page.close({ runBeforeUnload: true });
  const dialog = await asked;
  expect(dialog.type()).toBe("beforeunload");
  await dialog.dismiss();
});
