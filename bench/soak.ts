/**
 * `npm run soak`: the server under attack while it works (issue 6), loopback only, bounded in
 * time and count. Not part of `npm test`: it is a benchmark, and its figures go in notes.
 *
 *   1. A server (production build, fresh database) and SOAK_AGENTS simulated agents
 *      (agent/simulate.ts) that enroll, long-poll and heartbeat; operators create noop actions
 *      for them throughout, so they work while the attack runs.
 *   2. For SOAK_SECONDS, an attacker process (bench/attack.mjs) keeps SOAK_CONNS slow or
 *      malformed connections open, guesses passwords with a new X-Forwarded-For each try, and
 *      floods the enrollment inbox.
 *   3. Meanwhile an operator loop calls the REST API one request after another and times
 *      each; the held polls and the server's RSS are sampled every second.
 *
 * Report (JSON on stdout): operator requests sent, answered, failed, p50/p99/max; polls held
 * (before, lowest during, after); devices Online at the end; RSS; what the attacker saw
 * (sockets opened and refused, how the server closed them, guesses and their statuses).
 * Targets: every operator request answered, p99 under 1 s; no agent dropped.
 *
 * Options (env): SOAK_AGENTS (1000), SOAK_CONNS (5000), SOAK_GUESSERS (4), SOAK_SECONDS (60),
 * SOAK_PORT (3291), SOAK_DEADLINE_SECONDS (900).
 */
