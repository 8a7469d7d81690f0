/**
 * `npm run demo`: the server on the embedded database plus 50 simulated agents, auto-approved,
 * so a newcomer has a fleet to look at. The agents form the fleet `demo-lab`; a minute later
 * its template moves to 2.0.0, a version the simulator crash-loops, behind a canary that
 * pauses itself (and, left alone, fails and reverts the fleet). Three simulated controllers join
 * them, and a k0s plan over all of them waits for the operator's approval. Ctrl-C stops it all.
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
    "--degraded", "0.1", "--error", "0.04", "--restarts", "0.1", "--flap", "0.06", "--silent", "0.04", "--silent-seconds", "90", "--rate", "10",
    "--crash-versions", "2.0.0", "--crash-seconds", "5"],
  { env: process.env, stdio: "inherit" },
);

// Three controllers too, so the demo plan has both kinds of node.
const controllers = spawn(
  tsx,
  [path.join(root, "agent", "simulate.ts"), "--server", url, "--agents", "3", "--prefix", "demo-ctl", "--role", "controller", "--labels", "demo=true,tier=control",
    "--degraded", "0", "--error", "0", "--restarts", "0", "--flap", "0", "--silent", "0", "--rate", "10", "--plan-apply-seconds", "3"],
  { env: process.env, stdio: "inherit" },
);

/**
 * The demo plan: a k0s update of the controllers one at a time, then the workers ten at a time,
 * waiting for an operator's approval. It goes to devices in Error too (`healthPolicy: Error`):
 * the simulator keeps 4 % of its agents in Error for good, and an update is often what repairs
 * such a node; with the default policy (Online and Degraded) the plan would wait on them until
 * an operator skipped them (issue 21: it finishes by itself).
 */
const DEMO_PLAN = `apiVersion: autopilot.k0sproject.io/v1beta2
kind: Plan
metadata: {name: autopilot}
spec:
  id: demo-k0s-1.31
  timestamp: now
  commands:
  - healthPolicy: Error
    k0supdate:
      version: v1.31.1+k0s.0
      platforms:
        linux-amd64: {url: "https://github.com/k0sproject/k0s/releases/download/v1.31.1+k0s.0/k0s-v1.31.1+k0s.0-amd64"}
      targets:
        controllers: {discovery: {selector: {labels: demo=true}}}
        workers: {discovery: {selector: {labels: demo=true}}, limits: {concurrent: 10}}
`;

/** The demo fleet: every agent, a canary of 10% that pauses past 2 restarts and fails past 8. */
function demoFleet(version: string) {
  return {
    metadata: { name: "demo-lab" },
    spec: {
      selector: { matchLabels: { site: "lab" } },
      template: {
        spec: {
          version,
          config: { files: [{ path: "/etc/demo/app.conf", content: `version=${version}\n` }] },
          applications: [{ name: "web", command: ["/usr/bin/demo-web", "--port", "8080"] }],
        },
      },
      rolloutPolicy: {
        canary: { replicas: "10%", duration: "2m", noRestartsDuration: "1m", autoPause: { maxRestarts: 2 }, autoFail: { maxRestarts: 8 } },
        deviceSelection: { strategy: "BatchSequence", sequence: [{ limit: "25%" }, { limit: "50%" }] },
        successThreshold: "80%",
      },
    },
  };
}

async function demoRollout(): Promise<void> {
  const password = env.DROVER_ADMIN_PASSWORD ?? "";
  const call = async (method: string, p: string, body: unknown, token?: string) => {
    const res = await fetch(`${url}/api/v1${p}`, {
      method,
      headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as { token?: string } };
  };
  const { body } = await call("POST", "/auth/token", { username: "admin", password, name: "demo" });
  if (!body.token) return;
  const token = body.token;
  // A restarted demo keeps its database: apply 1.0.0 only when the fleet is new.
  const created = await call("POST", "/fleets", demoFleet("1.0.0"), token);
  if (created.status !== 201) return;
  // The plan once the agents have enrolled: it waits on the Plans page for an operator's approval.
  await new Promise((r) => setTimeout(r, 15_000));
  const plan = await fetch(`${url}/api/v1/plans?requireApproval=true`, { method: "POST", headers: { "content-type": "application/yaml", authorization: `Bearer ${token}` }, body: DEMO_PLAN });
  if (plan.ok) {
    const { metadata } = (await plan.json()) as { metadata: { id: string } };
    process.stdout.write(`\n  Plan ${metadata.id}: a k0s update of 3 controllers and the workers, waiting for your approval at ${url}/plans/${metadata.id}\n\n`);
  }
  await new Promise((r) => setTimeout(r, 45_000));
  await call("PUT", "/fleets/demo-lab", demoFleet("2.0.0"), token);
  process.stdout.write(`\n  Fleet demo-lab: rolling out 2.0.0, which crash-loops; watch its canary pause at ${url}/fleets/demo-lab\n\n`);
}
demoRollout().catch((err: unknown) => process.stderr.write(`demo fleet: ${err instanceof Error ? err.message : String(err)}\n`));

const stop = () => {
  sim.kill("SIGTERM");
  controllers.kill("SIGTERM");
  server.kill("SIGTERM");
};
process.on("SIGINT", stop);
process.on("SIGTERM", stop);
server.on("exit", (code) => {
  sim.kill("SIGTERM");
  process.exit(code ?? 0);
});
