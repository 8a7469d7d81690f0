/**
 * `npm run simulate -- --server URL --agents N [...]`: a fleet of virtual agents in one
 * process (see simulation.ts for what the knobs do). Prints a one-line JSON summary every
 * few seconds on stdout; the agents' own logs go to stderr at --log-level (warn).
 * SIGTERM / SIGINT stop every agent cleanly and print a last summary.
 *
 * In-process use (tests, benchmarks): `startSimulation(options)` → { stats(), stop() }.
 */
import path from "node:path";
import { fileURLToPath } from "node:url";
import pino from "pino";
import { ArgsError, parseSimulateArgs, SIMULATE_USAGE, type SimulateConfig } from "./env";
import { startSimulation, type SimulationStats } from "./simulation";

export { startSimulation } from "./simulation";
export type { SimulationHandle, SimulationOptions, SimulationStats } from "./simulation";

function summaryLine(stats: SimulationStats, previous: SimulationStats | null, seconds: number, final = false): string {
  const heartbeatsPerSecond = previous ? Math.round(((stats.heartbeats - previous.heartbeats) / seconds) * 10) / 10 : 0;
  return JSON.stringify({ time: new Date().toISOString(), ...(final ? { final: true } : {}), ...stats, heartbeatsPerSecond }) + "\n";
}

export async function main(argv: string[]): Promise<number> {
  let config: SimulateConfig;
  try {
    const parsed = parseSimulateArgs(argv);
    if (parsed === "help") {
      process.stdout.write(SIMULATE_USAGE + "\n");
      return 0;
    }
    config = parsed;
  } catch (error) {
    if (!(error instanceof ArgsError)) throw error;
    process.stderr.write(`drover-simulate: ${error.message}\n\n${SIMULATE_USAGE}\n`);
    return 2;
  }

  const logger = pino({ level: config.logLevel, timestamp: pino.stdTimeFunctions.isoTime }, pino.destination({ dest: 2, sync: false }));
  const simulation = startSimulation({
    server: config.server,
    agents: config.agents,
    prefix: config.prefix,
    labels: config.labels,
    enrollmentToken: config.enrollmentToken,
    platform: config.platform,
    role: config.role,
    degraded: config.degraded,
    error: config.error,
    restarts: config.restarts,
    flap: config.flap,
    silent: config.silent,
    silentSeconds: config.silentSeconds,
    heartbeatJitter: config.heartbeatJitter,
    actionFailure: config.actionFailure,
    actionSeconds: config.actionSeconds,
    ...(config.allowExec ? { allowExec: config.allowExec } : {}),
    crashSeconds: config.crashSeconds,
    slowApplySeconds: config.slowApplySeconds,
    ...(config.crashVersions ? { crashVersions: config.crashVersions } : {}),
    ...(config.failVersions ? { failVersions: config.failVersions } : {}),
    ...(config.slowVersions ? { slowVersions: config.slowVersions } : {}),
    planApplySeconds: config.planApplySeconds,
    ...(config.failDownloadNodes ? { failDownloadNodes: config.failDownloadNodes } : {}),
    ...(config.badSha256Nodes ? { badSha256Nodes: config.badSha256Nodes } : {}),
    ...(config.failApplyNodes ? { failApplyNodes: config.failApplyNodes } : {}),
    rate: config.rate,
    transport: config.transport,
    ...(config.idleSockets === undefined ? {} : { idleSockets: config.idleSockets }),
    ...(config.caFile || config.caFingerprint ? { trust: { caFile: config.caFile, caFingerprint: config.caFingerprint } } : {}),
    ...(config.stateDir ? { stateDir: config.stateDir } : {}),
    ...(config.seed === undefined ? {} : { seed: config.seed }),
    logger,
  });

  let previous: SimulationStats | null = null;
  const summary = setInterval(() => {
    const stats = simulation.stats();
    process.stdout.write(summaryLine(stats, previous, config.summarySeconds));
    previous = stats;
  }, config.summarySeconds * 1000);

  await new Promise<void>((resolve) => {
    process.once("SIGTERM", () => resolve());
    process.once("SIGINT", () => resolve());
  });
  clearInterval(summary);
  const hardStop = setTimeout(() => process.exit(1), 10_000);
  hardStop.unref();
  const stats = await simulation.stop();
  process.stdout.write(summaryLine(stats, previous, config.summarySeconds, true));
  logger.flush();
  return 0;
}

const entry = process.argv[1];
if (entry !== undefined && path.resolve(entry) === fileURLToPath(import.meta.url)) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (error: unknown) => {
      process.stderr.write(`drover-simulate: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      process.exit(1);
    },
  );
}
