/**
 * `drover` and workflows against a real server (issue 9): apply -f of a
 * diamond whose jobs target an enrolled device (created, unchanged, configured, and the
 * server's 409 for an edit of a started step printed as is); get workflows / get workflow;
 * describe showing A Running and B, C, D waiting for their dependencies; the device runs its
 * actions over the agent protocol while describe --watch follows to Succeeded; rerun; cancel
 * and delete, asked unless --yes.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import YAML from "yaml";
import { startTestServer, type TestServer } from "../tests/helpers/server";
import { eventually, uniqueName } from "../tests/helpers/devices";
import { offeredIds, onlineDevice, reportAll } from "../tests/helpers/actions";
import type { WorkflowObject, WorkflowSummary } from "../server/workflows/workflows";
import { cliRunner } from "./test-support";

let s: TestServer;
let dir: string;

const { start, drover, ok, file } = cliRunner(() => ({ url: s.url, adminToken: s.adminToken, dir }));

async function getWorkflow(name: string): Promise<WorkflowObject> {
  const res = await s.api<WorkflowObject>("GET", `/workflows/${name}`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

/** A, then B and C, then D: each a noop on the device (D's args tell edits apart). */
const diamondYaml = (name: string, device: string, dArgs = "{}", aKind = "noop") => `apiVersion: drover/v1
kind: Workflow
metadata:
  name: ${name}
spec:
  steps:
    A:
      jobTemplate: {kind: ${aKind}, targets: {devices: [${device}]}}
    B:
      dependencies: [A]
      jobTemplate: {kind: noop, targets: {devices: [${device}]}}
    C:
      dependencies: [A]
      jobTemplate: {kind: noop, targets: {devices: [${device}]}}
    D:
      dependencies: [B, C]
      jobTemplate: {kind: noop, args: ${dArgs}, targets: {devices: [${device}]}}
`;