import { spawn, execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { client, logger, node, percentile, root, rssMb, runScope, sleep, startServerProcess } from "./lib";

const AGENTS = Number(process.env.SOAK_AGENTS ?? 1000);
const CONNS = Number(process.env.SOAK_CONNS ?? 5000);
const GUESSERS = Number(process.env.SOAK_GUESSERS ?? 4);
const SECONDS = Number(process.env.SOAK_SECONDS ?? 60);
const PORT = Number(process.env.SOAK_PORT ?? 3291);
const URL_ = `http://127.0.0.1:${PORT}`;
const ADMIN_PASSWORD = "soak-admin-password";
const OPERATOR_TIMEOUT_MS = 10_000;
const { json, metric } = client(URL_);
const log = logger("soak");

const { deadline: DEADLINE, children, dir, checkDeadline } = runScope("soak", Number(process.env.SOAK_DEADLINE_SECONDS ?? 900));

async function onlineDevices(op: Record<string, string>): Promise<number> {
  const res = await json<{ total: number }>("GET", `/api/v1/devices?labelSelector=${encodeURIComponent("soak=true")}&summary=Online&limit=1`, undefined, op);
  return res.body.total;
}

/** One operator request, timed; a timeout or a network error counts as unanswered. */
async function timed(method: string, p: string, op: Record<string, string>, body?: unknown): Promise<{ ms: number; status: number }> {
  const t0 = performance.now();
  try {
    const res = await fetch(URL_ + p, {
      method,
      headers: { ...op, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(OPERATOR_TIMEOUT_MS),
    });
    await res.arrayBuffer();
    return { ms: performance.now() - t0, status: res.status };
  } catch {
    return { ms: performance.now() - t0, status: 0 };
  }
}

async function main() {
  execFileSync(process.execPath, [path.join(root, "scripts", "ensure-build.mjs")], { stdio: "inherit" });
  log(`server on ${URL_}, data in ${dir}`);
  const server = await startServerProcess({ port: PORT, dir, adminPassword: ADMIN_PASSWORD, env: { DROVER_AUTO_APPROVE: "soak=true" }, deadline: DEADLINE });
  children.push(server);
  const pid = server.pid!;
  const token = (await json<{ token: string }>("POST", "/api/v1/auth/token", { username: "admin", password: ADMIN_PASSWORD })).body.token;
  const op = { authorization: `Bearer ${token}` };

  log(`starting ${AGENTS} simulated agents`);
  const sim = spawn(...node(path.join(root, "agent", "simulate.ts"), "--server", URL_, "--agents", String(AGENTS), "--prefix", "soak", "--labels", "soak=true",
    "--degraded", "0", "--error", "0", "--restarts", "0", "--flap", "0", "--silent", "0", "--rate", "200", "--action-seconds", "0-1",
    "--summary-seconds", "1", "--log-level", "error"), { cwd: root, stdio: ["ignore", "pipe", "inherit"] });
  children.push(sim);
  // The simulator's own view, one JSON line a second: are its agents polling, and did their
  // requests fail?
  let simulated: { polling: number; errors: number; failed: number } = { polling: 0, errors: 0, failed: 0 };
  let simBuffer = "";
  sim.stdout!.on("data", (d: Buffer) => {
    simBuffer += d.toString();
    const lines = simBuffer.split("\n");
    simBuffer = lines.pop() ?? "";
    for (const line of lines) {
      try {
        simulated = JSON.parse(line) as typeof simulated;
      } catch { /* not a summary line */ }
    }
  });
  while ((await metric("drover_held_polls")) < AGENTS * 0.99 || (await onlineDevices(op)) < AGENTS) {
    checkDeadline();
    await sleep(1000);
  }
  await sleep(2000);
  const heldBefore = await metric("drover_held_polls");
  const rssBefore = rssMb(pid);
  const actionsBefore = await metric("drover_actions_finished_total");
  const simBefore = { ...simulated };
  log(`${heldBefore} polls held, RSS ${rssBefore.toFixed(0)} MB; attack: ${CONNS} connections, ${GUESSERS} guessers, ${SECONDS} s`);

  fs.writeFileSync(path.join(dir, "attack.json"), JSON.stringify({ url: URL_, conns: CONNS, guessers: GUESSERS }));
  const attack = spawn(process.execPath, [path.join(root, "bench", "attack.mjs"), path.join(dir, "attack.json")], { stdio: ["ignore", "pipe", "inherit"] });
  children.push(attack);
  let attackOut = "";
  attack.stdout!.on("data", (d: Buffer) => (attackOut += d.toString()));

  // Sample held polls and RSS every second while the operator loop runs.
  let heldMin = Infinity;
  let pollingMin = Infinity;
  let rssMax = rssBefore;
  const end = Date.now() + SECONDS * 1000;
  const sampler = (async () => {
    while (Date.now() < end) {
      try {
        heldMin = Math.min(heldMin, await metric("drover_held_polls"));
      } catch { /* counted by the operator loop */ }
      rssMax = Math.max(rssMax, rssMb(pid));
      pollingMin = Math.min(pollingMin, simulated.polling);
      await sleep(1000);
    }
  })();

  const latencies: number[] = [];
  const byKind: Record<string, number[]> = {};
  const statuses: Record<string, number> = {};
  let sent = 0;
  const calls = [
    ["list devices", () => timed("GET", "/api/v1/devices?limit=50", op)],
    ["list actions", () => timed("GET", "/api/v1/actions?limit=20", op)],
    ["count online", () => timed("GET", `/api/v1/devices?labelSelector=${encodeURIComponent("soak=true")}&summary=Online&limit=1`, op)],
  ] as const;
  for (let i = 0; Date.now() < end; i++) {
    const [kind, call] =
      i % 10 === 9 ? (["create actions", () => timed("POST", "/api/v1/actions", op, { labelSelector: "soak=true", kind: "noop", args: {} })] as const) : calls[i % 3]!;
    const r = await call();
    sent++;
    statuses[r.status] = (statuses[r.status] ?? 0) + 1;
    if (r.status !== 0) {
      latencies.push(r.ms);
      (byKind[kind] ??= []).push(r.ms);
    }
    await sleep(50);
  }
  await sampler;
  attack.kill("SIGTERM");
  await new Promise((r) => attack.on("exit", r));
  const attacker = JSON.parse(attackOut || "{}") as Record<string, unknown>;
  await sleep(3000);
  const online = await onlineDevices(op);
  const heldAfter = await metric("drover_held_polls");
  const actionsDone = (await metric("drover_actions_finished_total")) - actionsBefore;
  const refusedByServer = await metric("drover_requests_refused_total");
  latencies.sort((a, b) => a - b);
  const answered = latencies.length;
  const p99 = percentile(latencies, 99);

  const report = {
    machine: `${os.cpus().length} cores, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, node ${process.version}`,
    seconds: SECONDS,
    operator: {
      sent,
      answered,
      unanswered: sent - answered,
      statuses,
      p50Ms: Number(percentile(latencies, 50).toFixed(1)),
      p99Ms: Number(p99.toFixed(1)),
      maxMs: Number((latencies.at(-1) ?? NaN).toFixed(1)),
      p99MsByRequest: Object.fromEntries(Object.entries(byKind).map(([k, v]) => [k, Number(percentile(v.sort((a, b) => a - b), 99).toFixed(1))])),
    },
    agents: {
      total: AGENTS,
      pollsHeldBefore: heldBefore,
      // Agents answered with an action are between polls for a moment: this dips with the work.
      pollsHeldLowestDuringAttack: heldMin,
      pollsHeldAfter: heldAfter,
      pollingLowestDuringAttack: pollingMin,
      requestErrorsDuringAttack: simulated.errors - simBefore.errors,
      agentsEndedDuringAttack: simulated.failed - simBefore.failed,
      onlineAtEnd: online,
      actionsFinishedDuringSoak: actionsDone,
    },
    server: { rssBeforeMb: Math.round(rssBefore), rssMaxMb: Math.round(rssMax), requestsRefusedAtTheDoor: refusedByServer },
    attacker,
    targets: {
      everyOperatorRequestAnswered: sent === answered,
      operatorP99Under1s: p99 < 1000,
      noAgentDropped: online === AGENTS && pollingMin === AGENTS && simulated.failed === simBefore.failed,
    },
  };
  process.stdout.write(JSON.stringify(report, null, 2) + "\n");
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    log(`failed: ${err instanceof Error ? err.stack : String(err)}`);
    process.exit(1);
  },
);
