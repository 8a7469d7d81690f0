/**
 * The chart's data shaping, pure (no DOM, no uPlot instance) so it is unit-tested
 * (tests/charts-shape.test.ts): uPlot's aligned arrays, stacking with its bands, the text
 * alternative's figures and the value formatting.
 */

export type ChartSeries = { label: string; values: (number | null)[]; color?: string };

/** uPlot's columnar data: the x values first, then one array per series. */
export type AlignedData = [number[], ...(number | null)[][]];

/** Colours by position when a series names none: Tailwind palette variables, so dark mode remaps them. */
export const DEFAULT_COLORS = [
  "var(--color-sky-500)",
  "var(--color-emerald-500)",
  "var(--color-amber-500)",
  "var(--color-violet-500)",
  "var(--color-red-500)",
  "var(--color-orange-500)",
  "var(--color-slate-400)",
  "var(--color-pink-500)",
];

export function seriesColor(series: ChartSeries, index: number): string {
  return series.color ?? DEFAULT_COLORS[index % DEFAULT_COLORS.length] ?? "var(--color-slate-500)";
}

/**
 * uPlot's data. Every series is cut or padded (with null) to the length of `times`, so a
 * caller's off-by-one never throws inside the canvas code.
 */
export function alignedData(times: number[], series: ChartSeries[]): AlignedData {
  return [times, ...series.map((s) => times.map((_, i) => s.values[i] ?? null))];
}

/**
 * Stacked areas: each drawn series is the running sum of those below it (hidden ones skipped),
 * and each fills down to the one below through a band, as uPlot's own stacking demo does.
 * A time where every visible series is null stays null (a gap, not a drop to zero).
 * `bands` use uPlot's series indices (1-based: 0 is the x axis).
 */
export function stackData(data: AlignedData, visible: boolean[]): { data: AlignedData; bands: { series: [number, number] }[] } {
  const [times, ...series] = data;
  const sums: (number | null)[] = times.map((_, i) => (series.some((s, k) => visible[k] !== false && s[i] != null) ? 0 : null));
  const out: (number | null)[][] = series.map((s, k) => {
    if (visible[k] === false) return s;
    return s.map((v, i) => {
      const base = sums[i];
      if (base == null) return null;
      const next = base + (v ?? 0);
      sums[i] = next;
      return next;
    });
  });
  const shown = series.map((_, k) => k + 1).filter((idx) => visible[idx - 1] !== false);
  const bands = shown.slice(1).map((upper, j) => ({ series: [upper, shown[j]] as [number, number] }));
  return { data: [times, ...out], bands };
}

export type SeriesSummary = { label: string; latest: number | null; min: number | null; max: number | null; mean: number | null };

/** What the visually hidden table says about each series: its last value, lowest, highest and mean. */
export function summarize(series: ChartSeries[]): SeriesSummary[] {
  return series.map((s) => {
    const present = s.values.filter((v): v is number => v != null && Number.isFinite(v));
    let latest: number | null = null;
    for (let i = s.values.length - 1; i >= 0; i--) {
      const v = s.values[i];
      if (v != null) {
        latest = v;
        break;
      }
    }
    if (present.length === 0) return { label: s.label, latest, min: null, max: null, mean: null };
    const sum = present.reduce((a, b) => a + b, 0);
    return { label: s.label, latest, min: Math.min(...present), max: Math.max(...present), mean: sum / present.length };
  });
}

/** A value as the axis, tooltip and table show it: integers plainly, fractions to two significant places, large numbers with k/M. */
export function formatValue(v: number | null | undefined, unit?: string): string {
  if (v == null || !Number.isFinite(v)) return "–";
  const abs = Math.abs(v);
  let text: string;
  if (abs >= 1e6) text = `${trim(v / 1e6)}M`;
  else if (abs >= 1e4) text = `${trim(v / 1e3)}k`;
  else if (Number.isInteger(v)) text = v.toLocaleString("en-US");
  else if (abs >= 100) text = Math.round(v).toLocaleString("en-US");
  else text = trim(v);
  return unit ? `${text} ${unit}` : text;
}

function trim(v: number): string {
  const abs = Math.abs(v);
  const digits = abs >= 10 ? 1 : 2;
  return String(Number(v.toFixed(digits)));
}

/** The y scale: from zero (counts and rates), to a little above the highest value, never [0, 0]. */
export function yRange(max: number | null | undefined): [number, number] {
  if (max == null || !Number.isFinite(max) || max <= 0) return [0, 1];
  return [0, niceCeil(max * 1.05)];
}

function niceCeil(v: number): number {
  const pow = 10 ** Math.floor(Math.log10(v));
  for (const step of [1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10]) {
    if (step * pow >= v) return step * pow;
  }
  return 10 * pow;
}

/** Resolves `var(--name)` (or a colour) against <html>, where the dark palette's remap lives; a canvas needs a concrete colour. */
export function resolveColor(color: string, read: (name: string) => string): string {
  const name = /^var\((--[\w-]+)\)$/.exec(color.trim())?.[1];
  if (!name) return color;
  return read(name).trim() || "currentColor";
}

/**
 * A colour with transparency, for area fills. The palette's colours are oklch(…) (and hex for
 * the brand ones): the alpha goes inside, which every canvas understands.
 */
export function withAlpha(color: string, alpha: number): string {
  const c = color.trim();
  const [, fn, args] = /^(oklch|oklab|rgb|hsl|lab|lch)\((.*)\)$/i.exec(c) ?? [];
  if (fn && args !== undefined && !args.includes("/")) return `${fn}(${args} / ${alpha})`;
  if (/^#[0-9a-f]{6}$/i.test(c)) return `${c}${Math.round(alpha * 255).toString(16).padStart(2, "0")}`;
  if (/^#[0-9a-f]{3}$/i.test(c)) return `#${[...c.slice(1)].map((x) => x + x).join("")}${Math.round(alpha * 255).toString(16).padStart(2, "0")}`;
  return c;
}
