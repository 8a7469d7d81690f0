// Heartbeat load generator for bench/run.ts: POST /status as fast as the server answers, from
// 128 keep-alive connections, for a fixed window. Plain node:http (fetch costs the client about
// 1.6× the CPU, and client and server share this machine's two cores). Prints a JSON summary.
import http from "node:http";
import { Buffer } from "node:buffer";
import { readFileSync } from "node:fs";

const { url, tokens, seconds } = JSON.parse(readFileSync(process.argv[2], "utf8"));
const target = new URL("/api/agent/v1/status", url);
const agent = new http.Agent({ keepAlive: true, maxSockets: 128 });
const body = JSON.stringify({ resources: { cpu: "Healthy", memory: "Healthy", disk: "Healthy" }, applications: [], config: { renderedVersion: 0 }, actions: [] });
const end = Date.now() + seconds * 1000;
let ok = 0;
let failed = 0;
const failures = {};
const times = [];

function post(token) {
  return new Promise((resolve) => {
    const req = http.request(
      target,
      { method: "POST", agent, headers: { authorization: `Bearer ${token}`, "content-type": "application/json", "content-length": Buffer.byteLength(body) } },
      (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode));
      },
    );
    req.on("error", () => resolve(0));
    req.end(body);
  });
}

const WORKERS = 128;
await Promise.all(
  Array.from({ length: WORKERS }, async (_, w) => {
    // Each worker strides over the tokens, so no device gets a burst from many workers at
    // once (the server rate-limits per device: that would measure the limiter).
    let i = w;
    while (Date.now() < end) {
      const t0 = performance.now();
      const status = await post(tokens[i % tokens.length]);
      i += WORKERS;
      if (status === 200) ok++;
      else {
        failed++;
        failures[status] = (failures[status] ?? 0) + 1;
      }
      times.push(performance.now() - t0);
    }
  }),
);
agent.destroy();
times.sort((a, b) => a - b);
process.stdout.write(JSON.stringify({ ok, failed, failures, perSecond: Math.round(ok / seconds), p99Ms: Number((times[Math.floor(times.length * 0.99)] ?? 0).toFixed(1)) }));
