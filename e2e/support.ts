/**
 * End-to-end support: sign in through the real form, run real simulated agents (the
 * simulator as a child process) against the server Playwright started, and call the operator
 * API with real tokens. Every test uses its own unique device names.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { expect, type Cookie, type Page } from "@playwright/test";
import type { AxeResults, Result as AxeFinding } from "axe-core";
import { E2E_ADMIN_PASSWORD, E2E_URL } from "../playwright.config";
import { SIMULATOR } from "./global-setup";

const root = path.resolve(import.meta.dirname, "..");

export function uniquePrefix(tag: string): string {
  return `e2e-${tag}-${randomBytes(3).toString("hex")}`;
}

export function deviceName(prefix: string, i: number): string {
  return `${prefix}-${String(i).padStart(5, "0")}`;
}

/** Sessions signed in by this worker, by user and password (below). */
const sessions = new Map<string, Cookie[]>();

/**
 * A session for the page's browser context, from the console's own sign-in route (what the login
 * form posts): its cookie lands in the context, and the test opens the page it is about. The form
 * itself is tested where it is the subject (plain-http.spec.ts, devices.spec.ts); loading it and
 * the overview it lands on in every test cost two page loads each (issue 20).
 *
 * Each user signs in once per worker: later tests put the same session cookie into their own
 * context. A sign-in is a password check, a scrypt hash of ≈ 0.15 CPU-s on the server (the suite
 * signed in 55 times); no test signs out or ends another's session.
 */
export async function signIn(page: Page, username = "admin", password = E2E_ADMIN_PASSWORD): Promise<void> {
  const key = `${username}\n${password}`;
  const kept = sessions.get(key);
  if (kept) return page.context().addCookies(kept);
  const res = await page.request.post("/api/auth/sign-in/username", { data: { username, password }, headers: { origin: E2E_URL } });
  expect(res.status(), await res.text()).toBe(200);
  sessions.set(key, await page.context().cookies());
}

/** The WCAG 2.1 A and AA rules, what every accessibility check in the suite runs. */
export const WCAG_21_AA = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"];
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

/**
 * axe-core's WCAG 2.1 A/AA violations on the page as it is, or inside `selector`. axe is put into
 * the page once per load and run there (`axe.run`, violations only): @axe-core/playwright's
 * builder injected it again at every call and finished each run in a new blank page, 2–6 s a
 * check against 0.1–0.4 s (the console has no frames, which is what that machinery is for;
 * issue 20).
 */
/** The axe rules whose findings depend on colours: all a switch of colour scheme can change. */
export const COLOUR_RULES = ["color-contrast", "link-in-text-block"];

export async function axeViolations(page: Page, selector?: string, rules?: readonly string[]): Promise<AxeFinding[]> {
  if (!(await page.evaluate(() => "axe" in window))) await page.evaluate(AXE_SOURCE);
  // Colours read mid-transition are the old ones: a scheme switched a moment ago still shows the
  // last scheme's text for a frame (even at reduced motion's 0.01 ms), so let transitions end.
  await page.evaluate(async () => {
    await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
    await Promise.race([Promise.allSettled(document.getAnimations().map((a) => a.finished)), new Promise((r) => setTimeout(r, 2_000))]);
  });
  return page.evaluate(
    async ([tags, within, only]) => {
      const axe = (window as unknown as { axe: { run(context: unknown, options: unknown): Promise<AxeResults> } }).axe;
      const runOnly = only ? { type: "rule", values: only } : { type: "tag", values: tags };
      const result = await axe.run(within ?? document, { runOnly, resultTypes: ["violations"] });
      return result.violations;
    },
    [WCAG_21_AA, selector, rules] as const,
  );
}

export interface Simulation {
  process: ChildProcess;
  stop(): Promise<void>;
}

