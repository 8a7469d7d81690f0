/**
 * Host facts for the inventory (issue 10): what an operator expects to see about a machine.
 *
 *   static  hostname, OS name and version (/etc/os-release), kernel, arch, addresses (loopback
 *           and IPv6 link-local left out), boot time, cpu count, agent version and start time
 *   usage   cpu busy share since the previous reading (os.cpus() times), memory used/total
 *           (libuv's freemem is MemAvailable on Linux), disk used/total of the state
 *           directory's file system (fs.statfs; used = blocks - bfree, as df counts it)
 *
 * Every reading fails soft: what cannot be read is left out, never guessed, and never fails
 * the heartbeat it rides on.
 *
 * What goes out (Agent.systemForHeartbeat): the full facts with the enrollment request, with
 * the first heartbeat after start, whenever a static fact changes, and once an hour (the
 * server may have lost them: a restore); `usage` alone on every other heartbeat, so a
 * heartbeat grows by ≈ 120 bytes, not ≈ 500. The server keeps the last full set (a
 * heartbeat with only `usage` leaves it as it is).
 */
import fs from "node:fs/promises";
import os from "node:os";
import type { SystemFacts } from "../lib/protocol";
import { isoTime } from "./timing";

export type StaticFacts = Omit<SystemFacts, "usage">;
export type Usage = NonNullable<SystemFacts["usage"]>;

/** Where the agent gets its host facts; the simulator supplies synthetic ones. */
export interface SystemFactsSource {
  /** The static facts as they are now. A source may return the same object while nothing changed. */
  facts(): Promise<StaticFacts>;
  /** Usage now; cpu is the busy share since the previous call (or since the source was made). */
  usage(): Promise<Usage>;
}

