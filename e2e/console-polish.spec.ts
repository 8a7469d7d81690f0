/**
 * Issue 21, item 9: small things a person sees. An id in the event log stays in its column; the
 * fleet summary says who changed it whole; a destructive dialog's optional reason box does not
 * look like an error; a disabled danger button looks disabled; the bulk Deny all beside Approve
 * is outlined, not solid red.
 */
import { randomBytes } from "node:crypto";
import { test, expect, type Locator } from "@playwright/test";
import { E2E_ADMIN_PASSWORD, E2E_URL } from "../playwright.config";
import { api, approveByApi, signIn, tokenFor, uniquePrefix } from "./support";

/** Asks to enroll the way an agent does; stays Pending (no auto-approve rule in e2e). */
async function ask(name: string): Promise<void> {
  const res = await fetch(`${E2E_URL}/api/agent/v1/enrollments`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ deviceName: name, labels: {}, platform: "linux-amd64", role: "worker", agentVersion: "1.0.0", secret: randomBytes(32).toString("base64url") }),
  });
  expect(res.status).toBe(201);
}

type Rgb = [number, number, number];

/** Every colour in a computed style property (a background, or a box-shadow's several), as sRGB read back from a canvas. */
async function colours(locator: Locator, property: "backgroundColor" | "color" | "boxShadow"): Promise<Rgb[]> {
  return locator.evaluate((el, prop) => {
    const value = getComputedStyle(el)[prop];
    const found = value.match(/(?:rgba?|oklch|oklab|lab|lch|color|hsla?)\([^)]*\)/g) ?? [];
    const ctx = document.createElement("canvas").getContext("2d", { willReadFrequently: true });
    if (!ctx) throw new Error("no canvas");
    return found
      .map((c) => {
        ctx.clearRect(0, 0, 1, 1);
        ctx.fillStyle = c;
        ctx.fillRect(0, 0, 1, 1);
        const [r, g, b, a] = ctx.getImageData(0, 0, 1, 1).data;
        return [r, g, b, a] as [number, number, number, number];
      })
      .filter(([, , , a]) => a > 0)
      .map(([r, g, b]) => [r, g, b] as Rgb);
  }, property);
}

const reddish = ([r, g, b]: Rgb) => r > 150 && r - Math.max(g, b) > 60;
const grey = ([r, g, b]: Rgb) => Math.max(r, g, b) - Math.min(r, g, b) < 30;

/** Nothing cut off inside the element (its content is as wide as its box). */
const notCut = (locator: Locator) => locator.evaluate((el) => el.scrollWidth <= el.clientWidth);

test("an action's id in the event log stays in its column, and its cancel dialog's optional reason box takes focus without a red ring", async ({ page }) => {
  const prefix = uniquePrefix("polish");
  const name = `${prefix}-dev`;
  const admin = await tokenFor("admin", E2E_ADMIN_PASSWORD);
  await ask(name);
  await approveByApi(admin, [name]);
  // Offline (no agent), so it waits, cancellable, and its event names it by its id (a UUID).
  const created = await api<{ items: { id: string }[] }>("POST", "/actions", admin, { device: name, kind: "noop", args: {} });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const id = created.body.items[0]?.id ?? "";

  await signIn(page);
  await page.goto("/events");
  const link = page.getByTestId("events-table").getByRole("link", { name: id }).first();
  await expect(link).toBeVisible();
  const row = page.getByTestId("events-table").locator("tbody tr", { has: page.getByRole("link", { name: id }) }).first();
  const cells = row.locator("td");
  const [linkBox, objectBox, typeBox] = await Promise.all([link.boundingBox(), cells.nth(1).boundingBox(), cells.nth(2).boundingBox()]);
  if (!linkBox || !objectBox || !typeBox) throw new Error("no layout");
  // The id ends inside the Object cell, before the Type column starts.
  expect(linkBox.x + linkBox.width).toBeLessThanOrEqual(objectBox.x + objectBox.width + 0.5);
  expect(linkBox.x + linkBox.width).toBeLessThanOrEqual(typeBox.x + 0.5);

  await page.goto(`/actions/${id}`);
  await page.getByTestId("cancel-action").click();
  const reason = page.getByTestId("cancel-reason");
  await reason.focus();
  await expect(reason).toBeFocused();
  // The ring appears through a (reduced-motion) transition: wait for it before reading its colour.
  await expect.poll(async () => (await colours(reason, "boxShadow")).length).toBeGreaterThan(0);
  const ring = await colours(reason, "boxShadow");
  expect(ring.filter(reddish), JSON.stringify(ring)).toEqual([]);
  // The confirming button stays red: that one is the destructive part.
  expect((await colours(page.getByTestId("confirm-cancel-action"), "backgroundColor")).every(reddish)).toBe(true);
});

test("the fleet summary says who changed it whole; a disabled danger button is grey, red once it can be pressed", async ({ page }) => {
  const prefix = uniquePrefix("polish");
  const admin = await tokenFor("admin", E2E_ADMIN_PASSWORD);
  const r = await api("POST", "/fleets", admin, {
    apiVersion: "drover/v1",
    kind: "Fleet",
    metadata: { name: prefix },
    spec: { selector: { matchLabels: { e2e: prefix } }, template: { spec: { version: "1.0.0" } } },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(201);

  await signIn(page);
  await page.goto(`/fleets/${prefix}`);
  const changed = page.getByTestId("fleet-summary").locator("div", { has: page.locator("dt", { hasText: /^Changed$/ }) }).locator("dd");
  // By the admin, or by the fleet controller once it has rendered the template.
  await expect(changed).toContainText(/by (user:admin|fleet-controller)/);
  expect(await notCut(changed)).toBe(true);
  expect(await notCut(page.getByTestId("fleet-changed-by"))).toBe(true);

  await page.getByTestId("delete-fleet").click();
  const confirm = page.getByTestId("confirm-delete-fleet");
  await expect(confirm).toBeDisabled();
  // Polled: the button's colour follows its state through a (reduced-motion) transition, read a
  // moment after the state changed it was still the old one in a CI run.
  const fill = async (is: (c: Rgb) => boolean) => {
    const c = await colours(confirm, "backgroundColor");
    return c.length === 1 && is(c[0] as Rgb) ? "yes" : JSON.stringify(c);
  };
  await expect.poll(() => fill(grey)).toBe("yes");
  await page.getByTestId("delete-fleet-dialog").getByRole("textbox").fill(prefix);
  await expect(confirm).toBeEnabled();
  await expect.poll(() => fill(reddish)).toBe("yes");
});

test("on Enrollments, Deny all pending is outlined red beside the solid primary Approve, not a second solid button", async ({ page }) => {
  await ask(`${uniquePrefix("polish")}-pending`);
  await signIn(page);
  await page.goto("/enrollments");
  const denyAll = page.getByTestId("deny-all-pending");
  await expect(denyAll).toBeEnabled();
  const background = await colours(denyAll, "backgroundColor");
  expect(background.every((c) => !reddish(c)), JSON.stringify(background)).toBe(true);
  expect((await colours(denyAll, "color")).every(reddish)).toBe(true);
  // Approve (nothing selected yet) is the primary; whatever its state, it is not outshouted by a solid red.
  await expect(page.getByTestId("approve-selected")).toBeDisabled();
});