/** Real virtual agents over HTTP: the simulator program, healthy unless told otherwise. */
export function simulate(prefix: string, agents: number, extra: string[] = []): Simulation {
  const child = spawn(
    process.execPath,
    [SIMULATOR, "--server", E2E_URL, "--agents", String(agents), "--prefix", prefix,
      "--labels", `e2e=${prefix}`, "--degraded", "0", "--error", "0", "--restarts", "0", "--flap", "0", "--silent", "0", "--rate", "50", ...extra],
    { cwd: root, stdio: ["ignore", "ignore", "inherit"] },
  );
  return {
    process: child,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
      }),
  };
}

export async function api<T = unknown>(method: string, p: string, token: string, body?: unknown): Promise<{ status: number; body: T }> {
  const res = await fetch(`${E2E_URL}/api/v1${p}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : undefined) as T };
}

/** Operator tokens issued in this worker, by user: each issue is a password check too. */
const tokens = new Map<string, Promise<string>>();

export function tokenFor(username: string, password: string): Promise<string> {
  const key = `${username}\n${password}`;
  let token = tokens.get(key);
  if (!token) {
    token = issueToken(username, password);
    tokens.set(key, token);
    token.catch(() => tokens.delete(key));
  }
  return token;
}

async function issueToken(username: string, password: string): Promise<string> {
  const res = await fetch(`${E2E_URL}/api/v1/auth/token`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ username, password }),
  });
  if (res.status !== 201) throw new Error(`token for ${username}: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { token: string }).token;
}

/** Admins create users through the console's tRPC procedure (there is no REST route yet). */
export async function createUser(adminToken: string, username: string, password: string, role: "viewer" | "operator" | "admin") {
  const res = await fetch(`${E2E_URL}/api/trpc/auth.createUser`, {
    method: "POST",
    headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
    body: JSON.stringify({ username, password, role }),
  });
  if (!res.ok) throw new Error(`createUser ${username}: ${res.status} ${await res.text()}`);
}

/**
 * Asks to enroll `name` the way an agent does, with no agent behind it: approved, it is a device
 * that has never reported, so Offline at once (no simulator started, no disconnection timeout
 * waited out). Stays Pending until approved (no auto-approve rule in e2e).
 */
export async function askToEnroll(name: string, labels: Record<string, string> = {}): Promise<string> {
  const res = await fetch(`${E2E_URL}/api/agent/v1/enrollments`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ deviceName: name, labels, platform: "linux-amd64", role: "worker", agentVersion: "1.0.0", secret: randomBytes(32).toString("base64url") }),
  });
  expect(res.status, await res.clone().text()).toBe(201);
  return ((await res.json()) as { enrollmentId: string }).enrollmentId;
}

/** Approves the named devices' pending enrollments over the API, waiting for them to appear. */
export async function approveByApi(token: string, names: string[]): Promise<void> {
  await expect
    .poll(async () => {
      const r = await api<{ items: { id: string; deviceName: string }[] }>("GET", "/enrollments?status=Pending", token);
      return names.every((n) => r.body.items.some((e) => e.deviceName === n));
    }, { timeout: 20_000 })
    .toBe(true);
  const r = await api<{ items: { id: string; deviceName: string }[] }>("GET", "/enrollments?status=Pending", token);
  const ids = r.body.items.filter((e) => names.includes(e.deviceName)).map((e) => e.id);
  const approved = await api("POST", "/enrollments/approve", token, { ids });
  expect(approved.status).toBe(200);
}

/**
 * One simulated device, approved, and the browser signed in on its page once it shows Online:
 * the start of most device and action tests. The caller stops `sim` (in a finally).
 */
export async function onlineDevicePage(page: Page, tag: string, extra: string[] = []): Promise<{ prefix: string; name: string; admin: string; sim: Simulation }> {
  const prefix = uniquePrefix(tag);
  const name = deviceName(prefix, 1);
  const admin = await tokenFor("admin", E2E_ADMIN_PASSWORD);
  const sim = simulate(prefix, 1, extra);
  try {
    await approveByApi(admin, [name]);
    await signIn(page);
    await page.goto(`/devices/${name}`);
    await expect(page.getByTestId("device-summary")).toHaveText(/Online/, { timeout: 15_000 });
  } catch (error) {
    await sim.stop();
    throw error;
  }
  return { prefix, name, admin, sim };
}
