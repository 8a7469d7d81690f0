import { appendFileSync } from "node:fs";
import { test, expect, type Page } from "@playwright/test";
import { E2E_ADMIN_PASSWORD } from "../playwright.config";
import { api, approveByApi, axeViolations, COLOUR_RULES, deviceName, signIn, simulate, tokenFor, uniquePrefix, type Simulation } from "./support";

/**
 * Issue 10: WCAG 2.1 A/AA on every console page (axe), in light and in dark mode, with real
 * data behind each page; the console at 768 px; status filters that follow the arrow keys.
 */

interface Seeded {
  prefix: string;
  device: string;
  actionId: string;
  planId: string;
  workflow: string;
}

// The light and dark passes are the suite's two longest tests (≈ 4 min each): they may run on
// different workers. Each worker seeds its own server (beforeAll runs once per worker).
test.describe.configure({ mode: "parallel" });

let seeded: Seeded;
let sim: Simulation | undefined;

/** Every page gets something to show: enrolled, pending and denied devices, actions, a fleet, a plan, a workflow. */
test.beforeAll(async () => {
  test.setTimeout(120_000);
  const prefix = uniquePrefix("a11y");
  const names = [1, 2, 3, 4].map((i) => deviceName(prefix, i));
  const admin = await tokenFor("admin", E2E_ADMIN_PASSWORD);
  sim = simulate(prefix, 4);
  await approveByApi(admin, names.slice(0, 2));
  const pending = await api<{ items: { id: string; deviceName: string }[] }>("GET", "/enrollments?status=Pending", admin);
  const toDeny = pending.body.items.find((e) => e.deviceName === names[2]);
  expect(toDeny).toBeDefined();
  expect((await api("POST", `/enrollments/${toDeny!.id}/deny`, admin, { reason: "not ours" })).status).toBe(200);
  await expect
    .poll(async () => (await api<{ items: unknown[] }>("GET", `/devices?labelSelector=${encodeURIComponent(`e2e=${prefix}`)}&summary=Online&limit=10`, admin)).body.items.length, { timeout: 30_000 })
    .toBe(2);

  const done = await api<{ items: { id: string }[] }>("POST", "/actions", admin, { device: names[0], kind: "noop", args: {} });
  expect(done.status, JSON.stringify(done.body)).toBe(201);
  const waiting = await api<{ items: { id: string }[] }>("POST", "/actions", admin, { device: names[1], kind: "noop", args: {}, requireApproval: true });
  expect(waiting.status, JSON.stringify(waiting.body)).toBe(201);

  const fleet = await api("POST", "/fleets", admin, {
    apiVersion: "drover/v1",
    kind: "Fleet",
    metadata: { name: prefix },
    spec: { selector: { matchLabels: { e2e: prefix } }, template: { spec: { version: "1.0.0" } } },
  });
  expect(fleet.status, JSON.stringify(fleet.body)).toBe(201);

  const plan = await api<{ metadata: { id: string } }>("POST", "/plans?requireApproval=true", admin, {
    apiVersion: "drover/v1",
    kind: "Plan",
    metadata: { name: prefix },
    spec: { commands: [{ action: { kind: "noop", targets: { workers: { discovery: { selector: { labels: `e2e=${prefix}` } } } } } }] },
  });
  expect(plan.status, JSON.stringify(plan.body)).toBe(201);

  const job = (device: string, dependencies?: string[], requireApproval = false) => ({
    ...(dependencies ? { dependencies } : {}),
    jobTemplate: { kind: "noop", targets: { devices: [device] }, ...(requireApproval ? { requireApproval } : {}) },
  });
  // A long name: at 768 px the workflows list must cut it, not scroll sideways.
  const workflowName = `${prefix}-nightly-kernel-and-firmware-refresh`;
  const workflow = await api("POST", "/workflows", admin, {
    metadata: { name: workflowName },
    spec: { steps: { A: job(names[0]!), B: job(names[1]!, ["A"], true) } },
  });
  expect(workflow.status, JSON.stringify(workflow.body)).toBe(201);

  seeded = { prefix, device: names[0]!, actionId: done.body.items[0]!.id, planId: plan.body.metadata.id, workflow: workflowName };
});

