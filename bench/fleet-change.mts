/**
 * A fleet's template change on N members, in process, without agents (issue 22): the PUT's
 * own transaction (render, statuses, events) and the recount, on a test server's fresh database
 * (SQLite, or PostgreSQL with DROVER_TEST_DATABASE=postgresql). The members are inserted
 * directly, Online and UpToDate before each change as in the bench's step 3b; every PUT moves
 * all of them to a new version. Prints the create and each PUT's wall milliseconds.
 *
 *   npx tsx bench/fleet-change.mts                                   # SQLite, 10,000 members, 3 PUTs
 *   DROVER_TEST_DATABASE=postgresql N=10000 ROUNDS=5 npx tsx bench/fleet-change.mts
 *
 * Session 22 (docs/architecture.md): PostgreSQL 1,495–1,783 ms a PUT before a render wrote each
 * row once, 999–1,228 after; SQLite 586–684 and 553–587.
 */
import { randomUUID } from "node:crypto";
import { startTestServer } from "../tests/helpers/server";

const N = Number(process.env.N ?? 10_000);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const APPLIED = (renderedVersion: string) =>
  `'{"resources":{"cpu":"Healthy","memory":"Healthy","disk":"Healthy"},"applications":[],"conditions":{},"config":{"renderedVersion":' || ${renderedVersion} || '}}'`;

const s = await startTestServer({ DROVER_SWEEP_SECONDS: "600" });
try {
  const now = new Date();
  for (let i = 0; i < N; i += 1000) {
    const devices = Array.from({ length: Math.min(1000, N - i) }, (_, k) => ({
      id: randomUUID(),
      name: `member-${i + k}`,
      platform: "linux-amd64",
      role: "worker",
      agentVersion: "bench",
      tokenHash: randomUUID(),
      summary: "Online",
      lastSeen: now,
    }));
    await s.ctx.db.device.createMany({ data: devices });
    await s.ctx.db.deviceLabel.createMany({ data: devices.map((d) => ({ deviceId: d.id, key: "bench", value: "true" })) });
  }
  const fleet = (version: string) => ({
    metadata: { name: "bench" },
    spec: { selector: { matchLabels: { bench: "true" } }, template: { spec: { version, config: { files: [{ path: "/etc/bench.conf", content: version }] } } } },
  });
  let t0 = performance.now();
  const created = await s.api("POST", "/fleets", fleet("1.0.0"));
  if (created.status !== 201) throw new Error(`create: ${created.status} ${JSON.stringify(created.body)}`);
  console.log(`create, ${N} members: ${Math.round(performance.now() - t0)} ms`);
  for (let round = 1; round <= ROUNDS; round++) {
    // Every member applied its spec: UpToDate before the change.
    await s.ctx.db.$executeRawUnsafe(`UPDATE "Device" SET "reported" = ${APPLIED(`"renderedVersion"`)}, "updatedStatus" = 'UpToDate'`);
    t0 = performance.now();
    const changed = await s.api<{ status: { devices: { outOfDate: number } } }>("PUT", "/fleets/bench", fleet(`1.${round}.0`));
    if (changed.status !== 200 || changed.body.status.devices.outOfDate !== N) throw new Error(`PUT: ${changed.status} ${JSON.stringify(changed.body)}`);
    console.log(`PUT ${round}: ${Math.round(performance.now() - t0)} ms`);
  }
} finally {
  await s.close();
}
