/**
 * The run view's big-graph tools (issue 9), as behaviour: a big fan-out starts collapsed into one
 * counted node and expands on click; the critical path toggle marks the longest chain. (Timings
 * are the bench's: bench/workflow-graph.ts.)
 */
import { randomBytes } from "node:crypto";
import { test, expect } from "@playwright/test";
import { E2E_ADMIN_PASSWORD, E2E_URL } from "../playwright.config";
import { api, approveByApi, signIn, tokenFor, uniquePrefix } from "./support";

/** A device that is enrolled and never polls: a step's action waiting for approval on it keeps the run steady. */
async function enrolledDevice(admin: string, name: string): Promise<void> {
  const res = await fetch(`${E2E_URL}/api/agent/v1/enrollments`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ deviceName: name, labels: {}, platform: "linux-amd64", role: "worker", agentVersion: "e2e", secret: randomBytes(32).toString("base64url") }),
  });
  expect(res.status, await res.text()).toBe(201);
  await approveByApi(admin, [name]);
}

const waits = (device: string) => ({ jobTemplate: { kind: "noop", targets: { devices: [device] }, requireApproval: true } });
// Never started while `a` waits; a device that does not exist.
const later = (dependencies: string[]) => ({ dependencies, jobTemplate: { kind: "noop", targets: { devices: ["nowhere"] } } });

test("a big workflow's fan-out starts collapsed into one counted node, expands on click and collapses again", async ({ page }) => {
  const name = uniquePrefix("wfg");
  const admin = await tokenFor("admin", E2E_ADMIN_PASSWORD);
  await enrolledDevice(admin, `${name}-d`);
  // a → 520 alike steps → join → tail: 523 steps, a big graph, so its fan starts collapsed.
  const steps: Record<string, unknown> = { a: waits(`${name}-d`) };
  const fan = Array.from({ length: 520 }, (_, i) => `f${i}`);
  for (const f of fan) steps[f] = later(["a"]);
  steps.join = later(fan);
  steps.tail = later(["join"]);
  const created = await api("POST", "/workflows", admin, { metadata: { name }, spec: { steps } });
  expect(created.status, JSON.stringify(created.body).slice(0, 300)).toBe(201);

  await signIn(page);
  await page.goto(`/workflows/${name}`);
  const group = page.getByTestId("fan-node-fan:f0");
  await expect(group).toBeVisible();
  await expect(group).toHaveAttribute("data-count", "520");
  await expect(page.getByTestId("fan-node-counts-fan:f0")).toHaveText("520 Pending");
  await expect(page.getByTestId("step-node-a")).toHaveAttribute("data-phase", "Running");
  await expect(page.getByTestId("run-view-summary")).toContainText("523 steps, 1 fan collapsed");
  await expect(page.getByTestId("step-node-f0")).toHaveCount(0);

  // A click expands it where it was: its first members are on screen, the group is gone.
  await group.click();
  await expect(page.getByTestId("step-node-f0")).toBeVisible();
  await expect(page.getByTestId("step-node-f0")).toHaveAttribute("data-phase", "Pending");
  await expect(page.getByTestId("fan-node-fan:f0")).toHaveCount(0);
  await expect(page.getByTestId("run-view-summary")).not.toContainText("collapsed");

  // "Collapse fans" folds it again.
  await page.getByTestId("run-view-collapse-all").click();
  await expect(page.getByTestId("fan-node-fan:f0")).toBeVisible();
  await expect(page.getByTestId("step-node-f0")).toHaveCount(0);
  expect((await api("DELETE", `/workflows/${name}`, admin)).status).toBe(200);
});

test("the critical path toggle marks the longest chain of dependencies, through a collapsed fan too", async ({ page }) => {
  const name = uniquePrefix("wfc");
  const admin = await tokenFor("admin", E2E_ADMIN_PASSWORD);
  await enrolledDevice(admin, `${name}-d`);
  // a → b → c → d and a → e → d: the longest chain is a, b, c, d. Beside it, 20 alike leaves of a.
  const steps: Record<string, unknown> = { a: waits(`${name}-d`), b: later(["a"]), c: later(["b"]), e: later(["a"]), d: later(["c", "e"]) };
  for (let i = 0; i < 20; i++) steps[`g${i}`] = later(["a"]);
  const created = await api("POST", "/workflows", admin, { metadata: { name }, spec: { steps } });
  expect(created.status, JSON.stringify(created.body)).toBe(201);

  await signIn(page);
  await page.goto(`/workflows/${name}`);
  await expect(page.getByTestId("step-node-d")).toBeVisible();
  // A small graph starts with its fan expanded.
  await expect(page.getByTestId("step-node-g0")).toBeVisible();
  await expect(page.locator("[data-critical]")).toHaveCount(0);

  const toggle = page.getByTestId("run-view-critical-toggle");
  await toggle.click();
  await expect(toggle).toHaveAttribute("aria-pressed", "true");
  for (const s of ["a", "b", "c", "d"]) await expect(page.getByTestId(`step-node-${s}`)).toHaveAttribute("data-critical", "true");
  await expect(page.getByTestId("step-node-e")).not.toHaveAttribute("data-critical");
  for (const e of ["a->b", "b->c", "c->d"]) await expect(page.getByTestId(`rf__edge-${e}`)).toHaveClass(/critical/);
  await expect(page.getByTestId("rf__edge-a->e")).not.toHaveClass(/critical/);
  await expect(page.getByTestId("run-view-critical-summary")).toContainText("critical path: 4 steps");

  // Collapsed, the fan is one node off the path; the path stays.
  await page.getByTestId("run-view-collapse-all").click();
  await expect(page.getByTestId("fan-node-fan:g0")).toHaveAttribute("data-count", "20");
  await expect(page.getByTestId("fan-node-fan:g0")).not.toHaveAttribute("data-critical");
  await expect(page.getByTestId("step-node-c")).toHaveAttribute("data-critical", "true");

  // Off again: nothing marked.
  await toggle.click();
  await expect(toggle).toHaveAttribute("aria-pressed", "false");
  await expect(page.locator("[data-critical]")).toHaveCount(0);
  await expect(page.locator(".react-flow__edge.critical")).toHaveCount(0);
  expect((await api("DELETE", `/workflows/${name}`, admin)).status).toBe(200);
});
