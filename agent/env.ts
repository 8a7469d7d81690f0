/**
 * Command lines of the agent and the simulator, read with node:util parseArgs and
 * validated once with zod (STYLE.md: environment read in one validated module).
 * Bad input throws ArgsError; the entry points print it with the usage and exit 2.
 */
import os from "node:os";
import path from "node:path";
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { z } from "zod";
import { DeviceName, DeviceRole, LabelsSchema, Platform, describeZodError } from "../lib/protocol";
import { parseLabels, SelectorError } from "../lib/label-selector";
import { parseFingerprint } from "../lib/tls-fingerprint";

export class ArgsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ArgsError";
  }
}

/** Set by `npm run build:agent` (scripts/build-agent.mjs): a bundle has no package.json beside it. */
declare const __DROVER_AGENT_VERSION__: string | undefined;

export const AGENT_VERSION: string = (() => {
  if (typeof __DROVER_AGENT_VERSION__ === "string") return __DROVER_AGENT_VERSION__;
  try {
    const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version?: unknown };
    return typeof pkg.version === "string" ? pkg.version : "0.0.0";
  } catch {
    return "0.0.0";
  }
})();

const ARCH: Record<string, string> = { x64: "amd64", arm64: "arm64", arm: "arm", riscv64: "riscv64" };
const OS: Record<string, string> = { linux: "linux", win32: "windows", darwin: "darwin" };

/** This host as `os-arch` (linux-amd64, darwin-arm64, ...). */
export function hostPlatform(): string {
  return `${OS[os.platform()] ?? os.platform()}-${ARCH[os.arch()] ?? os.arch()}`;
}

const ServerUrl = z
  .string({ error: "is required" })
  .refine((value) => {
    try {
      const url = new URL(value);
      return url.protocol === "http:" || url.protocol === "https:";
    } catch {
      return false;
    }
  }, "must be an http:// or https:// URL")
  .transform((value) => value.replace(/\/+$/, ""));

const Labels = z
  .string()
  .default("")
  .transform((value, ctx) => {
    try {
      return parseLabels(value);
    } catch (error) {
      ctx.addIssue({ code: "custom", message: error instanceof SelectorError ? error.message : String(error) });
      return z.NEVER;
    }
  })
  .pipe(LabelsSchema);

const LogLevel = z.enum(["trace", "debug", "info", "warn", "error", "fatal", "silent"]);

const Share = z.coerce.number().min(0, "must be between 0 and 1").max(1, "must be between 0 and 1");

/** `--allow-exec echo,/usr/bin/uptime`: commands matched exactly, so no blanks around them. */
const CommandList = z.string().transform((value, ctx) => {
  const commands = value.split(",").map((c) => c.trim());
  if (value.trim() === "") return [];
  if (commands.some((c) => c === "")) {
    ctx.addIssue({ code: "custom", message: "a comma-separated list of commands, e.g. echo,/usr/bin/uptime" });
    return z.NEVER;
  }
  return [...new Set(commands)];
});
/** The agent: none by default. */
const AllowExec = z.string().default("").pipe(CommandList);

/** `--allow-apps node,/usr/bin/python3` or `--allow-apps '*'`: programs applications may run. */
const AllowApps = z
  .string()
  .default("")
  .transform((value, ctx): string[] | "*" => {
    if (value.trim() === "*") return "*";
    if (value.trim() === "") return [];
    const programs = value.split(",").map((c) => c.trim());
    if (programs.some((c) => c === "" || c === "*")) {
      ctx.addIssue({ code: "custom", message: "a comma-separated list of programs, e.g. /usr/bin/node,/opt/app/bin/server, or '*' for any" });
      return z.NEVER;
    }
    return [...new Set(programs)];
  });

/** An optional comma-separated list: items trimmed, each checked, repeats dropped. */
function commaList(valid: (item: string) => boolean, message: string) {
  return z
    .string()
    .optional()
    .transform((value, ctx): string[] | undefined => {
      if (value === undefined) return undefined;
      const items = value.split(",").map((v) => v.trim());
      if (!items.every(valid)) {
        ctx.addIssue({ code: "custom", message });
        return z.NEVER;
      }
      return [...new Set(items)];
    });
}

