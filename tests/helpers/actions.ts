/**
 * Helpers for node-action integration tests (seed 004): operator tokens by role, devices
 * that are Online (so actions are offered to them), creating and reading actions, the
 * agent's work poll and action reports, and an action's events in order.
 */
import { expect } from "vitest";
import type { TestServer } from "./server";
import { enrollmentBody, heartbeat, newSecret, uniqueName, type EnrolledDevice, type HeartbeatPatch } from "./devices";
import { createCallerFactory } from "../../server/trpc/init";
import { appRouter } from "../../server/trpc/router";
import { issueOperatorToken } from "../../server/auth/auth";
import type { Role } from "../../server/auth/roles";
import type { WorkResponse } from "../../lib/protocol";

export interface ActionView {
  id: string;
  kind: string;
  args: Record<string, unknown>;
  origin: string;
  state: string;
  requireApproval: boolean;
  healthPolicy: string;
  createdBy: string | null;
  decision: string | null;
  decidedBy: string | null;
  decidedAt: string | null;
  decisionReason: string | null;
  offeredAt: string | null;
  cancelRequestedAt: string | null;
  cancelRequestedBy: string | null;
  startedAt: string | null;
  finishedAt: string | null;
  error: string | null;
  output?: string | null;
  createdAt: string;
  updatedAt: string;
  device: string;
  deviceSummary: string;
  expiresAt?: string | null;
  /** Why it waits (lib/action-wait.ts), null when it does not. */
  waiting?: { reason: string; message: string } | null;
  /** Why its device's agent will refuse it (lib/action-capability.ts), before it is sent. */
  refusal?: string | null;
}

export interface ActionEvent {
  id: number;
  time: string;
  objectKind: string;
  objectName: string;
  type: string;
  reason: string;
  message: string;
  actor: string;
}

/**
 * Creates a user with this role on the server and returns an operator API token for it, issued as
 * the token route does once the password is checked (the route itself: tests/api-tokens,
 * tests/operator-api): a password check is a scrypt hash, ≈ 0.15 CPU-s, and this runs ~20 times a project.
 */
export async function tokenFor(s: TestServer, role: Role): Promise<{ token: string; username: string }> {
  const admin = await s.ctx.db.user.findUniqueOrThrow({ where: { username: "admin" }, select: { id: true } });
  const caller = createCallerFactory(appRouter)({ server: s.ctx, auth: s.auth, principal: { userId: admin.id, username: "admin", role: "admin", via: "token" } });
  const username = uniqueName(role).replace(/-/g, "_");
  const user = await caller.auth.createUser({ username, password: `${role}-password-1`, role });
  expect(user.role).toBe(role);
  const { token } = await issueOperatorToken(s.ctx.db, user.id, s.ctx.now());
  return { token, username };
}

/** Enrolls a device with any role (the devices helper enrolls workers). */
export async function enrollAs(s: TestServer, opts: { name?: string; labels?: Record<string, string>; role?: "worker" | "controller" } = {}): Promise<EnrolledDevice> {
  const name = opts.name ?? uniqueName();
  const secret = newSecret();
  const created = await s.agent<{ enrollmentId: string; status: string }>("POST", "/enrollments", {
    ...enrollmentBody(name, secret, opts.labels ?? {}),
    role: opts.role ?? "worker",
  });
  expect(created.status).toBe(201);
  const { enrollmentId } = created.body;
  expect((await s.api("POST", `/enrollments/${enrollmentId}/approve`, {})).status).toBe(200);
  const decision = await s.agent<{ status: string; token?: string }>("GET", `/enrollments/${enrollmentId}`, undefined, { "x-enrollment-secret": secret });
  const token = decision.body.token;
  if (!token) throw new Error(`no token for ${name}: ${JSON.stringify(decision.body)}`);
  return { name, enrollmentId, secret, token, auth: { authorization: `Bearer ${token}` } };
}

export async function deviceSummary(s: TestServer, name: string): Promise<string> {
  const res = await s.api<{ summary: string }>("GET", `/devices/${name}`);
  expect(res.status).toBe(200);
  return res.body.summary;
}

