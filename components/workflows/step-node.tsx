"use client";

import { memo } from "react";
import { Handle, Position, type NodeProps } from "@xyflow/react";
import { cx } from "../ui/cx";
import { stepPhaseStyle, type StepNode } from "./run-graph";

// Edges attach to handles; nothing is connected by hand in the run view.
const hidden = "!size-1 !min-w-0 !border-0 !bg-transparent opacity-0";

/** One step of the run view: its name, phase and progress in its phase's colours. */
export const StepNodeView = memo(function StepNodeView({ data }: NodeProps<StepNode>) {
  const style = stepPhaseStyle[data.phase];
  return (
    <div
      data-testid={`step-node-${data.step}`}
      data-phase={data.phase}
      title={`${data.step}: ${data.phase}${data.progress ? `\n${data.progress}` : ""}`}
      className={cx(
        "flex h-full w-full cursor-pointer flex-col justify-center rounded-lg border-2 px-2.5 text-left transition-colors duration-300",
        style.node,
        data.selected && "ring-4 ring-brand-500/30",
        data.phase === "Running" && "shadow-md shadow-sky-500/20",
      )}
    >
      <Handle type="target" position={Position.Left} className={hidden} isConnectable={false} />
      <Handle type="source" position={Position.Right} className={hidden} isConnectable={false} />
      <div className="flex items-center justify-between gap-2">
        <span className={cx("truncate text-[13px] font-semibold", style.muted && "line-through decoration-slate-300")}>{data.step}</span>
        <span className="shrink-0 text-[10px] font-semibold tracking-wide uppercase opacity-80" data-testid={`step-node-phase-${data.step}`}>
          {data.phase}
        </span>
      </div>
      <div className="truncate font-mono text-[10px] opacity-70">{data.kind}</div>
      <div className="truncate text-[11px] tabular-nums opacity-90" data-testid={`step-node-progress-${data.step}`}>
        {data.progress || "\u00a0"}
      </div>
    </div>
  );
});
