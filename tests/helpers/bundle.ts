/**
 * One of Drover's TypeScript entry points as one ES module that plain node runs, for the
 * programs the test suites start (tests/global-setup.ts, e2e/global-setup.ts): our own code
 * bundled, npm packages left as imports (the output lives inside the repository, so they
 * resolve), and the agent's version baked in as scripts/build-agent.mjs does (the sources
 * read ../package.json, which a bundle under .tmp would not find).
 */
import fs from "node:fs";
import path from "node:path";
import { build } from "esbuild";

const ROOT = path.resolve(import.meta.dirname, "..", "..");
const { version } = JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8")) as { version: string };

/** `entry` relative to the repository's root. */
export async function bundleModule(entry: string, outfile: string): Promise<void> {
  await build({
    entryPoints: [path.join(ROOT, entry)],
    outfile,
    bundle: true,
    packages: "external",
    platform: "node",
    target: "node20",
    format: "esm",
    define: { __DROVER_AGENT_VERSION__: JSON.stringify(version) },
    logLevel: "error",
  });
}