/** `--fail-versions 3.0.0,3.1.0`: template version strings. */
const VersionList = commaList((v) => v !== "", "a comma-separated list of template versions, e.g. 2.0.0,2.1.0");

/** `--fail-download-nodes sim-00003,sim-0001*`: device names, `*` and `?` as wildcards. */
const NodeGlobList = commaList((g) => /^[a-z0-9.*?-]+$/.test(g), "a comma-separated list of device names, '*' and '?' as wildcards, e.g. sim-00003,sim-0001*");

/** `--update-command /usr/local/bin/apply-k0s`: one program, no shell; a path is made absolute. */
const UpdateCommand = z
  .string()
  .optional()
  .transform((value, ctx): string | null => {
    const command = value?.trim() ?? "";
    if (command === "") return null;
    if (/\s/.test(command)) {
      ctx.addIssue({ code: "custom", message: "one program, run as PROGRAM FILE VERSION with no shell (put arguments in a wrapper script)" });
      return z.NEVER;
    }
    return command.includes("/") ? path.resolve(command) : command;
  });

/** `--download-mirror http://mirror.lan/k0s`: a base URL the plan's files are fetched from by name. */
const DownloadMirror = z
  .string()
  .optional()
  .transform((value, ctx): string | undefined => {
    const text = value?.trim() ?? "";
    if (text === "") return undefined;
    let url: URL | null = null;
    try {
      url = new URL(text);
    } catch {
      // reported below
    }
    if (!url || (url.protocol !== "http:" && url.protocol !== "https:") || url.search !== "" || url.hash !== "") {
      ctx.addIssue({ code: "custom", message: "an http:// or https:// base URL without a query, e.g. http://mirror.lan/k0s" });
      return z.NEVER;
    }
    return text.replace(/\/+$/, "");
  });

/** `--action-seconds 0.05-0.5`: a range of seconds. */
const SecondsRange = z
  .string()
  .transform((value, ctx): [number, number] => {
    const match = /^\s*(\d+(?:\.\d+)?)\s*-\s*(\d+(?:\.\d+)?)\s*$/.exec(value);
    const min = Number(match?.[1]);
    const max = Number(match?.[2]);
    if (!match || !(min <= max) || max > 3600) {
      ctx.addIssue({ code: "custom", message: "MIN-MAX seconds, MIN <= MAX <= 3600, e.g. 0.05-0.5" });
      return z.NEVER;
    }
    return [min, max];
  });

// ---------------------------------------------------------------------------------------
// Agent