/** Enrolls a device and sends one healthy heartbeat: it is Online, so actions are offered to it. */
export async function onlineDevice(s: TestServer, opts: { labels?: Record<string, string>; role?: "worker" | "controller" } = {}): Promise<EnrolledDevice> {
  const d = await enrollAs(s, opts);
  await setHealth(s, d, {});
  expect(await deviceSummary(s, d.name)).toBe("Online");
  return d;
}

let groups = 0;
/** `n` Online devices sharing a fresh label (made one after another), and the selector that matches them. */
export async function onlineGroup(s: TestServer, n: number): Promise<{ selector: string; devices: EnrolledDevice[] }> {
  const value = `g${process.pid}-${++groups}`;
  const devices: EnrolledDevice[] = [];
  for (let i = 0; i < n; i++) devices.push(await onlineDevice(s, { labels: { group: value } }));
  return { selector: `group=${value}`, devices };
}

/** A heartbeat that must succeed (the agent's whole queue in `patch.actions`). */
export async function setHealth(s: TestServer, d: EnrolledDevice, patch: HeartbeatPatch): Promise<void> {
  const res = await heartbeat(s, d, patch);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
}

export interface CreateBody {
  device?: string;
  labelSelector?: string;
  kind?: unknown;
  args?: unknown;
  requireApproval?: unknown;
  expiresInSeconds?: unknown;
  healthPolicy?: unknown;
}

export function postActions(s: TestServer, body: CreateBody, token?: string) {
  return s.api<{ items: ActionView[] }>("POST", "/actions", body, token);
}

/** Creates one action for one device and returns it. */
export async function createAction(s: TestServer, device: string, kind = "noop", extra: Omit<CreateBody, "device" | "kind"> = {}): Promise<ActionView> {
  const res = await postActions(s, { device, kind, args: {}, ...extra });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  expect(res.body.items).toHaveLength(1);
  return res.body.items[0]!;
}

export async function getAction(s: TestServer, id: string): Promise<ActionView> {
  const res = await s.api<ActionView>("GET", `/actions/${id}`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

/** The action's events, oldest first. */
export async function actionEvents(s: TestServer, id: string): Promise<ActionEvent[]> {
  const res = await s.api<{ items: ActionEvent[] }>("GET", `/events?kind=Action&name=${id}&limit=1000`);
  expect(res.status).toBe(200);
  return [...res.body.items].sort((a, b) => a.id - b.id);
}

/** The device's long-poll. */
export function work(s: TestServer, d: EnrolledDevice, wait = 0) {
  return s.agent<WorkResponse>("GET", `/work?wait=${wait}`, undefined, d.auth);
}

/** Ids offered by an immediate poll. */
export async function offeredIds(s: TestServer, d: EnrolledDevice): Promise<string[]> {
  const res = await work(s, d, 0);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.actions.map((a) => a.id);
}

export interface ReportBody {
  state: string;
  output?: string;
  error?: string;
  kind?: string;
  args?: Record<string, unknown>;
}

/** The agent's `PUT /actions/{id}`. */
export function report(s: TestServer, d: EnrolledDevice, id: string, body: ReportBody) {
  return s.agent<ActionView>("PUT", `/actions/${id}`, body, d.auth);
}

/** Reports each state in turn, each of which must be accepted. */
export async function reportAll(s: TestServer, d: EnrolledDevice, id: string, ...states: (string | ReportBody)[]): Promise<void> {
  for (const st of states) {
    const res = await report(s, d, id, typeof st === "string" ? { state: st } : st);
    expect(res.status, `${JSON.stringify(st)}: ${JSON.stringify(res.body)}`).toBe(200);
  }
}

/** A request whose answer time is recorded, and whether it has answered yet. */
export function timed<T>(p: Promise<T>): { done: Promise<T & { at: number }>; settled: () => boolean } {
  let settled = false;
  const done = p.then((r) => {
    settled = true;
    return { ...r, at: performance.now() };
  });
  return { done, settled: () => settled };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