test.afterAll(async () => {
  await sim?.stop();
});

interface ConsolePage {
  name: string;
  path: () => string;
  /** What shows once the page's data has arrived. */
  ready: (page: Page) => Promise<void>;
  /** After loading, e.g. a tab to pick. */
  then?: (page: Page) => Promise<void>;
  signedOut?: boolean;
  /**
   * More states of the same page, each reached from the one before without loading the page
   * again (a tab picked, a dialog opened) and checked as fully as a page of its own.
   */
  more?: { name: string; then: (page: Page) => Promise<void> }[];
}

const visible = (testId: string) => async (page: Page) => {
  await expect(page.getByTestId(testId).first()).toBeVisible({ timeout: 15_000 });
};

const opens = (button: string, what: string) => async (page: Page) => {
  await page.getByTestId(button).click();
  await expect(page.getByTestId(what)).toBeVisible();
};

const pickTab = (tab: string) => async (page: Page) => {
  await page.getByTestId(`status-tab-${tab}`).click();
  await expect(page.getByTestId(`status-tab-${tab}`)).toHaveAttribute("aria-selected", "true");
  await expect(page.getByTestId("enrollments-table")).toContainText(seeded.prefix);
};

/**
 * One entry per page load: what opens over a page (a filter's options, a form or confirmation
 * in a dialog) and the enrollment tabs are further states of their page's one load (`more`),
 * ten loads fewer than a load per state (issue 20).
 */
const PAGES: ConsolePage[] = [
  { name: "overview", path: () => "/", ready: visible("count-total") },
  {
    name: "devices",
    path: () => `/devices?labelSelector=${encodeURIComponent(`e2e=${seeded.prefix}`)}`,
    ready: async (page) => visible(`device-row-${seeded.device}`)(page),
    more: [
      {
        name: "devices, a status filter open",
        then: async (page) => {
          await page.getByTestId("filter-summary").click();
          await expect(page.getByTestId("filter-summary-options")).toBeVisible();
        },
      },
    ],
  },
  {
    name: "a device",
    path: () => `/devices/${seeded.device}`,
    ready: visible("device-summary"),
    more: [
      {
        name: "a device, a state diagram open",
        then: async (page) => {
          await page.getByTestId("state-diagram-summary-open").click();
          await expect(page.getByTestId("state-diagram-summary").locator("[data-diagram-text=state]").first()).toBeVisible({ timeout: 15_000 });
        },
      },
    ],
  },
  {
    name: "enrollments (Pending)",
    path: () => "/enrollments",
    ready: visible("enrollments-table"),
    then: pickTab("Pending"),
    more: [
      { name: "enrollments (Approved)", then: pickTab("Approved") },
      { name: "enrollments (Denied)", then: pickTab("Denied") },
      { name: "enrollments (All)", then: pickTab("All") },
      {
        name: "enrollments, the deny-all dialog",
        then: async (page) => {
          await pickTab("Pending")(page);
          await opens("deny-all-pending", "deny-all-dialog")(page);
        },
      },
    ],
  },
  { name: "approvals", path: () => "/approvals", ready: visible("approvals-table") },
  { name: "actions", path: () => "/actions", ready: visible("actions-table"), more: [{ name: "actions, the new action dialog", then: opens("new-action", "create-action-dialog") }] },
  { name: "an action", path: () => `/actions/${seeded.actionId}`, ready: visible("action-state") },
  { name: "fleets", path: () => "/fleets", ready: visible("fleets-table"), more: [{ name: "fleets, the new fleet editor", then: opens("new-fleet", "new-fleet-editor") }] },
  { name: "a fleet", path: () => `/fleets/${seeded.prefix}`, ready: visible("fleet-template-version") },
  { name: "plans", path: () => "/plans", ready: visible("plans-table"), more: [{ name: "plans, the import dialog", then: opens("import-plan", "import-plan-dialog") }] },
  { name: "a plan", path: () => `/plans/${seeded.planId}`, ready: visible("plan-state") },
  { name: "workflows", path: () => "/workflows", ready: visible("workflows-table") },
  { name: "a workflow", path: () => `/workflows/${seeded.workflow}`, ready: visible("step-table") },
  { name: "the workflow editor", path: () => "/workflows/new", ready: async (page) => expect(page.locator(".react-flow").first()).toBeVisible({ timeout: 15_000 }) },
  // One device's events: a hundred rows of every test before it checked no rule more, and axe
  // took 4× a list page's time over them (issue 20).
  { name: "events", path: () => `/events?kind=Device&name=${seeded.device}`, ready: visible("events-table") },
  { name: "tokens", path: () => "/tokens", ready: visible("tokens-table") },
  { name: "404", path: () => "/no-such-page", ready: visible("not-found") },
  { name: "login", path: () => "/login", ready: async (page) => expect(page.getByRole("button", { name: /sign in/i })).toBeVisible(), signedOut: true },
];