export const AGENT_USAGE = `Usage: npm run agent -- --server URL --name NAME --state-dir DIR [options]

Runs the Drover device agent: enrolls, waits for approval, long-polls for work, runs
actions one at a time and reports status. A restart with the same --state-dir resumes with
the stored credential and action queue.

Options:
  --server URL         Drover server, e.g. http://localhost:3000 (required)
  --name NAME          device name: lowercase letters, digits, '-' and '.' (required)
  --state-dir DIR      where the credential, applied spec and action journal are kept (required)
  --labels k=v,...     device labels, e.g. site=lab,env=dev
  --enrollment-token T an enrollment token from the console's "Add devices" page or
                       \`drover create enrollment-token\`: its labels go over --labels, and
                       the device may be approved at once; env DROVER_ENROLLMENT_TOKEN when
                       not given. A token refused (unknown, revoked, expired, used up) ends
                       the run with status 1
  --platform OS-ARCH   e.g. linux-amd64 (default: this host, ${hostPlatform()})
  --role ROLE          worker or controller (default: worker)
  --allow-exec LIST    commands that exec actions may run, comma-separated and matched
                       exactly, e.g. echo,/usr/bin/uptime (default: none; exec is refused)
  --real-reboot        reboot actions reboot this host (systemctl reboot); without it they
                       are simulated: Rebooting is reported for a few seconds
  --root-dir DIR       the spec's config files are written under DIR (default: DIR/root of
                       the state directory); a spec path /etc/app.conf becomes DIR/etc/app.conf
  --allow-apps LIST    programs the spec's applications may run, comma-separated and matched
                       exactly against argv[0], e.g. /usr/bin/node,/opt/app/bin/server; '*'
                       allows any (default: none; a spec with applications fails to apply)
  --app-settle-seconds S
                       an application is up (Running) once it has run S seconds (default: 3)
  --app-start-timeout-seconds S
                       how long an update waits for its applications to be up before it
                       rolls back (default: 60)
  --update-command PROGRAM
                       applies a plan's k0supdate / airgapupdate: run as PROGRAM FILE VERSION
                       (no shell) once FILE is downloaded and its sha256 checked; env
                       DROVER_AGENT_UPDATE_COMMAND when not given (default: none; those
                       actions fail)
  --update-timeout-seconds S
                       longest the download may take, and then the command (default: 1800)
  --download-mirror URL
                       fetch those files from URL/<the file name in the plan's URL> instead
                       (air-gapped sites); the plan's sha256 is still checked; env
                       DROVER_AGENT_DOWNLOAD_MIRROR when not given (default: none)
  --upgrade-retry-seconds S
                       an agent upgrade whose download or check failed is tried again after
                       S seconds, then 4*S (three tries in all) before it is given up; env
                       DROVER_AGENT_UPGRADE_RETRY_SECONDS when not given (default: 30)
  --ca-file FILE       an https --server is trusted only if this CA (PEM) signed its
                       certificate (default: Node's trust store, public CAs)
  --ca-fingerprint SHA256
                       pin the server's CA by the SHA-256 of its certificate (64 hex digits,
                       colons allowed), as the console's Add devices page shows it: the CA is
                       taken from the chain the server presents and trusted alone; nothing is
                       sent to a server whose chain lacks it. With --ca-file, the file must be
                       that CA. install.sh passes both
  --log-level LEVEL    trace, debug, info, warn, error, fatal or silent (default: info)
  -V, --version        print the agent's version and exit
  -h, --help           show this help

Action kinds: noop; sleep {seconds}; exec {command, args?, timeoutSeconds?}; reboot;
k0supdate and airgapupdate {planId, command, version, platform, url, sha256?, forceupdate?};
agentupgrade {version}: the agent replaces itself with that build from its server.
Specs: Preparing (artifact downloaded, sha256 checked) → ReadyToUpdate → ApplyingUpdate
(files written) → Updated once the applications are up; on failure RollingBack → Error.

Agent upgrades (a fleet template's agent.version, or agentupgrade): the build is downloaded
from --server, its sha256 checked, run with --version, then renamed over this agent's file
(the old one kept as FILE.previous), and the agent exits with status 75 for its service
manager to start the new one. Only an installed agent (drover-agent.mjs or the single
executable) upgrades; one run from the sources (npm run agent) refuses.

Exit status: 0 stopped by a signal or decommissioned; 1 credential revoked, name taken or
another fatal error; 2 bad arguments; 75 upgraded: start it again.`;

/** `--ca-fingerprint`: 64 hex digits (lib/tls-fingerprint.ts). */
const CaFingerprint = z
  .string()
  .optional()
  .transform((value, ctx): string | undefined => {
    if (value === undefined || value.trim() === "") return undefined;
    const parsed = parseFingerprint(value);
    if (!parsed) {
      ctx.addIssue({ code: "custom", message: "the SHA-256 of the CA's certificate: 64 hex digits, colons allowed" });
      return z.NEVER;
    }
    return parsed;
  });

