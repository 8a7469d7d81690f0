/**
 * What needs a server of its own (E2E_PORT + 41, a fresh database with DROVER_FOUR_EYES=1 and
 * DROVER_TLS=auto): the workers' servers hold every other test's devices and run without the
 * settings. One server for all, over HTTPS with the server's own CA (issue 23), in this order
 * (the tests of a file run in order):
 *  - an empty device list points to where devices come from: Add devices and Enrollments (a
 *    filter that matches nothing on a busy server shows "No devices match these filters" instead),
 *    and Add devices shows the CA devices pin, the fingerprint the server printed at start;
 *  - over TLS: HSTS on every answer, plain HTTP to the port redirected (a page) or refused (the API);
 *  - four eyes (issue 21): what the admin requested (an exec action, a plan) shows Approve
 *    disabled with a tooltip saying why; another operator approves the plan through the one
 *    approval dialog (kind, work, devices, a reason).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createHash, X509Certificate } from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import https from "node:https";
import path from "node:path";
import { test, expect, type Page } from "@playwright/test";
import { E2E_ADMIN_PASSWORD, E2E_URL } from "../playwright.config";

const root = path.resolve(import.meta.dirname, "..");
const port = Number(new URL(E2E_URL).port) + 41;
const base = `https://localhost:${port}`;
let server: ChildProcess | null = null;
let serverLog = "";
/** The server's CA (PEM), read from /ca.pem and checked against the fingerprint its start log printed. */
let ca = "";

