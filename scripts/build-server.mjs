// `npm run build` (server part): server/main.ts and all of our own code it imports (server/,
// lib/, the generated Prisma clients in server/generated/) as ONE ES module,
// dist/server/main.mjs, so production runs `node dist/server/main.mjs` with no TypeScript
// transpiler (tsx is a dev dependency). npm packages stay imports, loaded from node_modules
// at run time: better-sqlite3 and the Prisma engines are native or wasm, and Next reads its
// own files from disk.
//
// The server finds the package root by walking up to Drover's package.json (server/paths.ts),
// so the bundle reads prisma/, .next, dist/agent and server/agent-dist/install.sh where the
// sources do. dist/server/inputs.json lists the files bundled, for scripts/ensure-build.mjs.
import fs from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { build } from "esbuild";

const root = path.resolve(import.meta.dirname, "..");
const { values } = parseArgs({ options: { quiet: { type: "boolean" } } });
const outDir = path.join(root, "dist", "server");
const outfile = path.join(outDir, "main.mjs");

const result = await build({
  entryPoints: [path.join(root, "server", "main.ts")],
  outfile,
  bundle: true,
  packages: "external",
  platform: "node",
  target: "node20",
  format: "esm",
  // Readable stack traces in the server's logs; `node --enable-source-maps` maps them to the sources.
  sourcemap: "linked",
  legalComments: "none",
  metafile: true,
  logLevel: "error",
  write: false,
});
// Each file written whole and renamed into place: a server starting meanwhile (another
// `npm start`, the e2e suite) reads the old bundle or the new one, never half of one.
fs.mkdirSync(outDir, { recursive: true });
for (const out of result.outputFiles) {
  fs.writeFileSync(`${out.path}.${process.pid}.tmp`, out.contents);
  fs.renameSync(`${out.path}.${process.pid}.tmp`, out.path);
}

// Paths relative to the root, this script included: a change to how the bundle is made is a change too.
const inputs = [...Object.keys(result.metafile.inputs), path.relative(root, import.meta.filename)].sort();
fs.writeFileSync(path.join(outDir, `inputs.json.${process.pid}.tmp`), JSON.stringify(inputs, null, 1) + "\n");
fs.renameSync(path.join(outDir, `inputs.json.${process.pid}.tmp`), path.join(outDir, "inputs.json"));
if (!values.quiet) console.log(`drover server: ${path.relative(process.cwd(), outfile)} (${(fs.statSync(outfile).size / 1024).toFixed(0)} KiB, ${inputs.length} source files)`);
