/**
 * Once per e2e run, before any worker: the simulator (agent/simulate.ts) bundled as one module,
 * so each test's simulated agents start with plain node instead of tsx transpiling them (1.4 CPU-s
 * a start against 0.4; issue 20). It reports the package's version, as the built agent does.
 */
import path from "node:path";
import { bundleModule } from "../tests/helpers/bundle";

export const SIMULATOR = path.resolve(import.meta.dirname, "..", ".tmp", "e2e-build", "simulate.mjs");

export default async function setup(): Promise<void> {
  await bundleModule("agent/simulate.ts", SIMULATOR);
}