/** One request over HTTPS trusting `ca` only (or, before it is known, nothing: the health poll); or over plain HTTP with `plain`. */
function request(method: string, url: string, headers: Record<string, string> = {}, body?: string): Promise<{ status: number; headers: http.IncomingHttpHeaders; text: string }> {
  return new Promise((resolve, reject) => {
    const options = { method, headers, agent: false as const, ...(url.startsWith("https:") ? (ca ? { ca } : { rejectUnauthorized: false }) : {}) };
    const req = (url.startsWith("https:") ? https : http).request(url, options, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (text += chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

async function call<T>(method: string, p: string, token: string | null, body?: unknown): Promise<{ status: number; body: T }> {
  const headers = { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body === undefined ? {} : { "content-type": "application/json" }) };
  const res = await request(method, `${base}${p}`, headers, body === undefined ? undefined : JSON.stringify(body));
  return { status: res.status, body: (res.text ? JSON.parse(res.text) : null) as T };
}

async function token(username: string, password: string): Promise<string> {
  const res = await call<{ token: string }>("POST", "/api/v1/auth/token", null, { username, password });
  expect(res.status).toBe(201);
  return res.body.token;
}

async function signIn(page: Page, username: string, password: string) {
  const res = await page.request.post(`${base}/api/auth/sign-in/username`, { data: { username, password }, headers: { origin: base } });
  expect(res.status(), await res.text()).toBe(200);
}

test.beforeAll(async () => {
  test.setTimeout(120_000);
  const dataDir = path.join(root, ".tmp", `e2e-four-eyes-${port}`);
  fs.rmSync(dataDir, { recursive: true, force: true });
  server = spawn(process.execPath, [path.join(root, "dist", "server", "main.mjs")], {
    cwd: root,
    stdio: ["ignore", "pipe", "inherit"],
    env: {
      ...process.env,
      NODE_ENV: "production",
      PORT: String(port),
      DATABASE_URL: `file:${path.join(dataDir, "drover.db")}`,
      DROVER_ADMIN_PASSWORD: E2E_ADMIN_PASSWORD,
      DROVER_FOUR_EYES: "1",
      DROVER_TLS: "auto",
      HOST: "127.0.0.1",
      NEXT_TELEMETRY_DISABLED: "1",
    },
  });
  server.stdout!.on("data", (chunk: Buffer) => (serverLog += chunk.toString()));
  await expect
    .poll(async () => (await request("GET", `${base}/healthz`).catch(() => null))?.status ?? 0, { timeout: 110_000, intervals: [250, 500, 1000] })
    .toBe(200);
  // What an operator does: take /ca.pem and compare its fingerprint with the one the start printed.
  // The line is logged once the server listens, so it may reach the pipe after /healthz answers.
  const fingerprint = () => /"caFingerprint":"([0-9a-f]{64})"/.exec(serverLog)?.[1];
  await expect.poll(fingerprint, { timeout: 10_000, message: serverLog.slice(0, 2000) }).toBeTruthy();
  const printed = fingerprint();
  const pem = (await request("GET", `${base}/ca.pem`)).text;
  expect(createHash("sha256").update(new X509Certificate(pem).raw).digest("hex")).toBe(printed);
  ca = pem;
});

test.afterAll(async () => {
  const child = server;
  if (!child || child.exitCode !== null) return;
  await new Promise<void>((resolve) => {
    child.once("exit", () => resolve());
    child.kill("SIGTERM");
  });
});

// The server's certificate is signed by its own CA, which this browser does not know.
test.use({ ignoreHTTPSErrors: true });

test("an empty device list links to Add devices and to Enrollments; Add devices shows the CA devices pin", async ({ page }) => {
  // First in this file: the server has no device yet.
  await signIn(page, "admin", E2E_ADMIN_PASSWORD);
  await page.goto(`${base}/devices`);
  const empty = page.getByTestId("empty-state");
  await expect(empty).toContainText("No devices yet");
  await expect(empty.getByRole("link", { name: "Enrollments" })).toHaveAttribute("href", "/enrollments");
  await empty.getByRole("link", { name: "Add devices" }).click();
  await expect(page).toHaveURL(`${base}/enrollment-tokens`);
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Add devices");
  const fingerprint = createHash("sha256").update(new X509Certificate(ca).raw).digest("hex");
  await expect(page.getByTestId("server-ca-fingerprint")).toContainText(fingerprint);
});

test("over TLS: HSTS on the answers; plain HTTP to the port is redirected for a page and refused for the API", async () => {
  const login = await request("GET", `${base}/login`);
  expect(login.status).toBe(200);
  expect(login.headers["strict-transport-security"]).toMatch(/max-age=\d+/);
  const page = await request("GET", `http://localhost:${port}/devices`);
  expect([301, 308]).toContain(page.status);
  expect(page.headers.location).toBe(`${base}/devices`);
  const api = await request("GET", `http://localhost:${port}/api/v1/devices`);
  expect(api.status).toBe(400);
  expect(JSON.parse(api.text)).toMatchObject({ error: { code: "INVALID_REQUEST" } });
});

test("what you requested cannot be approved by you; another operator approves the plan with a reason", async ({ page, browser }) => {
  const admin = await token("admin", E2E_ADMIN_PASSWORD);
  // One enrolled device, the target of an exec action and of a plan, both the admin's.
  const enrolled = await call<{ enrollmentId: string }>("POST", "/api/agent/v1/enrollments", null, {
    deviceName: "fe-1",
    labels: {},
    platform: "linux-amd64",
    role: "worker",
    agentVersion: "1.0.0",
    secret: "s".repeat(43),
  });
  expect(enrolled.status, JSON.stringify(enrolled.body)).toBe(201);
  expect((await call("POST", `/api/v1/enrollments/${enrolled.body.enrollmentId}/approve`, admin, {})).status).toBe(200);
  const created = await call<{ items: { id: string }[] }>("POST", "/api/v1/actions", admin, { device: "fe-1", kind: "exec", args: { command: "uptime" } });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const actionId = created.body.items[0]!.id;
  const plan = await call<{ metadata: { id: string } }>("POST", "/api/v1/plans?requireApproval=true", admin, {
    apiVersion: "drover/v1",
    kind: "Plan",
    spec: { commands: [{ k0supdate: { version: "v1.30.0", platforms: { "linux-amd64": { url: "https://example.com/k0s" } }, targets: { workers: { discovery: { static: { nodes: ["fe-1"] } } } } } }] },
  });
  expect(plan.status, JSON.stringify(plan.body)).toBe(201);
  const planId = plan.body.metadata.id;

  await signIn(page, "admin", E2E_ADMIN_PASSWORD);
  await page.goto(`${base}/approvals`);
  const approve = page.getByTestId(`approve-action-${actionId}`);
  await expect(approve).toBeDisabled();
  await expect(approve).toHaveAttribute("title", "Four eyes: you requested this action, so another operator must approve it.");
  await page.goto(`${base}/plans/${planId}`);
  await expect(page.getByTestId("plan-approve")).toBeDisabled();
  await expect(page.getByTestId("plan-approve")).toHaveAttribute("title", "Four eyes: you requested this plan, so another operator must approve it.");

  // Another operator: Approve opens the one dialog, which waits for a reason.
  const created2 = await request("POST", `${base}/api/trpc/auth.createUser`, { authorization: `Bearer ${admin}`, "content-type": "application/json" }, JSON.stringify({ username: "otto", password: "otto-password-1", role: "operator" }));
  expect(created2.status, created2.text).toBe(200);
  const context = await browser.newContext({ baseURL: base, ignoreHTTPSErrors: true });
  const otto = await context.newPage();
  await signIn(otto, "otto", "otto-password-1");
  await otto.goto(`${base}/plans/${planId}`);
  await otto.getByTestId("plan-approve").click();
  const dialog = otto.getByTestId("approve-plan-dialog");
  await expect(dialog.getByTestId("approval-kind")).toHaveText("plan");
  await expect(dialog.getByTestId("approval-work")).toHaveText("k0supdate v1.30.0");
  await expect(dialog.getByTestId("approval-devices")).toHaveText("1");
  await expect(otto.getByTestId("confirm-approve-plan")).toBeDisabled();
  await otto.getByTestId("approve-plan-reason").fill("CHG-9");
  await otto.getByTestId("confirm-approve-plan").click();
  await expect(otto.getByTestId("plan-approval")).toContainText("approved by");
  await expect(otto.getByTestId("plan-approval-reason")).toHaveText("“CHG-9”");
  await context.close();
});
