import { describe, expect, it } from "vitest";
import { AgentVersion, agentUnsupported, compareAgentVersions } from "./agent-version";

describe("agent versions", () => {
  it("compare the semver way: numbers as numbers, a pre-release before its release, build metadata ignored", () => {
    const sorted = ["0.9.0", "1.0.0-rc.1", "1.0.0-rc.2", "1.0.0", "1.0.0+build.5", "1.2.0", "1.10.0", "2.0"].map((v) => v);
    for (let i = 0; i + 1 < sorted.length; i++) expect(compareAgentVersions(sorted[i]!, sorted[i + 1]!)).toBeLessThanOrEqual(0);
    expect(compareAgentVersions("1.10.0", "1.9.9")).toBeGreaterThan(0);
    expect(compareAgentVersions("1.0.0+a", "1.0.0+b")).toBe(0);
    expect(compareAgentVersions("1.0", "1.0.0")).toBeLessThan(0);
    expect(compareAgentVersions("bench", "0.1.0")).toBeGreaterThan(0);
  });

  it("flag an agent older than the minimum, never an unknown one", () => {
    expect(agentUnsupported("0.9.9", "1.0.0")).toBe(true);
    expect(agentUnsupported("1.0.0-rc.1", "1.0.0")).toBe(true);
    expect(agentUnsupported("1.0.0", "1.0.0")).toBe(false);
    expect(agentUnsupported("", "1.0.0")).toBe(false);
    expect(agentUnsupported("0.1.0", undefined)).toBe(false);
  });

  it("names a build as a folder and a query may: no slashes, no leading dot", () => {
    for (const ok of ["1.2.3", "1.2.3-rc.1+b7", "2026_11"]) expect(AgentVersion.safeParse(ok).success).toBe(true);
    for (const bad of ["", "../x", ".hidden", "1/2", "a b", "x".repeat(65)]) expect(AgentVersion.safeParse(bad).success).toBe(false);
  });
});
