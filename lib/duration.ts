/**
 * Durations as the specs write them ("30s", "10m", "24h", "500ms"), without zod: the CLI reads
 * them too, and loading zod cost each of its invocations a third of its start-up (issue 20).
 * lib/fleet-spec.ts's `Duration` schema validates with the same pattern.
 */
export const DURATION = /^(\d+)(ms|s|m|h)$/;
const UNIT_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 } as const;

/** "30s" → 30000. Throws on anything else (schemas validate first). */
export function parseDuration(text: string): number {
  const m = DURATION.exec(text);
  if (!m) throw new Error(`not a duration: "${text}" (e.g. 30s, 10m, 24h)`);
  return Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS];
}
