/**
 * Once per e2e run, before any worker: the simulator (agent/simulate.ts) bundled as one module,
 * so each test's simulated agents start with plain node instead of tsx transpiling them (1.4 CPU-s
 * a start against 0.4; issue 20). Inside the repository, so its npm packages resolve.
 */
import path from "node:path";
import { buildSync } from "esbuild";

export const SIMULATOR = path.resolve(import.meta.dirname, "..", ".tmp", "e2e-build", "simulate.mjs");

export default function setup(): void {
  buildSync({
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
