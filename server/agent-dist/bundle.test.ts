/**
 * Issue 12: the agent as one built file. `npm run build:agent` makes it; copied alone into
 * an empty directory (no node_modules, no package.json), plain `node` runs it, and it
 * enrolls, is approved and runs an action against a real server.
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AgentProcess, HEALTHY_HOST, eventually } from "@/agent/test-support/agent-process";
import { startTestServer, type TestServer } from "@/tests/helpers/server";

const ROOT = path.resolve(import.meta.dirname, "../..");
let server: TestServer;
let built: string;

beforeAll(async () => {
  server = await startTestServer({ DROVER_HEARTBEAT_SECONDS: "2", LOG_LEVEL: "warn" });
  built = path.join(server.dir, "build");
  execFileSync(process.execPath, [path.join(ROOT, "scripts/build-agent.mjs"), "--out", built, "--version", "9.8.7", "--quiet"], { cwd: ROOT });
}, 60_000);

afterAll(async () => {
  AgentProcess.killAll();
  await server?.close();
});

describe("the built agent", () => {
  it("is one file under 1.5 MB whose manifest names its version and sha256", () => {
    const manifest = JSON.parse(fs.readFileSync(path.join(built, "manifest.json"), "utf8")) as { version: string; sha256: string; size: number; file: string };
    const bytes = fs.readFileSync(path.join(built, manifest.file));
    expect(manifest).toMatchObject({ version: "9.8.7", size: bytes.length, sha256: createHash("sha256").update(bytes).digest("hex") });
    expect(bytes.length).toBeLessThan(1.5 * 1024 * 1024);
  });

  it("runs from an empty directory with plain node: enrolls, is approved, reports its version, runs an action", async () => {
    const alone = path.join(server.dir, "alone");
    fs.mkdirSync(alone);
    fs.copyFileSync(path.join(built, "drover-agent.mjs"), path.join(alone, "drover-agent.mjs"));
    expect(fs.readdirSync(alone)).toEqual(["drover-agent.mjs"]);

    // The host reads as healthy whatever this machine's load: the device is Online and is offered actions.
    const agent = new AgentProcess(["--server", server.url, "--name", "bundled-1", "--state-dir", path.join(alone, "state")], { bundle: "./drover-agent.mjs", cwd: alone, preload: [HEALTHY_HOST] });
    const enrolled = await agent.waitFor("enrolled");
    expect((await server.api("POST", `/enrollments/${String(enrolled.enrollmentId)}/approve`, {})).status).toBe(200);
    await agent.waitFor("approved");

    const device = await eventually(async () => {
      const d = await server.api<{ agentVersion: string; summary: string }>("GET", "/devices/bundled-1");
      return d.status === 200 && d.body.summary !== "Offline" ? d.body : undefined;
    }, 20_000, "the bundled agent reporting");
    expect(device.agentVersion).toBe("9.8.7");

    const created = await server.api<{ items: { id: string }[] }>("POST", "/actions", { device: "bundled-1", kind: "noop", args: {} });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const id = created.body.items[0]!.id;
    const done = await eventually(async () => {
      const a = await server.api<{ state: string }>("GET", `/actions/${id}`);
      return ["DONE", "FAILED"].includes(a.body.state) ? a.body : undefined;
    }, 20_000, "the action ending");
    expect(done.state).toBe("DONE");
    expect(agent.stderr.join("")).toBe("");
  }, 60_000);
});
