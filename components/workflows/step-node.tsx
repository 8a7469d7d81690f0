"use client";

import { memo } from "react";
import type { NodeProps } from "@xyflow/react";
import { cx } from "../ui/cx";
import { stepPhaseStyle, type FanNode, type StepNode } from "./run-graph";

/**
 * Where edges attach, as React Flow measures them (elements of class `source` / `target` with
 * `data-handlepos`, its getHandleBounds) without its <Handle> component: each of those
 * subscribes to the store, two per node, run on every frame of a pan. Nothing is connected by
 * hand in the run view.
 */
function Anchors() {
  const box = "pointer-events-none absolute top-[calc(50%-2px)] size-1";
  return (
    <>
      <div className={cx("target", box, "-left-0.5")} data-handlepos="left" aria-hidden />
      <div className={cx("source", box, "-right-0.5")} data-handlepos="right" aria-hidden />
    </>
  );
}

// The critical path's ring (violet, CRITICAL_COLOR); the selection ring sits outside it.
const criticalRing = "outline-3 outline-offset-1 outline-violet-600";
// Zoomed far out (the canvas has `rv-far`, run-view.tsx) the text is unreadable: hidden, the
// node filled with its phase's colour (`--phase`) instead.
const farFill = "in-[.rv-far]:border-transparent in-[.rv-far]:bg-(--phase)";
const farHidden = "in-[.rv-far]:invisible";

/**
 * One step of the run view: its name, phase and progress in its phase's colours. Memoized and
 * fed only its own data: no store subscription, not even React Flow's <Handle> (each subscribes
 * to the store, see Anchors), so a pan over
 * thousands of steps runs no per-node code and a live update re-renders the steps that moved.
 */
export const StepNodeView = memo(function StepNodeView({ data }: NodeProps<StepNode>) {
  const style = stepPhaseStyle[data.phase];
  return (
    <div
      data-testid={`step-node-${data.step}`}
      data-phase={data.phase}
      data-critical={data.critical || undefined}
      title={`${data.step}: ${data.phase}${data.progress ? `\n${data.progress}` : ""}`}
      style={{ "--phase": style.color } as React.CSSProperties}
      className={cx(
        "relative flex h-full w-full cursor-pointer flex-col justify-center rounded-lg border-2 px-2.5 text-left transition-colors duration-300",
        style.node,
        farFill,
        data.selected && "ring-4 ring-brand-500/30",
        data.critical && criticalRing,
        data.phase === "Running" && "shadow-md shadow-sky-500/20",
      )}
    >
      <Anchors />
      <div className={cx("flex items-center justify-between gap-2", farHidden)}>
        <span className={cx("truncate text-[13px] font-semibold", style.muted && "line-through decoration-slate-300")}>{data.step}</span>
        <span className="shrink-0 text-[10px] font-semibold tracking-wide uppercase opacity-80" data-testid={`step-node-phase-${data.step}`}>
          {data.phase}
        </span>
      </div>
      <div className={cx("truncate font-mono text-[10px] opacity-70", farHidden)}>{data.kind}</div>
      <div className={cx("truncate text-[11px] tabular-nums opacity-90", farHidden)} data-testid={`step-node-progress-${data.step}`}>
        {data.progress || "\u00a0"}
      </div>
    </div>
  );
});

/** A collapsed fan-out: a stack of cards with the count, a bar of its members' phases, and the counts; a click expands it. */
export const FanNodeView = memo(function FanNodeView({ data }: NodeProps<FanNode>) {
  const style = stepPhaseStyle[data.phase];
  return (
    <div
      data-testid={`fan-node-${data.group}`}
      data-phase={data.phase}
      data-count={data.count}
      data-critical={data.critical || undefined}
      title={`${data.label}\nClick to expand`}
      style={{ "--phase": style.color } as React.CSSProperties}
      className={cx(
        "relative flex h-full w-full cursor-pointer flex-col justify-center gap-0.5 rounded-lg border-2 px-2.5 text-left shadow-[3px_3px_0_-1px_white,3px_3px_0_0_#cbd5e1,6px_6px_0_-1px_white,6px_6px_0_0_#cbd5e1]",
        style.node,
        farFill,
        data.critical && criticalRing,
      )}
    >
      <Anchors />
      <div className={cx("flex items-center justify-between gap-2", farHidden)}>
        <span className="truncate text-[13px] font-semibold">{data.count.toLocaleString("en-US")} steps</span>
        <span className="shrink-0 font-mono text-[10px] opacity-70">{data.kind}</span>
      </div>
      <div className={cx("flex h-1.5 w-full overflow-hidden rounded-full bg-slate-200", farHidden)} aria-hidden>
        {data.counts.map(([p, c]) => (
          <div key={p} style={{ width: `${(c / data.count) * 100}%`, background: stepPhaseStyle[p].color }} />
        ))}
      </div>
      <div className={cx("truncate text-[11px] tabular-nums opacity-90", farHidden)} data-testid={`fan-node-counts-${data.group}`}>
        {data.counts.map(([p, c]) => `${c.toLocaleString("en-US")} ${p}`).join(", ")}
      </div>
    </div>
  );
});