beforeAll(async () => {
  s = await startTestServer({ DROVER_SWEEP_SECONDS: "600" });
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "drover-cli-workflows-"));
});
afterAll(async () => {
  await s?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

describe("a diamond on an enrolled device", () => {
  // 39 s on a quiet machine (a long journey of CLI processes); past 60 s under load.
  it("apply, get, describe (A Running, B/C/D waiting), 409 on a started step, watch to Succeeded, rerun, cancel, delete", { timeout: 120_000 }, async () => {
    const device = await onlineDevice(s);
    const name = uniqueName("wf");
    const spec = file("diamond.yaml", diamondYaml(name, device.name));
    expect(await ok(["apply", "-f", spec])).toBe(`workflow/${name} created\n`);
    expect(await ok(["apply", "-f", spec])).toBe(`workflow/${name} unchanged\n`);
    // A Pending step may change while the run is in progress; a started one may not (the server's 409, as is).
    expect(await ok(["apply", "-f", file("d.yaml", diamondYaml(name, device.name, "{note: edited}"))])).toBe(`workflow/${name} configured\n`);
    const refused = await drover(["apply", "-f", file("a.yaml", diamondYaml(name, device.name, "{note: edited}", "reboot"))]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`error: workflow/${name}: CONFLICT: step A has started (Running): only steps that have not started can be changed`);
    expect((await getWorkflow(name)).spec.steps.A!.jobTemplate!.kind).toBe("noop");

    const table = (await ok(["get", "workflows"])).trimEnd().split("\n");
    expect(table[0]).toMatch(/^NAME +PHASE +STEPS +FAILED +RUN +STARTED +AGE$/);
    expect(table.find((l) => l.startsWith(`${name} `))).toMatch(new RegExp(`^${name} +Running +0/4 +0 +1 +\\d+s +\\d+s$`));
    const list = JSON.parse(await ok(["get", "workflows", "--phase", "running", "-o", "json"])) as { items: WorkflowSummary[] };
    expect(list.items.map((w) => w.name)).toContain(name);
    expect((await ok(["get", "workflow", name])).split("\n")[1]).toMatch(new RegExp(`^${name} +Running +0/4 `));
    const one = YAML.parse(await ok(["get", "workflow", name, "-o", "yaml"])) as WorkflowObject;
    expect(one).toMatchObject({ kind: "Workflow", metadata: { name, generation: 2 }, status: { phase: "Running", order: ["A", "B", "C", "D"] } });

    const text = await ok(["describe", "workflow", name]);
    expect(text).toMatch(new RegExp(`^Name: +${name}\nPhase: +Running\nRun: +1\n`));
    const actionA = one.status.statuses.A!.actions[0]!;
    expect(text).toMatch(new RegExp(`^A: Running\n {2}Runs: +job noop on ${device.name}\n {2}Dependencies: +-\n {2}Attempts: +1 of 1\n {2}Targets: +0 of 1 done\n {2}Started: .*\n {2}Actions: +${actionA}$`, "m"));
    for (const step of ["B", "C"]) expect(text).toMatch(new RegExp(`^${step}: Pending\n.*\n {2}Dependencies: +A \\(Running, waiting\\)$`, "m"));
    expect(text).toMatch(/^D: Pending\n.*\n {2}Dependencies: +B \(Pending, waiting\), C \(Pending, waiting\)$/m);

    // Off a terminal, cancel and delete ask for --yes and do nothing.
    for (const verb of ["cancel", "delete"]) {
      const asked = await drover(["workflow", verb, name]);
      expect(asked.code).toBe(2);
      expect(asked.stderr).toContain("pass --yes");
    }
    expect((await getWorkflow(name)).status.phase).toBe("Running");

    const watching = start(["describe", "workflow", name, "--watch", "--interval", "100"]);
    await eventually(async () => (watching.run.stdout.includes("A: Running") ? true : undefined), 10_000);
    // The device runs what it is offered over the agent protocol until the run has ended.
    const reported = new Set<string>();
    const done = await eventually(
      async () => {
        for (const id of await offeredIds(s, device)) {
          if (reported.has(id)) continue;
          reported.add(id);
          await reportAll(s, device, id, "NEW", "RUNNING", "DONE");
        }
        const wf = await getWorkflow(name);
        return wf.status.phase === "Running" ? undefined : wf;
      },
      30_000,
      100,
    );
    expect(done.status.phase).toBe("Succeeded");
    expect(reported.size).toBe(4);
    const watched = await watching.done;
    expect(watched.code, watched.stderr).toBe(0);
    const phases = watched.stdout.split("\n").filter((l) => l.startsWith("Phase:"));
    expect(phases[0]).toMatch(/Running$/);
    expect(phases.at(-1)).toMatch(/Succeeded$/);
    expect(watched.stdout).toMatch(/^D: Succeeded\n.*\n {2}Dependencies: +B \(Succeeded\), C \(Succeeded\)$/m);
    expect((await ok(["get", "workflows"])).split("\n").find((l) => l.startsWith(`${name} `))).toMatch(new RegExp(`^${name} +Succeeded +4/4 +0 +1 `));

    expect(await ok(["workflow", "rerun", name])).toBe(`workflow/${name} rerun: run 2 Running\n`);
    const again = await drover(["workflow", "rerun", name]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("CONFLICT");
    expect(await ok(["workflow", "cancel", name, "--yes", "--reason", "wrong version"])).toBe(`workflow/${name} cancelled (Failed (Cancelled))\n`);
    const cancelled = await getWorkflow(name);
    expect(cancelled.status).toMatchObject({ phase: "Failed", reason: "Cancelled" });
    const watchedEnd = await drover(["describe", "workflow", name, "--watch"]);
    expect(watchedEnd.code).toBe(1);
    expect(watchedEnd.stderr).toContain(`error: workflow/${name} ended Failed (Cancelled)`);
    expect(await ok(["describe", "workflow", name])).toMatch(/^Runs \(newest first\):\n {2}RUN +PHASE .*\n {2}2 +Failed \(Cancelled\) +user:admin .*\n {2}1 +Succeeded +user:admin /m);

    expect(await ok(["workflow", "delete", name, "--yes"])).toBe(`workflow/${name} deleted\n`);
    const gone = await drover(["get", "workflow", name]);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toContain("NOT_FOUND");
  });

  it("a workflow the server refuses (a cycle) is reported with its message; other documents still apply", async () => {
    const device = await onlineDevice(s);
    const [bad, good] = [uniqueName("wf"), uniqueName("wf")];
    const cycle = `kind: Workflow\nmetadata: {name: ${bad}}\nspec:\n  steps:\n    A: {dependencies: [B], jobTemplate: {kind: noop, targets: {devices: [${device.name}]}}}\n    B: {dependencies: [A], jobTemplate: {kind: noop, targets: {devices: [${device.name}]}}}\n`;
    const r = await drover(["apply", "-f", "-"], { input: `${cycle}---\n${diamondYaml(good, device.name)}` });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(new RegExp(`error: workflow/${bad}: INVALID_REQUEST: .*(A->B->A|B->A->B)`));
    expect(r.stdout).toBe(`workflow/${good} created\n`);
    expect(await ok(["workflow", "delete", good, "--yes"])).toBe(`workflow/${good} deleted (1 unfinished action cancelled)\n`);
  });
});
