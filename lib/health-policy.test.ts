/** Which devices an action goes to, by their summary (issue 21). */
import { describe, expect, it } from "vitest";
import { admits, admittedSummaries, healthRank, HEALTH_POLICIES, POLICY_RANK_SQL } from "./health-policy";

describe("health policy", () => {
  const summaries = ["Online", "Degraded", "Error", "Offline", "Unknown", "Rebooting"];
  it.each([
    ["Online", ["Online"]],
    ["Degraded", ["Online", "Degraded"]],
    ["Error", ["Online", "Degraded", "Error"]],
  ] as const)("%s admits %j, never a device that is not there", (policy, ok) => {
    expect(summaries.filter((s) => admits(policy, s))).toEqual(ok);
  });

  it("an unknown policy reads as the default", () => {
    expect(summaries.filter((s) => admits("Sometimes", s))).toEqual(["Online", "Degraded"]);
  });

  it("says what it admits in words", () => {
    expect(HEALTH_POLICIES.map(admittedSummaries)).toEqual(["Online", "Online or Degraded", "Online, Degraded or Error"]);
  });

  it("the scheduler's SQL ranks policies as healthRank ranks summaries, unknown ones as the default", () => {
    expect(POLICY_RANK_SQL).toBe(`(CASE "healthPolicy" WHEN 'Online' THEN 0 WHEN 'Degraded' THEN 1 WHEN 'Error' THEN 2 ELSE 1 END)`);
  });

  it("ranks only the summaries that can take work", () => {
    expect(summaries.map(healthRank)).toEqual([0, 1, 2, null, null, null]);
  });
});
