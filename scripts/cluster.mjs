#!/usr/bin/env node
// Several Drover servers on one PostgreSQL behind a tiny load balancer, on one machine, to try
// the scale-out path (issue 11, DESIGN.md §9; README "PostgreSQL and several servers"):
//
//   DATABASE_URL=postgresql://postgres:postgres@127.0.0.1:5432/drover node scripts/cluster.mjs [--servers 3] [--port 3000] [--no-console]
//
// The servers listen on PORT+1 … PORT+N and the load balancer on PORT: round robin over the
// servers that answer /readyz (checked every second), a server that fails a request taken
// out until it answers again. Nothing is sticky: sessions, tokens and parked polls work on
// every server (the bus wakes a poll wherever it is held; one server is the controller
// leader). The balancer is httpxy (unjs, MIT, no dependencies), streaming answers as they
// come, so long-polls and the console's live updates (SSE) pass through. The database is
// created when missing; each server applies the migrations at start (under an advisory lock).
// Ctrl-C stops everything. `--no-console` runs scripts/api-server.ts (no Next.js build needed).
import { spawn } from "node:child_process";
import http from "node:http";
import path from "node:path";
import { parseArgs } from "node:util";
import { setInterval, clearInterval, setTimeout } from "node:timers";
import pg from "pg";
import { createProxyServer } from "httpxy";

const root = path.resolve(import.meta.dirname, "..");
const { values: args } = parseArgs({
  options: {
    servers: { type: "string", default: "3" },
    port: { type: "string", default: process.env.PORT ?? "3000" },
    "no-console": { type: "boolean", default: false },
    help: { type: "boolean", short: "h", default: false },
  },
});
if (args.help) {
  console.log("Usage: DATABASE_URL=postgresql://… node scripts/cluster.mjs [--servers N (3)] [--port P (3000)] [--no-console]");
  process.exit(0);
}
const count = Number(args.servers);
const port = Number(args.port);
const databaseUrl = process.env.DATABASE_URL ?? "";
if (!/^postgres(ql)?:\/\//.test(databaseUrl)) {
  console.error("DATABASE_URL must name a PostgreSQL database, e.g. postgresql://postgres:postgres@127.0.0.1:5432/drover");
  process.exit(2);
}
if (!Number.isInteger(count) || count < 1 || count > 16 || !Number.isInteger(port) || port < 1 || port + count > 65535) {
  console.error("--servers: 1 to 16; --port: a free port with the next N free too");
  process.exit(2);
}

/** Creates the database named in the URL when it does not exist (connecting to `postgres` beside it). */
async function ensureDatabase(url) {
  const client = new pg.Client({ connectionString: url });
  try {
    await client.connect();
    await client.end();
    return;
  } catch (err) {
    await client.end().catch(() => undefined);
    if (err?.code !== "3D000") throw err;
  }
  const name = decodeURIComponent(new URL(url).pathname.slice(1));
  const maintenance = new URL(url);
  maintenance.pathname = "/postgres";
  const admin = new pg.Client({ connectionString: maintenance.toString() });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE "${name.replaceAll('"', '""')}"`);
    console.log(`cluster: created database ${name}`);
  } finally {
    await admin.end();
  }
}

await ensureDatabase(databaseUrl);
if (!args["no-console"]) {
  // The console's production build, as `npm start` does first.
  await new Promise((resolve, reject) =>
    spawn(process.execPath, [path.join(root, "scripts", "ensure-build.mjs")], { cwd: root, stdio: "inherit" }).on("exit", (code) =>
      code === 0 ? resolve() : reject(new Error(`ensure-build exited with ${code}`)),
    ),
  );
}

const entry = args["no-console"] ? "scripts/api-server.ts" : "server/main.ts";
const backends = [];
const children = [];
let stopping = false;

