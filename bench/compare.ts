/**
 * `npm run bench:compare -- sqlite.json postgresql.json`: two `npm run bench` reports (its
 * stdout, saved) side by side in one Markdown table, the issue 11 comparison of one
 * SQLite-backed server with one PostgreSQL-backed one. Figures a report lacks show as "—".
 */
import fs from "node:fs";

type Report = Record<string, unknown>;

/** A figure's label, how to read it from a report, and its target when the bench names one. */
const ROWS: [label: string, read: (r: Report) => unknown, target?: string][] = [
  ["polls held", (r) => r.pollsHeld],
  ["seconds until they were held (enrolling at BENCH_RATE)", (r) => r.rampSeconds],
  ["server RSS with them held (MB)", (r) => r.serverRssHeldMb, "< 500"],
  ["MB per 1,000 held polls", (r) => r.rssMbPer1000Held],
  ["wake p50 / p99 (ms)", (r) => pair(at(r, "wakeMs", "p50"), at(r, "wakeMs", "p99")), "p99 < 100"],
  ["approve → offer p50 / p99 (ms)", (r) => pair(at(r, "approveToOfferMs", "p50"), at(r, "approveToOfferMs", "p99")), "p99 < 100"],
  ["fleet change: every held poll answered (ms)", (r) => at(r, "fleetTemplateChange", "everyHeldPollAnsweredMs"), "< 10,000"],
  ["fleet change: every member UpToDate (ms)", (r) => at(r, "fleetTemplateChange", "everyMemberUpToDateMs")],
  ["actions/s, simulated agents", (r) => at(r, "actions", "perSecond")],
  ["actions/s, lean driver", (r) => at(r, "actionsLeanDriver", "perSecond")],
  ["plan: create → Completed (ms)", (r) => at(r, "plan", "createToCompletedMs")],
  ["plan: server CPU per node (ms)", (r) => at(r, "plan", "serverCpuMsPerNode")],
  ["heartbeats/s, one server", (r) => r.heartbeatsPerSecond, "≥ 2,000"],
  ["heartbeat p99 at that rate (ms)", (r) => at(r, "heartbeatLoad", "p99Ms")],
  ["heartbeats/s, two servers on one database", (r) => at(r, "twoServersOnePostgres", "heartbeatsPerSecond")],
  // Step 6 (issue 23): TLS's cost, plain / TLS.
  ["TLS step: polls held, plain / TLS", (r) => pair(tlsAt(r, "plain", "heldPolls", "pollsHeld"), tlsAt(r, "tls", "heldPolls", "pollsHeld"))],
  ["TLS step: MB RSS per 1,000 held, plain / TLS", (r) => pair(tlsAt(r, "plain", "heldPolls", "rssMbPer1000Held"), tlsAt(r, "tls", "heldPolls", "rssMbPer1000Held"))],
  ["TLS step: MB V8 heap per 1,000 held, plain / TLS", (r) => pair(tlsAt(r, "plain", "heldPolls", "heapUsedMbPer1000Held"), tlsAt(r, "tls", "heldPolls", "heapUsedMbPer1000Held"))],
  ["storm: every poll held again (ms), plain / TLS", (r) => pair(stormAt(r, "plain", "all"), stormAt(r, "tls", "all"))],
  ["storm: 50 % / 99 % held again over TLS (ms)", (r) => pair(stormAt(r, "tls", "p50"), stormAt(r, "tls", "p99"))],
  ["storm: server CPU s, plain / TLS", (r) => pair(tlsAt(r, "plain", "reconnectStorm", "serverCpuSeconds"), tlsAt(r, "tls", "reconnectStorm", "serverCpuSeconds"))],
  ["storm: TLS handshakes new / resumed", (r) => pair(tlsAt(r, "tls", "reconnectStorm", "handshakes", "new"), tlsAt(r, "tls", "reconnectStorm", "handshakes", "resumed"))],
];

/** A figure of step 6's report (`tls`): `tls.<side>.<path…>`. */
function tlsAt(r: Report, side: "plain" | "tls", ...keys: string[]): unknown {
  let v: unknown = r.tls;
  for (const key of [side, ...keys]) v = v && typeof v === "object" ? (v as Report)[key] : undefined;
  return v;
}

const stormAt = (r: Report, side: "plain" | "tls", share: "p50" | "p99" | "all") => tlsAt(r, side, "reconnectStorm", "heldAgainMs", share);

function at(r: Report, key: string, field: string): unknown {
  const v = r[key];
  return v && typeof v === "object" ? (v as Report)[field] : undefined;
}

function pair(a: unknown, b: unknown): string | undefined {
  return a === undefined && b === undefined ? undefined : `${show(a)} / ${show(b)}`;
}

function show(v: unknown): string {
  if (v === undefined || v === null) return "—";
  return typeof v === "number" ? v.toLocaleString("en-US", { maximumFractionDigits: 1 }) : String(v);
}

/** The report in a saved bench output: the JSON object after the log lines. */
export function readReport(file: string): Report {
  const text = fs.readFileSync(file, "utf8");
  const start = text.indexOf("\n{");
  const json = text.startsWith("{") ? text : start >= 0 ? text.slice(start + 1) : "";
  const end = json.lastIndexOf("}");
  if (end < 0) throw new Error(`${file}: no bench report in it`);
  return JSON.parse(json.slice(0, end + 1)) as Report;
}

export function compareTable(reports: Report[]): string {
  const heads = reports.map((r, i) => String(r.database ?? (i === 0 ? "sqlite" : `run ${i + 1}`)));
  const lines = [`| | ${heads.join(" | ")} | target |`, `|---|${heads.map(() => "---|").join("")}---|`];
  for (const [label, read, target] of ROWS) lines.push(`| ${label} | ${reports.map((r) => show(read(r))).join(" | ")} | ${target ?? ""} |`);
  return lines.join("\n");
}

if (process.argv[1]?.endsWith("compare.ts")) {
  const files = process.argv.slice(2);
  if (files.length < 2) {
    process.stderr.write("usage: npm run bench:compare -- sqlite.json postgresql.json\n");
    process.exit(2);
  }
  process.stdout.write(compareTable(files.map(readReport)) + "\n");
}
