/**
 * The devices list at fleet scale (issue 10: "keep the console fast at 10,000 devices"),
 * measured in Chromium with Playwright against a real server: a step of `npm run bench` (with
 * the 10,000 held agents of step 1), or alone with `npx tsx bench/device-list.ts` (its own
 * server; it enrolls BENCH_AGENTS devices straight through the agent API, auto-approved, that
 * never poll, labelled group=0…99).
 *
 *   - first rows: navigation start → the first device rows drawn (median of 3 fresh loads);
 *   - filter: a label selector applied (Enter) → the rows all match it;
 *   - sort: a click on the Name header → the first row changes (when the list sorts);
 *   - page: "next page" → its first row drawn.
 *
 * Options (env): BENCH_AGENTS (10000), BENCH_PORT (3293), CHROMIUM_PATH; BENCH_SAVE_DB=FILE keeps
 * the enrolled database (copied after the server stops), BENCH_SEED_DB=FILE starts from such a
 * copy instead of enrolling (the server migrates it forward): two versions of the console
 * measured on the same data, back to back.
 */
import { randomBytes } from "node:crypto";
import type { Page } from "playwright";
import { launchChromium, signedInPage } from "./browser";
import { client, logger, runScope, sleep, startServerProcess } from "./lib";


export interface DeviceListReport {
  devices: number;
  firstRowsMs: number[];
  firstRowsMedianMs: number;
  filter: { selector: string; ms: number; rows: number } | null;
  sort: { ms: number; firstBefore: string; firstAfter: string } | { skipped: string };
  nextPage: { ms: number } | { skipped: string };
}

const rows = (page: Page) => page.locator('[data-testid^="device-row-"]:not([data-testid*="-select"])');

/** The page's clock when `check` first holds, polled every frame. */
async function when(page: Page, check: string, timeout: number): Promise<number> {
  const h = await page.waitForFunction(`(() => { const ok = (${check})(); return ok ? performance.now() : false; })()`, undefined, { polling: "raf", timeout });
  return (await h.jsonValue()) as number;
}

const FIRST_ROW = `() => document.querySelector('[data-testid="devices-table"] tbody tr[data-testid^="device-row-"]')`;
const firstRowName = `() => document.querySelector('[data-testid="devices-table"] tbody tr[data-testid^="device-row-"]')?.getAttribute("data-testid")`;

/**
 * Measures the list at `url` as `admin` / `adminPassword`. `selector` must match some of the
 * devices (e.g. group=7).
 */
export async function benchDeviceList(opts: { url: string; adminPassword: string; devices: number; selector: string; deadline: number; log: (m: string) => void }): Promise<DeviceListReport> {
  const remaining = () => Math.max(5_000, opts.deadline - Date.now());
  const browser = await launchChromium();
  try {
    const page = await signedInPage(browser, opts.url, opts.adminPassword, Math.min(60_000, remaining()));

    // Warm-up (the console's chunks cached), then fresh navigations.
    await page.goto(`${opts.url}/devices`);
    await when(page, FIRST_ROW, remaining());
    const firstRowsMs: number[] = [];
    for (let i = 0; i < 3; i++) {
      await page.goto("about:blank");
      await page.goto(`${opts.url}/devices`);
      firstRowsMs.push(Math.round(await when(page, FIRST_ROW, remaining())));
    }
    const firstRowsMedianMs = [...firstRowsMs].sort((a, b) => a - b)[1]!;
    opts.log(`devices list (${opts.devices}): first rows ${firstRowsMs.join(", ")} ms after navigation`);

    // Filter: Enter applies the selector at once (no debounce); done when every row drawn carries it.
    const [key, value] = opts.selector.split("=") as [string, string];
    const input = page.getByTestId("label-selector");
    await input.fill(opts.selector);
    const t0 = await page.evaluate(() => performance.now());
    await input.press("Enter");
    const applied = await when(
      page,
      `() => { const rs = [...document.querySelectorAll('[data-testid="devices-table"] tbody tr[data-testid^="device-row-"]')]; return rs.length > 0 && rs.every((r) => r.textContent.includes(${JSON.stringify(`${key}=${value}`)}) || r.textContent.includes(${JSON.stringify(`${key}${value}`)})) && new URL(location.href).searchParams.has("labelSelector"); }`,
      remaining(),
    ).catch(() => NaN);
    const filter = { selector: opts.selector, ms: Math.round(applied - t0), rows: await rows(page).count() };
    opts.log(`filter ${opts.selector}: ${filter.ms} ms to ${filter.rows} rows`);

    await page.goto(`${opts.url}/devices`);
    await when(page, FIRST_ROW, remaining());
    let sort: DeviceListReport["sort"] = { skipped: "the list has no sortable Name header" };
    const header = page.locator('[data-testid="devices-table"] thead').getByRole("button", { name: /^name/i });
    if ((await header.count()) > 0) {
      const firstBefore = (await page.evaluate(`(${firstRowName})()`)) as string;
      const s0 = await page.evaluate(() => performance.now());
      await header.first().click();
      const s1 = await when(page, `() => { const f = (${firstRowName})(); return f && f !== ${JSON.stringify(firstBefore)}; }`, remaining()).catch(() => NaN);
      sort = { ms: Math.round(s1 - s0), firstBefore, firstAfter: (await page.evaluate(`(${firstRowName})()`)) as string };
      opts.log(`sort by name: ${sort.ms} ms (${firstBefore} → ${sort.firstAfter})`);
    }

    let nextPage: DeviceListReport["nextPage"] = { skipped: "no next-page control" };
    const next = page.getByRole("button", { name: /^next/i });
    if ((await next.count()) > 0 && (await next.first().isEnabled())) {
      const firstBefore = (await page.evaluate(`(${firstRowName})()`)) as string;
      const p0 = await page.evaluate(() => performance.now());
      await next.first().click();
      const p1 = await when(page, `() => { const f = (${firstRowName})(); return f && f !== ${JSON.stringify(firstBefore)}; }`, remaining()).catch(() => NaN);
      nextPage = { ms: Math.round(p1 - p0) };
      opts.log(`next page: ${nextPage.ms} ms`);
    }
    return { devices: opts.devices, firstRowsMs, firstRowsMedianMs, filter, sort, nextPage };
  } finally {
    await browser.close();
  }
}

