"use client";

/**
 * The overview's charts over time (issue 10): devices per status (stacked), heartbeats and
 * actions per minute, rollouts' and plans' progress, over 1 h / 24 h / 7 d (`?range=`). The
 * server samples once a minute (server/overview/history.ts); the query is asked again just
 * after each sample is due, so new points appear without a reload.
 */
import { useQuery } from "@tanstack/react-query";
import { isTerminalRolloutPhase, type RolloutPhase } from "@/lib/rollout-status";
import { useMemo, useState, useSyncExternalStore, type ReactNode } from "react";
import { useTRPC } from "../trpc";
import { Card, CardHeader } from "../ui/card";
import { ErrorState } from "../ui/states";
import { Skeleton } from "../ui/skeleton";
import { cx } from "../ui/cx";
import { moveFocus } from "../ui/roving";
import { setSearch } from "../hooks/url-state";
import { useClock } from "../hooks/use-now";
import { TimeChart, type ChartSeries } from "../charts/time-chart";
import { actionSeries, collectingText, deviceSeries, firstSampled, parseRange, RANGE_LABELS, RANGES, refetchDelayMs, type Range } from "./history";

const RANGE_CHANGED = "drover-history-range";

function subscribeRange(onChange: () => void): () => void {
  window.addEventListener("popstate", onChange);
  window.addEventListener(RANGE_CHANGED, onChange);
  return () => {
    window.removeEventListener("popstate", onChange);
    window.removeEventListener(RANGE_CHANGED, onChange);
  };
}

/**
 * `?range=` read from the location rather than useSearchParams, which would need a Suspense
 * boundary and so leave the overview out of the prerendered page.
 */
export function useHistoryRange(): Range {
  return useSyncExternalStore(
    subscribeRange,
    () => parseRange(new URLSearchParams(window.location.search).get("range")),
    () => "1h",
  );
}

function setRange(range: Range): void {
  const sp = new URLSearchParams(window.location.search);
  if (range === "1h") sp.delete("range");
  else sp.set("range", range);
  setSearch(sp.toString());
  window.dispatchEvent(new Event(RANGE_CHANGED));
}

/** 1 h / 24 h / 7 d: a radio group (arrow keys move and choose), kept in the URL. */
function RangeSwitch({ range }: { range: Range }) {
  return (
    <div role="radiogroup" aria-label="Time range" data-testid="history-range" className="inline-flex rounded-md bg-slate-100 p-0.5 ring-1 ring-slate-200 ring-inset" onKeyDown={(e) => moveFocus(e)?.click()}>
      {RANGES.map((r) => (
        <button
          key={r}
          type="button"
          role="radio"
          aria-checked={r === range}
          tabIndex={r === range ? 0 : -1}
          data-roving
          data-testid={`history-range-${r}`}
          onClick={() => setRange(r)}
          className={cx(
            "rounded px-2.5 py-1 text-xs font-medium focus-visible:ring-2 focus-visible:ring-brand-500 focus-visible:outline-none",
            r === range ? "bg-white text-slate-900 shadow-sm" : "text-slate-600 hover:text-slate-900",
          )}
        >
          {RANGE_LABELS[r]}
        </button>
      ))}
    </div>
  );
}

export function useHistory(range: Range) {
  const trpc = useTRPC();
  return useQuery({
    ...trpc.overview.history.queryOptions({ range }),
    refetchInterval: (q) => refetchDelayMs(q.state.data, Date.now()),
    // A range switch keeps the old charts until the new data is in, rather than flashing skeletons.
    placeholderData: (previous) => previous,
  });
}

function ChartPanel({ title, description, children, className, testId }: { title: string; description?: ReactNode; children: ReactNode; className?: string; testId: string }) {
  return (
    <div className={cx("min-w-0 px-4 py-3", className)} data-testid={testId}>
      <div className="mb-2 flex items-baseline justify-between gap-3">
        <h3 className="text-xs font-semibold text-slate-700">{title}</h3>
        {description && <div className="text-xs text-slate-500">{description}</div>}
      </div>
      {children}
    </div>
  );
}

function Collecting({ nextSampleAt }: { nextSampleAt: number }) {
  const text = useClock((now) => collectingText(nextSampleAt, now));
  return (
    <span data-testid="history-collecting" role="status">
      {text}
    </span>
  );
}

