/**
 * Host facts (issue 10): the parsers, a real reading of this host (failing soft where a source
 * is missing), the simulator's facts, and what the Agent sends: the full facts with the
 * enrollment request and the first heartbeat, `usage` alone after, the full facts again on a
 * change or after a failed send.
 */
import os from "node:os";
import fs from "node:fs";
import path from "node:path";
import pino from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SystemFacts } from "../lib/protocol";
import { Agent } from "./agent";
import { ProtocolClient } from "./client";
import { staticHealth } from "./health";
import { assignProfiles, seededRandom, simulatedSystemFacts } from "./simulation";
import { MemoryStateStore } from "./state";
import {
  addressesOf,
  bootTimeFromProcStat,
  cpuPercentBetween,
  cpuTimes,
  HostFactsSource,
  osFromRelease,
  parseOsRelease,
  type StaticFacts,
  type SystemFactsSource,
} from "./system-facts";
import { eventually, FakeServer } from "./test-support/fake-server";
import { FAST } from "./test-support/fast-timing";

describe("parsers", () => {
  it("os-release: quoted and bare values, NAME and VERSION, VERSION_ID when VERSION is missing", () => {
    const debian = parseOsRelease('PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nNAME="Debian GNU/Linux"\nVERSION_ID="12"\nVERSION="12 (bookworm)"\nID=debian\n# comment\n\n');
    expect(osFromRelease(debian)).toEqual({ name: "Debian GNU/Linux", version: "12 (bookworm)" });
    expect(osFromRelease(parseOsRelease("NAME='Alpine Linux'\nVERSION_ID=3.20.3\n"))).toEqual({ name: "Alpine Linux", version: "3.20.3" });
    expect(osFromRelease(parseOsRelease('PRETTY_NAME="Something \\"odd\\""\n'))).toEqual({ name: 'Something "odd"' });
    expect(osFromRelease(parseOsRelease("garbage\n"))).toBeUndefined();
  });

  it("addresses: loopback and IPv6 link-local left out, IPv4 first, no duplicates", () => {
    const iface = (address: string, family: "IPv4" | "IPv6", internal = false) => ({ address, family, internal, netmask: "", mac: "", cidr: null }) as os.NetworkInterfaceInfo;
    expect(
      addressesOf({
        lo: [iface("127.0.0.1", "IPv4", true), iface("::1", "IPv6", true)],
        eth0: [iface("fe80::1", "IPv6"), iface("2001:db8::5", "IPv6"), iface("192.168.1.20", "IPv4")],
        wlan0: [iface("10.0.0.7", "IPv4"), iface("192.168.1.20", "IPv4")],
      }),
    ).toEqual(["192.168.1.20", "10.0.0.7", "2001:db8::5"]);
  });

  it("boot time from /proc/stat's btime", () => {
    expect(bootTimeFromProcStat("cpu  1 2 3\nbtime 1700000000\nprocesses 5\n")?.toISOString()).toBe("2023-11-14T22:13:20.000Z");
    expect(bootTimeFromProcStat("cpu 1 2 3\n")).toBeNull();
  });

  it("cpu busy share between two readings, summed over cores", () => {
    const at = (user: number, idle: number) => cpuTimes([{ model: "", speed: 0, times: { user, nice: 0, sys: 0, idle, irq: 0 } }, { model: "", speed: 0, times: { user, nice: 0, sys: 0, idle, irq: 0 } }]);
    expect(cpuPercentBetween(at(100, 900), at(130, 970))).toBe(30);
    expect(cpuPercentBetween(at(100, 900), at(100, 900))).toBeUndefined();
  });
});

describe("HostFactsSource", () => {
  it("reads this host: facts the protocol accepts, loopback excluded, usage with totals", async () => {
    const startedAt = new Date("2026-11-23T05:00:00Z");
    const source = new HostFactsSource({ diskPath: os.tmpdir(), agentVersion: "9.9.9", startedAt });
    const facts = await source.facts();
    expect(facts.hostname).toBe(os.hostname());
    expect(facts.kernel).toBe(os.release());
    expect(facts.arch).toBe(os.machine());
    expect(facts.cpus).toBe(os.availableParallelism());
    expect(facts.agent).toEqual({ version: "9.9.9", startedAt: startedAt.toISOString() });
    expect(facts.ips).not.toContain("127.0.0.1");
    expect(facts.os?.name).toBeTruthy();
    expect(new Date(facts.bootTime!).getTime()).toBeLessThan(Date.now());
    // Unchanged: the same object, so the agent need not compare.
    expect(await source.facts()).toBe(facts);

    await new Promise((r) => setTimeout(r, 20));
    const usage = await source.usage();
    expect(usage.memory!.totalBytes).toBe(os.totalmem());
    expect(usage.memory!.usedBytes).toBeGreaterThan(0);
    expect(usage.disk!.totalBytes).toBeGreaterThan(usage.disk!.usedBytes);
    expect(SystemFacts.safeParse({ ...facts, usage }).success).toBe(true);
  });

  it("fails soft: no os-release falls back to the os module, a missing disk path leaves disk out", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "facts-"));
    const source = new HostFactsSource({ diskPath: path.join(dir, "gone"), agentVersion: "1", osReleasePaths: [path.join(dir, "none")], procStatPath: path.join(dir, "none") });
    const facts = await source.facts();
    expect(facts.os).toEqual({ name: os.type(), version: os.version() });
    expect(facts.bootTime).toBeDefined(); // from os.uptime()
    const usage = await source.usage();
    expect(usage.disk).toBeUndefined();
    expect(usage.memory).toBeDefined();
    fs.rmSync(dir, { recursive: true, force: true });
  });
});

