"use client";

import type { ActionPreview } from "../trpc";
import { errorMessage, trpcErrorCode } from "../trpc";
import { toneDot } from "../ui/badge";
import { summaryTone, toneOf } from "../status/tones";
import { Skeleton } from "../ui/skeleton";
import { cx } from "../ui/cx";

const SHOWN = 12;

/** Which devices the request would target, shown while the operator types. */
export function TargetPreview({
  preview,
  loading,
  error,
  idle,
  device,
}: {
  preview: ActionPreview | undefined;
  loading: boolean;
  error: unknown;
  /** Nothing to preview yet (no device or selector typed). */
  idle: string | null;
  device: string | null;
}) {
  let body;
  if (idle) {
    body = <p className="text-slate-500">{idle}</p>;
  } else if (error) {
    const code = trpcErrorCode(error);
    body = (
      <p className="text-red-700" data-testid="preview-count" data-count="0">
        {code === "NOT_FOUND" && device ? `No device named “${device}”.` : errorMessage(error)}
      </p>
    );
  } else if (!preview) {
    body = <Skeleton className="h-4 w-48" />;
  } else {
    const notOnline = preview.devices.filter((d) => d.summary !== "Online");
    const more = preview.total - Math.min(preview.total, SHOWN);
    body = (
      <>
        <p className={cx("font-medium", preview.total === 0 ? "text-red-700" : "text-slate-900")} data-testid="preview-count" data-count={preview.total}>
          {preview.total === 0
            ? "No enrolled device matches."
            : preview.total === 1
              ? "Targets 1 device"
              : `Targets ${preview.total.toLocaleString()} devices — one action each`}
        </p>
        {preview.total > 0 && (
          <ul className="mt-1.5 flex flex-wrap gap-1" data-testid="preview-devices">
            {preview.devices.slice(0, SHOWN).map((d) => (
              <li key={d.name} className="inline-flex items-center gap-1 rounded bg-white px-1.5 py-0.5 font-mono text-[11px] text-slate-700 ring-1 ring-slate-200 ring-inset" title={d.summary}>
                <span className={cx("size-1.5 rounded-full", toneDot(toneOf(summaryTone, d.summary)))} />
                {d.name}
              </li>
            ))}
            {more > 0 && <li className="px-1 py-0.5 text-[11px] text-slate-500">and {more.toLocaleString()} more</li>}
          </ul>
        )}
        {notOnline.length > 0 && (
          <p className="mt-1.5 text-xs text-amber-800" data-testid="preview-not-online">
            {preview.total === 1
              ? `This device is ${notOnline[0]?.summary}: the action waits until it is Online.`
              : `${notOnline.length} of ${preview.total > preview.devices.length ? `the first ${preview.devices.length}` : "these"} devices ${notOnline.length === 1 ? "is" : "are"} not Online: ${notOnline.length === 1 ? "its action waits until it is" : "their actions wait until they are"}.`}
          </p>
        )}
      </>
    );
  }
  return (
    <div className={cx("rounded-md bg-slate-50 px-3 py-2.5 text-sm ring-1 ring-slate-200 ring-inset transition-opacity", loading && preview && "opacity-60")} aria-live="polite">
      {body}
    </div>
  );
}
