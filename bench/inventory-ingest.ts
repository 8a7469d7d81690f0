/**
 * The heartbeat's server-side cost with and without host facts (issue 10), in process and
 * interleaved so that other work on the machine weighs on every variant alike: the token
 * lookup and `ingestStatus` (fast path, group commits of up to 128 concurrent reports) for
 * 500 devices, in rounds of 2,000 reports per variant, the variants taking turns.
 *   bare        no `system` (the cost before issue 10)
 *   usage       `system: {usage}` within a minute already sampled: no inventory write
 *   usage+min   `system: {usage}`, the clock a minute on each round: each device's first
 *               report of the round appends its sample (500 writes in 2,000 reports)
 *   full        full facts on every report: an upsert each (an agent does it at its start,
 *               on a change and hourly)
 * `npx tsx bench/inventory-ingest.ts [rounds=8]` prints µs per heartbeat (median of rounds).
 */
import { createHash, randomBytes } from "node:crypto";
import { startTestServer } from "../tests/helpers/server";
import { ingestStatus } from "../server/devices/heartbeat";
import { StatusReport } from "../lib/protocol";

const rounds = Number(process.argv[2] ?? 8);
const s = await startTestServer();
const fast = s.ctx.fast;
if (!fast) throw new Error("no fast path");
const hashes: string[] = [];
for (let i = 0; i < 500; i += 25) {
  hashes.push(
    ...(await Promise.all(
      Array.from({ length: 25 }, async (_, j) => {
        const secret = randomBytes(32).toString("base64url");
        const created = await s.agent<{ enrollmentId: string }>("POST", "/enrollments", { deviceName: `inv-in-${i + j}`, labels: {}, platform: "linux-amd64", role: "worker", agentVersion: "1.0.0", secret });
        await s.api("POST", `/enrollments/${created.body.enrollmentId}/approve`, {});
        const d = await s.agent<{ token: string }>("GET", `/enrollments/${created.body.enrollmentId}`, undefined, { "x-enrollment-secret": secret });
        return createHash("sha256").update(d.body.token).digest("hex");
      }),
    )),
  );
}
const base = { resources: { cpu: "Healthy", memory: "Healthy", disk: "Healthy" }, applications: [], config: { renderedVersion: 0 }, actions: [] };
const usage = (i: number) => ({ cpuPercent: (i * 7) % 100, memory: { usedBytes: 3e9 + i, totalBytes: 8e9 }, disk: { usedBytes: 20e9 + i, totalBytes: 64e9 } });
const facts = (i: number) => ({
  hostname: `inv-in-${i}`,
  os: { name: "Debian GNU/Linux", version: "12 (bookworm)" },
  kernel: "6.1.0-28-amd64",
  arch: "x86_64",
  ips: [`10.0.${i >> 8}.${i & 255}`],
  bootTime: "2026-11-20T08:00:00.000Z",
  cpus: 4,
  agent: { version: "1.0.0", startedAt: "2026-11-23T05:00:00.000Z" },
});
const parse = (b: unknown) => StatusReport.parse(b);
const variants: Record<string, StatusReport[]> = {
  bare: hashes.map(() => parse(base)),
  usage: hashes.map((_, i) => parse({ ...base, system: { usage: usage(i) } })),
  "usage+min": hashes.map((_, i) => parse({ ...base, system: { usage: usage(i) } })),
  full: hashes.map((_, i) => parse({ ...base, system: { ...facts(i), usage: usage(i) } })),
};
const PER_ROUND = 2000;
const CONCURRENCY = 128;
let clock = Date.now();
async function run(reports: StatusReport[]): Promise<number> {
  let next = 0;
  const t0 = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < PER_ROUND) {
        const i = next++;
        const device = (await fast!.deviceByTokenHash(hashes[i % hashes.length]!))!;
        await ingestStatus(s.ctx, device, reports[i % reports.length]!);
      }
    }),
  );
  return Number(process.hrtime.bigint() - t0) / 1000 / PER_ROUND;
}
const times: Record<string, number[]> = Object.fromEntries(Object.keys(variants).map((k) => [k, []]));
// Warm-up: every device sampled in this minute, the statements prepared.
s.ctx.now = () => new Date(clock);
for (const reports of Object.values(variants)) await run(reports);
const base0 = clock;
for (let r = 0; r < rounds; r++) {
  for (const [name, reports] of Object.entries(variants)) {
    // "usage+min" in a minute of its own each round (not yet sampled); the others stay in the
    // warm-up's minute, already sampled.
    clock = name === "usage+min" ? base0 + (r + 1) * 60_000 : base0;
    times[name]!.push(await run(reports));
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const samples = await s.ctx.db.deviceInventory.findFirst({ select: { samples: true } });
console.log(
  JSON.stringify({
    rounds,
    microsecondsPerHeartbeatMedian: Object.fromEntries(Object.entries(times).map(([k, v]) => [k, Math.round(median(v))])),
    all: Object.fromEntries(Object.entries(times).map(([k, v]) => [k, v.map(Math.round)])),
    samplesOfOneDevice: samples ? (JSON.parse(samples.samples) as unknown[]).length : 0,
  }),
);
await s.close();
