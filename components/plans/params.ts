/**
 * The plans list keeps its state filter and page position in the URL, so a view can be
 * shared and Back works. Pure.
 */
import { PLAN_STATES, type PlanState } from "@/lib/plan-status";
import { DEFAULT_PAGE_SIZE, PAGE_SIZES } from "../devices/params";

export interface PlanParams {
  states: PlanState[];
  limit: number;
  /** Cursors of the pages before this one; the last is this page's cursor. */
  cursors: string[];
}

function list(value: string | null): string[] {
  return value ? value.split(",").map((v) => v.trim()).filter(Boolean) : [];
}

export function parsePlanParams(sp: URLSearchParams): PlanParams {
  const limitRaw = Number(sp.get("limit"));
  return {
    // Unknown names (an old link) are dropped rather than sent to the server to fail.
    states: list(sp.get("state")).filter((s): s is PlanState => (PLAN_STATES as string[]).includes(s)),
    limit: (PAGE_SIZES as readonly number[]).includes(limitRaw) ? limitRaw : DEFAULT_PAGE_SIZE,
    cursors: list(sp.get("after")),
  };
}

export function planParamsToSearch(p: PlanParams): string {
  const sp = new URLSearchParams();
  if (p.states.length) sp.set("state", p.states.join(","));
  if (p.limit !== DEFAULT_PAGE_SIZE) sp.set("limit", String(p.limit));
  if (p.cursors.length) sp.set("after", p.cursors.join(","));
  const s = sp.toString();
  return s ? `?${s}` : "";
}

/** The list input for these params. */
export function planListInput(p: PlanParams) {
  return {
    ...(p.states.length ? { state: p.states } : {}),
    limit: p.limit,
    ...(p.cursors.length ? { cursor: p.cursors.at(-1) } : {}),
  };
}

/** Plans still being processed: what the overview counts as running. */
export const RUNNING_PLAN_STATES = ["NewPlan", "SchedulableWait", "Schedulable"] as const satisfies readonly PlanState[];

export function plansHref(states: readonly PlanState[] = []): string {
  return `/plans${planParamsToSearch({ states: [...states], limit: DEFAULT_PAGE_SIZE, cursors: [] })}`;
}
