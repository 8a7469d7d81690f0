/**
 * Once per e2e run, before any worker: the simulator (agent/simulate.ts) bundled as one module,
 * so each test's simulated agents start with plain node instead of tsx transpiling them (1.4 CPU-s
 * a start against 0.4; issue 20). Inside the repository, so its npm packages resolve.
 */
import fs from "node:fs";
import path from "node:path";
import { buildSync } from "esbuild";

export const SIMULATOR = path.resolve(import.meta.dirname, "..", ".tmp", "e2e-build", "simulate.mjs");

export default function setup(): void {
  const root = path.resolve(import.meta.dirname, "..");
  const { version } = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8")) as { version: string };
  buildSync({
    // The agents' version, as scripts/build-agent.mjs bakes it in (the sources read ../package.json).
    define: { __DROVER_AGENT_VERSION__: JSON.stringify(version) },
    entryPoints: [path.resolve(import.meta.dirname, "..", "agent", "simulate.ts")],
    outfile: SIMULATOR,
    bundle: true,
    packages: "external",
    platform: "node",
    target: "node20",
    format: "esm",
    logLevel: "error",
  });
}
