"use client";

/**
 * A small line of percentages over time, as inline SVG: the inventory card's usage history
 * (one sample a minute, up to 120). Time on x (gaps where the device was silent stay gaps),
 * 0–100 % on y. Deliberately tiny: no axes, the card shows the numbers beside it.
 */
export interface SparkPoint {
  at: number;
  value: number | null;
}

const W = 160;
const H = 36;
/** Samples further apart than this are not joined (the device did not report in between). */
const GAP_MS = 3 * 60_000;

export function Sparkline({ points, label, color = "currentColor", testId }: { points: SparkPoint[]; label: string; color?: string; testId?: string }) {
  const shown = points.filter((p): p is { at: number; value: number } => p.value !== null);
  if (shown.length === 0) {
    return (
      <div className="flex h-9 items-center text-xs text-slate-500" data-testid={testId} data-points={0}>
        no history yet
      </div>
    );
  }
  const first = shown[0]!.at;
  const span = Math.max(shown[shown.length - 1]!.at - first, 60_000);
  const x = (at: number) => ((at - first) / span) * W;
  const y = (v: number) => H - 1 - (Math.min(100, Math.max(0, v)) / 100) * (H - 2);
  // Runs of samples without a gap, each one polyline.
  const runs: { at: number; value: number }[][] = [];
  for (const p of shown) {
    const run = runs[runs.length - 1];
    if (run && p.at - run[run.length - 1]!.at <= GAP_MS) run.push(p);
    else runs.push([p]);
  }
  const values = shown.map((p) => p.value);
  const summary = `${label}: ${shown.length} samples, min ${Math.min(...values).toFixed(0)} %, max ${Math.max(...values).toFixed(0)} %, now ${values[values.length - 1]!.toFixed(0)} %`;
  return (
    <svg viewBox={`0 0 ${W} ${H}`} preserveAspectRatio="none" className="h-9 w-full" role="img" aria-label={summary} data-testid={testId} data-points={shown.length}>
      <title>{summary}</title>
      <line x1={0} x2={W} y1={y(50)} y2={y(50)} className="stroke-slate-200" strokeWidth={1} strokeDasharray="2 3" vectorEffect="non-scaling-stroke" />
      {runs.map((run, i) =>
        run.length === 1 ? (
          <circle key={i} cx={x(run[0]!.at)} cy={y(run[0]!.value)} r={1.5} fill={color} />
        ) : (
          <polyline
            key={i}
            points={run.map((p) => `${x(p.at).toFixed(1)},${y(p.value).toFixed(1)}`).join(" ")}
            fill="none"
            stroke={color}
            strokeWidth={1.5}
            strokeLinejoin="round"
            vectorEffect="non-scaling-stroke"
          />
        ),
      )}
    </svg>
  );
}
