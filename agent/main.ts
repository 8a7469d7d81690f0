/**
 * `npm run agent -- --server URL --name NAME --state-dir DIR [--labels k=v,...]`
 * The Drover device agent as a process: one Agent, a file state store, this host's health.
 * Logs are JSON lines on stdout (pino). See env.ts for the options and exit statuses.
 */
import path from "node:path";
import pino from "pino";
import { Agent, exitCodeFor } from "./agent";
import { ProtocolClient } from "./client";
import { AGENT_USAGE, AGENT_VERSION, ArgsError, parseAgentArgs, wantsVersion, type AgentConfig } from "./env";
import { builtinExecutors } from "./executors";
import { HostHealthSource } from "./health";
import { createNodeHttpTransport } from "./http-transport";
import { HostRuntime } from "./runtime/host";
import { ServerTrust } from "./server-trust";
import { DEFAULT_APP_KILL_GRACE_MS } from "./runtime/supervisor";
import { FileStateStore } from "./state";
import { HostFactsSource } from "./system-facts";
import { isoTime } from "./timing";
import { runningAgent, Upgrader, UpgradingRuntime } from "./upgrade";

/** How long a stop may take before the process exits anyway: applications get their SIGTERM grace first. */
const STOP_GRACE_MS = DEFAULT_APP_KILL_GRACE_MS + 3_000;

export async function main(argv: string[]): Promise<number> {
  let config: AgentConfig;
  try {
    if (wantsVersion(argv)) {
      process.stdout.write(AGENT_VERSION + "\n");
      return 0;
    }
    const parsed = parseAgentArgs(argv);
    if (parsed === "help") {
      process.stdout.write(AGENT_USAGE + "\n");
      return 0;
    }

    config = parsed;
  } catch (error) {
    if (!(error instanceof ArgsError)) throw error;
    process.stderr.write(`drover-agent: ${error.message}\n\n${AGENT_USAGE}\n`);
    return 2;
  }

  const logger = pino(
    {
      level: config.logLevel,
      base: { device: config.name, pid: process.pid },
      // pino.stdTimeFunctions.isoTime's text, without loading ICU's time zones (timing.ts isoTime).
      timestamp: () => `,"time":"${isoTime()}"`,
    },
    pino.destination({ dest: 1, sync: true }),
  );

  // TLS (issue 23): the server's CA from --ca-file or --ca-fingerprint; a file that is not the pinned CA is a bad argument.
  let trust: ServerTrust;
  try {
    trust = new ServerTrust({ caFile: config.caFile, caFingerprint: config.caFingerprint });
  } catch (error) {
    process.stderr.write(`drover-agent: ${(error as Error).message}\n`);
    return 2;
  }
  const transport = createNodeHttpTransport({ maxFreeSockets: 2, trust });

  let store: FileStateStore;
  try {
    store = await FileStateStore.open(config.stateDir);
  } catch (error) {
    logger.fatal({ event: "state.error", stateDir: config.stateDir, err: String(error) }, "cannot open the state directory");
    return 1;
  }

  // Agent upgrades (upgrade.ts): the file this process runs from is replaced, then it restarts.
  const running = runningAgent();
  const upgrader = new Upgrader({
    serverUrl: config.server,
    currentVersion: AGENT_VERSION,
    form: running.form,
    file: running.file,
    platform: config.platform,
    store,
    logger,
    retryMs: config.upgradeRetrySeconds * 1000,
    onRestart: (info) => agent.restartForUpgrade(info),
    // The builds come from the same server: a pinned CA holds for them too.
    ...(trust.pinned ? { fetch: transport.streamingFetch } : {}),
  });
  try {
    await upgrader.load();
  } catch (error) {
    logger.fatal({ event: "state.error", stateDir: config.stateDir, err: String(error) }, "cannot read the upgrade journal");
    return 1;
  }

  const agent: Agent = new Agent({
    identity: {
      name: config.name,
      labels: config.labels,
      platform: config.platform,
      role: config.role,
      agentVersion: AGENT_VERSION,
    },
    // node:http rather than global fetch: undici compiles its WebAssembly parser on first use,
    // about 10 MB of the idle agent's memory (issue 12: under 50 MB idle).
    client: new ProtocolClient({ serverUrl: config.server, userAgent: `drover-agent/${AGENT_VERSION}`, fetch: transport.fetch }),
    store,
    health: new HostHealthSource(config.stateDir),
    system: new HostFactsSource({ diskPath: config.stateDir, agentVersion: AGENT_VERSION }),
    enrollmentToken: config.enrollmentToken,
    // Issue 23: over TLS the device is identified by a key of its own and a certificate from the server's CA (where it signs them).
    ...(config.server.startsWith("https:") ? { useClientCertificate: (credential: { cert: string; key: string }) => transport.setClientCertificate(credential) } : {}),
    executors: builtinExecutors({
      allowExec: config.allowExec,
      realReboot: config.realReboot,
      update: {
        command: config.updateCommand,
        downloadDir: path.join(config.stateDir, "downloads"),
        platform: config.platform,
        timeoutMs: config.updateTimeoutSeconds * 1000,
        mirror: config.downloadMirror,
      },
      upgrader,
    }),
    runtime: new UpgradingRuntime(
      new HostRuntime({
      stateDir: config.stateDir,
      ...(config.rootDir ? { rootDir: config.rootDir } : {}),
      store,
      logger,
      allowApps: config.allowApps,
      settleMs: config.appSettleSeconds * 1000,
      startTimeoutMs: config.appStartTimeoutSeconds * 1000,
      }),
      upgrader,
    ),
    logger,
  });

  const onSignal = (signal: NodeJS.Signals) => {
    logger.info({ event: "signal", signal }, "stopping");
    const timer = setTimeout(() => {
      logger.error({ event: "stop.timeout" }, "did not stop in time; exiting");
      process.exit(1);
    }, STOP_GRACE_MS);
    timer.unref();
    void agent.stop();
  };
  process.once("SIGTERM", onSignal);
  process.once("SIGINT", onSignal);

  logger.info(
    {
      event: "start",
      server: config.server,
      stateDir: config.stateDir,
      labels: config.labels,
      platform: config.platform,
      role: config.role,
      allowExec: config.allowExec,
      realReboot: config.realReboot,
      rootDir: config.rootDir ?? `${config.stateDir}/root`,
      allowApps: config.allowApps,
      updateCommand: config.updateCommand,
      downloadMirror: config.downloadMirror,
      caFile: config.caFile,
      caFingerprint: config.caFingerprint,
      version: AGENT_VERSION,
      runningFrom: running.file ?? "sources",
    },
    "drover agent starting",
  );
  const outcome = await agent.start();
  await store.close();
  return exitCodeFor(outcome);
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`drover-agent: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