/**
 * Findings in files other sessions own at the moment (issue 10's diagrams, the workflow
 * editor), reported to them rather than fixed here: tolerated only on their page and only
 * for exactly this markup, and listed in the test's annotations. Delete an entry once its
 * owner has fixed it; the list should be empty.
 */
const OWNED_ELSEWHERE: { page: string; owner: string; html: string }[] = [];

function ownedElsewhere(where: string, html: string): string | undefined {
  return OWNED_ELSEWHERE.find((o) => where.startsWith(`${o.page} (`) && html.startsWith(o.html))?.owner;
}

/**
 * axe's findings, one line per rule and element kind (the same fault on 40 rows is one line,
 * counted), naming the page's culprit and why. A11Y_LOG=<file> also appends every finding as
 * JSON lines, to count them per rule.
 */
async function violations(page: Page, where: string, rules?: readonly string[]): Promise<string[]> {
  const found = await axeViolations(page, undefined, rules);
  if (process.env.A11Y_LOG) {
    const rows = found.flatMap((v) => v.nodes.map((n) => JSON.stringify({ where, rule: v.id, target: n.target.join(" "), html: n.html.slice(0, 200), why: n.failureSummary })));
    if (rows.length) appendFileSync(process.env.A11Y_LOG, rows.join("\n") + "\n");
  }
  const lines = new Map<string, number>();
  for (const v of found) {
    for (const n of v.nodes) {
      const owner = ownedElsewhere(where, n.html);
      if (owner) {
        test.info().annotations.push({ type: "a11y owned elsewhere", description: `${where}: ${v.id} in ${owner}: ${n.html.slice(0, 120)}` });
        continue;
      }
      const why = (n.failureSummary ?? v.help).split("\n").slice(1).join(" ").trim().replace(/\s+/g, " ").slice(0, 220);
      const line = `${v.id}: ${n.html.replace(/\s+/g, " ").replace(/(data-testid|datetime|title|href)="[^"]*"/g, '$1="…"').slice(0, 160)} — ${why}`;
      lines.set(line, (lines.get(line) ?? 0) + 1);
    }
  }
  return [...lines].map(([line, count]) => (count > 1 ? `${count}× ${line}` : line));
}

/**
 * Each page is loaded once and checked in both schemes: loaded in one (so the theme is applied
 * before the page paints), checked with every rule, then switched live to the other (the theme
 * follows the system's scheme as it changes: the `dark` class on <html>, whose CSS remaps only
 * colour variables, so the markup and layout are the same) and checked again with the colour
 * rules. Pages alternate which scheme comes first, so both are checked at first paint; a page's
 * further states (`more`) start in the scheme the state before ended in, so they alternate too.
 * Two tests over halves of the states, so two workers share them (a pass over every page took
 * ≈ 4 min per scheme; issue 20).
 */
