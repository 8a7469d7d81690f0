/**
 * The agent as shipped (issue 12): `npm run build:agent`'s file size, and the memory of the
 * built agent idling against a real server (enrolled, approved, long-polling, heartbeating),
 * run with plain `node` from an empty directory. A step of `npm run bench`, or alone with
 * `npx tsx bench/agent-footprint.ts` (its own server; JSON on stdout).
 *
 * RSS is read from /proc after BENCH_AGENT_IDLE_SECONDS (20) of idling: as installed (install.sh's
 * wrapper runs it with AGENT_NODE_FLAGS and AGENT_MALLOC_ENV, lib/agent-version.ts), and for
 * comparison with plain `node` and no settings, a bare `node` that only waits, and the agent
 * run from its sources through tsx (how it ran before it was built).
 *
 * Options (env): BENCH_PORT (3296), BENCH_AGENT_IDLE_SECONDS (20).
 */
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { AGENT_MALLOC_ENV, AGENT_NODE_FLAGS } from "../lib/agent-version";
import { client, logger, root, rssMb, runScope, sleep, startServerProcess } from "./lib";

export interface AgentFootprintReport {
  bundleKiB: number;
  idleRssMb: { asInstalled: number; plainNode: number; bareNode: number; fromSourcesThroughTsx: number };
  targets: { bundleKiBUnder: number; idleRssMbUnder: number };
}

/** Starts `argv`, waits until it has enrolled and been approved (auto-approve on bench=true) and idled, and returns its RSS. */
async function idleRss(argv: string[], url: string, name: string, idleSeconds: number, log: (m: string) => void, cwd: string, stateDir: string, env: Record<string, string> = {}): Promise<number> {
  const child = spawn(argv[0]!, [...argv.slice(1), "--server", url, "--name", name, "--state-dir", path.join(stateDir, name), "--labels", "bench=true", "--log-level", "warn"], { cwd, stdio: "ignore", env: { ...process.env, ...env } });
  try {
    const { json } = client(url);
    const deadline = Date.now() + 60_000;
    for (;;) {
      const token = (await json<{ token: string }>("POST", "/api/v1/auth/token", { username: "admin", password: "bench-admin-password" })).body.token;
      const d = await json<{ lastSeen: string | null }>("GET", `/api/v1/devices/${name}`, undefined, { authorization: `Bearer ${token}` });
      if (d.status === 200 && d.body.lastSeen) break;
      if (Date.now() > deadline || child.exitCode !== null) throw new Error(`${name} did not report (exit ${child.exitCode})`);
      await sleep(500);
    }
    await sleep(idleSeconds * 1000);
    const rss = rssMb(child.pid!);
    log(`${name}: ${rss.toFixed(1)} MB RSS after ${idleSeconds} s idle`);
    return Math.round(rss * 10) / 10;
  } finally {
    child.kill("SIGTERM");
  }
}

export async function benchAgentFootprint(opts: { url: string; dir: string; idleSeconds: number; log: (m: string) => void }): Promise<AgentFootprintReport> {
  const out = path.join(opts.dir, "agent-build");
  execFileSync(process.execPath, [path.join(root, "scripts", "build-agent.mjs"), "--out", out, "--quiet"], { cwd: root });
  const alone = path.join(opts.dir, "agent-alone");
  fs.mkdirSync(alone, { recursive: true });
  fs.copyFileSync(path.join(out, "drover-agent.mjs"), path.join(alone, "drover-agent.mjs"));
  const bundleKiB = Math.round(fs.statSync(path.join(alone, "drover-agent.mjs")).size / 1024);
  opts.log(`agent bundle: ${bundleKiB} KiB`);

  const asInstalled = await idleRss([process.execPath, ...AGENT_NODE_FLAGS, "drover-agent.mjs"], opts.url, "footprint-installed", opts.idleSeconds, opts.log, alone, opts.dir, AGENT_MALLOC_ENV);
  const plainNode = await idleRss([process.execPath, "drover-agent.mjs"], opts.url, "footprint-plain", opts.idleSeconds, opts.log, alone, opts.dir);
  const tsx = await idleRss([process.execPath, "--import", "tsx", path.join(root, "agent", "main.ts")], opts.url, "footprint-sources", opts.idleSeconds, opts.log, root, opts.dir);
  const bare = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: "ignore" });
  await sleep(3000);
  const bareNode = Math.round(rssMb(bare.pid!) * 10) / 10;
  bare.kill();
  opts.log(`bare node: ${bareNode} MB RSS`);
  return { bundleKiB, idleRssMb: { asInstalled, plainNode, bareNode, fromSourcesThroughTsx: tsx }, targets: { bundleKiBUnder: 1536, idleRssMbUnder: 50 } };
}

// Alone: its own server on a fresh database.
if (import.meta.url === `file://${process.argv[1]}`) {
  const log = logger("bench-agent");
  const port = Number(process.env.BENCH_PORT ?? 3296);
  const { deadline, children, dir } = runScope("bench-agent", Number(process.env.BENCH_DEADLINE_SECONDS ?? 600));
  void (async () => {
    const server = await startServerProcess({ port, dir, adminPassword: "bench-admin-password", env: { DROVER_AUTO_APPROVE: "bench=true" }, deadline });
    children.push(server);
    const report = await benchAgentFootprint({ url: `http://127.0.0.1:${port}`, dir, idleSeconds: Number(process.env.BENCH_AGENT_IDLE_SECONDS ?? 20), log });
    process.stdout.write(JSON.stringify({ agentFootprint: report }, null, 2) + "\n");
  })().then(
    () => process.exit(0),
    (err: unknown) => {
      log(`failed: ${err instanceof Error ? err.stack : String(err)}`);
      process.exit(1);
    },
  );
}