const AgentArgs = z.object({
  server: ServerUrl,
  name: DeviceName,
  stateDir: z.string().min(1, "is required").transform((dir) => path.resolve(dir)),
  labels: Labels,
  /** Empty (an unset setting in install.sh's agent.env) is no token. */
  enrollmentToken: z
    .string()
    .max(256)
    .optional()
    .transform((t) => (t === undefined || t.trim() === "" ? undefined : t.trim())),
  platform: Platform.default(hostPlatform),
  role: DeviceRole.default("worker"),
  allowExec: AllowExec,
  realReboot: z.boolean().default(false),
  rootDir: z
    .string()
    .min(1)
    .optional()
    .transform((dir) => (dir === undefined ? undefined : path.resolve(dir))),
  allowApps: AllowApps,
  appSettleSeconds: z.coerce.number().min(0).max(3600).default(3),
  appStartTimeoutSeconds: z.coerce.number().positive().max(86_400).default(60),
  updateCommand: UpdateCommand,
  updateTimeoutSeconds: z.coerce.number().positive().max(86_400).default(1800),
  downloadMirror: DownloadMirror,
  upgradeRetrySeconds: z.coerce.number().min(0).max(86_400).default(30),
  logLevel: LogLevel.default("info"),
  caFile: z
    .string()
    .optional()
    .transform((file) => (file === undefined || file.trim() === "" ? undefined : path.resolve(file))),
  caFingerprint: CaFingerprint,
}).refine((a) => (a.caFile === undefined && a.caFingerprint === undefined) || a.server.startsWith("https://"), {
  message: "--ca-file and --ca-fingerprint are for an https:// server",
  path: ["server"],
});
export type AgentConfig = z.infer<typeof AgentArgs>;

/** `env`: where DROVER_ENROLLMENT_TOKEN, DROVER_AGENT_UPDATE_COMMAND and DROVER_AGENT_DOWNLOAD_MIRROR are read when their options are not given. */
/**
 * `--version` (or `-V`) anywhere: print the version and exit, before anything is validated
 * (an upgrade's smoke test runs the new file with it alone: agent/upgrade.ts).
 */
export function wantsVersion(argv: readonly string[]): boolean {
  return argv.includes("--version") || argv.includes("-V");
}

export function parseAgentArgs(argv: string[], env: Readonly<Record<string, string | undefined>> = process.env): AgentConfig | "help" {
  const values = readArgs(argv, {
    server: { type: "string" },
    name: { type: "string" },
    "state-dir": { type: "string" },
    labels: { type: "string" },
    "enrollment-token": { type: "string" },
    platform: { type: "string" },
    role: { type: "string" },
    "allow-exec": { type: "string" },
    "real-reboot": { type: "boolean" },
    "root-dir": { type: "string" },
    "allow-apps": { type: "string" },
    "app-settle-seconds": { type: "string" },
    "app-start-timeout-seconds": { type: "string" },
    "update-command": { type: "string" },
    "update-timeout-seconds": { type: "string" },
    "download-mirror": { type: "string" },
    "log-level": { type: "string" },
    "upgrade-retry-seconds": { type: "string" },
    "ca-file": { type: "string" },
    "ca-fingerprint": { type: "string" },
    help: { type: "boolean", short: "h" },
    version: { type: "boolean", short: "V" },
  });
  if (values.help) return "help";
  return validate(AgentArgs, {
    server: values.server,
    name: values.name,
    stateDir: values["state-dir"],
    labels: values.labels,
    enrollmentToken: values["enrollment-token"] ?? env.DROVER_ENROLLMENT_TOKEN,
    platform: values.platform,
    role: values.role,
    allowExec: values["allow-exec"],
    realReboot: values["real-reboot"],
    rootDir: values["root-dir"],
    allowApps: values["allow-apps"],
    appSettleSeconds: values["app-settle-seconds"],
    appStartTimeoutSeconds: values["app-start-timeout-seconds"],
    updateCommand: values["update-command"] ?? env.DROVER_AGENT_UPDATE_COMMAND,
    updateTimeoutSeconds: values["update-timeout-seconds"],
    downloadMirror: values["download-mirror"] ?? env.DROVER_AGENT_DOWNLOAD_MIRROR,
    upgradeRetrySeconds: values["upgrade-retry-seconds"] ?? env.DROVER_AGENT_UPGRADE_RETRY_SECONDS,
    logLevel: values["log-level"],
    caFile: values["ca-file"],
    caFingerprint: values["ca-fingerprint"],
  });
}

