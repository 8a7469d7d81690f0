"use client";

/**
 * Time-series charts on uPlot (a ≈50 KB canvas library, fast with thousands of points and no
 * dependencies). Its stylesheet is imported here, once, so only pages with a chart load it.
 *
 * - Sizes: the plot takes its container's width (a ResizeObserver) and the given height.
 * - Theme: series and axes use the Tailwind palette's variables (`var(--color-…)`), resolved
 *   against <html> when drawn; the plot is redrawn when the `dark` class flips, so the canvas
 *   follows the light/dark remap like the rest of the page.
 * - Hover: a tooltip with the time and every visible series' value; the legend (buttons) hides
 *   and shows series, the latest value beside each.
 * - Accessibility: the canvas is hidden from assistive technology; a visually hidden table
 *   says, per series, the latest, lowest, highest and mean value over the range shown.
 */
import { useEffect, useMemo, useRef, useState, useSyncExternalStore, type ReactNode } from "react";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import { cx } from "../ui/cx";
import { alignedData, formatValue, resolveColor, seriesColor, stackData, summarize, withAlpha, yRange, type AlignedData, type ChartSeries } from "./shape";

export type { ChartSeries } from "./shape";

export type TimeChartProps = {
  /** Unix seconds, ascending. */
  times: number[];
  series: ChartSeries[];
  height?: number;
  stacked?: boolean;
  unit?: string;
  ariaLabel: string;
  /** Shown in the plot's place while `times` is empty. */
  empty?: ReactNode;
  className?: string;
  "data-testid"?: string;
};

function subscribeDark(onChange: () => void): () => void {
  const observer = new MutationObserver(onChange);
  observer.observe(document.documentElement, { attributes: true, attributeFilter: ["class"] });
  return () => observer.disconnect();
}

/** Whether <html> has the `dark` class now (the theme script and toggle set it). */
export function useDarkClass(): boolean {
  return useSyncExternalStore(
    subscribeDark,
    () => document.documentElement.classList.contains("dark"),
    () => false,
  );
}

function cssVar(name: string): string {
  return getComputedStyle(document.documentElement).getPropertyValue(name);
}

function color(c: string): string {
  return resolveColor(c, cssVar);
}

function fontFamily(): string {
  return getComputedStyle(document.body).fontFamily || "system-ui, sans-serif";
}

const timeFormat = new Intl.DateTimeFormat(undefined, { month: "short", day: "numeric", hour: "2-digit", minute: "2-digit" });

export function formatTime(t: number): string {
  return timeFormat.format(new Date(t * 1000));
}

/** Keeps a uPlot instance in a box: made by `make` (again when `key` changes), data set on every change, resized with the box. */
function useUplot(box: React.RefObject<HTMLDivElement | null>, key: string, make: (width: number) => uPlot.Options, data: AlignedData | null) {
  const plot = useRef<uPlot | null>(null);
  const hasData = data !== null;
  const dataRef = useRef(data);
  dataRef.current = data;
  const makeRef = useRef(make);
  makeRef.current = make;

  useEffect(() => {
    const el = box.current;
    if (!el || !dataRef.current) return;
    const u = new uPlot(makeRef.current(Math.max(el.clientWidth, 50)), dataRef.current as uPlot.AlignedData, el);
    plot.current = u;
    const ro = new ResizeObserver(() => {
      const w = Math.max(el.clientWidth, 50);
      if (w !== u.width) u.setSize({ width: w, height: u.height });
    });
    ro.observe(el);
    return () => {
      ro.disconnect();
      u.destroy();
      plot.current = null;
    };
  }, [box, key, hasData]);

  useEffect(() => {
    if (plot.current && data) plot.current.setData(data as uPlot.AlignedData);
  }, [data]);
}

