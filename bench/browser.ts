/** Chromium for the bench's browser steps (Debian's, as the e2e suite uses), signed in as admin. */
import { chromium, type Browser, type Page } from "playwright";

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const LAUNCH_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"];

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: LAUNCH_ARGS });
}

/** A 1440×900 page signed in to the console at `url` as admin, its actions timing out after `timeoutMs`. */
export async function signedInPage(browser: Browser, url: string, adminPassword: string, timeoutMs: number): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
  const page = await context.newPage();
  page.setDefaultTimeout(timeoutMs);
  await page.goto(`${url}/login`);
  await page.getByLabel(/username/i).fill("admin");
  await page.getByLabel(/password/i).fill(adminPassword);
  await page.getByRole("button", { name: /sign in/i }).click();
  await page.waitForURL((u) => !u.pathname.startsWith("/login"));
  return page;
}
