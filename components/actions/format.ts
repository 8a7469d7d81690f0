/** Small display helpers for actions. Pure. */

/** The first block of a UUID: enough to tell actions apart in a table. */
export function shortId(id: string): string {
  return id.length > 8 ? id.slice(0, 8) : id;
}

/** Args on one line, cut to `max` characters; "" for none. */
export function argsSummary(args: Record<string, unknown>, max = 60): string {
  if (Object.keys(args).length === 0) return "";
  const text = JSON.stringify(args);
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** `user:alice` → alice; other actors (agent, server) as they are. */
export function actorName(actor: string | null | undefined): string {
  if (!actor) return "—";
  return actor.replace(/^user:/, "");
}

export type ArgsParse = { ok: true; value: Record<string, unknown> } | { ok: false; error: string };

/** The args textarea: empty is `{}`; anything else must be one JSON object. */
export function parseArgs(text: string): ArgsParse {
  if (text.trim() === "") return { ok: true, value: {} };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    return { ok: false, error: `Not valid JSON: ${e instanceof Error ? e.message : String(e)}` };
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    return { ok: false, error: `Args must be a JSON object such as {"seconds": 5}, not ${value === null ? "null" : Array.isArray(value) ? "an array" : `a ${typeof value}`}.` };
  }
  return { ok: true, value: value as Record<string, unknown> };
}

/** An example of each built-in kind's args, shown as the textarea's placeholder. */
export const ARGS_EXAMPLES: Record<string, string> = {
  noop: "{}",
  sleep: '{ "seconds": 5 }',
  exec: '{ "command": "uptime", "args": [], "timeoutSeconds": 60 }',
  reboot: "{}",
};

/** A length of time, short: `850 ms`, `4.2 s`, `42 s`, `5m 03s`, `2h 04m`, `3d 4h`; `wholeSeconds` for a ticking one (`0 s`, `4 s`). */
export function formatDuration(ms: number, opts: { wholeSeconds?: boolean } = {}): string {
  const t = Math.max(0, ms);
  if (!opts.wholeSeconds && t < 1_000) return `${Math.round(t)} ms`;
  if (!opts.wholeSeconds && t < 10_000) return `${(Math.floor(t / 100) / 10).toFixed(1)} s`;
  const s = Math.floor(t / 1000);
  if (s < 60) return `${s} s`;
  const pad = (n: number) => String(n).padStart(2, "0");
  if (s < 3600) return `${Math.floor(s / 60)}m ${pad(s % 60)}s`;
  if (s < 86_400) return `${Math.floor(s / 3600)}h ${pad(Math.floor((s % 3600) / 60))}m`;
  return `${Math.floor(s / 86_400)}d ${Math.floor((s % 86_400) / 3600)}h`;
}

export type ActionTiming =
  /** Ended after running: finishedAt − startedAt. */
  | { kind: "ran"; ms: number }
  /** RUNNING: since startedAt, growing. */
  | { kind: "running"; ms: number }
  /** Not started yet (pending approval or schedule, or NEW on the agent): since createdAt, growing. */
  | { kind: "waiting"; ms: number }
  /** Ended without ever running (cancelled or rejected while pending, lost before it started). */
  | { kind: "none" };

type Moment = string | Date | null;
const ms = (v: Moment) => (v === null ? NaN : new Date(v).getTime());

/** How long an action ran, runs or has waited, at `now` (issue 10). */
export function actionTiming(a: { state: string; createdAt: Moment; startedAt: Moment; finishedAt: Moment }, now: number): ActionTiming {
  if (a.finishedAt !== null || ["DONE", "FAILED", "CANCELLED", "LOST"].includes(a.state)) {
    const ran = ms(a.finishedAt) - ms(a.startedAt);
    return Number.isNaN(ran) ? { kind: "none" } : { kind: "ran", ms: ran };
  }
  if (a.state === "RUNNING" && a.startedAt !== null) return { kind: "running", ms: now - ms(a.startedAt) };
  return { kind: "waiting", ms: now - ms(a.createdAt) };
}
