// `npm run build:agent [-- --version X --out DIR --sea --keep]`: the device agent as one
// self-contained file that runs on plain Node 20 with no node_modules (issue 12), bundled by
// esbuild, and a manifest with its version and sha256 that the server serves beside it
// (GET /api/agent/v1/download). With --sea, also a single executable that needs no Node on
// the device (Node's single executable applications: this Node binary with the agent
// injected by postject), for this machine's platform. The agent's code is unchanged; only
// its version is baked in.
//
// --keep: the build already in DIR (its manifest and files) is moved to DIR/versions/<its
// version>/ first, so the server holds both (agent upgrades name either: /download?version=X).
// Without it the new build replaces the current one; kept builds stay either way.
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { build } from "esbuild";

const root = path.resolve(import.meta.dirname, "..");
const { values } = parseArgs({ options: { version: { type: "string" }, out: { type: "string" }, quiet: { type: "boolean" }, sea: { type: "boolean" }, keep: { type: "boolean" } } });
const version = values.version ?? JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8")).version;
const outDir = path.resolve(values.out ?? path.join(root, "dist", "agent"));
const file = path.join(outDir, "drover-agent.mjs");
const say = (line) => values.quiet || console.log(line);
// Also a folder name under versions/ on the server (lib/agent-version.ts AgentVersion).
if (!/^[0-9A-Za-z][0-9A-Za-z.+_-]{0,63}$/.test(version)) {
  console.error(`build:agent: --version ${JSON.stringify(version)}: letters, digits, '.', '+', '_', '-' (e.g. 1.2.3)`);
  process.exit(2);
}
fs.mkdirSync(outDir, { recursive: true });

// Moves the current build (manifest.json and the files it lists) to versions/<version>/.
function keepCurrent() {
  const at = path.join(outDir, "manifest.json");
  if (!fs.existsSync(at)) return;
  const old = JSON.parse(fs.readFileSync(at, "utf8"));
  if (old.version === version) return; // the same version built again replaces itself
  const to = path.join(outDir, "versions", old.version);
  fs.rmSync(to, { recursive: true, force: true });
  fs.mkdirSync(to, { recursive: true });
  for (const f of [old.file, ...(old.binaries ?? []).map((b) => b.file)]) {
    if (fs.existsSync(path.join(outDir, f))) fs.renameSync(path.join(outDir, f), path.join(to, f));
  }
  fs.renameSync(at, path.join(to, "manifest.json"));
  say(`drover-agent ${old.version}: kept in ${path.relative(process.cwd(), to) || to}`);
}
if (values.keep) keepCurrent();
// A kept build of the version being built goes: the current one is that version now.
fs.rmSync(path.join(outDir, "versions", version), { recursive: true, force: true });

// zod re-exports the error messages of ~40 languages (z.locales), which the agent never uses
// (its messages are English, set by zod itself): half the bundle's size, and ~1 MB of memory.
const withoutZodLocales = {
  name: "without-zod-locales",
  setup(b) {
    b.onResolve({ filter: /[\\/]locales[\\/]index\.js$/, namespace: "file" }, (args) => (args.importer.includes(`${path.sep}zod${path.sep}`) ? { path: args.path, namespace: "zod-locales" } : undefined));
    b.onLoad({ filter: /.*/, namespace: "zod-locales" }, () => ({ contents: "export {};", loader: "js" }));
  },
};

// pino's worker-thread transports (thread-stream, and worker_threads for isMainThread):
// the agent logs to stdout synchronously and never starts a transport, and loading them is
// ≈0.5 MB of an idle agent's RSS. A transport asked for in this build throws.
const withoutPinoWorkers = {
  name: "without-pino-workers",
  setup(b) {
    const inPino = (args) => /[\\/]node_modules[\\/](pino|thread-stream)[\\/]/.test(args.importer);
    b.onResolve({ filter: /^(thread-stream|worker_threads|node:worker_threads)$/ }, (args) => (inPino(args) ? { path: args.path, namespace: "pino-workers" } : undefined));
    b.onLoad({ filter: /.*/, namespace: "pino-workers" }, (args) => ({
      contents: args.path === "thread-stream" ? "module.exports = function ThreadStream() { throw new Error('pino transports are not in the agent bundle'); };" : "module.exports = { isMainThread: true };",
      loader: "js",
    }));
  },
};

// `import { z } from "zod"` binds zod's namespace object, which holds every export: esbuild
// keeps all of zod. `import * as z from "zod"` is the same namespace (z.object is zod's
// object), but esbuild sees each `z.x` and bundles only what is used: −100 KiB, and ≈0.8 MB
// of an idle agent's RSS (issue 12). The sources (lib/ is shared with the server) keep their
// import; the build rewrites it.
const zodNamespaceImport = {
  name: "zod-namespace-import",
  setup(b) {
    b.onLoad({ filter: /\.ts$/ }, (args) => {
      if (args.path.includes(`${path.sep}node_modules${path.sep}`)) return undefined;
      const source = fs.readFileSync(args.path, "utf8");
      const rewritten = source.replace(/^import \{ z \} from "zod";/gm, 'import * as z from "zod";');
      return { contents: rewritten, loader: "ts" };
    });
  },
};

