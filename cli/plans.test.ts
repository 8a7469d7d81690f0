/**
 * `drover` and plans against a real server (issue 8): apply -f of seed
 * 000's k0s Plan whose nodes do not exist (IncompleteTargets at once), get plans / get plan /
 * describe plan, retry; a plan that waits for approval, cancelled (asked unless --yes); one
 * approved and followed with describe --watch to Completed while a device runs its action
 * over the agent protocol.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import YAML from "yaml";
import { startTestServer, type TestServer } from "../tests/helpers/server";
import { eventually, uniqueName } from "../tests/helpers/devices";
import { offeredIds, onlineDevice, reportAll, tokenFor } from "../tests/helpers/actions";
import { commandNodes, type PlanSummaryView, type PlanView } from "../lib/plan-status";
import { cliRunner } from "./test-support";

let s: TestServer;
let dir: string;

const { start, drover, ok, file } = cliRunner(() => ({ url: s.url, adminToken: s.adminToken, dir }));

async function getPlan(id: string): Promise<PlanView> {
  const res = await s.api<PlanView>("GET", `/plans/${id}`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

/** `plan/ID created (STATE)` → the id and state. */
function created(out: string): { id: string; state: string } {
  const m = /^plan\/(\S+) created \((\w+)\)\n$/.exec(out);
  expect(m, out).not.toBeNull();
  return { id: m![1]!, state: m![2]! };
}

/** Seed 000's plan, its nodes named by the test. */
const k0sPlan = (controller: string, worker: string) => `apiVersion: autopilot.k0sproject.io/v1beta2
kind: Plan
metadata:
  name: autopilot
  annotations: <omitted>
spec:
  id: id123
  timestamp: now
  commands:
    - k0supdate:
        version: v1.30.1+k0s.0
        platforms:
          linux-amd64:
            url: https://github.com/k0sproject/k0s/releases/download/v1.30.1+k0s.0/k0s-v1.30.1+k0s.0-amd64
        targets:
          controllers:
            discovery:
              static:
                nodes:
                  - ${controller}
          workers:
            discovery:
              static:
                nodes:
                  - ${worker}
`;

/** Drover's dialect: a noop action on one worker. */
const noopPlan = (worker: string) => `apiVersion: drover/v1
kind: Plan
metadata:
  name: noop-${worker}
spec:
  commands:
    - action:
        kind: noop
        targets:
          workers:
            discovery:
              static:
                nodes: [${worker}]
`;