const DESKTOP = { width: 1280, height: 720 };
const PHONE = { width: 390, height: 844 };
type Scheme = "light" | "dark";
const themeClass = (scheme: Scheme) => (scheme === "dark" ? /\bdark\b/ : /^(?!.*\bdark\b)/);
const other = (scheme: Scheme): Scheme => (scheme === "light" ? "dark" : "light");
const states = (p: ConsolePage) => 1 + (p.more?.length ?? 0);
const total = PAGES.reduce((n, p) => n + states(p), 0);
// Part 1 takes pages while it holds at most half of the states (plus one), part 2 the rest.
let cut = 0;
for (let taken = 0; taken + states(PAGES[cut]!) <= total / 2 + 1; cut++) taken += states(PAGES[cut]!);

/** A page state as it is: every rule in `scheme`, the colour rules in the other, then at 390 px. */
async function checkState(page: Page, p: Pick<ConsolePage, "name" | "then" | "signedOut">, scheme: Scheme) {
  for (const [j, s] of [scheme, other(scheme)].entries()) {
    if (j > 0) await page.emulateMedia({ colorScheme: s, reducedMotion: "reduce" });
    await expect(page.locator("html")).toHaveClass(themeClass(s));
    // A11Y_SHOTS=<dir>: a screenshot of each page, to look at the themes.
    if (process.env.A11Y_SHOTS) await page.screenshot({ path: `${process.env.A11Y_SHOTS}/${s}-${p.name.replace(/\W+/g, "-")}.png`, fullPage: true });
    // Checked until it passes or 15 s have gone: a scheme switched a moment ago can leave one
    // element (a dialog's title, seen in CI) in the old scheme's colours for a few frames,
    // and on a loaded machine one axe run over the device page took more than 5 s.
    // A lasting violation still fails, and is reported as found.
    // Every rule in the first scheme; after the switch, only the rules a colour can change (the
    // markup is the same): states alternate, so both schemes get both.
    await expect.soft.poll(() => violations(page, `${p.name} (${s})`, j > 0 ? COLOUR_RULES : undefined), { message: `${p.name} (${s})`, timeout: 15_000 }).toEqual([]);
  }
  // Issue 21: the same page on a phone (iPhone 12–15), without loading it again.
  await page.setViewportSize(PHONE);
  await fitsAPhone(page, p);
  await page.setViewportSize(DESKTOP);
}

for (const [part, pages] of [PAGES.slice(0, cut), PAGES.slice(cut)].entries()) {
  test(`every console page passes axe (WCAG 2.1 A/AA) in light and dark mode, part ${part + 1} of 2`, async ({ page }) => {
    test.setTimeout(360_000);
    for (const [i, p] of pages.entries()) {
      let scheme: Scheme = i % 2 === 0 ? "light" : "dark";
      await page.emulateMedia({ colorScheme: scheme, reducedMotion: "reduce" });
      // Signed out from a blank page: a console page still open when its cookie goes sends itself
      // to /login, and that navigation aborted this test's own goto once (net::ERR_ABORTED, in CI).
      if (p.signedOut) {
        await page.goto("about:blank");
        await page.context().clearCookies();
      }
      else if (!(await page.context().cookies()).length) await signIn(page);
      await test.step(`${p.name} (${scheme}, then ${other(scheme)})`, async () => {
        await page.goto(p.path());
        await p.ready(page);
        await p.then?.(page);
        await checkState(page, p, scheme);
      });
      for (const next of p.more ?? []) {
        scheme = other(scheme);
        await test.step(`${next.name} (${scheme}, then ${other(scheme)})`, async () => {
          await next.then(page);
          await checkState(page, next, scheme);
        });
      }
    }
  });
}