export function HistoryCharts() {
  const range = useHistoryRange();
  const history = useHistory(range);
  const h = history.data;
  const [axis, setAxis] = useState<"summary" | "lifecycle">("summary");

  const charts = useMemo(() => {
    if (!h) return null;
    // From the first sample on (a young history), every series cut the same way.
    const from = firstSampled(h.heartbeatsPerMinute);
    const cut = (values: (number | null)[]) => values.slice(from);
    const cutAll = (series: ChartSeries[]) => series.map((x) => ({ ...x, values: cut(x.values) }));
    const progress = (rows: { label: string; percent: (number | null)[] }[]): ChartSeries[] => rows.map((r) => ({ label: r.label, values: cut(r.percent) }));
    return {
      times: h.samples > 0 ? h.times.slice(from) : [],
      devices: cutAll(deviceSeries(h.devices[axis], axis)),
      heartbeats: [{ label: "heartbeats", values: cut(h.heartbeatsPerMinute), color: "var(--color-sky-500)" }],
      actions: cutAll(actionSeries(h.actions)),
      // How each ended is in its name: a failed or aborted rollout's line stops where it ended.
      rollouts: progress(h.rollouts.map((r) => ({ label: `${r.fleet} v${r.version}${isTerminalRolloutPhase(r.phase as RolloutPhase) ? ` (${r.phase})` : ""}`, percent: r.percent }))),
      plans: progress(h.plans.map((p) => ({ label: p.name ? `${p.name} (${p.id.slice(0, 13)})` : p.id, percent: p.percent }))),
      running: [
        { label: "plans running", values: cut(h.plansRunning), color: "var(--color-violet-500)" },
        { label: "workflows running", values: cut(h.workflowsRunning), color: "var(--color-sky-500)" },
      ],
    };
  }, [h, axis]);

  const collecting = h && h.samples === 0 ? <Collecting nextSampleAt={h.nextSampleAt} /> : undefined;
  const shown = charts?.times ?? [];
  const body = (node: (c: NonNullable<typeof charts>) => ReactNode, height: number) => (charts ? node(charts) : <Skeleton className={height > 190 ? "h-[200px] w-full" : "h-[180px] w-full"} />);

  return (
    <Card data-testid="history-charts">
      <CardHeader
        title="Over time"
        description={h ? `A point every ${formatSeconds(h.bucketSeconds)}, sampled every ${formatSeconds(h.sampleSeconds)}` : "Sampled once a minute"}
        actions={<RangeSwitch range={range} />}
      />
      {history.isError ? (
        <ErrorState error={history.error} onRetry={() => void history.refetch()} title="Could not load the history" />
      ) : (
        <div className="grid divide-slate-100 md:grid-cols-2" data-range={h?.range} data-samples={h?.samples}>
          <ChartPanel
            title={axis === "summary" ? "Devices by status" : "Devices by lifecycle"}
            className="border-b border-slate-100 md:col-span-2"
            testId="chart-devices"
            description={
              <select aria-label="Devices by" value={axis} onChange={(e) => setAxis(e.target.value as "summary" | "lifecycle")} className="rounded border border-slate-200 bg-white px-1.5 py-0.5 text-xs text-slate-700">
                <option value="summary">by status</option>
                <option value="lifecycle">by lifecycle</option>
              </select>
            }
          >
            {body(
              (c) => (
                <TimeChart times={shown} series={c.devices} stacked height={200} ariaLabel={axis === "summary" ? "Devices by status" : "Devices by lifecycle"} unit="devices" empty={collecting} />
              ),
              200,
            )}
          </ChartPanel>
          <ChartPanel title="Heartbeats per minute" className="border-b border-slate-100 md:border-r" testId="chart-heartbeats">
            {body((c) => <TimeChart times={shown} series={c.heartbeats} ariaLabel="Heartbeats per minute" unit="/min" empty={collecting} />, 180)}
          </ChartPanel>
          <ChartPanel title="Actions per minute" className="border-b border-slate-100" testId="chart-actions">
            {body((c) => <TimeChart times={shown} series={c.actions} ariaLabel="Actions per minute, created and finished by state" unit="/min" empty={collecting} />, 180)}
          </ChartPanel>
          <ChartPanel title="Rollout progress" description="members up to date, %" className="border-b border-slate-100 md:border-r md:border-b-0" testId="chart-rollouts">
            {body(
              (c) => (
                <TimeChart times={c.rollouts.length ? shown : []} series={c.rollouts} ariaLabel="Rollout progress, members up to date in percent" unit="%" empty={collecting ?? "No rollout in this range"} />
              ),
              180,
            )}
          </ChartPanel>
          <ChartPanel title="Plans and workflows" description="plan nodes completed, %; running" testId="chart-plans">
            {body(
              (c) =>
                c.plans.length ? (
                  <TimeChart times={shown} series={c.plans} ariaLabel="Plan progress, nodes completed in percent" unit="%" empty={collecting} />
                ) : (
                  <TimeChart times={shown} series={c.running} ariaLabel="Plans and workflows running" empty={collecting} />
                ),
              180,
            )}
          </ChartPanel>
        </div>
      )}
    </Card>
  );
}

function formatSeconds(s: number): string {
  if (s < 60) return `${Number(s.toFixed(2))} s`;
  if (s < 3600) return `${Number((s / 60).toFixed(1))} min`;
  return `${Number((s / 3600).toFixed(1))} h`;
}
