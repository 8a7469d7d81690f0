import { randomBytes } from "node:crypto";
import { test, expect } from "@playwright/test";
import { E2E_ADMIN_PASSWORD, E2E_URL } from "../playwright.config";
import { approveByApi, signIn, tokenFor, uniquePrefix } from "./support";

/** Enrolls the way an agent does, with the given agent version. */
async function enroll(name: string, label: string, agentVersion: string): Promise<void> {
  const res = await fetch(`${E2E_URL}/api/agent/v1/enrollments`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ deviceName: name, labels: { e2e: label }, platform: "linux-amd64", role: "worker", agentVersion, secret: randomBytes(32).toString("base64url") }),
  });
  expect(res.status).toBe(201);
}

test("the device list and page show the agent version and flag one older than the server supports (issue 12)", async ({ page }) => {
  const prefix = uniquePrefix("agentv");
  const [old, current] = [`${prefix}-old`, `${prefix}-new`];
  await enroll(old, prefix, "0.0.9");
  await enroll(current, prefix, "0.1.0");
  await approveByApi(await tokenFor("admin", E2E_ADMIN_PASSWORD), [old, current]);

  await signIn(page);
  await page.goto(`/devices?labelSelector=${encodeURIComponent(`e2e=${prefix}`)}`);
  await expect(page.getByTestId(`device-agent-${old}`)).toHaveText(/0\.0\.9\s*older than supported \(0\.1\.0\+\)/);
  await expect(page.getByTestId(`device-agent-${current}`)).toHaveText("0.1.0");

  await page.goto(`/devices/${old}`);
  await expect(page.getByTestId("device-agent-version")).toContainText("older than supported (0.1.0+)");
});
