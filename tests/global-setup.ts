/**
 * Once per `vitest run`, before any test file, the programs the process tests start, built as
 * they ship, so each start is `node` on one file instead of tsx transpiling the sources (tsx
 * started the agent in 0.9 CPU-s against 0.25, the API server in 4.2 against 2.1; issue 20):
 *  - the `drover` CLI (scripts/build-cli.mjs), for its ~230 invocations: `inject("cliBundle")`;
 *  - the device agent (scripts/build-agent.mjs) and the healthy-host preload, for the agent
 *    process tests: `inject("agentBundle")`, `inject("healthyHost")`;
 *  - the console-less server (scripts/api-server.ts, bundled as scripts/build-server.mjs bundles
 *    the server), for the servers started as processes: `inject("apiServerBundle")`.
 */
import { execFile } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import type { TestProject } from "vitest/node";
import { bundleModule } from "./helpers/bundle";

const ROOT = path.resolve(import.meta.dirname, "..");
const run = promisify(execFile);

declare module "vitest" {
  export interface ProvidedContext {
    /** The built CLI (drover.mjs), inside the repository so its npm packages resolve. */
    cliBundle: string;
    /** The built agent (drover-agent.mjs): plain node runs it, as on a device. */
    agentBundle: string;
    /** agent/test-support/healthy-host.ts as JavaScript, to preload into an agent process. */
    healthyHost: string;
    /** scripts/api-server.ts as one module: a Drover server without the console. */
    apiServerBundle: string;
  }
}

export default async function setup(project: TestProject): Promise<() => void> {
  fs.mkdirSync(path.join(ROOT, ".tmp"), { recursive: true });
  const dir = fs.mkdtempSync(path.join(ROOT, ".tmp", "test-build-"));
  const script = (name: string, ...args: string[]) => run(process.execPath, [path.join(ROOT, "scripts", name), ...args], { cwd: ROOT });
  // Side by side: every test file waits for this, and each build is mostly one node process's start.
  await Promise.all([
    script("build-cli.mjs", "--out", dir),
    script("build-agent.mjs", "--out", path.join(dir, "agent"), "--quiet"),
    bundleModule("agent/test-support/healthy-host.ts", path.join(dir, "healthy-host.mjs")),
    bundleModule("scripts/api-server.ts", path.join(dir, "api-server-bundle.mjs")),
  ]);
  project.provide("cliBundle", path.join(dir, "drover.mjs"));
  project.provide("agentBundle", path.join(dir, "agent", "drover-agent.mjs"));
  project.provide("healthyHost", path.join(dir, "healthy-host.mjs"));
  // Started through a one-line entry: server/main.ts starts itself when it is the program node
  // runs (its import.meta.url is argv[1]), which, bundled into this file, it would be.
  fs.writeFileSync(path.join(dir, "api-server.mjs"), 'import "./api-server-bundle.mjs";\n');
  project.provide("apiServerBundle", path.join(dir, "api-server.mjs"));
  return () => fs.rmSync(dir, { recursive: true, force: true });
}
