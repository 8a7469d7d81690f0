// Lean action driver for bench/run.ts: one protocol-exact loop per device, on plain node:http
// keep-alive sockets. Each loop holds GET /work and takes what it is offered through
// NEW → RUNNING → DONE with PUT /actions/{id}, then polls again; and heartbeats every 20 s. No journal, no executors:
// it measures how many actions the server completes a second, where the full agent
// simulator (agent/simulate.ts) spends a core of this 2-core machine on its own bookkeeping.
// Input: a JSON file {url, tokens}. Runs until SIGTERM, then prints {done, failed} as JSON.
import http from "node:http";
import { Buffer } from "node:buffer";
import { readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";

const { url, tokens } = JSON.parse(readFileSync(process.argv[2], "utf8"));
const base = new URL(url);
const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity, maxFreeSockets: tokens.length });
let stopped = false;
let done = 0;
let failed = 0;

function request(method, path, token, body) {
  return new Promise((resolve) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const headers = { authorization: `Bearer ${token}` };
    if (payload !== undefined) Object.assign(headers, { "content-type": "application/json", "content-length": Buffer.byteLength(payload) });
    const req = http.request({ host: base.hostname, port: base.port, path, method, agent, headers }, (res) => {
      const chunks = [];
      res.on("data", (c) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode, text: Buffer.concat(chunks).toString() }));
    });
    req.on("error", () => resolve({ status: 0, text: "" }));
    req.end(payload);
  });
}

async function device(token) {
  while (!stopped) {
    const poll = await request("GET", "/api/agent/v1/work?wait=30", token);
    if (poll.status !== 200) {
      await sleep(200);
      continue;
    }
    for (const action of JSON.parse(poll.text).actions) {
      for (const state of ["NEW", "RUNNING", "DONE"]) {
        const res = await request("PUT", `/api/agent/v1/actions/${action.id}`, token, state === "DONE" ? { state, output: "" } : { state });
        if (res.status !== 200) failed++;
      }
      done++;
    }
  }
}

// A device is offered actions only while it is up (seed 004): each heartbeats as an agent does,
// every 20 s (jittered), so that a step slower than the heartbeat timeout does not leave the
// first devices Offline, their actions never offered and the round waiting for them forever.
const STATUS = { resources: { cpu: "Healthy", memory: "Healthy", disk: "Healthy" }, applications: [], config: { renderedVersion: 0 }, actions: [] };
async function heartbeats(token) {
  await sleep(Math.random() * 20_000);
  while (!stopped) {
    await request("POST", "/api/agent/v1/status", token, STATUS);
    await sleep(20_000);
  }
}

process.on("SIGTERM", () => {
  stopped = true;
  process.stdout.write(JSON.stringify({ done, failed }));
  process.exit(0);
});
for (const token of tokens) {
  void device(token);
  void heartbeats(token);
}