test("the header's theme toggle chooses light, dark or the system's, remembered across pages", async ({ page }) => {
  await page.emulateMedia({ colorScheme: "dark" });
  await signIn(page);
  await page.goto("/devices");
  const html = page.locator("html");
  const toggle = page.getByTestId("theme-toggle");
  await expect(toggle.getByRole("radio", { name: "System" })).toHaveAttribute("aria-checked", "true");
  await expect(html).toHaveClass(/\bdark\b/);

  const darkBody = await page.locator("body").evaluate((b) => getComputedStyle(b).backgroundColor);
  await toggle.getByRole("radio", { name: "Light" }).click();
  await expect(html).not.toHaveClass(/\bdark\b/);
  const lightBody = await page.locator("body").evaluate((b) => getComputedStyle(b).backgroundColor);
  expect(lightBody).not.toBe(darkBody);
  // Kept for the next page, applied before it paints: the first frame is already light.
  await page.goto("/actions");
  await expect(html).not.toHaveClass(/\bdark\b/);
  expect(await page.evaluate(() => localStorage.getItem("drover-theme"))).toBe("light");

  // A radio group: one tab stop, the arrow keys move and choose.
  await toggle.getByRole("radio", { name: "Light" }).focus();
  await page.keyboard.press("ArrowRight");
  await expect(toggle.getByRole("radio", { name: "Dark" })).toBeFocused();
  await expect(toggle.getByRole("radio", { name: "Dark" })).toHaveAttribute("aria-checked", "true");
  await expect(html).toHaveClass(/\bdark\b/);
  await expect(page.locator("body")).toHaveCSS("background-color", darkBody);

  // System again: it follows the system's preference, also when that changes.
  await page.keyboard.press("End");
  await expect(toggle.getByRole("radio", { name: "System" })).toHaveAttribute("aria-checked", "true");
  expect(await page.evaluate(() => localStorage.getItem("drover-theme"))).toBeNull();
  await page.emulateMedia({ colorScheme: "light" });
  await expect(html).not.toHaveClass(/\bdark\b/);
  await page.emulateMedia({ colorScheme: "dark" });
  await expect(html).toHaveClass(/\bdark\b/);
});

test.describe("at 768 px", () => {
  test.use({ viewport: { width: 768, height: 1024 } });

  test("the sidebar folds behind a menu button, and the main lists fit without sideways scrolling", async ({ page }) => {
    test.setTimeout(90_000);
    await signIn(page);
    await page.goto(`/devices?labelSelector=${encodeURIComponent(`e2e=${seeded.prefix}`)}`);
    await expect(page.getByTestId(`device-row-${seeded.device}`)).toBeVisible({ timeout: 15_000 });

    const fits = async (testId: string) => {
      const table = page.getByTestId(testId);
      await expect(table.locator("tbody tr").first()).toBeVisible({ timeout: 15_000 });
      const box = await table.evaluate((t) => {
        const scroller = t.parentElement!;
        return { scroll: scroller.scrollWidth, client: scroller.clientWidth, page: document.documentElement.scrollWidth, inner: window.innerWidth };
      });
      expect.soft(box.scroll, `${testId} scrolls sideways`).toBeLessThanOrEqual(box.client);
      expect.soft(box.page, `the page scrolls sideways with ${testId}`).toBeLessThanOrEqual(box.inner);
    };
    await fits("devices-table");
    // A device's name is never broken mid-word: one line, cut with an ellipsis and its title.
    const name = page.getByTestId(`device-row-${seeded.device}`).getByRole("link", { name: seeded.device });
    expect(await name.evaluate((el) => el.getClientRects().length === 1 && getComputedStyle(el).whiteSpace === "nowrap")).toBe(true);

    const sidebar = page.getByTestId("sidebar");
    const menu = page.getByTestId("nav-toggle");
    await expect(sidebar).toBeHidden();
    await expect(menu).toHaveAttribute("aria-expanded", "false");
    await menu.click();
    await expect(sidebar).toBeVisible();
    await expect(menu).toHaveAttribute("aria-expanded", "true");
    await expect(sidebar.getByRole("link", { name: "Devices" })).toBeFocused();
    await page.keyboard.press("Escape");
    await expect(sidebar).toBeHidden();
    await expect(menu).toBeFocused();

    // The other lists through the menu, as a reader gets there: a link closes it (and the page
    // is not loaded again: one load for the test; issue 20).
    for (const [link, url, testId] of [
      ["Actions", /\/actions$/, "actions-table"],
      ["Enrollments", /\/enrollments/, "enrollments-table"],
      ["Fleets", /\/fleets$/, "fleets-table"],
      ["Plans", /\/plans$/, "plans-table"],
      ["Workflows", /\/workflows$/, "workflows-table"],
    ] as const) {
      await menu.click();
      await sidebar.getByRole("link", { name: link }).click();
      await expect(page).toHaveURL(url);
      await expect(sidebar).toBeHidden();
      if (link === "Enrollments") {
        await page.getByTestId("status-tab-All").click();
        await expect(page).toHaveURL(/status=All/);
        // The denied request shows under All only: the tab's rows have arrived.
        await expect(page.getByTestId("enrollments-table")).toContainText(deviceName(seeded.prefix, 3));
      }
      await fits(testId);
    }
  });
});

