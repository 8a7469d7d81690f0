"use client";

import { CountsBar, CountsLegend } from "../fleets/counts-bar";
import { progressLine, progressSegments, WAIT_PHRASES, type ProgressCounts } from "./format";

/** A request's progress: the bar, "41/50 done, 9 waiting, 0 failed", and (when read) why the rest wait. */
export function RequestProgress({ progress, legend = false, testId = "request-progress" }: { progress: ProgressCounts; legend?: boolean; testId?: string }) {
  const segments = progressSegments(progress);
  return (
    <div className="space-y-1.5" data-testid={testId} data-done={progress.done} data-total={progress.total} data-failed={progress.failed} data-waiting={progress.waiting}>
      <CountsBar segments={segments} total={progress.total} />
      <p className="text-xs text-slate-600 tabular-nums" data-testid={`${testId}-line`}>
        {progressLine(progress)}
      </p>
      {legend && <CountsLegend segments={segments.filter((s) => s.count > 0)} />}
      {progress.waitingBy && progress.waitingBy.length > 0 && (
        <ul className="space-y-0.5 text-xs text-slate-600" data-testid={`${testId}-reasons`}>
          {progress.waitingBy.map((w) => (
            <li key={w.reason} data-reason={w.reason} data-count={w.count} title={`e.g. ${w.message}`}>
              <span className="font-medium text-slate-800 tabular-nums">{w.count.toLocaleString("en-US")}</span> waiting {WAIT_PHRASES[w.reason] ?? `(${w.reason})`}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