/** `count` devices enrolled through the agent API with auto-approval (bench=true), labelled group=i%100; they never poll. */
export async function enrollQuiet(url: string, count: number, log: (m: string) => void): Promise<void> {
  const { json } = client(url);
  const t0 = Date.now();
  const one = async (i: number) => {
    const secret = randomBytes(32).toString("base64url");
    const r = await json("POST", "/api/agent/v1/enrollments", { deviceName: `quiet-${String(i).padStart(5, "0")}`, labels: { bench: "true", group: String(i % 100) }, platform: "linux-amd64", role: "worker", agentVersion: "bench", secret }, {}, true);
    if (r.status !== 201) throw new Error(`enroll quiet-${i}: ${r.status} ${JSON.stringify(r.body)}`);
  };
  for (let i = 0; i < count; i += 50) await Promise.all(Array.from({ length: Math.min(50, count - i) }, (_, k) => one(i + k)));
  log(`enrolled ${count} quiet devices in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
}

// Alone: its own server on a fresh database.
if (import.meta.url === `file://${process.argv[1]}`) {
  const log = logger("bench-devices");
  const port = Number(process.env.BENCH_PORT ?? 3293);
  const devices = Number(process.env.BENCH_AGENTS ?? 10_000);
  const { deadline, children, dir } = runScope("bench-devices", Number(process.env.BENCH_DEADLINE_SECONDS ?? 600));
  const adminPassword = "bench-admin-password";
  void (async () => {
    const { execFileSync } = await import("node:child_process");
    const path = await import("node:path");
    const { root } = await import("./lib");
    execFileSync(process.execPath, [path.join(root, "scripts", "ensure-build.mjs")], { stdio: "inherit" });
    const fs = await import("node:fs");
    const seed = process.env.BENCH_SEED_DB;
    if (seed) fs.copyFileSync(seed, path.join(dir, "drover.db"));
    let server = await startServerProcess({ port, dir, adminPassword, env: { DROVER_AUTO_APPROVE: "bench=true" }, deadline });
    children.push(server);
    const url = `http://127.0.0.1:${port}`;
    if (!seed) await enrollQuiet(url, devices, log);
    const save = process.env.BENCH_SAVE_DB;
    if (save) {
      // Stopped first: SQLite's WAL is folded into the file on close.
      await new Promise((resolve) => (server.once("exit", resolve), server.kill("SIGTERM")));
      fs.copyFileSync(path.join(dir, "drover.db"), save);
      log(`database saved to ${save}`);
      server = await startServerProcess({ port, dir, adminPassword, env: { DROVER_AUTO_APPROVE: "bench=true" }, deadline });
      children.push(server);
    }
    await sleep(1000);
    const report = await benchDeviceList({ url, adminPassword, devices, selector: "group=7", deadline, log });
    process.stdout.write(JSON.stringify({ deviceList: report }, null, 2) + "\n");
  })().then(
    () => process.exit(0),
    (err: unknown) => {
      log(`failed: ${err instanceof Error ? err.stack : String(err)}`);
      process.exit(1);
    },
  );
}
