// `node scripts/build-cli.mjs [--out DIR]`: the `drover` CLI as one file (DIR/drover.mjs,
// default dist/cli), bundled by esbuild with its npm packages left as imports (commander, zod
// and yaml are dependencies, installed wherever Drover is). bin/drover.mjs runs it when it is
// there, so the CLI needs neither tsx nor a TypeScript step in a production install; the test
// suite builds it once per run (tests/global-setup.ts) instead of starting tsx for each call.
import fs from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { build } from "esbuild";

const root = path.resolve(import.meta.dirname, "..");
const { values } = parseArgs({ options: { out: { type: "string" } } });
const outDir = path.resolve(values.out ?? path.join(root, "dist", "cli"));
const version = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8")).version;

await build({
  entryPoints: [path.join(root, "cli", "main.ts")],
  outfile: path.join(outDir, "drover.mjs"),
  bundle: true,
  platform: "node",
  target: "node20",
  format: "esm",
  packages: "external",
  define: { DROVER_CLI_VERSION: JSON.stringify(version) },
  logLevel: "warning",
});
