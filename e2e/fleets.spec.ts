import { test, expect, type Page } from "@playwright/test";
import { E2E_ADMIN_PASSWORD } from "../playwright.config";
import { api, approveByApi, createUser, deviceName, signIn, simulate, tokenFor, uniquePrefix } from "./support";

/** A fleet over the REST API: the simulated agents of `prefix` (label e2e=prefix). */
async function createFleet(token: string, prefix: string, template: Record<string, unknown>, rolloutPolicy?: Record<string, unknown>) {
  const r = await api<{ error?: { message: string } }>("POST", "/fleets", token, {
    apiVersion: "drover/v1",
    kind: "Fleet",
    metadata: { name: prefix },
    spec: { selector: { matchLabels: { e2e: prefix } }, template: { spec: template }, ...(rolloutPolicy ? { rolloutPolicy } : {}) },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
}

async function expectAllUpToDate(page: Page, names: string[], total: number) {
  for (const n of names) await expect(page.getByTestId(`member-updated-${n}`)).toHaveText("UpToDate", { timeout: 20_000 });
  await expect(page.getByTestId("fleet-counts")).toHaveAttribute("data-up-to-date", String(total));
}

test("a template changed in the form becomes a new version with its diff, and the members converge live", async ({ page, browser }) => {
  const prefix = uniquePrefix("fleet");
  const names = [1, 2, 3].map((i) => deviceName(prefix, i));
  const admin = await tokenFor("admin", E2E_ADMIN_PASSWORD);
  // 1.1.0 applies slowly (each update state takes a while), so the page has something to follow.
  const sim = simulate(prefix, 3, ["--slow-versions", "1.1.0", "--slow-apply-seconds", "1"]);
  try {
    await approveByApi(admin, names);
    await createFleet(admin, prefix, { version: "1.0.0" });
    await signIn(page);
    await page.goto(`/fleets/${prefix}`);
    await expect(page.getByTestId("fleet-template-version")).toHaveText("template v1");
    await expect(page.getByTestId("fleet-counts")).toHaveAttribute("data-up-to-date", "3", { timeout: 20_000 });

    // The form writes into the YAML; both are validated with the server's schema before sending.
    await page.getByTestId("fleet-form-artifact-sha256").fill("not-a-checksum");
    await expect(page.getByTestId("fleet-problems")).toContainText("spec.template.spec.artifact.url");
    await expect(page.getByTestId("fleet-save")).toBeDisabled();
    await page.getByTestId("fleet-form-artifact-sha256").fill("");
    await page.getByTestId("fleet-form-version").fill("1.1.0");
    await expect(page.getByTestId("fleet-yaml")).toHaveValue(/\n {6}version: 1\.1\.0\n/);
    await expect(page.getByTestId("fleet-yaml")).not.toHaveValue(/artifact/);
    // Save shows the change and the rollout it starts first (issue 21); Keep editing writes nothing.
    await page.getByTestId("fleet-save").click();
    const confirm = page.getByTestId("fleet-save-dialog");
    await expect(confirm.getByTestId("fleet-save-rollout")).toHaveText("All 3 members get version 2 at once: this fleet has no rollout policy.");
    await expect(confirm.getByTestId("fleet-save-diff").locator('[data-diff="del"]')).toHaveText(["-version: 1.0.0"]);
    await expect(confirm.getByTestId("fleet-save-diff").locator('[data-diff="add"]')).toHaveText(["+version: 1.1.0"]);
    await confirm.getByRole("button", { name: "Keep editing" }).click();
    await expect(confirm).toBeHidden();
    await expect(page.getByTestId("fleet-template-version")).toHaveText("template v1");
    await page.getByTestId("fleet-save").click();
    await page.getByTestId("fleet-save-confirm").click();
    await expect(page.getByTestId("fleet-save-result")).toHaveText(/template version 2/);
    await expect(page.getByTestId("fleet-template-version")).toHaveText("template v2");
    // The answer shows the members rendered the new version and not running it yet.
    await expect(page.getByTestId("fleet-counts")).toHaveAttribute("data-up-to-date", "0");

    // The history has the new version first, with its diff.
    const diff = page.getByTestId("version-diff-2");
    await expect(diff.locator('[data-diff="add"]')).toHaveText(["+version: 1.1.0"]);
    await expect(diff.locator('[data-diff="del"]')).toHaveText(["-version: 1.0.0"]);
    await expect(page.getByTestId("version-outcome-1")).toHaveText("Superseded");

    // They converge without a reload.
    await expectAllUpToDate(page, names, 3);
    await expect(page.getByTestId("fleet-up-to-date")).toHaveText("AllUpToDate");

    // The fleets list and the device list (fleet column, fleet filter) say the same.
    await page.goto("/fleets");
    await expect(page.getByTestId(`fleet-members-${prefix}`)).toHaveText("3");
    await expect(page.getByTestId(`fleet-version-${prefix}`)).toHaveText("v2");
    await page.goto(`/devices?fleet=${prefix}`);
    await expect(page.getByTestId("filter-fleet")).toHaveValue(prefix);
    await expect(page.getByTestId("pagination-summary")).toContainText("of 3");
    for (const n of names) await expect(page.getByTestId(`device-fleet-${n}`)).toContainText(prefix);

    // A viewer reads the fleet but gets no write control.
    const viewerName = `viewer_${prefix.slice(-6)}`;
    await createUser(admin, viewerName, "viewer-password", "viewer");
    const context = await browser.newContext();
    const viewer = await context.newPage();
    await signIn(viewer, viewerName, "viewer-password");
    await viewer.goto(`/fleets/${prefix}`);
    await expect(viewer.getByTestId("fleet-yaml")).toHaveAttribute("readonly", "");
    await expect(viewer.getByTestId("fleet-save")).toHaveCount(0);
    await expect(viewer.getByTestId("delete-fleet")).toHaveCount(0);
    await context.close();
  } finally {
    await sim.stop();
  }
});

test("a crash-looping version pauses its canary live; resumed, the rollout finishes", async ({ page }) => {
  const prefix = uniquePrefix("canary");
  const names = [1, 2, 3].map((i) => deviceName(prefix, i));
  const admin = await tokenFor("admin", E2E_ADMIN_PASSWORD);
  // Applications on 2.0.0 come up, then restart every 2 s (reported in heartbeats, every 2 s here).
  const sim = simulate(prefix, 3, ["--crash-versions", "2.0.0", "--crash-seconds", "2"]);
  try {
    await approveByApi(admin, names);
    // The first restart pauses the canary (restarts > 0), well within its 8 s; resumed, it ends
    // after those 8 s and 1 s without a restart, long before restarts reach autoFail's 10.
    await createFleet(
      admin,
      prefix,
      { version: "1.0.0", applications: [{ name: "web", command: ["/usr/bin/web", "--port", "8080"] }] },
      { canary: { replicas: 1, duration: "8s", noRestartsDuration: "1s", autoPause: { maxRestarts: 0 }, autoFail: { maxRestarts: 10 } } },
    );
    await signIn(page);
    await page.goto(`/fleets/${prefix}`);
    // The fleet's first version goes to every member at once.
    await expectAllUpToDate(page, names, 3);

    // Edit the YAML itself this time; the form follows it.
    const yaml = page.getByTestId("fleet-yaml");
    await yaml.fill((await yaml.inputValue()).replace("version: 1.0.0", "version: 2.0.0"));
    await expect(page.getByTestId("fleet-form-version")).toHaveValue("2.0.0");
    await page.getByTestId("fleet-save").click();
    await expect(page.getByTestId("fleet-save-rollout")).toContainText("Canary: 1 device first, watched for 8s (no restart for 1s).");
    await expect(page.getByTestId("fleet-save-rollout")).toContainText("Then the rest of the 3 members.");
    await page.getByTestId("fleet-save-confirm").click();
    await expect(page.getByTestId("fleet-save-result")).toHaveText(/template version 2/);

    // The canary (first by name) gets 2.0.0, its application restarts, and the rollout pauses itself.
    await expect(page.getByTestId("canary-paused")).toBeVisible({ timeout: 20_000 });
    await expect(page.getByTestId(`tripped-${names[0]}`)).toBeVisible();
    await expect(page.getByTestId("rollout-phase")).toHaveText("CanaryPaused");
    // The rollout's state table, a click away, lights the phase.
    await page.getByTestId("state-diagram-rollout-open").click();
    await expect(page.getByTestId("state-diagram-rollout")).toHaveAttribute("data-current", "CanaryPaused");
    await page.getByTestId("state-diagram-rollout").getByRole("button", { name: "Close diagram" }).click();
    await expect(page.getByTestId("state-diagram-rollout")).toHaveCount(0);
    await expect(page.getByTestId("condition-CanaryPaused")).toHaveAttribute("data-status", "True");
    await expect(page.getByTestId("stage-canary-total")).toHaveText("1");
    // Updated is not the whole truth: the canary device restarts, and the operator sees how close
    // auto-fail (which keeps watching while paused) is, on the stage table and in the banner.
    await expect(page.getByTestId("stage-canary-restarting")).toHaveText("(1 restarting)");
    await expect(page.getByTestId(`canary-restarts-${names[0]}`)).toContainText("of 11 that fail it");
    await expect(page.getByTestId(`canary-outlook-${names[0]}`)).toContainText(/\d+ more restarts? fails? it and reverts? the fleet/);
    await expect(page.getByTestId("canary-watch-rules")).toContainText("fails and reverts the fleet above 10, paused or not");
    await expect(page.getByTestId("canary-paused-outlook")).toContainText(`Auto-fail keeps watching while paused: ${names[0]} has restarted`);
    await expect(page.getByTestId("canary-paused-outlook")).toContainText("revert the fleet to version 1");
    // Nothing else got the new version.
    for (const n of names.slice(1)) await expect(page.getByTestId(`member-updated-${n}`)).toHaveText("OutOfDate");
    await expect(page.getByTestId(`member-reason-${names[1]}`)).toContainText("template version 2");

    // An operator resumes (overriding the auto-pause): the canary ends, the final batch follows.
    await page.getByTestId("rollout-resume").click();
    await expect(page.getByTestId("canary-paused")).toBeHidden();
    await expect(page.getByTestId("rollout-phase")).toHaveText("Completed", { timeout: 20_000 });
    await expect(page.getByTestId("stage-final-implicit-batch")).toHaveAttribute("data-status", "done");
    await expect(page.getByTestId("stage-final-implicit-batch-successful")).toHaveText("2");
    await expect(page.getByTestId("rollout-controls")).toHaveCount(0);
    await expectAllUpToDate(page, names, 3);
    await expect(page.getByTestId("version-outcome-2")).toHaveText("Active");
  } finally {
    await sim.stop();
  }
});
