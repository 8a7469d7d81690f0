/**
 * Which devices an action may be offered to, by their summary (issue 21). Seed 004 holds
 * actions back from nodes that are not up; a Degraded device (memory at 90 %, a CPU spike) is
 * still up and working, as Flight Control's Degraded means "still functional", so by default
 * work goes to Online and Degraded devices. An action, a plan command or a workflow step may
 * ask for Online only (a risky change on a device already struggling) or allow Error too (the
 * repair that clears the error). Offline, Unknown and Rebooting devices never get work: they
 * are not there to take it. Pure; the scheduler's SQL and the wait explanations read it.
 */
export const HEALTH_POLICIES = ["Online", "Degraded", "Error"] as const;
export type HealthPolicy = (typeof HEALTH_POLICIES)[number];
export const DEFAULT_HEALTH_POLICY: HealthPolicy = "Degraded";

/** How far each summary is from Online; a policy admits a device whose rank is at most its own. */
const RANK: Record<string, number> = Object.fromEntries(HEALTH_POLICIES.map((p, i) => [p, i]));

/** The rank the scheduler compares against an action's policy, or null: the device gets nothing. */
export function healthRank(summary: string): number | null {
  return RANK[summary] ?? null;
}

export function admits(policy: string, summary: string): boolean {
  const rank = healthRank(summary);
  return rank !== null && rank <= (RANK[policy] ?? RANK[DEFAULT_HEALTH_POLICY]!);
}

/** The summaries a policy admits, in words: "Online or Degraded". */
export function admittedSummaries(policy: string): string {
  const ok = HEALTH_POLICIES.filter((s) => admits(policy, s));
  return ok.length === 1 ? ok[0]! : `${ok.slice(0, -1).join(", ")} or ${ok.at(-1)}`;
}

/**
 * The SQL expression ranking an action's policy, to compare with the device's healthRank:
 * `… AND ${POLICY_RANK_SQL} >= ?`, made from the same ranks. The same text on SQLite and PostgreSQL.
 */
export const POLICY_RANK_SQL = `(CASE "healthPolicy" ${HEALTH_POLICIES.map((p) => `WHEN '${p}' THEN ${RANK[p]}`).join(" ")} ELSE ${RANK[DEFAULT_HEALTH_POLICY]} END)`;
