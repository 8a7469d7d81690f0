/**
 * `npm run demo`: the server on the embedded database plus 50 simulated agents, auto-approved,
 * so a newcomer has a fleet to look at. Ctrl-C stops both.
 */
import { spawn } from "node:child_process";
import path from "node:path";
import { execFileSync } from "node:child_process";

const root = path.resolve(import.meta.dirname, "..");
const port = process.env.PORT ?? "3000";
const agents = process.env.DEMO_AGENTS ?? "50";

execFileSync(process.execPath, [path.join(root, "scripts", "ensure-build.mjs")], { stdio: "inherit" });

const env: NodeJS.ProcessEnv = {
  ...process.env,
  NODE_ENV: "production",
  PORT: port,
  DATABASE_URL: process.env.DATABASE_URL ?? "file:./data/demo.db",
  DROVER_AUTO_APPROVE: process.env.DROVER_AUTO_APPROVE ?? "demo=true",
  DROVER_ADMIN_PASSWORD: process.env.DROVER_ADMIN_PASSWORD ?? "drover-demo",
  DROVER_DISCONNECTION_TIMEOUT_SECONDS: process.env.DROVER_DISCONNECTION_TIMEOUT_SECONDS ?? "60",
};
const tsx = path.join(root, "node_modules", ".bin", "tsx");
const server = spawn(tsx, [path.join(root, "server", "main.ts")], { env, stdio: "inherit" });

async function waitForServer(url: string): Promise<void> {
  for (let i = 0; i < 600; i++) {
    try {
      if ((await fetch(`${url}/healthz`)).ok) return;
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error("the server did not come up");
}

const url = `http://localhost:${port}`;
await waitForServer(url);
process.stdout.write(`\n  Drover demo: open ${url} and sign in as admin / ${env.DROVER_ADMIN_PASSWORD ?? ""}\n\n`);
const sim = spawn(
  tsx,
  [path.join(root, "agent", "simulate.ts"), "--server", url, "--agents", agents, "--prefix", "demo", "--labels", "demo=true,site=lab",
    "--degraded", "0.1", "--error", "0.04", "--restarts", "0.1", "--flap", "0.06", "--silent", "0.04", "--silent-seconds", "90", "--rate", "10"],
  { env: process.env, stdio: "inherit" },
);

const stop = () => {
  sim.kill("SIGTERM");
  server.kill("SIGTERM");
};
process.on("SIGINT", stop);
process.on("SIGTERM", stop);
server.on("exit", (code) => {
  sim.kill("SIGTERM");
  process.exit(code ?? 0);
});