// ---------------------------------------------------------------------------------------
// Simulator

export const SIMULATE_USAGE = `Usage: npm run simulate -- --server URL --agents N [options]

Runs N virtual Drover agents in one process, with the real agent core and protocol client.
Approve them in the console, or start the server with DROVER_AUTO_APPROVE matching --labels.

Options:
  --server URL           Drover server (required)
  --agents N             how many agents (required)
  --prefix P             device names are P-00001 ... (default: sim)
  --labels k=v,...       labels of every agent (default: simulated=true)
  --enrollment-token T   every agent enrolls with this enrollment token (one use each)
  --platform OS-ARCH     platform reported (default: linux-amd64)
  --role ROLE            worker or controller (default: worker)
  --degraded SHARE       share of agents reporting a Degraded resource (default: 0.1)
  --error SHARE          share of agents reporting an Error or Critical resource (default: 0.02)
  --restarts SHARE       share of agents whose applications keep restarting (default: 0.05)
  --flap SHARE           share of agents whose resources flap Healthy <-> Degraded (default: 0.01)
  --silent SHARE         share of agents that go silent now and then (default: 0.01)
  --silent-seconds S     how long a silent spell lasts (default: 360, past the default
                         disconnection timeout of 300 s, so the device shows Offline)
  --heartbeat-jitter     no effect, kept for old scripts: every agent now spreads each
                         heartbeat interval by +-20% (agent/timing.ts HEARTBEAT_JITTER)
  --action-failure SHARE share of actions that fail (default: 0)
  --action-seconds MIN-MAX
                         how long a simulated exec, noop or reboot takes (default: 0.05-0.5;
                         sleep takes its own seconds). Actions never touch this host.
  --allow-exec LIST      commands a simulated exec runs (comma-separated, matched exactly);
                         others fail as on a real agent, and the agents report the list
                         (default: any command)
  --crash-versions LIST  template versions (the spec's "version") whose applications come up,
                         then restart every --crash-seconds, e.g. 2.0.0,2.1.0
  --crash-seconds S      period of those restarts (default: 10)
  --fail-versions LIST   template versions that fail to apply: RollingBack, then Error
  --slow-apply-seconds S seconds spent in each update state (default: 0)
  --slow-versions LIST   versions applied slowly (default: every version)
  --plan-apply-seconds S how long a plan's k0supdate / airgapupdate takes, download and
                         apply (default: 0.2)
  --fail-download-nodes LIST
                         device names whose plan downloads fail, '*' and '?' as wildcards,
                         e.g. sim-00003,sim-0001*
  --bad-sha256-nodes LIST
                         device names whose plan downloads fail the sha256 check
  --fail-apply-nodes LIST
                         device names whose plan update command fails
  --rate N               agents started per second during ramp-up (default: 200)
  --state-dir DIR        keep each agent's state under DIR/NAME (default: in memory)
  --transport T          node-http (default; cheaper per request) or fetch (as the agent)
  --ca-file FILE         an https --server is trusted only if this CA (PEM) signed its
                         certificate (as the agent's option; node-http transport)
  --ca-fingerprint SHA256
                         pin the server's CA by the SHA-256 of its certificate, as the agent
  --seed N               seed of the random choices, for repeatable runs
  --summary-seconds S    how often to print the one-line JSON summary (default: 5)
  --idle-sockets N       keep-alive sockets kept open between requests, shared by the agents
                         (node-http transport; default: one per agent, at most 2048)
  --log-level LEVEL      log level of the agents' own logs, on stderr (default: error)
  -h, --help             show this help`;