/** The tooltip: a box in uPlot's overlay, written directly on each cursor move (no React render per mouse move). */
function tooltipPlugin(values: () => ChartSeries[], unit: string | undefined): uPlot.Plugin {
  let tip: HTMLDivElement;
  return {
    hooks: {
      init: (u) => {
        tip = document.createElement("div");
        tip.className = "drover-chart-tip pointer-events-none absolute z-10 hidden min-w-32 rounded-md border border-slate-200 bg-white px-2.5 py-1.5 text-xs text-slate-700 shadow-md";
        tip.setAttribute("aria-hidden", "true");
        tip.style.fontFamily = fontFamily();
        u.over.appendChild(tip);
      },
      setCursor: (u) => {
        const idx = u.cursor.idx;
        const left = u.cursor.left ?? -1;
        if (idx == null || left < 0) {
          tip.classList.add("hidden");
          return;
        }
        const series = values();
        tip.replaceChildren();
        const head = document.createElement("div");
        head.className = "mb-1 font-medium text-slate-900";
        head.textContent = formatTime(u.data[0][idx] ?? 0);
        tip.appendChild(head);
        series.forEach((s, i) => {
          if (!u.series[i + 1]?.show) return;
          const row = document.createElement("div");
          row.className = "flex items-center gap-2";
          const dot = document.createElement("span");
          dot.className = "inline-block size-2 shrink-0 rounded-full";
          dot.style.background = color(seriesColor(s, i));
          const name = document.createElement("span");
          name.className = "flex-1";
          name.textContent = s.label;
          const val = document.createElement("span");
          val.className = "font-medium tabular-nums";
          val.textContent = formatValue(s.values[idx], unit);
          row.append(dot, name, val);
          tip.appendChild(row);
        });
        tip.classList.remove("hidden");
        const overWidth = u.over.clientWidth;
        const x = left > overWidth / 2 ? left - tip.offsetWidth - 12 : left + 12;
        tip.style.left = `${Math.max(0, x)}px`;
        tip.style.top = `${Math.max(0, (u.cursor.top ?? 0) - tip.offsetHeight / 2)}px`;
      },
    },
  };
}

