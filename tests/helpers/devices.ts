/**
 * Helpers for integration tests that need devices: enrolling them the way an agent does,
 * heartbeats, and the protocol's error shape.
 */
import { randomBytes } from "node:crypto";
import { expect } from "vitest";
import { pollDelays } from "../../agent/test-support/agent-process";
import type { TestServer } from "./server";

export const newSecret = () => randomBytes(32).toString("base64url");

let counter = 0;
/** A device name unique within the test process (names are global per server). */
export const uniqueName = (prefix = "dev") => `${prefix}-${process.pid}-${++counter}`;

export function enrollmentBody(deviceName: string, secret: string, labels: Record<string, string> = {}) {
  return { deviceName, labels, platform: "linux-amd64", role: "worker", agentVersion: "1.0.0", secret };
}

export interface EnrolledDevice {
  name: string;
  enrollmentId: string;
  secret: string;
  token: string;
  auth: { authorization: string };
}

/** Enrolls a device, approves it as the admin, and fetches its token: what an agent's first start does. */
export async function enrollDevice(s: Pick<TestServer, "agent" | "api">, name = uniqueName(), labels: Record<string, string> = {}): Promise<EnrolledDevice> {
  const secret = newSecret();
  const created = await s.agent<{ enrollmentId: string; status: string }>("POST", "/enrollments", enrollmentBody(name, secret, labels));
  expect(created.status).toBe(201);
  const { enrollmentId } = created.body;
  if (created.body.status === "Pending") {
    const approved = await s.api("POST", `/enrollments/${enrollmentId}/approve`, {});
    expect(approved.status).toBe(200);
  }
  const decision = await s.agent<{ status: string; token?: string }>("GET", `/enrollments/${enrollmentId}`, undefined, {
    "x-enrollment-secret": secret,
  });
  expect(decision.body.status).toBe("Approved");
  const token = decision.body.token;
  if (!token) throw new Error(`no token for ${name}: ${JSON.stringify(decision.body)}`);
  return { name, enrollmentId, secret, token, auth: { authorization: `Bearer ${token}` } };
}

export type Resource = "Healthy" | "Degraded" | "Error" | "Critical";
export interface HeartbeatPatch {
  resources?: Partial<Record<"cpu" | "memory" | "disk", Resource>>;
  applications?: { name: string; status: string; restarts: number }[];
  conditions?: Record<string, unknown>;
  renderedVersion?: number;
  decommissioning?: { state: string; info?: string };
  actions?: { id: string; state: string }[];
  capabilities?: unknown;
}

export function heartbeatBody(patch: HeartbeatPatch = {}) {
  return {
    resources: { cpu: "Healthy", memory: "Healthy", disk: "Healthy", ...patch.resources },
    applications: patch.applications ?? [],
    conditions: patch.conditions ?? {},
    config: { renderedVersion: patch.renderedVersion ?? 0 },
    ...(patch.decommissioning ? { decommissioning: patch.decommissioning } : {}),
    actions: patch.actions ?? [],
    ...(patch.capabilities !== undefined ? { capabilities: patch.capabilities } : {}),
  };
}

export function heartbeat(s: Pick<TestServer, "agent">, device: EnrolledDevice, patch: HeartbeatPatch = {}) {
  return s.agent<{ heartbeatSeconds: number }>("POST", "/status", heartbeatBody(patch), device.auth);
}

export interface ErrorBody {
  error: { code: string; message: string };
}

/** Asserts the status and that the body is exactly `{"error": {"code", "message"}}`. */
export function expectError(res: { status: number; body: unknown }, status: number, code: string, message?: RegExp | string): ErrorBody {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  const body = res.body as ErrorBody;
  expect(body).toBeTypeOf("object");
  expect(Object.keys(body)).toEqual(["error"]);
  expect(Object.keys(body.error).sort()).toEqual(["code", "message"]);
  expect(body.error.code).toBe(code);
  expect(body.error.message).toBeTypeOf("string");
  expect(body.error.message.length).toBeGreaterThan(0);
  if (message !== undefined) expect(body.error.message).toMatch(message);
  return body;
}

/**
 * Polls `check` until it returns a value (not undefined) or the time runs out: every `everyMs`
 * if given, else at 25, 50, 100 then every 200 ms
 * (`pollDelays`, agent/test-support/agent-process.ts).
 */
export async function eventually<T>(check: () => Promise<T | undefined>, timeoutMs = 5_000, everyMs?: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  const delays = pollDelays(everyMs);
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, delays.next().value));
  }
}
