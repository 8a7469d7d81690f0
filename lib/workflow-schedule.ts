/**
 * A workflow's recurring schedule (DESIGN.md §6 "a recurring schedule (cron)", Argo's
 * CronWorkflow): cron expressions parsed and their next time computed by `croner` (not by hand),
 * in an IANA time zone (default UTC). Pure: the spec's schema (lib/workflow-spec.ts) validates
 * with it, the server computes each next time from what the database holds, the console shows it.
 *
 * Expressions: the classic five fields (`minute hour day-of-month month day-of-week`, with
 * ranges, lists, steps, names, `L`, `#`) or six with seconds first, and the nicknames `@hourly`,
 * `@daily`, `@weekly`, `@monthly`, `@yearly`. Day-of-month and day-of-week together match
 * either (Vixie cron's OR, as Argo's robfig/cron does).
 */
import { Cron } from "croner";

export const DEFAULT_SCHEDULE_TIMEZONE = "UTC";

export interface ScheduleLike {
  cron: string;
  timezone?: string | undefined;
}

const NICKNAMES = new Set(["@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly"]);

function cronFor(s: ScheduleLike): Cron {
  // `paused`: the instance is only asked for times, it never runs anything itself.
  return new Cron(s.cron.trim(), { timezone: s.timezone ?? DEFAULT_SCHEDULE_TIMEZONE, mode: "5-or-6-parts", paused: true });
}

/** Why `cron` is not a schedule Drover accepts, or null. */
export function cronProblem(cron: string): string | null {
  const text = cron.trim();
  const fields = text.split(/\s+/);
  // croner also takes an ISO date as a one-off "pattern": a schedule is a recurring expression only.
  if (!(fields.length === 1 && NICKNAMES.has(text.toLowerCase())) && fields.length !== 5 && fields.length !== 6) {
    return `"${text}" is not a cron expression: give 5 fields (minute hour day-of-month month day-of-week), 6 with seconds first, or @hourly/@daily/@weekly/@monthly/@yearly`;
  }
  try {
    const next = cronFor({ cron: text }).nextRun(new Date());
    if (!next) return `"${text}" never falls`;
  } catch (error) {
    return `"${text}": ${(error as Error).message}`;
  }
  return null;
}

/** Why `timezone` is not an IANA time zone this runtime knows, or null. */
export function timezoneProblem(timezone: string): string | null {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: timezone });
    return null;
  } catch {
    return `"${timezone}" is not an IANA time zone (e.g. UTC, Europe/Paris, America/New_York)`;
  }
}

/** The first time the schedule falls strictly after `after` (null: never again, or an invalid schedule). */
export function nextScheduleTime(s: ScheduleLike, after: Date): Date | null {
  try {
    return cronFor(s).nextRun(after);
  } catch {
    return null;
  }
}

/** The next `n` times after `after`, for a preview ("then 03:00, 03:00 …"). */
export function nextScheduleTimes(s: ScheduleLike, after: Date, n: number): Date[] {
  try {
    return cronFor(s).nextRuns(n, after);
  } catch {
    return [];
  }
}
