// `npm start`'s prestart (and the e2e suite's first step): builds what is missing or older than
// its sources, so `npm install && npm start` works on a fresh clone and after any edit:
//  - the console (`next build`, .next/),
//  - the server bundle (scripts/build-server.mjs, dist/server/main.mjs),
//  - the agent artifact (scripts/build-agent.mjs, dist/agent/),
//  - the `drover` CLI (scripts/build-cli.mjs, dist/cli/drover.mjs).
// Nothing changed: a few milliseconds of stat() calls, no build tool loaded.
//
// A production install (`npm ci --omit=dev`, or `npm prune --omit=dev` after `npm run build`)
// has no build tools: what is built is run as it is, with a warning when it looks older than its
// sources; only a missing console or server bundle stops the start.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";

const root = path.resolve(import.meta.dirname, "..");
const pkg = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8"));
const require = createRequire(path.join(root, "package.json"));

const mtime = (file) => {
  try {
    return fs.statSync(file).mtimeMs;
  } catch {
    return 0;
  }
};

// Test files and test helpers are never part of a build: editing them rebuilds nothing.
const isTestFile = (name) => /\.test\.tsx?$/.test(name) || name === "test-support";

/** The newest modification time of the files under `dir`, tests left out. */
function newest(dir) {
  let latest = 0;
  let entries;
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return latest;
  }
  for (const entry of entries) {
    if (isTestFile(entry.name)) continue;
    const p = path.join(dir, entry.name);
    latest = Math.max(latest, entry.isDirectory() ? newest(p) : mtime(p));
  }
  return latest;
}

function installed(...names) {
  return names.every((name) => {
    try {
      require.resolve(name);
      return true;
    } catch {
      return false;
    }
  });
}

function run(args, env = {}) {
  execFileSync(process.execPath, args, { cwd: root, stdio: "inherit", env: { ...process.env, ...env } });
}

/** The targets, each read afresh: whether it is built and since when, and how to build it. */
function targets() {
  const list = [
    {
      name: "console",
      builtAt: mtime(path.join(root, ".next", "BUILD_ID")),
      sourcesAt: () => Math.max(...["app", "components", "lib", "public"].map((d) => newest(path.join(root, d)))),
      // next is a dependency; next build also needs TypeScript and Tailwind's PostCSS plugin.
      tools: ["typescript", "@tailwindcss/postcss"],
      build: () => run([path.join(root, "node_modules", "next", "dist", "bin", "next"), "build"], { NEXT_TELEMETRY_DISABLED: "1" }),
      required: true,
      command: "npm run build",
    },
  ];

  // The files bundled last time (scripts/build-server.mjs lists them); a new source file is
  // always imported by one of them, which changed too.
  const serverBundle = path.join(root, "dist", "server", "main.mjs");
  let serverInputs = [];
  try {
    serverInputs = JSON.parse(fs.readFileSync(path.join(root, "dist", "server", "inputs.json"), "utf8"));
  } catch {
    // No list: the bundle is rebuilt (or was never built).
  }
  list.push({
    name: "server",
    builtAt: serverInputs.length ? mtime(serverBundle) : 0,
    // A listed file that is gone counts as changed.
    sourcesAt: () => Math.max(0, ...serverInputs.map((f) => mtime(path.join(root, f)) || Infinity)),
    tools: ["esbuild"],
    build: () => run([path.join(root, "scripts", "build-server.mjs")]),
    required: true,
    command: "npm run build",
  });

  // The `drover` CLI (bin/drover.mjs runs it; without it, the sources through tsx).
  const cliBundle = path.join(root, "dist", "cli", "drover.mjs");
  list.push({
    name: "CLI",
    builtAt: mtime(cliBundle),
    sourcesAt: () => Math.max(newest(path.join(root, "cli")), newest(path.join(root, "lib")), mtime(path.join(root, "scripts", "build-cli.mjs"))),
    tools: ["esbuild"],
    build: () => run([path.join(root, "scripts", "build-cli.mjs")]),
    required: false,
    command: "npm run build",
  });

  // The agent the server hands out, in the default folder only (DROVER_AGENT_DIST names one the
  // operator fills). A build of another version than package.json's was made on purpose
  // (`npm run build:agent -- --version X`): it is never replaced here, however old.
  const agentDir = path.join(root, "dist", "agent");
  if (!process.env.DROVER_AGENT_DIST || path.resolve(process.env.DROVER_AGENT_DIST) === agentDir) {
    const manifestFile = path.join(agentDir, "manifest.json");
    let version = null;
    try {
      version = JSON.parse(fs.readFileSync(manifestFile, "utf8")).version;
    } catch {
      // No build.
    }
    if (version === null || version === pkg.version) {
      list.push({
        name: "agent",
        builtAt: version === null ? 0 : mtime(manifestFile),
        sourcesAt: () => Math.max(newest(path.join(root, "agent")), newest(path.join(root, "lib")), mtime(path.join(root, "scripts", "build-agent.mjs"))),
        tools: ["esbuild"],
        build: () => run([path.join(root, "scripts", "build-agent.mjs")]),
        // The server runs without it; its download answers 404 naming the command.
        required: false,
        command: "npm run build:agent",
      });
    }
  }
  return list;
}