for (let i = 1; i <= count; i++) {
  const backendPort = port + i;
  const child = spawn(process.execPath, ["--import", "tsx", entry], {
    cwd: root,
    stdio: ["ignore", "pipe", "pipe"],
    env: {
      ...process.env,
      NODE_ENV: "production",
      PORT: String(backendPort),
      HOST: "127.0.0.1",
      DATABASE_URL: databaseUrl,
      // The balancer is on this machine: the servers take the client's address from X-Forwarded-For.
      DROVER_TRUSTED_PROXIES: process.env.DROVER_TRUSTED_PROXIES ?? "127.0.0.1,::1",
    },
  });
  const tag = `[s${i}:${backendPort}]`;
  for (const stream of [child.stdout, child.stderr]) {
    let buffer = "";
    stream.on("data", (chunk) => {
      buffer += chunk.toString("utf8");
      for (let n = buffer.indexOf("\n"); n >= 0; n = buffer.indexOf("\n")) {
        process.stdout.write(`${tag} ${buffer.slice(0, n)}\n`);
        buffer = buffer.slice(n + 1);
      }
    });
  }
  child.on("exit", (code, signal) => {
    if (!stopping) console.log(`cluster: server ${i} exited (${signal ?? code}); the others go on`);
  });
  children.push(child);
  backends.push({ i, target: `http://127.0.0.1:${backendPort}`, up: false, alive: false });
}

// Which servers answer: every second, /readyz with a short deadline. Ready (200) servers take
// the requests; when none is (the database is down for all), a live one (503) still does, and
// answers 503 with Retry-After itself rather than the balancer guessing.
async function check(backend) {
  try {
    const res = await fetch(`${backend.target}/readyz`, { signal: globalThis.AbortSignal.timeout(1_000) });
    backend.up = res.ok;
    backend.alive = res.ok || res.status === 503;
  } catch {
    backend.up = backend.alive = false;
  }
}
const health = setInterval(() => void Promise.all(backends.map(check)), 1_000);

let next = 0;
function pick() {
  for (const wanted of ["up", "alive"]) {
    for (let k = 0; k < backends.length; k++) {
      const b = backends[(next + k) % backends.length];
      if (b[wanted]) {
        next = (next + k + 1) % backends.length;
        return b;
      }
    }
  }
  return null;
}

// Keep-alive sockets to the servers, as many as the held polls need.
const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });
const proxy = createProxyServer({ xfwd: true, agent });
const balancer = http.createServer((req, res) => {
  const backend = pick();
  if (!backend) {
    res.writeHead(503, { "content-type": "application/json", "retry-after": "2" });
    return res.end(JSON.stringify({ error: { code: "UNAVAILABLE", message: "no Drover server is up yet" } }));
  }
  proxy.web(req, res, { target: backend.target }).catch((err) => {
    // The server went away under this request: out of the rotation until /readyz answers.
    backend.up = backend.alive = false;
    if (!res.headersSent) {
      res.writeHead(502, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { code: "BAD_GATEWAY", message: `server ${backend.i}: ${err.code ?? err.message}` } }));
    } else res.destroy();
  });
});
// Held polls and SSE streams outlive Node's default deadlines; the servers bound them.
balancer.requestTimeout = 0;
balancer.headersTimeout = 15_000;
balancer.keepAliveTimeout = 65_000;

await new Promise((resolve, reject) => balancer.once("error", reject).listen(port, resolve));
const started = Date.now();
while (!backends.some((b) => b.up) && Date.now() - started < 180_000) {
  await Promise.all(backends.map(check));
  await new Promise((r) => setTimeout(r, 500));
}
console.log(
  `cluster: ${count} Drover server(s) on ${databaseUrl.replace(/\/\/[^@/]*@/, "//…@")}, ports ${port + 1}–${port + count}; ` +
    `load balancer on http://localhost:${port} (${backends.filter((b) => b.up).length} up). Ctrl-C stops all.`,
);

function stop(signal) {
  if (stopping) return;
  stopping = true;
  console.log(`cluster: ${signal}, stopping`);
  clearInterval(health);
  balancer.close();
  balancer.closeAllConnections();
  for (const c of children) c.kill("SIGTERM");
  const hard = setTimeout(() => {
    for (const c of children) c.kill("SIGKILL");
    process.exit(1);
  }, 15_000);
  hard.unref();
  Promise.all(children.map((c) => (c.exitCode !== null || c.signalCode !== null ? null : new Promise((r) => c.once("exit", r))))).then(() => process.exit(0));
}
process.on("SIGINT", () => stop("SIGINT"));
process.on("SIGTERM", () => stop("SIGTERM"));