describe("simulated facts", () => {
  it("plausible, different per device, usage varying within bounds and high on the profile's resource", async () => {
    const profiles = assignProfiles(4, { degraded: 0.25, error: 0, restarts: 0, flap: 0, silent: 0 }, seededRandom(1));
    const startedAt = new Date();
    const sources = profiles.map((p, i) => simulatedSystemFacts({ name: `sim-${i}`, index: i, platform: "linux-arm64", agentVersion: "1.0.0", startedAt }, p, seededRandom(100 + i)));
    const facts = await Promise.all(sources.map((s) => s.facts()));
    expect(new Set(facts.map((f) => f.ips![0])).size).toBe(4);
    for (const f of facts) {
      expect(f.arch).toBe("aarch64");
      expect(new Date(f.bootTime!).getTime()).toBeLessThan(startedAt.getTime());
      expect(SystemFacts.safeParse(f).success).toBe(true);
    }
    expect(await sources[0]!.facts()).toBe(facts[0]); // one object: no change to see
    const readings = [];
    for (let i = 0; i < 20; i++) readings.push(await sources[0]!.usage());
    expect(new Set(readings.map((r) => r.cpuPercent)).size).toBeGreaterThan(5);
    for (const r of readings) expect(SystemFacts.safeParse({ usage: r }).success).toBe(true);

    const hot = profiles.findIndex((p) => p.resources === "degraded");
    const resource = profiles[hot]!.resource;
    const u = await sources[hot]!.usage();
    const share = resource === "cpu" ? u.cpuPercent! / 100 : u[resource]!.usedBytes / u[resource]!.totalBytes;
    expect(share).toBeGreaterThan(0.7);
  });
});

describe("what the Agent sends", () => {
  let server: FakeServer;
  const agents: Agent[] = [];
  beforeEach(async () => {
    server = await FakeServer.start();
    server.heartbeatSeconds = 1;
    server.autoApprove = true;
  });
  afterEach(async () => {
    await Promise.all(agents.splice(0).map((a) => a.stop()));
    await server.close();
  });

  /** A source whose facts the test changes; usage counts up. */
  function fakeSource(): SystemFactsSource & { current: StaticFacts } {
    let n = 0;
    const source = {
      current: { hostname: "h1", cpus: 2, agent: { version: "0.1.0" } } as StaticFacts,
      facts: async () => source.current,
      usage: async () => ({ cpuPercent: ++n % 100 }),
    };
    return source;
  }

  it("full facts at enrollment and on the first heartbeat, usage alone after, full again on a change and after a failed send", async () => {
    const source = fakeSource();
    const agent = new Agent({
      identity: { name: "facts-0", labels: {}, platform: "linux-amd64", role: "worker", agentVersion: "0.1.0" },
      client: new ProtocolClient({ serverUrl: server.url }),
      store: new MemoryStateStore(),
      health: staticHealth({ cpu: "Healthy", memory: "Healthy", disk: "Healthy" }),
      logger: pino({ level: "silent" }),
      timing: { ...FAST, heartbeatJitter: 0 },
      system: source,
    });
    agents.push(agent);
    void agent.start();
    const reports = () => server.devices.get("facts-0")?.reports ?? [];
    await eventually(() => reports().length >= 2, 5_000, "two heartbeats");
    expect(server.device("facts-0").system).toMatchObject({ hostname: "h1", cpus: 2, usage: { cpuPercent: expect.any(Number) } });
    expect(reports()[0]!.system).toMatchObject({ hostname: "h1", cpus: 2, agent: { version: "0.1.0" }, usage: {} });
    expect(Object.keys(reports()[1]!.system!)).toEqual(["usage"]);

    // A fact changes: the next heartbeat carries them all.
    source.current = { ...source.current, hostname: "h2" };
    const at = reports().length;
    await eventually(() => reports().length > at, 5_000, "a heartbeat after the change");
    expect(reports()[at]!.system).toMatchObject({ hostname: "h2", usage: {} });

    // A send that fails: the server may not have them, so the next one carries them all again.
    await eventually(() => reports().length > at + 1, 5_000, "usage alone again");
    expect(Object.keys(reports()[at + 1]!.system!)).toEqual(["usage"]);
    source.current = { ...source.current, hostname: "h3" };
    server.fail({ path: /^\/status$/, status: 500 });
    const failedAt = reports().length;
    await eventually(() => reports().length > failedAt, 8_000, "a heartbeat after the failure");
    expect(reports()[failedAt]!.system).toMatchObject({ hostname: "h3" });
  }, 20_000);

  it("a source that throws: the heartbeat goes without `system`", async () => {
    const agent = new Agent({
      identity: { name: "facts-1", labels: {}, platform: "linux-amd64", role: "worker", agentVersion: "0.1.0" },
      client: new ProtocolClient({ serverUrl: server.url }),
      store: new MemoryStateStore(),
      health: staticHealth({ cpu: "Healthy", memory: "Healthy", disk: "Healthy" }),
      logger: pino({ level: "silent" }),
      timing: FAST,
      system: { facts: () => Promise.reject(new Error("no /proc")), usage: async () => ({}) },
    });
    agents.push(agent);
    void agent.start();
    await eventually(() => (server.devices.get("facts-1")?.reports.length ?? 0) > 0, 5_000, "a heartbeat");
    expect(server.device("facts-1").reports[0]!.system).toBeUndefined();
  });
});
