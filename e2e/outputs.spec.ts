import { test, expect, type Locator } from "@playwright/test";
import { E2E_ADMIN_PASSWORD } from "../playwright.config";
import { api, approveByApi, axeViolations, deviceName, signIn, simulate, tokenFor, uniquePrefix } from "./support";

/** What a simulated `exec uptime` of exactly 2 s writes (agent/executors/simulated.ts): the same on every device. */
const UPTIME_OUTPUT = "[simulated] uptime\n[simulated] running, 1 s\n[simulated] exited 0 after 2000 ms";

async function groups(card: Locator): Promise<string[]> {
  return card.getByTestId("output-group-title").allTextContents();
}

test("a request's outputs, and a workflow step's, are grouped by identical result, live and searchable, each device linking to its action", async ({ page }) => {
  test.setTimeout(120_000);
  const prefix = uniquePrefix("outputs");
  const admin = await tokenFor("admin", E2E_ADMIN_PASSWORD);
  // Three agents that run any command, one whose allow-list refuses `uptime`, all labelled e2e=<prefix>.
  const good = simulate(prefix, 3, ["--action-seconds", "2-2"]);
  const strict = simulate(`${prefix}-s`, 1, ["--action-seconds", "2-2", "--allow-exec", "true", "--labels", `e2e=${prefix}`]);
  try {
    const ok = [1, 2, 3].map((i) => deviceName(prefix, i));
    const refusing = deviceName(`${prefix}-s`, 1);
    await approveByApi(admin, [...ok, refusing]);
    await expect
      .poll(async () => (await api<{ items: { summary: string }[] }>("GET", `/devices?labelSelector=${encodeURIComponent(`e2e=${prefix}`)}`, admin)).body.items.filter((d) => d.summary === "Online").length, {
        timeout: 20_000,
      })
      .toBe(4);

    const created = await api<{ items: { requestId: string }[] }>("POST", "/actions", admin, { labelSelector: `e2e=${prefix}`, kind: "exec", args: { command: "uptime" } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const id = created.body.items[0]!.requestId;

    await signIn(page);
    await page.goto(`/requests/${id}`);
    const card = page.getByTestId("request-outputs");
    // Waiting for approval: one group of four, no output yet.
    await expect.poll(() => groups(card)).toEqual(["4 devices:"]);
    await expect(card.getByTestId("output-group")).toHaveAttribute("data-state", "PENDING_APPROVE");

    // Approved: the card follows the actions without a reload, to 3 alike and 1 refused.
    expect((await api("POST", `/requests/${id}/approve`, admin, {})).status).toBe(200);
    await expect.poll(() => groups(card), { timeout: 30_000 }).toEqual(["3 devices:", "1 device:"]);
    const [done, failed] = [card.getByTestId("output-group").nth(0), card.getByTestId("output-group").nth(1)];
    await expect(done).toHaveAttribute("data-state", "DONE");
    await expect(done.getByTestId("output-group-output")).toHaveText(UPTIME_OUTPUT);
    await expect(done.getByTestId("output-group-devices").getByRole("link")).toHaveText(ok);
    await expect(failed).toHaveAttribute("data-state", "FAILED");
    await expect(failed.getByTestId("output-group-error")).toContainText("not in the agent's allow-list");
    await expect(card.getByTestId("outputs-summary")).toHaveText("2 distinct outputs over 4 actions");
    expect((await axeViolations(page, '[data-testid="request-outputs"]')).map((v) => v.id)).toEqual([]);

    // Search: by a device's name, then by output text.
    await card.getByTestId("outputs-search").fill(refusing.toUpperCase());
    await expect.poll(() => groups(card)).toEqual(["1 device:"]);
    await expect(card.getByTestId("output-group")).toHaveAttribute("data-state", "FAILED");
    await card.getByTestId("outputs-search").fill("exited 0");
    await expect.poll(() => groups(card)).toEqual(["3 devices:"]);
    await card.getByTestId("outputs-search").fill("no such text");
    await expect(card.getByTestId("outputs-empty")).toBeVisible();
    await card.getByTestId("outputs-search").fill("");
    await expect.poll(() => groups(card)).toEqual(["3 devices:", "1 device:"]);

    // Each device's own: its name opens its action.
    await failed.getByRole("link", { name: refusing }).click();
    await expect(page).toHaveURL(/\/actions\/[0-9a-f-]{36}$/);
    await expect(page.getByTestId("action-state")).toHaveText("FAILED");

    // A workflow step's panel: the same groups for its current attempt's targets.
    const wf = `${prefix}-wf`;
    const made = await api("POST", "/workflows", admin, {
      metadata: { name: wf },
      spec: { failFast: false, steps: { A: { jobTemplate: { kind: "exec", args: { command: "uptime" }, targets: { devices: [...ok, refusing] } } } } },
    });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    const pending = await api<{ items: { id: string; ref: string | null }[] }>("GET", "/requests?origin=workflow&pendingApproval=true&limit=100", admin);
    const stepRequest = pending.body.items.find((r) => r.ref?.startsWith(`workflow/${wf}/A/`));
    expect(stepRequest, JSON.stringify(pending.body)).toBeDefined();
    expect((await api("POST", `/requests/${stepRequest!.id}/approve`, admin, {})).status).toBe(200);
    await page.goto(`/workflows/${wf}`);
    await page.getByTestId("step-node-A").click();
    const panel = page.getByTestId("step-outputs");
    await expect.poll(() => groups(panel), { timeout: 30_000 }).toEqual(["3 devices:", "1 device:"]);
    await expect(panel.getByTestId("output-group").nth(0).getByTestId("output-group-output")).toHaveText(UPTIME_OUTPUT);
    await expect(panel.getByTestId("output-group").nth(1).getByRole("link")).toHaveText([refusing]);
  } finally {
    await Promise.all([good.stop(), strict.stop()]);
  }
});
