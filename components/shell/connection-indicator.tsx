"use client";

import { useLive } from "../live/live-updates";
import { cx } from "../ui/cx";

export function ConnectionIndicator() {
  const { state } = useLive();
  const label = state === "live" ? "Live" : state === "connecting" ? "Connecting…" : "Reconnecting…";
  return (
    <span
      className="inline-flex min-w-0 items-center gap-1.5 text-xs text-slate-500"
      data-testid="live-indicator"
      data-state={state}
      title={state === "live" ? "Receiving live updates" : "Live updates are paused; the page will catch up when the connection is back"}
    >
      <span className="relative flex size-2 shrink-0">
        {/* It pings three times when the stream (re)connects, then holds still: a ping for ever
            kept the browser repainting the header (over half a core in software rendering) on
            every console page, for a dot whose colour and word already say it is live. */}
        {state === "live" && <span className="absolute inline-flex size-full animate-ping rounded-full bg-emerald-400 opacity-60 [animation-iteration-count:3]" />}
        <span className={cx("relative inline-flex size-2 rounded-full", state === "live" ? "bg-emerald-500" : "bg-amber-500")} />
      </span>
      {/* On a phone the dot says Live alone, and a longer word gives way before Sign out does (issue 21). */}
      <span className={cx("truncate", state === "live" ? "max-sm:sr-only" : "font-medium text-amber-700")}>{label}</span>
    </span>
  );
}
