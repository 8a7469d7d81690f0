// Heartbeat load generator for bench/run.ts: POST /status as fast as the server answers,
// from 128 concurrent connections, for a fixed window. Prints a JSON summary.
import { readFileSync } from "node:fs";

const { url, tokens, seconds } = JSON.parse(readFileSync(process.argv[2], "utf8"));
const body = JSON.stringify({ resources: { cpu: "Healthy", memory: "Healthy", disk: "Healthy" }, applications: [], config: { renderedVersion: 0 }, actions: [] });
const end = Date.now() + seconds * 1000;
let ok = 0;
let failed = 0;
const times = [];
await Promise.all(
  Array.from({ length: 128 }, async (_, w) => {
    let i = w;
    while (Date.now() < end) {
      const t = tokens[i++ % tokens.length];
      const t0 = performance.now();
      try {
        const r = await fetch(`${url}/api/agent/v1/status`, { method: "POST", headers: { authorization: `Bearer ${t}`, "content-type": "application/json" }, body });
        await r.arrayBuffer();
        if (r.status === 200) ok++;
        else failed++;
      } catch {
        failed++;
      }
      times.push(performance.now() - t0);
    }
  }),
);
times.sort((a, b) => a - b);
process.stdout.write(JSON.stringify({ ok, failed, perSecond: Math.round(ok / seconds), p99Ms: Number((times[Math.floor(times.length * 0.99)] ?? 0).toFixed(1)) }));
