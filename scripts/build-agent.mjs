// `npm run build:agent [-- --version X --out DIR]`: the device agent as one self-contained
// file that runs on plain Node 20 with no node_modules (issue 12), bundled by esbuild, plus
// a manifest with its version and sha256 that the server serves beside it
// (GET /api/agent/v1/download). The agent's code is unchanged; only its version is baked in.
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { build } from "esbuild";

const root = path.resolve(import.meta.dirname, "..");
const { values } = parseArgs({ options: { version: { type: "string" }, out: { type: "string" }, quiet: { type: "boolean" } } });
const version = values.version ?? JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8")).version;
const outDir = path.resolve(values.out ?? path.join(root, "dist", "agent"));
const file = path.join(outDir, "drover-agent.mjs");

// zod re-exports the error messages of ~40 languages (z.locales), which the agent never uses
// (its messages are English, set by zod itself): half the bundle's size, and ~1 MB of memory.
const withoutZodLocales = {
  name: "without-zod-locales",
  setup(b) {
    b.onResolve({ filter: /[\\/]locales[\\/]index\.js$/, namespace: "file" }, (args) => (args.importer.includes(`${path.sep}zod${path.sep}`) ? { path: args.path, namespace: "zod-locales" } : undefined));
    b.onLoad({ filter: /.*/, namespace: "zod-locales" }, () => ({ contents: "export {};", loader: "js" }));
  },
};

await build({
  entryPoints: [path.join(root, "agent", "main.ts")],
  outfile: file,
  bundle: true,
  platform: "node",
  target: "node20",
  format: "esm",
  minify: true,
  // Stack traces in the agent's logs keep their function and class names.
  keepNames: true,
  legalComments: "none",
  define: { __DROVER_AGENT_VERSION__: JSON.stringify(version) },
  // Some bundled CommonJS (pino's dependencies) calls require() for Node's own modules.
  banner: { js: `#!/usr/bin/env node\nimport { createRequire as __droverRequire } from "node:module";\nconst require = __droverRequire(import.meta.url);` },
  logLevel: "warning",
  plugins: [withoutZodLocales],
});
fs.chmodSync(file, 0o755);

const bytes = fs.readFileSync(file);
const manifest = { name: "drover-agent", version, file: path.basename(file), size: bytes.length, sha256: createHash("sha256").update(bytes).digest("hex"), node: ">=20" };
fs.writeFileSync(path.join(outDir, "manifest.json"), JSON.stringify(manifest, null, 2) + "\n");
if (!values.quiet) console.log(`drover-agent ${version}: ${path.relative(process.cwd(), file)} (${(bytes.length / 1024).toFixed(0)} KiB, sha256 ${manifest.sha256.slice(0, 12)}…)`);
