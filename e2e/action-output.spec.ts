import { test, expect } from "@playwright/test";
import { api, onlineDevicePage } from "./support";
import { shortId } from "../components/actions/format";

interface ActionBody {
  id: string;
  state: string;
  createdAt: string;
}

test("a running action's output grows on its page, its elapsed time ticks, and Rerun makes a linked new action; the created-at filter narrows the list", async ({ page }) => {
  // The simulator's exec writes a line a second for its 6 s, sent live by its agent.
  const { name, admin, sim } = await onlineDevicePage(page, "out", ["--action-seconds", "6-6"]);
  try {
    const created = await api<{ items: ActionBody[] }>("POST", "/actions", admin, { device: name, kind: "exec", args: { command: "uptime" } });
    expect(created.status).toBe(201);
    const first = created.body.items[0]!;
    await page.goto(`/actions/${first.id}`);
    // exec waits for approval (the server's policy): the page says how long it has waited.
    await expect(page.getByTestId("action-duration")).toHaveAttribute("data-kind", "waiting");
    expect((await api("POST", `/actions/${first.id}/approve`, admin, {})).status).toBe(200);

    // Running: the output so far appears and grows before the action ends.
    await expect(page.getByTestId("action-state")).toHaveText(/RUNNING/, { timeout: 15_000 });
    const output = page.getByTestId("action-output");
    await expect(page.getByTestId("output-live")).toBeVisible();
    await expect(output).toContainText("[simulated] running, 1 s", { timeout: 5_000 });
    await expect(output).toContainText("[simulated] running, 2 s", { timeout: 5_000 });
    await expect(page.getByTestId("action-state")).toHaveText(/RUNNING/);
    expect(await output.textContent()).not.toContain("exited 0");

    // Elapsed time ticks while it runs.
    const elapsed = page.getByTestId("action-duration");
    await expect(elapsed).toHaveAttribute("data-kind", "running");
    const before = await elapsed.textContent();
    await expect(elapsed).not.toHaveText(before ?? "", { timeout: 3_000 });

    // Done: the whole output, and the duration as it ran (about 6 s, as the server saw RUNNING and DONE arrive).
    await expect(page.getByTestId("action-state")).toHaveText(/DONE/, { timeout: 15_000 });
    await expect(output).toContainText("[simulated] exited 0 after 6000 ms");
    await expect(elapsed).toHaveAttribute("data-kind", "ran");
    await expect(elapsed).toHaveText(/^[5-7]\.\d s$/);
    await expect(page.getByTestId("output-live")).toHaveCount(0);

    // Rerun, confirmed: a new action, linked to the first both ways.
    await page.getByTestId("rerun-action").click();
    await expect(page.getByTestId("rerun-action-dialog")).toContainText(`Run exec on ${name} again?`);
    await page.getByTestId("confirm-rerun-action").click();
    await expect(page).not.toHaveURL(new RegExp(`/actions/${first.id}$`));
    await expect(page).toHaveURL(/\/actions\/[0-9a-f-]{36}$/);
    const rerunId = page.url().split("/").pop()!;
    await expect(page.getByTestId("action-rerun-of")).toHaveText(shortId(first.id));
    // It needs approval as the first one did.
    await expect(page.getByTestId("action-state")).toHaveText(/PENDING_APPROVE/);
    await page.getByTestId("action-rerun-of").click();
    await expect(page).toHaveURL(new RegExp(`/actions/${first.id}$`));
    await expect(page.getByTestId("action-reruns")).toContainText(shortId(rerunId));

    // The list: the Duration column, and the rerun marked as one.
    await page.goto(`/actions?device=${name}`);
    await expect(page.getByTestId(`action-row-${first.id}`)).toBeVisible();
    await expect(page.getByTestId(`action-duration-${first.id}`)).toHaveText(/^[5-7]\.\d s$/);
    await expect(page.getByTestId(`action-rerun-of-${rerunId}`)).toHaveText(shortId(first.id));

    // Created from a moment between the two: only the rerun.
    const rerun = (await api<ActionBody>("GET", `/actions/${rerunId}`, admin)).body;
    const between = new Date((Date.parse(first.createdAt) + Date.parse(rerun.createdAt)) / 2).toISOString();
    await page.goto(`/actions?device=${name}&createdAfter=${encodeURIComponent(between)}`);
    await expect(page.getByTestId(`action-row-${rerunId}`)).toBeVisible();
    await expect(page.getByTestId(`action-row-${first.id}`)).toHaveCount(0);
    await expect(page.getByTestId("filter-created")).toHaveValue("custom");
    await expect(page.getByTestId("filter-created-after")).not.toHaveValue("");
    // A quick range: the last hour has both.
    await page.getByTestId("filter-created").selectOption("1h");
    await expect(page).toHaveURL(/createdAfter=/);
    await expect(page.getByTestId(`action-row-${first.id}`)).toBeVisible();
    await expect(page.getByTestId(`action-row-${rerunId}`)).toBeVisible();
    // Any time clears it.
    await page.getByTestId("filter-created").selectOption("");
    await expect(page).not.toHaveURL(/createdAfter=/);

    // A date that is not RFC 3339 is said on the page, naming the field, and not asked for.
    await page.goto(`/actions?device=${name}&createdBefore=yesterday`);
    await expect(page.getByTestId("filter-created-error")).toContainText("createdBefore");
    await expect(page.getByTestId(`action-row-${first.id}`)).toHaveCount(0);
  } finally {
    await sim.stop();
  }
});