beforeAll(async () => {
  s = await startTestServer({ DROVER_SWEEP_SECONDS: "600" });
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "drover-cli-plans-"));
});
afterAll(async () => {
  await s?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

describe("a plan whose nodes do not exist", () => {
  // About 20 node processes of the CLI, one after another: 21 s on a quiet machine, past 30 s under load.
  it("apply creates it IncompleteTargets at once; get plans, get plan, describe, watch (exit 1), retry", { timeout: 90_000 }, async () => {
    const [controller, worker] = [uniqueName("nope"), uniqueName("nope")];
    const { id, state } = created(await ok(["apply", "-f", file("k0s.yaml", k0sPlan(controller, worker))]));
    expect(state).toBe("IncompleteTargets");

    const table = (await ok(["get", "plans"])).trimEnd().split("\n");
    expect(table[0]).toMatch(/^ID +NAME +STATE +COMMANDS +PROGRESS +APPROVAL +CREATED-BY +AGE$/);
    expect(table.find((l) => l.startsWith(`${id} `))).toMatch(new RegExp(`^${id} +autopilot +IncompleteTargets +k0supdate:IncompleteTargets +0/2 +- +user:admin +\\d+s$`));

    const list = JSON.parse(await ok(["get", "plans", "--state", "incompletetargets", "-o", "json"])) as { items: PlanSummaryView[] };
    expect(list.items.map((p) => p.id)).toContain(id);
    expect(list.items.every((p) => p.state === "IncompleteTargets")).toBe(true);
    const none = await drover(["get", "plans", "--state", "Cancelled,DeadlineExceeded"]);
    expect(none.stdout.split("\n").some((l) => l.startsWith(`${id} `))).toBe(false);

    const one = YAML.parse(await ok(["get", "plan", id, "-o", "yaml"])) as PlanView;
    expect(one).toMatchObject({ kind: "Plan", metadata: { id, name: "autopilot" }, status: { state: "IncompleteTargets" } });
    expect((await ok(["get", "plan", id])).split("\n")[1]).toMatch(new RegExp(`^${id} +autopilot +IncompleteTargets `));

    const text = await ok(["describe", "plan", id]);
    expect(text).toMatch(new RegExp(`^Name: +autopilot\nID: +${id}\nAPI Version: +autopilot\\.k0sproject\\.io/v1beta2\nState: +IncompleteTargets\n`));
    expect(text).toMatch(new RegExp(`^Message: +command 0 \\(k0supdate\\): .*no device named ${controller}`, "m"));
    expect(text).toContain("Command 0: k0supdate v1.30.1+k0s.0 (IncompleteTargets)");
    expect(text).toMatch(new RegExp(`^ {2}${controller} +controller +SignalMissingNode +- +\\d+s +no device named ${controller}$`, "m"));
    expect(text).toMatch(new RegExp(`^ {2}${worker} +worker +SignalMissingNode +- +\\d+s +no device named ${worker}$`, "m"));
    expect(text.indexOf(controller)).toBeLessThan(text.lastIndexOf(worker));

    const watched = await drover(["plan", "watch", id]);
    expect(watched.code).toBe(1);
    expect(watched.stdout).toContain("State:        IncompleteTargets");
    expect(watched.stderr).toContain(`error: plan/${id} ended IncompleteTargets: command 0 (k0supdate): `);

    const retried = await ok(["plan", "retry", id]);
    const m = new RegExp(`^plan/(\\S+) created \\((\\w+)\\), retrying plan/${id}\n$`).exec(retried);
    expect(m, retried).not.toBeNull();
    expect(m![2]).toBe("IncompleteTargets");
    expect((await getPlan(m![1]!)).metadata.retryOf).toBe(id);
    expect(await ok(["describe", "plan", id])).toMatch(new RegExp(`^Retried by: +${m![1]}$`, "m"));
  });

  it("one plan of several documents: its own text is sent; the server's refusal is printed, the other documents still applied", async () => {
    const worker = uniqueName("nope");
    const bad = noopPlan(worker).replace("kind: noop", "kind: noop\n        extra: 1");
    const r = await drover(["apply", "-f", "-"], { input: `${bad}---\n${noopPlan(worker)}` });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`error: document 1 (plan noop-${worker}): INVALID_REQUEST: `);
    expect(r.stderr).toContain("extra");
    expect(r.stderr).toContain("1 of 2 objects not applied");
    expect(created(r.stdout).state).toBe("IncompleteTargets");
    // JSON is YAML too: a JSON file's text goes as it is.
    const json = file("plan.json", JSON.stringify(YAML.parse(noopPlan(worker)), null, 2));
    expect(created(await ok(["apply", "-f", json])).state).toBe("IncompleteTargets");
  });

  it("--require-approval / --deadline without a plan in the file, or a bad deadline: usage errors (2)", async () => {
    const fleet = file("fleet.yaml", "kind: Fleet\nmetadata: {name: x}\n");
    const r = await drover(["apply", "-f", fleet, "--require-approval"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("are for plans");
    const bad = await drover(["apply", "-f", file("p.yaml", noopPlan("w")), "--deadline", "soon"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('expected a duration such as "30s"');
    expect((await drover(["describe", "plan", "plan-nosuch"])).stderr).toContain("NOT_FOUND");
  });
});

describe("a plan that waits for approval", () => {
  it("shows Pending; cancel asks unless --yes (refused off a terminal), then cancels; again is CONFLICT", async () => {
    const device = await onlineDevice(s);
    const { id } = created(await ok(["apply", "-f", file("noop.yaml", noopPlan(device.name)), "--require-approval", "--deadline", "30m"]));
    expect((await getPlan(id)).status).toMatchObject({ approval: { required: true, approvedBy: null }, deadline: "30m" });
    expect((await ok(["get", "plans"])).split("\n").find((l) => l.startsWith(`${id} `))).toMatch(/ +action:\w+ +0\/1 +Pending +user:admin +\d+s$/);
    const text = await ok(["describe", "plan", id]);
    expect(text).toContain(`Approval:     waiting for an operator (drover plan approve ${id})`);
    expect(text).toMatch(/^Deadline: +30m, \S+ \(in (29|30)m\)$/m);
    expect(text).toMatch(new RegExp(`^ {2}${device.name} +worker +SignalPending +- `, "m"));

    const asked = await drover(["plan", "cancel", id]);
    expect(asked.code).toBe(2);
    expect(asked.stderr).toContain("pass --yes");
    expect((await getPlan(id)).status.state).not.toBe("Cancelled");

    expect(await ok(["plan", "cancel", id, "--yes", "--reason", "wrong version"])).toBe(`plan/${id} cancelled\n`);
    const after = await getPlan(id);
    expect(after.status).toMatchObject({ state: "Cancelled" });
    expect(after.status.message).toContain("wrong version");
    const again = await drover(["plan", "cancel", id, "--yes"]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("CONFLICT");
    const watched = await drover(["describe", "plan", id, "--watch"]);
    expect(watched.code).toBe(1);
    expect(watched.stderr).toContain(`error: plan/${id} ended Cancelled: `);
  });

  it("approve: the node is signalled; describe --watch re-prints until Completed (exit 0); a viewer cannot approve", async () => {
    const device = await onlineDevice(s);
    const { id } = created(await ok(["apply", "-f", file("noop2.yaml", noopPlan(device.name)), "--require-approval"]));
    const viewer = await tokenFor(s, "viewer");
    const refused = await drover(["plan", "approve", id], { token: viewer.token });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("FORBIDDEN");

    const watching = start(["describe", "plan", id, "--watch", "--interval", "100"]);
    await eventually(async () => (watching.run.stdout.includes("waiting for an operator") ? true : undefined), 10_000);
    expect(await ok(["plan", "approve", id])).toMatch(new RegExp(`^plan/${id} approved \\(SchedulableWait\\)\n$`));
    const actionId = await eventually(async () => commandNodes((await getPlan(id)).status.commands[0]!).workers?.[0]?.actionId ?? undefined, 10_000);
    await eventually(async () => (watching.run.stdout.includes(actionId) ? true : undefined), 10_000);
    expect(await offeredIds(s, device)).toContain(actionId);
    await reportAll(s, device, actionId, "NEW", "RUNNING", "DONE");

    const done = await watching.done;
    expect(done.code, done.stderr).toBe(0);
    const states = done.stdout.split("\n").filter((l) => l.startsWith("State:"));
    expect(states[0]).toMatch(/SchedulableWait$/);
    expect(states.at(-1)).toMatch(/Completed$/);
    expect(done.stdout).toMatch(new RegExp(`^ {2}${device.name} +worker +SignalCompleted +${actionId} `, "m"));
    expect(done.stdout).toContain("Approval:     approved by ");
  });
});
