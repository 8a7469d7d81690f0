"use client";

import { useClock } from "../hooks/use-now";
import { actionTiming, formatDuration } from "./format";

type Timed = { state: string; createdAt: string | Date; startedAt: string | Date | null; finishedAt: string | Date | null };

/**
 * How long an action ran (ended), has been running (RUNNING, ticking with the console's
 * shared clock) or has been waiting (not started yet, ticking too). Issue 10.
 */
export function ActionDuration({ action, testId }: { action: Timed; testId?: string }) {
  const ended = actionTiming(action, 0);
  if (ended.kind === "ran") {
    return (
      <span data-testid={testId} data-kind="ran" className="tabular-nums">
        {formatDuration(ended.ms)}
      </span>
    );
  }
  if (ended.kind === "none") {
    return (
      <span data-testid={testId} data-kind="none" className="text-slate-500" title="It ended without running">
        —
      </span>
    );
  }
  return <LiveDuration action={action} testId={testId} />;
}

/** Only unfinished actions read the clock: an ended one never re-renders. */
function LiveDuration({ action, testId }: { action: Timed; testId?: string | undefined }) {
  // The text is derived inside the clock's reader, so a row re-renders only when it changes.
  const text = useClock((now) => {
    const t = actionTiming(action, now);
    return t.kind === "none" ? "—" : `${t.kind === "waiting" ? "waiting " : ""}${formatDuration(t.ms, { wholeSeconds: true })}`;
  });
  const running = action.state === "RUNNING";
  return (
    <span data-testid={testId} data-kind={running ? "running" : "waiting"} className={running ? "font-medium text-slate-900 tabular-nums" : "text-slate-500 tabular-nums"}>
      {text}
    </span>
  );
}