/** The keys and values of an os-release file (shell-style, quotes optional). */
export function parseOsRelease(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split("\n")) {
    const m = /^\s*([A-Z0-9_]+)=(.*)$/.exec(line);
    if (!m) continue;
    let value = (m[2] ?? "").trim();
    if ((value.startsWith('"') && value.endsWith('"')) || (value.startsWith("'") && value.endsWith("'"))) value = value.slice(1, -1);
    out[m[1] as string] = value.replace(/\\(["'$`\\])/g, "$1");
  }
  return out;
}

/** `{name, version}` from os-release: NAME and VERSION (or VERSION_ID), PRETTY_NAME as a last resort. */
export function osFromRelease(fields: Record<string, string>): StaticFacts["os"] {
  const name = fields.NAME ?? fields.PRETTY_NAME ?? fields.ID;
  if (!name) return undefined;
  const version = fields.VERSION ?? fields.VERSION_ID;
  return { name: name.slice(0, 128), ...(version ? { version: version.slice(0, 128) } : {}) };
}

/** Non-loopback addresses, IPv4 first; IPv6 link-local (fe80::/10) says nothing off the link. */
export function addressesOf(interfaces: NodeJS.Dict<os.NetworkInterfaceInfo[]>): string[] {
  const v4: string[] = [];
  const v6: string[] = [];
  for (const list of Object.values(interfaces)) {
    for (const a of list ?? []) {
      if (a.internal) continue;
      if (a.family === "IPv4") v4.push(a.address);
      else if (!/^fe[89ab]/i.test(a.address)) v6.push(a.address);
    }
  }
  return [...new Set([...v4, ...v6])].slice(0, 64);
}

/** Boot time from /proc/stat's `btime` (stable, unlike now - uptime, which drifts by rounding). */
export function bootTimeFromProcStat(text: string): Date | null {
  const m = /^btime\s+(\d+)$/m.exec(text);
  return m ? new Date(Number(m[1]) * 1000) : null;
}

interface CpuTimes {
  busy: number;
  total: number;
}

/** Busy and total cpu time summed over the cores (ms). */
export function cpuTimes(cpus: os.CpuInfo[]): CpuTimes {
  let busy = 0;
  let total = 0;
  for (const c of cpus) {
    const t = c.times;
    const sum = t.user + t.nice + t.sys + t.idle + t.irq;
    busy += sum - t.idle;
    total += sum;
  }
  return { busy, total };
}

/** Busy share between two readings, 0–100 with one decimal; undefined when no time passed. */
export function cpuPercentBetween(before: CpuTimes, after: CpuTimes): number | undefined {
  const total = after.total - before.total;
  if (!(total > 0)) return undefined;
  const share = (after.busy - before.busy) / total;
  return Math.round(Math.min(1, Math.max(0, share)) * 1000) / 10;
}

const soft = async <T>(read: () => Promise<T> | T): Promise<T | undefined> => {
  try {
    return await read();
  } catch {
    return undefined;
  }
};

export interface HostFactsOptions {
  /** The state directory: its file system is the disk reported. */
  diskPath: string;
  agentVersion: string;
  /** When this agent started (default: when the process did). */
  startedAt?: Date;
  /** Overrides for tests. */
  osReleasePaths?: string[];
  procStatPath?: string;
}

/** This host's facts, read with Node's os module and /proc. */
export class HostFactsSource implements SystemFactsSource {
  private readonly startedAt: Date;
  private bootTime: string | undefined | null = null;
  private lastCpu: CpuTimes;
  private last: StaticFacts | null = null;
  private lastJson = "";

  constructor(private readonly options: HostFactsOptions) {
    this.startedAt = options.startedAt ?? new Date(Date.now() - process.uptime() * 1000);
    this.lastCpu = cpuTimes(os.cpus());
  }

  async facts(): Promise<StaticFacts> {
    const release = await this.osRelease();
    const kernel = await soft(() => os.release());
    const arch = await soft(() => os.machine());
    const ips = await soft(() => addressesOf(os.networkInterfaces()));
    const cpus = await soft(() => os.availableParallelism());
    const hostname = await soft(() => os.hostname());
    const bootTime = await this.boot();
    const facts: StaticFacts = {
      ...(hostname ? { hostname: hostname.slice(0, 253) } : {}),
      ...(release ? { os: release } : {}),
      ...(kernel ? { kernel: kernel.slice(0, 256) } : {}),
      ...(arch ? { arch: arch.slice(0, 32) } : {}),
      ...(ips ? { ips } : {}),
      ...(bootTime ? { bootTime } : {}),
      ...(cpus ? { cpus } : {}),
      agent: { version: this.options.agentVersion.slice(0, 64), startedAt: isoTime(this.startedAt) },
    };
    // The same object while nothing changed: the agent compares by reference first.
    const json = JSON.stringify(facts);
    if (this.last && json === this.lastJson) return this.last;
    this.last = facts;
    this.lastJson = json;
    return facts;
  }

  async usage(): Promise<Usage> {
    const now = await soft(() => cpuTimes(os.cpus()));
    const cpuPercent = now ? cpuPercentBetween(this.lastCpu, now) : undefined;
    if (now) this.lastCpu = now;
    const totalMem = await soft(() => os.totalmem());
    const freeMem = await soft(() => os.freemem());
    const disk = await soft(async () => {
      const s = await fs.statfs(this.options.diskPath);
      return s.blocks > 0 ? { usedBytes: (s.blocks - s.bfree) * s.bsize, totalBytes: s.blocks * s.bsize } : undefined;
    });
    return {
      ...(cpuPercent !== undefined ? { cpuPercent } : {}),
      ...(totalMem && freeMem !== undefined ? { memory: { usedBytes: Math.max(0, totalMem - freeMem), totalBytes: totalMem } } : {}),
      ...(disk ? { disk } : {}),
    };
  }

  private async osRelease(): Promise<StaticFacts["os"]> {
    for (const file of this.options.osReleasePaths ?? ["/etc/os-release", "/usr/lib/os-release"]) {
      const text = await soft(() => fs.readFile(file, "utf8"));
      if (text !== undefined) return osFromRelease(parseOsRelease(text));
    }
    // Not Linux (or no os-release): what Node knows, e.g. Darwin 23.1.0.
    const type = await soft(() => os.type());
    const version = await soft(() => os.version());
    return type ? { name: type.slice(0, 128), ...(version ? { version: version.slice(0, 128) } : {}) } : undefined;
  }

  /** Read once: it changes only with a reboot, which restarts the agent. */
  private async boot(): Promise<string | undefined> {
    if (this.bootTime !== null) return this.bootTime;
    const text = await soft(() => fs.readFile(this.options.procStatPath ?? "/proc/stat", "utf8"));
    let at = text === undefined ? null : bootTimeFromProcStat(text);
    if (!at) {
      const uptime = await soft(() => os.uptime());
      // Rounded to the minute so that it does not read as a change.
      at = uptime ? new Date(Math.round((Date.now() - uptime * 1000) / 60_000) * 60_000) : null;
    }
    this.bootTime = at ? isoTime(at) : undefined;
    return this.bootTime;
  }
}
