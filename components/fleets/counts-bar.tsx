import { toneDot, type Tone } from "../ui/badge";
import { cx } from "../ui/cx";

export interface Segment {
  key: string;
  label: string;
  count: number;
  tone: Tone;
}

/** A thin stacked bar of counts, with the numbers in its title (and for screen readers). */
export function CountsBar({ segments, total, className, testId }: { segments: Segment[]; total: number; className?: string; testId?: string }) {
  const text = segments
    .filter((s) => s.count > 0)
    .map((s) => `${s.count} ${s.label}`)
    .join(", ");
  return (
    <div className={cx("flex h-2 w-full overflow-hidden rounded-full bg-slate-100", className)} title={text || "none"} role="img" aria-label={text || "none"} data-testid={testId}>
      {total > 0 &&
        segments.map((s) =>
          s.count > 0 ? <div key={s.key} className={cx("h-full", toneDot(s.tone))} style={{ width: `${(s.count / total) * 100}%` }} data-segment={s.key} data-count={s.count} /> : null,
        )}
    </div>
  );
}

/** The fleet's members per update status (seed 003), as the fleet controller counted them. */
export function updateSegments(d: { upToDate: number; updating: number; outOfDate: number; unknown: number }): Segment[] {
  return [
    { key: "UpToDate", label: "UpToDate", count: d.upToDate, tone: "green" },
    { key: "Updating", label: "Updating", count: d.updating, tone: "blue" },
    { key: "OutOfDate", label: "OutOfDate", count: d.outOfDate, tone: "amber" },
    { key: "Unknown", label: "Unknown", count: d.unknown, tone: "gray" },
  ];
}

export function CountsLegend({ segments }: { segments: Segment[] }) {
  return (
    <span className="flex flex-wrap gap-x-3 gap-y-0.5 text-[11px] text-slate-500">
      {segments.map((s) => (
        <span key={s.key} className="inline-flex items-center gap-1 tabular-nums" data-testid={`count-${s.key}`} data-count={s.count}>
          <span aria-hidden className={cx("size-1.5 rounded-full", toneDot(s.tone))} />
          {s.count} {s.label}
        </span>
      ))}
    </span>
  );
}
