/**
 * The overview's history as chart series (pure: tested in tests/charts-shape.test.ts): which
 * statuses to draw and in which colours, the range in the URL, when to poll again.
 */
import { summaryMachine, lifecycleMachine } from "@/lib/device-status";
import { stateNames } from "@/lib/state-machine";
import type { ChartSeries } from "../charts/shape";

export const RANGES = ["1h", "24h", "7d"] as const;
export type Range = (typeof RANGES)[number];
export const RANGE_LABELS: Record<Range, string> = { "1h": "1 h", "24h": "24 h", "7d": "7 d" };

/** `?range=` of the overview; anything else is the default, 1 h. */
export function parseRange(value: string | null | undefined): Range {
  return (RANGES as readonly string[]).includes(value ?? "") ? (value as Range) : "1h";
}

/**
 * Colours of the stacked device charts. Each status its own colour (the badges' tones give
 * several of them the same grey): the palette's variables, so dark mode remaps them.
 */
export const SUMMARY_COLORS: Record<string, string> = {
  Online: "var(--color-emerald-500)",
  Degraded: "var(--color-amber-500)",
  Error: "var(--color-red-500)",
  Rebooting: "var(--color-sky-500)",
  ConflictPaused: "var(--color-orange-500)",
  AwaitingReconnect: "var(--color-violet-500)",
  PoweringOn: "var(--color-teal-500)",
  PoweringOff: "var(--color-slate-500)",
  PoweredOff: "var(--color-slate-300)",
  Offline: "var(--color-slate-400)",
};

export const LIFECYCLE_COLORS: Record<string, string> = {
  Enrolled: "var(--color-emerald-500)",
  Decommissioning: "var(--color-amber-500)",
  Decommissioned: "var(--color-slate-400)",
  Unknown: "var(--color-slate-300)",
};

export const ACTION_COLORS: Record<string, string> = {
  created: "var(--color-violet-500)",
  DONE: "var(--color-emerald-500)",
  FAILED: "var(--color-red-500)",
  CANCELLED: "var(--color-slate-400)",
  LOST: "var(--color-orange-500)",
};

const SUMMARY_ORDER = stateNames(summaryMachine);
const LIFECYCLE_ORDER = stateNames(lifecycleMachine);

type Points = (number | null)[];

const anyAbove0 = (values: Points) => values.some((v) => v != null && v > 0);

/**
 * One series per status that had a device at some point in the range, in the state table's
 * order (Online at the bottom of the stack); statuses the table does not know (a newer
 * server) after them, grey.
 */
export function deviceSeries(byStatus: Record<string, Points>, axis: "summary" | "lifecycle"): ChartSeries[] {
  const order = axis === "summary" ? SUMMARY_ORDER : LIFECYCLE_ORDER;
  const colors = axis === "summary" ? SUMMARY_COLORS : LIFECYCLE_COLORS;
  const names = Object.keys(byStatus).filter((k) => anyAbove0(byStatus[k]!));
  names.sort((a, b) => rank(order, a) - rank(order, b) || a.localeCompare(b));
  return names.map((name) => ({ label: name, values: byStatus[name]!, color: colors[name] ?? "var(--color-slate-500)" }));
}

function rank(order: readonly string[], name: string): number {
  const i = order.indexOf(name);
  return i < 0 ? order.length : i;
}

/** Actions per minute: created, then each final state that occurred in the range. */
export function actionSeries(actions: { createdPerMinute: Points; finishedPerMinute: Record<string, Points> }): ChartSeries[] {
  const finished = ["DONE", "FAILED", "CANCELLED", "LOST", ...Object.keys(actions.finishedPerMinute).filter((s) => !["DONE", "FAILED", "CANCELLED", "LOST"].includes(s))]
    .filter((s) => actions.finishedPerMinute[s] && anyAbove0(actions.finishedPerMinute[s]))
    .map((s) => ({ label: `finished ${s}`, values: actions.finishedPerMinute[s]!, color: ACTION_COLORS[s] }));
  return [{ label: "created", values: actions.createdPerMinute, color: ACTION_COLORS.created }, ...finished];
}

/**
 * When to ask again: just after the next sample is due (a second's grace for it to be
 * written), never sooner than a second, never later than one interval and a second.
 */
export function refetchDelayMs(h: { nextSampleAt: number; sampleSeconds: number } | undefined, nowMs: number): number {
  if (!h) return 5_000;
  const due = h.nextSampleAt * 1000 + 1_000 - nowMs;
  return Math.min(Math.max(due, 1_000), h.sampleSeconds * 1000 + 1_000);
}

/** "first sample in 42 s" while nothing is collected yet. */
export function collectingText(nextSampleAt: number, nowMs: number): string {
  const s = Math.ceil(nextSampleAt - nowMs / 1000);
  return s > 0 ? `Collecting — first sample in ${s} s` : "Collecting — first sample any moment";
}

/**
 * The index of the first bucket with a sample (a rate there is a number, even 0): a young
 * history is drawn from its first sample rather than squeezed into the right edge of the range.
 * At most the whole range; 0 when nothing is sampled.
 */
export function firstSampled(sampled: Points): number {
  const i = sampled.findIndex((v) => v !== null);
  return i < 0 ? 0 : i;
}