const SimulateArgs = z
  .object({
    server: ServerUrl,
    agents: z.coerce.number().int("must be a whole number").min(1).max(100_000),
    prefix: z
      .string()
      .default("sim")
      .pipe(DeviceName)
      .refine((p) => p.length <= 50, "must be at most 50 characters"),
    labels: Labels.default({ simulated: "true" }),
    enrollmentToken: z.string().min(1).max(256).optional(),
    platform: Platform.default("linux-amd64"),
    role: DeviceRole.default("worker"),
    degraded: Share.default(0.1),
    error: Share.default(0.02),
    restarts: Share.default(0.05),
    flap: Share.default(0.01),
    silent: Share.default(0.01),
    silentSeconds: z.coerce.number().positive().default(360),
    heartbeatJitter: z.boolean().default(false),
    actionFailure: Share.default(0),
    actionSeconds: SecondsRange.default([0.05, 0.5]),
    // The simulator: unset means any command (zod applies an inner default even under optional()).
    allowExec: CommandList.optional(),
    crashVersions: VersionList,
    crashSeconds: z.coerce.number().positive().max(86_400).default(10),
    failVersions: VersionList,
    slowApplySeconds: z.coerce.number().min(0).max(3600).default(0),
    slowVersions: VersionList,
    planApplySeconds: z.coerce.number().min(0).max(3600).default(0.2),
    failDownloadNodes: NodeGlobList,
    badSha256Nodes: NodeGlobList,
    failApplyNodes: NodeGlobList,
    rate: z.coerce.number().positive().default(200),
    stateDir: z
      .string()
      .min(1)
      .optional()
      .transform((dir) => (dir === undefined ? undefined : path.resolve(dir))),
    seed: z.coerce.number().int().optional(),
    summarySeconds: z.coerce.number().positive().default(5),
    transport: z.enum(["node-http", "fetch"]).default("node-http"),
    idleSockets: z.coerce.number().int("must be a whole number").min(0).max(100_000).optional(),
    logLevel: LogLevel.default("error"),
    caFile: z
      .string()
      .optional()
      .transform((file) => (file === undefined || file.trim() === "" ? undefined : path.resolve(file))),
    caFingerprint: CaFingerprint,
  })
  .refine((o) => o.degraded + o.error <= 1, { message: "--degraded and --error together must not exceed 1", path: ["degraded"] })
  .refine((o) => (o.caFile === undefined && o.caFingerprint === undefined) || (o.server.startsWith("https://") && o.transport === "node-http"), {
    message: "--ca-file and --ca-fingerprint are for an https:// server, with the node-http transport",
    path: ["server"],
  });
export type SimulateConfig = z.infer<typeof SimulateArgs>;