/** The targets missing or older than their sources. */
const stale = () => targets().filter((t) => t.builtAt === 0 || t.sourcesAt() > t.builtAt);

/**
 * Several of these may start at once (`npm start` beside the e2e suite, the test suite's
 * projects): one builds, the others wait for it and then find nothing left to do. A lock
 * whose holder is gone (killed mid-build) is taken over.
 */
function lock() {
  const dir = path.join(root, ".tmp", "ensure-build.lock");
  try {
    fs.mkdirSync(path.dirname(dir), { recursive: true });
  } catch {
    return () => undefined; // a read-only install: nothing will be built there anyway
  }
  const deadline = Date.now() + 30 * 60_000;
  let said = false;
  for (;;) {
    try {
      fs.mkdirSync(dir);
      fs.writeFileSync(path.join(dir, "pid"), String(process.pid));
      const release = () => fs.rmSync(dir, { recursive: true, force: true });
      process.once("exit", release);
      return release;
    } catch (e) {
      if (e.code !== "EEXIST") return () => undefined;
    }
    let holder = NaN;
    try {
      holder = Number(fs.readFileSync(path.join(dir, "pid"), "utf8"));
    } catch {
      // Being created or removed: look again.
    }
    if (Number.isInteger(holder) && !alive(holder)) {
      fs.rmSync(dir, { recursive: true, force: true });
      continue;
    }
    if (Date.now() > deadline) throw new Error(`ensure-build: ${dir} held for 30 min by process ${holder}; remove it if that process is gone`);
    if (!said) console.log(`ensure-build: another build is running (process ${holder}), waiting for it…`);
    said = true;
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 250);
  }
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return e.code === "EPERM";
  }
}

/**
 * Builds one target when its tools are installed. Without them: a missing target that the
 * server cannot run without stops the start; anything else is a warning.
 */
function ensure({ name, builtAt, tools, build, required, command }) {
  if (!installed(...tools)) {
    const why = `${tools.join(" and ")} ${tools.length > 1 ? "are" : "is"} not installed (a production install?)`;
    if (builtAt !== 0) return void console.warn(`ensure-build: the ${name} is older than its sources, but ${why}: running the build there is.`);
    const message = `ensure-build: no ${name} build, and ${why}. Run \`${command}\` where the dev dependencies are installed.`;
    if (required) {
      console.error(message);
      process.exit(1);
    }
    return void console.warn(message);
  }
  console.log(builtAt === 0 ? `Building the ${name} (first start)…` : `The ${name}'s sources changed: rebuilding…`);
  build();
}

if (stale().length > 0) {
  const release = lock();
  try {
    // Read again: a build this one waited for may have done it all.
    for (const target of stale()) ensure(target);
  } finally {
    release();
  }
}
