import path from "node:path";
import { describe, expect, it } from "vitest";
import { ArgsError, parseAgentArgs, parseSimulateArgs, wantsVersion } from "./env";

const base = ["--server", "http://localhost:3000", "--name", "worker-0", "--state-dir", "/tmp/drover-agent"];

describe("agent command line", () => {
  it("parses a full command line", () => {
    const config = parseAgentArgs([...base, "--labels", "site=lab, env=dev", "--platform", "linux-arm64", "--role", "controller"], {});
    expect(config).toEqual({
      server: "http://localhost:3000",
      name: "worker-0",
      stateDir: "/tmp/drover-agent",
      labels: { site: "lab", env: "dev" },
      platform: "linux-arm64",
      role: "controller",
      allowExec: [],
      realReboot: false,
      rootDir: undefined,
      allowApps: [],
      appSettleSeconds: 3,
      appStartTimeoutSeconds: 60,
      updateCommand: null,
      updateTimeoutSeconds: 1800,
      upgradeRetrySeconds: 30,
      logLevel: "info",
    });
  });

  it("reads --upgrade-retry-seconds, else DROVER_AGENT_UPGRADE_RETRY_SECONDS; --version and -V anywhere ask for the version alone", () => {
    expect(parseAgentArgs([...base, "--upgrade-retry-seconds", "0.5"], {})).toMatchObject({ upgradeRetrySeconds: 0.5 });
    expect(parseAgentArgs(base, { DROVER_AGENT_UPGRADE_RETRY_SECONDS: "120" })).toMatchObject({ upgradeRetrySeconds: 120 });
    expect(() => parseAgentArgs([...base, "--upgrade-retry-seconds", "soon"], {})).toThrow(/^--upgrade-retry-seconds: /);
    expect(wantsVersion(["--version"])).toBe(true);
    expect(wantsVersion(["--server", "x", "-V"])).toBe(true);
    expect(wantsVersion(base)).toBe(false);
  });

  it("reads --update-command (a path made absolute), else DROVER_AGENT_UPDATE_COMMAND, and --update-timeout-seconds", () => {
    expect(parseAgentArgs([...base, "--update-command", "bin/apply-k0s", "--update-timeout-seconds", "600"], {})).toMatchObject({
      updateCommand: path.resolve("bin/apply-k0s"),
      updateTimeoutSeconds: 600,
    });
    expect(parseAgentArgs([...base, "--update-command", "apply-k0s"], {})).toMatchObject({ updateCommand: "apply-k0s" });
    expect(parseAgentArgs(base, { DROVER_AGENT_UPDATE_COMMAND: "/usr/local/bin/apply" })).toMatchObject({ updateCommand: "/usr/local/bin/apply" });
    expect(parseAgentArgs([...base, "--update-command", "/opt/a"], { DROVER_AGENT_UPDATE_COMMAND: "/usr/local/bin/apply" })).toMatchObject({ updateCommand: "/opt/a" });
    expect(parseAgentArgs(base, { DROVER_AGENT_UPDATE_COMMAND: " " })).toMatchObject({ updateCommand: null });
  });

  it("reads --allow-exec as an exact list of commands and --real-reboot as a switch", () => {
    const config = parseAgentArgs([...base, "--allow-exec", "echo, /usr/bin/uptime,echo", "--real-reboot"]);
    expect(config !== "help" && config.allowExec).toEqual(["echo", "/usr/bin/uptime"]);
    expect(config !== "help" && config.realReboot).toBe(true);
  });

  it("reads --allow-apps as a list of programs or '*', --root-dir and the application timings", () => {
    const listed = parseAgentArgs([...base, "--allow-apps", "/usr/bin/node, node,/usr/bin/node", "--root-dir", "rel/root", "--app-settle-seconds", "0.5", "--app-start-timeout-seconds", "10"]);
    expect(listed).toMatchObject({ allowApps: ["/usr/bin/node", "node"], rootDir: path.resolve("rel/root"), appSettleSeconds: 0.5, appStartTimeoutSeconds: 10 });
    expect(parseAgentArgs([...base, "--allow-apps", "*"])).toMatchObject({ allowApps: "*" });
  });

  it("fills defaults: no labels, this host's platform, worker", () => {
    const config = parseAgentArgs([...base.slice(0, 4), "--state-dir", "rel/dir"]);
    if (config === "help") throw new Error("unexpected help");
    expect(config.labels).toEqual({});
    expect(config.platform).toMatch(/^[a-z0-9]+-[a-z0-9]+$/);
    expect(config.role).toBe("worker");
    expect(config.stateDir).toBe(path.resolve("rel/dir"));
  });

  it("strips a trailing slash from the server URL", () => {
    const config = parseAgentArgs(["--server", "https://drover.example/base/", "--name", "a", "--state-dir", "/x"]);
    expect(config !== "help" && config.server).toBe("https://drover.example/base");
  });

  it("answers --help and -h", () => {
    expect(parseAgentArgs(["--help"])).toBe("help");
    expect(parseAgentArgs(["-h"])).toBe("help");
  });

  const bad: [string, string[], RegExp][] = [
    ["no arguments", [], /--server: is required.*--name: is required.*--state-dir: is required/],
    ["server not a URL", ["--server", "localhost", "--name", "a", "--state-dir", "/x"], /--server: must be an http/],
    ["server not http", ["--server", "ftp://h", "--name", "a", "--state-dir", "/x"], /--server: must be an http/],
    ["uppercase name", ["--server", "http://h", "--name", "Worker", "--state-dir", "/x"], /--name: lowercase/],
    ["name too long", ["--server", "http://h", "--name", "a".repeat(64), "--state-dir", "/x"], /--name:/],
    ["label without =", [...base, "--labels", "site"], /--labels: label "site" is not key=value/],
    ["bad label value", [...base, "--labels", "site=a b"], /--labels: invalid label value/],
    ["bad platform", [...base, "--platform", "linux"], /--platform: os-arch/],
    ["bad role", [...base, "--role", "boss"], /--role:/],
    ["bad log level", [...base, "--log-level", "loud"], /--log-level:/],
    ["unknown option", [...base, "--token", "x"], /Unknown option '--token'/],
    ["stray positional", [...base, "extra"], /positional/],
    ["option without value", ["--server"], /--server/],
    ["empty command in --allow-exec", [...base, "--allow-exec", "echo,,ls"], /--allow-exec: a comma-separated list/],
    ["--real-reboot with a value", [...base, "--real-reboot=yes"], /real-reboot/],
    ["empty program in --allow-apps", [...base, "--allow-apps", "node,,python3"], /--allow-apps: a comma-separated list of programs/],
    ["'*' inside a list", [...base, "--allow-apps", "node,*"], /--allow-apps: a comma-separated list/],
    ["negative settle time", [...base, "--app-settle-seconds=-1"], /--app-settle-seconds:/],
    ["zero start timeout", [...base, "--app-start-timeout-seconds", "0"], /--app-start-timeout-seconds:/],
    ["an update command with arguments", [...base, "--update-command", "/usr/bin/k0s-apply --force"], /--update-command: one program, run as PROGRAM FILE VERSION/],
    ["zero update timeout", [...base, "--update-timeout-seconds", "0"], /--update-timeout-seconds:/],
  ];
  it.each(bad)("rejects %s", (_name, argv, message) => {
    expect(() => parseAgentArgs(argv)).toThrow(ArgsError);
    expect(() => parseAgentArgs(argv)).toThrow(message);
  });
});