// node:child_process (with net's pipes and dgram) is loaded when the agent first starts a
// process (an application, an exec or reboot action, an upgrade's smoke test), not at start:
// ≈0.25 MB of an idle agent's RSS. The agent's imports of it get a stand-in whose properties
// require() the module on first use; esbuild reads imported names as properties
// (`import { spawn }` → `mod.spawn`), so nothing is read before a call.
const lazyChildProcess = {
  name: "lazy-child-process",
  setup(b) {
    b.onResolve({ filter: /^(node:)?child_process$/ }, (args) => {
      // The stand-in's own require() is of the real module.
      if (args.namespace === "lazy-builtin") return { path: "node:child_process", external: true };
      return args.importer.includes(`${path.sep}node_modules${path.sep}`) ? undefined : { path: "child_process", namespace: "lazy-builtin" };
    });
    b.onLoad({ filter: /.*/, namespace: "lazy-builtin" }, () => {
      const names = Object.keys(createRequire(import.meta.url)("node:child_process")).filter((name) => /^[A-Za-z_$][\w$]*$/.test(name));
      const getters = names.map((name) => `get ${name}() { return load().${name}; }`).join(", ");
      return { contents: `let loaded;\nconst load = () => (loaded ??= require("node:child_process"));\nmodule.exports = { ${getters} };`, loader: "js" };
    });
  },
};

const common = {
  entryPoints: [path.join(root, "agent", "main.ts")],
  bundle: true,
  platform: "node",
  target: "node20",
  minify: true,
  // Stack traces in the agent's logs keep their function and class names.
  keepNames: true,
  legalComments: "none",
  // The form tells the agent which file it runs from, for upgrades (agent/upgrade.ts).
  define: { __DROVER_AGENT_VERSION__: JSON.stringify(version), __DROVER_AGENT_FORM__: JSON.stringify("script") },
  logLevel: "error",
  plugins: [withoutZodLocales, withoutPinoWorkers, zodNamespaceImport, lazyChildProcess],
};

await build({
  ...common,
  outfile: file,
  format: "esm",
  // Some bundled CommonJS (pino's dependencies) calls require() for Node's own modules.
  banner: { js: `#!/usr/bin/env node\nimport { createRequire as __droverRequire } from "node:module";\nconst require = __droverRequire(import.meta.url);` },
});
fs.chmodSync(file, 0o755);

const describe = (f) => {
  const bytes = fs.readFileSync(f);
  return { file: path.basename(f), size: bytes.length, sha256: createHash("sha256").update(bytes).digest("hex") };
};
const manifest = { name: "drover-agent", version, ...describe(file), node: ">=20", binaries: [] };
say(`drover-agent ${version}: ${path.relative(process.cwd(), file)} (${(manifest.size / 1024).toFixed(0)} KiB, sha256 ${manifest.sha256.slice(0, 12)}…)`);

if (values.sea) {
  // Node 20's single executable applications take one CommonJS script.
  const ARCH = { x64: "amd64", arm64: "arm64" };
  const platform = `${os.platform()}-${ARCH[os.arch()] ?? os.arch()}`;
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "drover-sea-"));
  try {
    await build({ ...common, define: { ...common.define, __DROVER_AGENT_FORM__: JSON.stringify("sea") }, outfile: path.join(work, "agent.cjs"), format: "cjs" });
    fs.writeFileSync(path.join(work, "sea-config.json"), JSON.stringify({ main: "agent.cjs", output: "sea.blob", disableExperimentalSEAWarning: true }));
    execFileSync(process.execPath, ["--experimental-sea-config", "sea-config.json"], { cwd: work, stdio: "ignore" });
    const binary = path.join(outDir, `drover-agent-${platform}`);
    const tmp = `${binary}.tmp`;
    fs.copyFileSync(process.execPath, tmp);
    const { inject } = await import("postject");
    await inject(tmp, "NODE_SEA_BLOB", fs.readFileSync(path.join(work, "sea.blob")), { sentinelFuse: "NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2" });
    fs.chmodSync(tmp, 0o755);
    fs.renameSync(tmp, binary);
    manifest.binaries.push({ platform, ...describe(binary) });
    say(`drover-agent ${version}: ${path.relative(process.cwd(), binary)} (single executable, ${(fs.statSync(binary).size / 1e6).toFixed(0)} MB)`);
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

fs.writeFileSync(path.join(outDir, "manifest.json"), JSON.stringify(manifest, null, 2) + "\n");