export function TimeChart({ times, series, height = 180, stacked = false, unit, ariaLabel, empty, className, ...rest }: TimeChartProps) {
  const box = useRef<HTMLDivElement>(null);
  const dark = useDarkClass();
  const [hidden, setHidden] = useState<ReadonlySet<string>>(() => new Set());
  const visible = useMemo(() => series.map((s) => !hidden.has(s.label)), [series, hidden]);
  const seriesRef = useRef(series);
  seriesRef.current = series;

  const raw = useMemo(() => alignedData(times, series), [times, series]);
  const shaped = useMemo(() => (stacked ? stackData(raw, visible) : { data: raw, bands: [] }), [raw, stacked, visible]);
  const hasData = times.length > 0;

  // The plot is made again when what it draws with changes: series, colours, theme, visibility.
  const key = JSON.stringify([series.map((s, i) => [s.label, seriesColor(s, i)]), stacked, unit, height, dark, visible]);

  useUplot(
    box,
    key,
    (width) => {
      const text = color("var(--color-slate-500)");
      const grid = color("var(--color-slate-200)");
      const font = `11px ${fontFamily()}`;
      return {
        width,
        height,
        legend: { show: false },
        // Room on the right for the last time label, which uPlot centres on its tick.
        padding: [8, 20, 0, 0],
        cursor: { drag: { x: false, y: false, setScale: false }, points: { size: 6 } },
        select: { show: false, left: 0, top: 0, width: 0, height: 0 },
        scales: { x: { time: true }, y: { range: (_u, _min, max) => yRange(max) } },
        axes: [
          { stroke: text, font, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid, width: 1 } },
          {
            stroke: text,
            font,
            size: 48,
            grid: { stroke: grid, width: 1 },
            ticks: { show: false },
            values: (_u, splits) => splits.map((v) => formatValue(v)),
          },
        ],
        bands: shaped.bands.map((b) => ({ series: b.series })),
        series: [
          {},
          ...series.map((s, i): uPlot.Series => {
            const c = color(seriesColor(s, i));
            return {
              label: s.label,
              show: visible[i],
              stroke: c,
              width: 1.5,
              fill: stacked ? withAlpha(c, dark ? 0.45 : 0.35) : undefined,
              // uPlot shows the points only while they are far apart (a young history's few samples).
              points: { size: 5 },
            };
          }),
        ],
        plugins: [tooltipPlugin(() => seriesRef.current, unit)],
      };
    },
    hasData ? shaped.data : null,
  );

  const summary = useMemo(() => summarize(series), [series]);
  const toggle = (label: string) =>
    setHidden((prev) => {
      const next = new Set(prev);
      if (next.has(label)) next.delete(label);
      else next.add(label);
      return next;
    });

  return (
    <figure className={cx("m-0 min-w-0", className)} data-testid={rest["data-testid"]}>
      {hasData ? (
        <div ref={box} aria-hidden="true" className="relative w-full" style={{ height }} data-chart-canvas />
      ) : (
        <div className="flex w-full items-center justify-center rounded-md border border-dashed border-slate-200 text-sm text-slate-500" style={{ height }}>
          {empty ?? "No data in this range"}
        </div>
      )}
      {series.length > 0 && (
        <ul className="mt-2 flex flex-wrap gap-x-3 gap-y-1 text-xs" aria-label={`${ariaLabel}: series`}>
          {series.map((s, i) => {
            const off = hidden.has(s.label);
            return (
              <li key={s.label}>
                <button
                  type="button"
                  aria-pressed={!off}
                  onClick={() => toggle(s.label)}
                  disabled={series.length < 2}
                  className={cx("inline-flex items-center gap-1.5 rounded px-1 py-0.5 text-slate-700 enabled:hover:bg-slate-100 disabled:cursor-default", off && "line-through opacity-60")}
                >
                  <span aria-hidden className="inline-block size-2.5 rounded-sm" style={{ background: seriesColor(s, i) }} />
                  {s.label}
                  <span className="font-medium tabular-nums text-slate-900">{formatValue(summary[i]?.latest, unit)}</span>
                </button>
              </li>
            );
          })}
        </ul>
      )}
      {/* A table is never narrower than its text, sr-only or not: clipped in a box of its own, or
          it widens the page sideways on a phone (issue 21). */}
      <div className="sr-only">
        <table data-chart-summary>
          <caption>
            {ariaLabel}
            {hasData ? `, ${formatTime(times[0] ?? 0)} to ${formatTime(times[times.length - 1] ?? 0)}` : ": no data in this range"}
          </caption>
          <thead>
            <tr>
              <th scope="col">Series</th>
              <th scope="col">Latest</th>
              <th scope="col">Lowest</th>
              <th scope="col">Highest</th>
              <th scope="col">Mean</th>
            </tr>
          </thead>
          <tbody>
            {summary.map((s) => (
              <tr key={s.label}>
                <th scope="row">{s.label}</th>
                <td>{formatValue(s.latest, unit)}</td>
                <td>{formatValue(s.min, unit)}</td>
                <td>{formatValue(s.max, unit)}</td>
                <td>{formatValue(s.mean, unit)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </figure>
  );
}

export type SparklineProps = { times: number[]; values: (number | null)[]; color?: string; height?: number; unit?: string; ariaLabel: string; className?: string };

/** A bare line for a card: no axes, legend or cursor; the text alternative is one sentence. */
export function Sparkline({ times, values, color: c = "var(--color-sky-500)", height = 32, unit, ariaLabel, className }: SparklineProps) {
  const box = useRef<HTMLDivElement>(null);
  const dark = useDarkClass();
  const series = useMemo(() => [{ label: ariaLabel, values, color: c }], [ariaLabel, values, c]);
  const data = useMemo(() => (times.length ? alignedData(times, series) : null), [times, series]);
  useUplot(
    box,
    JSON.stringify([c, height, dark]),
    (width) => {
      const stroke = color(c);
      return {
        width,
        height,
        legend: { show: false },
        cursor: { show: false },
        select: { show: false, left: 0, top: 0, width: 0, height: 0 },
        padding: [2, 0, 2, 0],
        scales: { x: { time: true }, y: { range: (_u, _min, max) => yRange(max) } },
        axes: [{ show: false }, { show: false }],
        series: [{}, { stroke, width: 1.5, fill: withAlpha(stroke, 0.15), points: { size: 3 } }],
      };
    },
    data,
  );
  const s = summarize(series)[0];
  return (
    <div className={cx("min-w-0", className)}>
      <div ref={box} aria-hidden="true" className="w-full" style={{ height }} />
      <span className="sr-only">
        {times.length && s ? `${ariaLabel}: latest ${formatValue(s.latest, unit)}, between ${formatValue(s.min, unit)} and ${formatValue(s.max, unit)}` : `${ariaLabel}: no data yet`}
      </span>
    </div>
  );
}