/**
 * What sticks out past the viewport's right edge: each element that overflows while its parent
 * does not (the one that broke out), unless something between it and the page clips or scrolls
 * it (a table in its own scroller, the workflow canvas). For the failure's message.
 */
async function sideways(page: Page): Promise<{ scroll: number; inner: number; culprits: string[] }> {
  return page.evaluate(() => {
    const inner = window.innerWidth;
    const over = (el: Element) => el.getBoundingClientRect().right > inner + 0.5;
    const clipped = (el: Element) => {
      for (let a = el.parentElement; a && a !== document.body; a = a.parentElement) if (getComputedStyle(a).overflowX !== "visible") return true;
      return false;
    };
    const culprits = [...document.body.querySelectorAll("*")]
      .filter((el) => over(el) && !(el.parentElement && over(el.parentElement)) && !clipped(el))
      .slice(0, 6)
      .map((el) => {
        const r = el.getBoundingClientRect();
        const id = el.getAttribute("data-testid");
        return `<${el.tagName.toLowerCase()}${id ? ` data-testid=${id}` : ""} class="${(el.getAttribute("class") ?? "").slice(0, 80)}"> ${Math.round(r.width)} px wide, right edge at ${Math.round(r.right)}`;
      });
    return { scroll: document.documentElement.scrollWidth, inner, culprits };
  });
}

/** Wholly inside the viewport, and what a tap at its centre reaches is the element itself. */
async function expectReachable(page: Page, testId: string, where: string) {
  const target = page.getByTestId(testId).first();
  await expect(target).toBeVisible();
  const box = await target.evaluate((el) => {
    const r = el.getBoundingClientRect();
    const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
    return { left: r.left, right: r.right, top: r.top, bottom: r.bottom, inner: window.innerWidth, innerHeight: window.innerHeight, hit: !!hit && el.contains(hit) };
  });
  expect.soft(box.left, `${where}: ${testId} starts left of the viewport`).toBeGreaterThanOrEqual(0);
  expect.soft(box.right, `${where}: ${testId} ends past the viewport's right edge`).toBeLessThanOrEqual(box.inner);
  expect.soft(box.bottom, `${where}: ${testId} ends below the viewport`).toBeLessThanOrEqual(box.innerHeight);
  expect.soft(box.hit, `${where}: a tap on ${testId} reaches something else`).toBe(true);
}

async function expectFits(page: Page, where: string) {
  // Until it fits or 5 s have gone: after a resize, what sizes itself from a measurement (a
  // ResizeObserver, a virtual list) settles a frame or more later. A lasting overflow fails.
  let width = await sideways(page);
  for (const deadline = Date.now() + 5_000; width.scroll > width.inner && Date.now() < deadline; ) {
    await page.waitForTimeout(100);
    width = await sideways(page);
  }
  expect.soft(width.scroll, `${where} is ${width.scroll} px wide at ${width.inner}: ${width.culprits.join("; ")}`).toBeLessThanOrEqual(width.inner);
}

/**
 * A page at 390 px, as it is (loaded, its `then` done): nothing scrolls sideways, Sign out is
 * reachable (unless something opened over the page), and so is an open dialog.
 */
