// Heartbeat load for bench/inventory-heartbeats.ts: bench/heartbeat-load.mjs with the body
// given in the config (`body`, or `bodies`: one per token, e.g. each device's own facts).
import http from "node:http";
import { Buffer } from "node:buffer";
import { readFileSync } from "node:fs";

const { url, tokens, seconds, body, bodies } = JSON.parse(readFileSync(process.argv[2], "utf8"));
const target = new URL("/api/agent/v1/status", url);
const agent = new http.Agent({ keepAlive: true, maxSockets: 128 });
const texts = (bodies ?? tokens.map(() => body)).map((b) => JSON.stringify(b));
const end = Date.now() + seconds * 1000;
let ok = 0;
let failed = 0;

function post(i) {
  const text = texts[i % texts.length];
  return new Promise((resolve) => {
    const req = http.request(
      target,
      { method: "POST", agent, headers: { authorization: `Bearer ${tokens[i % tokens.length]}`, "content-type": "application/json", "content-length": Buffer.byteLength(text) } },
      (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode));
      },
    );
    req.on("error", () => resolve(0));
    req.end(text);
  });
}

const WORKERS = 128;
await Promise.all(
  Array.from({ length: WORKERS }, async (_, w) => {
    let i = w;
    while (Date.now() < end) {
      if ((await post(i)) === 200) ok++;
      else failed++;
      i += WORKERS;
    }
  }),
);
agent.destroy();
process.stdout.write(JSON.stringify({ ok, failed, perSecond: Math.round(ok / seconds) }));
