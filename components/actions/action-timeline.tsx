"use client";

import { isState } from "@/lib/state-machine";
import { actionMachine } from "@/lib/action-status";
import type { EventRow } from "../trpc";
import { toneDot } from "../ui/badge";
import { Skeleton } from "../ui/skeleton";
import { AbsoluteTime, RelativeTime } from "../ui/time";
import { StatusBadge } from "../status/status-badge";
import { actionStateTone, toneOf } from "../status/tones";
import { Actor } from "../events/object-link";
import { cx } from "../ui/cx";

/** The action's events, oldest first: how it got where it is, and who moved it. */
export function ActionTimeline({ events }: { events: EventRow[] | undefined }) {
  if (!events) {
    return (
      <div className="space-y-3 p-4">
        {[0, 1, 2].map((i) => (
          <Skeleton key={i} className="h-4 w-full" />
        ))}
      </div>
    );
  }
  if (events.length === 0) return <p className="px-4 py-6 text-center text-sm text-slate-500">No events yet.</p>;
  const ordered = [...events].sort((a, b) => a.id - b.id);
  return (
    <ol className="px-4 py-3" data-testid="action-timeline">
      {ordered.map((e, i) => {
        const state = isState(actionMachine, e.reason) ? e.reason : null;
        const last = i === ordered.length - 1;
        return (
          <li key={e.id} className="relative flex gap-3 pb-4 last:pb-0" data-testid={`timeline-${e.type}`}>
            {!last && <span aria-hidden className="absolute top-3 bottom-0 left-[5px] w-px bg-slate-200" />}
            <span aria-hidden className={cx("relative mt-1.5 size-[11px] shrink-0 rounded-full ring-2 ring-white", state ? toneDot(toneOf(actionStateTone, state)) : "bg-slate-300")} />
            <div className="min-w-0 flex-1">
              <div className="flex flex-wrap items-center gap-x-2 gap-y-1">
                <span className="text-sm font-medium text-slate-900">{e.type}</span>
                {state ? <StatusBadge table={actionStateTone} state={state} /> : e.reason && <span className="text-xs text-slate-500">{e.reason}</span>}
                <span className="ml-auto text-xs whitespace-nowrap text-slate-500">
                  <RelativeTime value={e.time} /> · <AbsoluteTime value={e.time} />
                </span>
              </div>
              {e.message && <p className="mt-0.5 text-sm break-words text-slate-600">{e.message}</p>}
              <div className="mt-0.5 text-xs">
                <Actor actor={e.actor} />
              </div>
            </div>
          </li>
        );
      })}
    </ol>
  );
}