async function fitsAPhone(page: Page, p: Pick<ConsolePage, "name" | "then" | "signedOut">) {
  if (!p.signedOut && !p.then) await expectReachable(page, "sign-out", `${p.name} at 390 px`);
  await expectFits(page, `${p.name} at 390 px`);
  const dialog = page.locator("dialog[open]");
  if (await dialog.count()) await expectReachable(page, (await dialog.getAttribute("data-testid"))!, `${p.name} at 390 px`);
}

test.describe("at 390 px", () => {
  test.use({ viewport: PHONE });

  // Issue 21: a phone (iPhone 12–15). Every page of the axe pass is checked at 390 px there, once
  // it is checked at full width (one load each); these are the pages it does not visit.
  test("no page scrolls sideways; Sign out, Decommission and the dialogs fit the screen", async ({ page }) => {
    test.setTimeout(120_000);
    // Pages the axe pass does not visit, with something in them: an enrollment, a request over
    // several devices, an enrollment token, a saved workflow in the editor with a step selected.
    const admin = await tokenFor("admin", E2E_ADMIN_PASSWORD);
    const denied = await api<{ items: { id: string; deviceName: string }[] }>("GET", "/enrollments?status=Denied", admin);
    const enrollment = denied.body.items.find((e) => e.deviceName.startsWith(seeded.prefix));
    expect(enrollment).toBeDefined();
    const request = await api<{ items: { requestId: string }[] }>("POST", "/actions", admin, { labelSelector: `e2e=${seeded.prefix}`, kind: "noop", args: {} });
    expect(request.status, JSON.stringify(request.body)).toBe(201);
    const token = await api("POST", "/enrollment-tokens", admin, { name: `${seeded.prefix}-racks-in-the-north-building`, labels: { site: "north" } });
    expect(token.status, JSON.stringify(token.body)).toBe(201);
    const narrowOnly: ConsolePage[] = [
      { name: "an enrollment", path: () => `/enrollments/${enrollment!.id}`, ready: visible("enrollment-status") },
      { name: "a request", path: () => `/requests/${request.body.items[0]!.requestId}`, ready: visible("request-title") },
      { name: "add devices", path: () => "/enrollment-tokens", ready: visible("enrollment-tokens-table") },
      {
        name: "a workflow in the editor, a step selected",
        path: () => `/workflows/${seeded.workflow}/edit`,
        ready: visible("editor-node-A"),
        then: async (page) => {
          await page.getByTestId("editor-node-A").click();
          await expect(page.getByTestId("step-panel")).toBeVisible();
        },
      },
    ];

    await signIn(page);
    for (const p of narrowOnly) {
      await test.step(p.name, async () => {
        await page.goto(p.path());
        await p.ready(page);
        await p.then?.(page);
        await fitsAPhone(page, p);
      });
    }

    await test.step("the header while live updates are down: its longest word does not push Sign out off", async () => {
      await signIn(page);
      await page.route("**/api/trpc/events.live**", (route) => route.abort());
      await page.goto("/plans");
      await expect(page.getByTestId("plans-table")).toBeVisible({ timeout: 15_000 });
      await expect(page.getByTestId("current-user")).toBeVisible();
      await expect(page.getByTestId("live-indicator")).not.toHaveAttribute("data-state", "live");
      await expectReachable(page, "sign-out", "the header, not live");
      await expectFits(page, "the header, not live");
      await page.unroute("**/api/trpc/events.live**");
    });

    await test.step("a device: the navigation, Decommission and its confirmation", async () => {
      await page.goto(`/devices/${seeded.device}`);
      await expect(page.getByTestId("device-summary")).toBeVisible({ timeout: 15_000 });
      // The navigation opens over the page and fits it.
      await page.getByTestId("nav-toggle").click();
      await expectReachable(page, "sidebar", "the navigation");
      await expect(page.getByTestId("sidebar").getByRole("link", { name: "Devices" })).toBeFocused();
      await page.keyboard.press("Escape");
      await expect(page.getByTestId("sidebar")).toBeHidden();
      await expectReachable(page, "decommission-button", "a device");
      await page.getByTestId("decommission-button").click();
      await expect(page.getByTestId("decommission-dialog")).toBeVisible();
      await expectReachable(page, "decommission-dialog", "the decommission dialog");
      await expectReachable(page, "confirm-input", "the decommission dialog");
      await expectFits(page, "the decommission dialog");
      await page.keyboard.press("Escape");
      await expect(page.getByTestId("decommission-dialog")).toBeHidden();
    });
  });
});