describe("simulator command line", () => {
  it("parses knobs and fills defaults", () => {
    const config = parseSimulateArgs(["--server", "http://h:1", "--agents", "100", "--degraded", "0.2", "--heartbeat-jitter"]);
    if (config === "help") throw new Error("unexpected help");
    expect(config).toMatchObject({
      agents: 100,
      prefix: "sim",
      labels: { simulated: "true" },
      degraded: 0.2,
      error: 0.02,
      restarts: 0.05,
      flap: 0.01,
      silent: 0.01,
      heartbeatJitter: true,
      rate: 200,
      stateDir: undefined,
      actionFailure: 0,
      actionSeconds: [0.05, 0.5],
    });
    // No --allow-exec: simulated exec runs any command (an empty list would refuse them all).
    expect(config.allowExec).toBeUndefined();
  });

  it("reads --idle-sockets, unset by default (one per agent, at most 2048)", () => {
    expect(parseSimulateArgs(["--server", "http://h:1", "--agents", "2", "--idle-sockets", "32"])).toMatchObject({ idleSockets: 32 });
    expect(parseSimulateArgs(["--server", "http://h:1", "--agents", "2"])).toMatchObject({ idleSockets: undefined });
    expect(() => parseSimulateArgs(["--server", "http://h:1", "--agents", "2", "--idle-sockets", "-1"])).toThrow(/--idle-sockets/);
  });

  it("reads --allow-exec for simulated exec", () => {
    const config = parseSimulateArgs(["--server", "http://h:1", "--agents", "2", "--allow-exec", "uptime,/bin/true"]);
    if (config === "help") throw new Error("unexpected help");
    expect(config.allowExec).toEqual(["uptime", "/bin/true"]);
  });

  it("reads --ca-file and --ca-fingerprint for an https server on the node-http transport, and refuses them otherwise", () => {
    const pin = "ab".repeat(32);
    expect(parseSimulateArgs(["--server", "https://h:1", "--agents", "2", "--ca-file", "ca.pem", "--ca-fingerprint", pin])).toMatchObject({ caFile: path.resolve("ca.pem"), caFingerprint: pin });
    expect(() => parseSimulateArgs(["--server", "http://h:1", "--agents", "2", "--ca-file", "ca.pem"])).toThrow(/--server: --ca-file and --ca-fingerprint are for an https:\/\/ server/);
    expect(() => parseSimulateArgs(["--server", "https://h:1", "--agents", "2", "--ca-file", "ca.pem", "--transport", "fetch"])).toThrow(/node-http transport/);
    expect(() => parseSimulateArgs(["--server", "https://h:1", "--agents", "2", "--ca-fingerprint", "nope"])).toThrow(/--ca-fingerprint: the SHA-256/);
  });

  it("reads the update knobs", () => {
    const config = parseSimulateArgs(["--server", "http://h:1", "--agents", "3", "--crash-versions", "2.0.0, 2.1.0", "--crash-seconds", "4", "--fail-versions", "3.0.0", "--slow-apply-seconds", "5", "--slow-versions", "4.0.0"]);
    expect(config).toMatchObject({ crashVersions: ["2.0.0", "2.1.0"], crashSeconds: 4, failVersions: ["3.0.0"], slowApplySeconds: 5, slowVersions: ["4.0.0"] });
    expect(parseSimulateArgs(["--server", "http://h:1", "--agents", "3"])).toMatchObject({ crashVersions: undefined, crashSeconds: 10, failVersions: undefined, slowApplySeconds: 0, slowVersions: undefined });
  });

  it("reads the plan knobs: apply time and node globs", () => {
    const config = parseSimulateArgs([
      ...["--server", "http://h:1", "--agents", "3", "--plan-apply-seconds", "1.5"],
      ...["--fail-download-nodes", "sim-00003, sim-0001*", "--bad-sha256-nodes", "sim-0000?", "--fail-apply-nodes", "sim-00002"],
    ]);
    expect(config).toMatchObject({ planApplySeconds: 1.5, failDownloadNodes: ["sim-00003", "sim-0001*"], badSha256Nodes: ["sim-0000?"], failApplyNodes: ["sim-00002"] });
    expect(parseSimulateArgs(["--server", "http://h:1", "--agents", "3"])).toMatchObject({ planApplySeconds: 0.2, failDownloadNodes: undefined, badSha256Nodes: undefined, failApplyNodes: undefined });
  });

  it("reads the action knobs", () => {
    const config = parseSimulateArgs(["--server", "http://h:1", "--agents", "3", "--action-failure", "0.25", "--action-seconds", "1-2.5"]);
    expect(config).toMatchObject({ actionFailure: 0.25, actionSeconds: [1, 2.5] });
  });

  const bad: [string, string[], RegExp][] = [
    ["missing --agents", ["--server", "http://h"], /--agents: is required/],
    ["zero agents", ["--server", "http://h", "--agents", "0"], /--agents:/],
    ["fractional agents", ["--server", "http://h", "--agents", "1.5"], /--agents: must be a whole number/],
    ["share above 1", ["--server", "http://h", "--agents", "5", "--flap", "1.5"], /--flap: must be between 0 and 1/],
    ["degraded + error above 1", ["--server", "http://h", "--agents", "5", "--degraded", "0.6", "--error", "0.6"], /must not exceed 1/],
    ["bad prefix", ["--server", "http://h", "--agents", "5", "--prefix", "Sim"], /--prefix:/],
    ["bad rate", ["--server", "http://h", "--agents", "5", "--rate", "0"], /--rate:/],
    ["action failure above 1", ["--server", "http://h", "--agents", "5", "--action-failure", "2"], /--action-failure: must be between 0 and 1/],
    ["action seconds not a range", ["--server", "http://h", "--agents", "5", "--action-seconds", "3"], /--action-seconds: MIN-MAX/],
    ["action seconds reversed", ["--server", "http://h", "--agents", "5", "--action-seconds", "2-1"], /--action-seconds: MIN-MAX/],
    ["empty version", ["--server", "http://h", "--agents", "5", "--fail-versions", "1.0.0,"], /--fail-versions: a comma-separated list of template versions/],
    ["zero crash period", ["--server", "http://h", "--agents", "5", "--crash-seconds", "0"], /--crash-seconds:/],
    ["negative slow apply", ["--server", "http://h", "--agents", "5", "--slow-apply-seconds=-2"], /--slow-apply-seconds:/],
    ["negative plan apply", ["--server", "http://h", "--agents", "5", "--plan-apply-seconds=-1"], /--plan-apply-seconds:/],
    ["node glob with a bad character", ["--server", "http://h", "--agents", "5", "--fail-apply-nodes", "Worker-1"], /--fail-apply-nodes: a comma-separated list of device names/],
    ["empty node glob", ["--server", "http://h", "--agents", "5", "--fail-download-nodes", "a,,b"], /--fail-download-nodes: a comma-separated list/],
    ["bad sha256 nodes", ["--server", "http://h", "--agents", "5", "--bad-sha256-nodes", "a b"], /--bad-sha256-nodes:/],
  ];
  it.each(bad)("rejects %s", (_name, argv, message) => {
    expect(() => parseSimulateArgs(argv)).toThrow(message);
  });
});
