/**
 * Heartbeats per second with and without host facts (issue 10, the inventory): a focused
 * micro-benchmark of the heartbeat hot path, as step 5 of `npm run bench` measures it (500
 * devices, 128 keep-alive connections, a separate load process), for three bodies:
 *   bare    the bench's body (no `system`)
 *   usage   `system: {usage}`: what an agent sends on all but its first heartbeat
 *   full    the full facts on every heartbeat (the worst case: each one writes DeviceInventory)
 * Besides heartbeats/s (noisy when other work shares the cores), the server's own CPU time
 * per heartbeat (the server runs in this process, the load in another), which is not.
 * `npx tsx bench/inventory-heartbeats.ts [seconds=8] [rounds=2]`
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { startTestServer } from "../tests/helpers/server";
import { randomBytes } from "node:crypto";

const seconds = Number(process.argv[2] ?? 8);
const rounds = Number(process.argv[3] ?? 2);
const root = path.resolve(import.meta.dirname, "..");

const s = await startTestServer();
const tokens: string[] = [];
for (let i = 0; i < 500; i += 25) {
  tokens.push(
    ...(await Promise.all(
      Array.from({ length: 25 }, async (_, j) => {
        const name = `inv-hb-${i + j}`;
        const secret = randomBytes(32).toString("base64url");
        const created = await s.agent<{ enrollmentId: string }>("POST", "/enrollments", { deviceName: name, labels: {}, platform: "linux-amd64", role: "worker", agentVersion: "1.0.0", secret });
        await s.api("POST", `/enrollments/${created.body.enrollmentId}/approve`, {});
        const d = await s.agent<{ token: string }>("GET", `/enrollments/${created.body.enrollmentId}`, undefined, { "x-enrollment-secret": secret });
        return d.body.token;
      }),
    )),
  );
}
const base = { resources: { cpu: "Healthy", memory: "Healthy", disk: "Healthy" }, applications: [], config: { renderedVersion: 0 }, actions: [] };
const usage = (i: number) => ({ cpuPercent: (i * 7) % 100, memory: { usedBytes: 3e9 + i, totalBytes: 8e9 }, disk: { usedBytes: 20e9 + i, totalBytes: 64e9 } });
const facts = (i: number) => ({
  hostname: `inv-hb-${i}`,
  os: { name: "Debian GNU/Linux", version: "12 (bookworm)" },
  kernel: "6.1.0-28-amd64",
  arch: "x86_64",
  ips: [`10.0.${i >> 8}.${i & 255}`],
  bootTime: "2026-11-20T08:00:00.000Z",
  cpus: 4,
  agent: { version: "1.0.0", startedAt: "2026-11-23T05:00:00.000Z" },
});
const variants: Record<string, unknown[]> = {
  bare: tokens.map(() => base),
  usage: tokens.map((_, i) => ({ ...base, system: { usage: usage(i) } })),
  full: tokens.map((_, i) => ({ ...base, system: { ...facts(i), usage: usage(i) } })),
};
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "inv-bench-"));
const results: Record<string, number[]> = { bare: [], usage: [], full: [] };
const cpuUs: Record<string, number[]> = { bare: [], usage: [], full: [] };
for (let r = 0; r < rounds; r++) {
  for (const [name, bodies] of Object.entries(variants)) {
    const file = path.join(dir, `${name}.json`);
    fs.writeFileSync(file, JSON.stringify({ url: s.url, tokens, seconds, bodies }));
    const cpu0 = process.cpuUsage();
    const child = spawn(process.execPath, [path.join(root, "bench", "inventory-load.mjs"), file], { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    await new Promise((resolve) => child.on("exit", resolve));
    const cpu = process.cpuUsage(cpu0);
    const res = JSON.parse(out) as { ok: number; perSecond: number; failed: number };
    const perHeartbeat = Math.round((cpu.user + cpu.system) / Math.max(1, res.ok));
    results[name]!.push(res.perSecond);
    cpuUs[name]!.push(perHeartbeat);
    console.error(`${name} round ${r + 1}: ${res.perSecond}/s, ${perHeartbeat} µs server CPU a heartbeat (${res.failed} failed)`);
  }
}
const inventoryRows = await s.ctx.db.deviceInventory.count().catch(() => null);
console.log(JSON.stringify({ seconds, rounds, heartbeatsPerSecond: results, serverCpuMicrosecondsPerHeartbeat: cpuUs, inventoryRows, loadavg: os.loadavg().map((l) => l.toFixed(1)) }));
await s.close();
fs.rmSync(dir, { recursive: true, force: true });