test("status filters follow the arrow keys: enrollment tabs, and the options of a status filter", async ({ page }) => {
  await signIn(page);
  await page.goto("/enrollments");
  const pending = page.getByTestId("status-tab-Pending");
  await expect(pending).toHaveAttribute("aria-selected", "true");
  // One tab stop for the whole tab list: the selected tab.
  expect(await page.getByRole("tablist").evaluate((l) => [...l.querySelectorAll<HTMLElement>("[role=tab]")].filter((t) => t.tabIndex === 0).map((t) => t.textContent))).toEqual([
    expect.stringMatching(/^Pending/),
  ]);
  await pending.focus();
  await page.keyboard.press("ArrowRight");
  await expect(page.getByTestId("status-tab-Approved")).toBeFocused();
  await expect(page.getByTestId("status-tab-Approved")).toHaveAttribute("aria-selected", "true");
  await expect(page).toHaveURL(/status=Approved/);
  await expect(page.getByRole("tabpanel")).toHaveAttribute("aria-labelledby", await page.getByTestId("status-tab-Approved").getAttribute("id") ?? "");
  await page.keyboard.press("End");
  await expect(page.getByTestId("status-tab-All")).toBeFocused();
  await expect(page.getByTestId("status-tab-All")).toHaveAttribute("aria-selected", "true");
  await page.keyboard.press("ArrowRight");
  await expect(pending).toBeFocused();
  await page.keyboard.press("ArrowLeft");
  await expect(page.getByTestId("status-tab-All")).toBeFocused();
  await page.keyboard.press("Home");
  await expect(pending).toHaveAttribute("aria-selected", "true");

  // The devices' Status filter: Down opens it on its first option, the arrows move, Space ticks, Escape goes back.
  await page.goto(`/devices?labelSelector=${encodeURIComponent(`e2e=${seeded.prefix}`)}`);
  const filter = page.getByTestId("filter-summary");
  await filter.focus();
  await page.keyboard.press("ArrowDown");
  const options = page.getByTestId("filter-summary-options").getByRole("checkbox");
  await expect(options.nth(0)).toBeFocused();
  await page.keyboard.press("ArrowDown");
  await expect(options.nth(1)).toBeFocused();
  await page.keyboard.press("End");
  await expect(options.last()).toBeFocused();
  await page.keyboard.press("ArrowDown");
  await expect(options.nth(0)).toBeFocused();
  await page.keyboard.press("ArrowUp");
  await expect(options.last()).toBeFocused();
  await page.keyboard.press("Home");
  await expect(options.nth(0)).toBeFocused();
  // Only the focused option is a tab stop.
  expect(await options.evaluateAll((els) => els.filter((e) => (e as HTMLElement).tabIndex === 0).length)).toBe(1);
  await page.keyboard.press("Space");
  await expect(options.nth(0)).toBeChecked();
  await expect(page).toHaveURL(/summary=Online/);
  await page.keyboard.press("Escape");
  await expect(page.getByTestId("filter-summary-options")).toBeHidden();
  await expect(filter).toBeFocused();

  // The mouse still works: a click on an option ticks it; Tab past the last option closes the list.
  await filter.click();
  await page.getByTestId("filter-summary-Offline").click();
  await expect(page).toHaveURL(/summary=Online%2COffline|summary=Online,Offline/);
  await expect(page.getByTestId("filter-summary-options")).toBeVisible();
  await page.getByTestId("filter-summary-options").getByRole("button", { name: "Clear" }).focus();
  await page.keyboard.press("Tab");
  await expect(page.getByTestId("filter-summary-options")).toBeHidden();
});
