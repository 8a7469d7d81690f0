/**
 * `drover plan skip-node` and `drover workflow skip-target|retry-target` (issue 21) against a
 * real server: each names what it moved, sends the reason (recorded with the
 * operator's name in the events), and a missing --reason is a usage error (2) that sends
 * nothing; the server's refusal (409) is printed with its code.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../tests/helpers/server";
import { eventually, uniqueName } from "../tests/helpers/devices";
import { offeredIds, onlineDevice, reportAll } from "../tests/helpers/actions";
import type { WorkflowObject } from "../server/workflows/workflows";
import type { PlanView } from "../lib/plan-status";
import { cliRunner } from "./test-support";

let s: TestServer;
let dir: string;

const { drover, ok } = cliRunner(() => ({ url: s.url, adminToken: s.adminToken, dir }));

beforeAll(async () => {
  s = await startTestServer({ DROVER_SWEEP_SECONDS: "600" });
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "drover-cli-skip-"));
});
afterAll(async () => {
  await s?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

async function events(kind: string, name: string) {
  const res = await s.api<{ items: { type: string; message: string; actor: string }[] }>("GET", `/events?kind=${kind}&name=${name}&limit=100`);
  return res.body.items;
}

describe("drover plan skip-node", () => {
  it("skips a signalled node with its reason; without --reason it is a usage error and nothing is sent", { timeout: 60_000 }, async () => {
    const d = await onlineDevice(s);
    const created = await s.api<PlanView>("POST", "/plans", {
      apiVersion: "drover/v1",
      kind: "Plan",
      spec: { commands: [{ action: { kind: "noop", targets: { workers: { discovery: { static: { nodes: [d.name] } } } } } }] },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const id = created.body.metadata.id;

    const usage = await drover(["plan", "skip-node", id, d.name]);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain("--reason");
    expect((await events("Plan", id)).some((e) => e.type === "PlanNodeSkipped")).toBe(false);

    expect(await ok(["plan", "skip-node", id, d.name, "--reason", "stuck Offline", "--command", "0"])).toBe(`plan/${id}: node ${d.name} skipped (Completed)\n`);
    const skipped = (await events("Plan", id)).find((e) => e.type === "PlanNodeSkipped")!;
    expect(skipped.message).toContain("stuck Offline");
    expect(skipped.actor).toBe("user:admin");

    const again = await drover(["plan", "skip-node", id, d.name, "--reason", "again"]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("CONFLICT");
  });
});

describe("drover workflow skip-target / retry-target", () => {
  it("retries a failed target (a new action) and skips a waiting one; the step and the workflow end Succeeded", { timeout: 60_000 }, async () => {
    const [a, b] = [await onlineDevice(s), await onlineDevice(s)];
    const name = uniqueName("cli-targets");
    const job = (device: string) => ({ jobTemplate: { kind: "noop", args: {}, targets: { devices: [device] } } });
    const created = await s.api<WorkflowObject>("POST", "/workflows", { metadata: { name }, spec: { failFast: false, steps: { A: job(a.name), B: job(b.name) } } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const [first] = await offeredIds(s, a);
    await reportAll(s, a, first!, "NEW", "RUNNING", { state: "FAILED", error: "exit 1" });
    await eventually(async () => ((await s.api<WorkflowObject>("GET", `/workflows/${name}`)).body.status.statuses.A!.phase === "Failed" ? true : undefined));

    const usage = await drover(["workflow", "retry-target", name, "A", a.name]);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain("--reason");

    expect(await ok(["workflow", "retry-target", name, "A", a.name, "--reason", "disk cleaned"])).toBe(`workflow/${name} step A: target ${a.name} retried (step Running, workflow Running)\n`);
    const [second] = await offeredIds(s, a);
    expect(second).toBeDefined();
    expect(second).not.toBe(first);
    await reportAll(s, a, second!, "NEW", "RUNNING", "DONE");

    const refused = await drover(["workflow", "retry-target", name, "B", b.name, "--reason", "not failed"]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("CONFLICT");

    expect(await ok(["workflow", "skip-target", name, "B", b.name, "--reason", "in the repair shop"])).toMatch(
      new RegExp(`^workflow/${name} step B: target ${b.name} skipped \\(step Succeeded, workflow (Running|Succeeded)\\)\n$`),
    );
    const end = await eventually(async () => {
      const w = (await s.api<WorkflowObject>("GET", `/workflows/${name}`)).body;
      return w.status.phase !== "Running" ? w : undefined;
    });
    expect(end.status.phase).toBe("Succeeded");
    const moves = (await events("Workflow", name)).filter((e) => e.type === "WorkflowTargetRetried" || e.type === "WorkflowTargetSkipped");
    expect(moves.map((e) => [e.type, e.actor])).toEqual(expect.arrayContaining([["WorkflowTargetRetried", "user:admin"], ["WorkflowTargetSkipped", "user:admin"]]));
    expect(moves.find((e) => e.type === "WorkflowTargetRetried")!.message).toMatch(/^A\/\S+ \(Failed → Waiting\): new action .*: disk cleaned$/);
    expect(moves.find((e) => e.type === "WorkflowTargetSkipped")!.message).toBe(`B/${b.name} (Waiting → Skipped): in the repair shop`);
  });
});
