/**
 * Agent versions (issue 12): the name of a build (`npm run build:agent -- --version X`), how a
 * fleet template or an `agentupgrade` action names one, and how two compare. Pure module,
 * shared by the server (which builds it holds, the minimum it supports), the agent and the
 * console (the "older than this server supports" warning).
 */
import { z } from "zod";

/**
 * A version as a build is named: also a folder name on the server (DROVER_AGENT_DIST/versions/X)
 * and a query parameter, so no slashes and nothing that starts with a dot.
 */
export const AgentVersion = z
  .string()
  .trim()
  .min(1)
  .max(64)
  .regex(/^[0-9A-Za-z][0-9A-Za-z.+_-]*$/, "a version such as 1.2.3 (letters, digits, '.', '+', '_', '-')");

/** The action kind that upgrades an agent: args `{version}` (agent/executors/agent-upgrade.ts). */
export const AGENT_UPGRADE_KIND = "agentupgrade";
export const AgentUpgradeArgs = z.strictObject({ version: AgentVersion });
export type AgentUpgradeArgs = z.infer<typeof AgentUpgradeArgs>;

/**
 * The oldest agent this server supports when DROVER_MIN_AGENT_VERSION is not set: the first
 * agent that speaks the protocol as it is now. Raised by hand when the server stops
 * understanding something older agents send (not with every release: an agent one minor
 * behind works; it is out of date, not unsupported).
 */
export const DEFAULT_MIN_AGENT_VERSION = "0.1.0";

/**
 * How the installed agent runs (install.sh's bin/drover-agent; bench/agent-footprint.ts
 * measures the agent the same way). An idle agent answers one long-poll every half minute:
 * it needs no JIT compiler, and V8's optimizing and baseline compilers, once paged in, are
 * ≈4 MB of its RSS. WebAssembly still works (global fetch's parser, for artifact downloads).
 * glibc keeps the memory V8 freed after compiling the agent at start; one arena that gives
 * back what it frees is another ≈1 MB. Measured: 52.4–52.9 MB idle with plain
 * `node`, 47.1–47.5 MB so (docs/architecture.md, agent footprint).
 */
export const AGENT_NODE_FLAGS = ["--no-opt", "--no-sparkplug"] as const;
export const AGENT_MALLOC_ENV = { MALLOC_ARENA_MAX: "1", MALLOC_TRIM_THRESHOLD_: "65536" } as const;

/**
 * Compares two versions the semver way where they are semver (numeric parts compared as
 * numbers, a pre-release before its release, build metadata ignored), and part by part
 * otherwise. Negative when a < b.
 */
export function compareAgentVersions(a: string, b: string): number {
  const split = (v: string) => {
    const [main = "", pre] = v.split("+")[0]!.split(/-(.*)/s, 2);
    return { main: main.split("."), pre: pre === undefined ? null : pre.split(".") };
  };
  const x = split(a);
  const y = split(b);
  const parts = (p: string[], q: string[]) => {
    for (let i = 0; i < Math.max(p.length, q.length); i++) {
      const c = comparePart(p[i], q[i]);
      if (c !== 0) return c;
    }
    return 0;
  };
  const main = parts(x.main, y.main);
  if (main !== 0) return main;
  if (x.pre === null || y.pre === null) return x.pre === y.pre ? 0 : x.pre === null ? 1 : -1;
  return parts(x.pre, y.pre);
}

function comparePart(p: string | undefined, q: string | undefined): number {
  if (p === q) return 0;
  if (p === undefined) return -1;
  if (q === undefined) return 1;
  const pn = /^\d+$/.test(p);
  const qn = /^\d+$/.test(q);
  if (pn && qn) return Number(p) - Number(q);
  if (pn !== qn) return pn ? -1 : 1;
  return p < q ? -1 : 1;
}

/** Whether an agent at `version` is older than the server supports (`minimum`). An unknown version ("") is not flagged. */
export function agentUnsupported(version: string | null | undefined, minimum: string | null | undefined): boolean {
  if (!version || !minimum) return false;
  return compareAgentVersions(version, minimum) < 0;
}