export function parseSimulateArgs(argv: string[]): SimulateConfig | "help" {
  const values = readArgs(argv, {
    server: { type: "string" },
    agents: { type: "string" },
    prefix: { type: "string" },
    labels: { type: "string" },
    "enrollment-token": { type: "string" },
    platform: { type: "string" },
    role: { type: "string" },
    degraded: { type: "string" },
    error: { type: "string" },
    restarts: { type: "string" },
    flap: { type: "string" },
    silent: { type: "string" },
    "silent-seconds": { type: "string" },
    "heartbeat-jitter": { type: "boolean" },
    "action-failure": { type: "string" },
    "action-seconds": { type: "string" },
    "allow-exec": { type: "string" },
    "crash-versions": { type: "string" },
    "crash-seconds": { type: "string" },
    "fail-versions": { type: "string" },
    "slow-apply-seconds": { type: "string" },
    "slow-versions": { type: "string" },
    "plan-apply-seconds": { type: "string" },
    "fail-download-nodes": { type: "string" },
    "bad-sha256-nodes": { type: "string" },
    "fail-apply-nodes": { type: "string" },
    rate: { type: "string" },
    "state-dir": { type: "string" },
    seed: { type: "string" },
    "summary-seconds": { type: "string" },
    transport: { type: "string" },
    "idle-sockets": { type: "string" },
    "log-level": { type: "string" },
    "ca-file": { type: "string" },
    "ca-fingerprint": { type: "string" },
    help: { type: "boolean", short: "h" },
  });
  if (values.help) return "help";
  return validate(SimulateArgs, {
    caFile: values["ca-file"],
    caFingerprint: values["ca-fingerprint"],
    transport: values.transport,
    server: values.server,
    agents: values.agents,
    prefix: values.prefix,
    labels: values.labels,
    enrollmentToken: values["enrollment-token"],
    platform: values.platform,
    role: values.role,
    degraded: values.degraded,
    error: values.error,
    restarts: values.restarts,
    flap: values.flap,
    silent: values.silent,
    silentSeconds: values["silent-seconds"],
    heartbeatJitter: values["heartbeat-jitter"],
    actionFailure: values["action-failure"],
    actionSeconds: values["action-seconds"],
    allowExec: values["allow-exec"],
    crashVersions: values["crash-versions"],
    crashSeconds: values["crash-seconds"],
    failVersions: values["fail-versions"],
    slowApplySeconds: values["slow-apply-seconds"],
    slowVersions: values["slow-versions"],
    planApplySeconds: values["plan-apply-seconds"],
    failDownloadNodes: values["fail-download-nodes"],
    badSha256Nodes: values["bad-sha256-nodes"],
    failApplyNodes: values["fail-apply-nodes"],
    rate: values.rate,
    stateDir: values["state-dir"],
    seed: values.seed,
    summarySeconds: values["summary-seconds"],
    idleSockets: values["idle-sockets"],
    logLevel: values["log-level"],
  });
}

// ---------------------------------------------------------------------------------------

type OptionSpec = Record<string, { type: "string" | "boolean"; short?: string }>;

function readArgs<T extends OptionSpec>(argv: string[], options: T) {
  try {
    return parseArgs({ args: argv, options, strict: true, allowPositionals: false }).values;
  } catch (error) {
    throw new ArgsError(error instanceof Error ? error.message : String(error));
  }
}

const FLAG: Record<string, string> = {
  stateDir: "--state-dir",
  logLevel: "--log-level",
  silentSeconds: "--silent-seconds",
  heartbeatJitter: "--heartbeat-jitter",
  summarySeconds: "--summary-seconds",
  idleSockets: "--idle-sockets",
  enrollmentToken: "--enrollment-token",
  allowExec: "--allow-exec",
  realReboot: "--real-reboot",
  actionFailure: "--action-failure",
  actionSeconds: "--action-seconds",
  rootDir: "--root-dir",
  allowApps: "--allow-apps",
  appSettleSeconds: "--app-settle-seconds",
  appStartTimeoutSeconds: "--app-start-timeout-seconds",
  crashVersions: "--crash-versions",
  crashSeconds: "--crash-seconds",
  failVersions: "--fail-versions",
  slowApplySeconds: "--slow-apply-seconds",
  slowVersions: "--slow-versions",
  updateCommand: "--update-command",
  updateTimeoutSeconds: "--update-timeout-seconds",
  downloadMirror: "--download-mirror",
  upgradeRetrySeconds: "--upgrade-retry-seconds",
  planApplySeconds: "--plan-apply-seconds",
  failDownloadNodes: "--fail-download-nodes",
  badSha256Nodes: "--bad-sha256-nodes",
  failApplyNodes: "--fail-apply-nodes",
  caFile: "--ca-file",
  caFingerprint: "--ca-fingerprint",
};

function validate<S extends z.ZodType>(schema: S, input: Record<string, unknown>): z.output<S> {
  const parsed = schema.safeParse(input);
  if (parsed.success) return parsed.data;
  const message = parsed.error.issues
    .map((issue) => {
      const key = String(issue.path[0] ?? "");
      const flag = FLAG[key] ?? `--${key}`;
      const missing = issue.code === "invalid_type" && input[key] === undefined;
      return `${flag}: ${missing ? "is required" : issue.message}`;
    })
    .join("; ");
  throw new ArgsError(message || describeZodError(parsed.error));
}
