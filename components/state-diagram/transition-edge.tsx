"use client";

import { memo } from "react";
import { BaseEdge, EdgeLabelRenderer, getBezierPath, type EdgeProps } from "@xyflow/react";
import type { Point, TransitionEdge } from "./types";
import { basisPath } from "./path";
import { cx } from "../ui/cx";

export const TransitionEdgeView = memo(function TransitionEdgeView(props: EdgeProps<TransitionEdge>) {
  const { id, data, markerEnd, markerStart, sourceX, sourceY, targetX, targetY, sourcePosition, targetPosition } = props;
  let path: string;
  let labelX: number;
  let labelY: number;
  if (data?.points) {
    path = basisPath(data.points);
    const mid = data.points[Math.floor(data.points.length / 2)] as Point;
    labelX = data.labelPosition?.x ?? mid.x;
    labelY = data.labelPosition?.y ?? mid.y;
  } else {
    [path, labelX, labelY] = getBezierPath({ sourceX, sourceY, targetX, targetY, sourcePosition, targetPosition });
  }
  const active = data?.active ?? false;
  const muted = data?.muted ?? false;
  return (
    <>
      <BaseEdge
        id={id}
        path={path}
        markerEnd={markerEnd}
        markerStart={data?.bidirectional ? markerStart : undefined}
        style={{
          stroke: active ? "#1f5bd6" : muted ? "#cbd5e1" : "#94a3b8",
          strokeWidth: active ? 1.8 : 1.2,
          strokeDasharray: muted ? "4 4" : undefined,
        }}
      />
      {(data?.label || data?.by) && (
        <EdgeLabelRenderer>
          <div
            className={cx(
              // 13px like the states (sizing.ts): never under 12px on screen. Colours at AA on white.
              "nodrag nopan pointer-events-none absolute rounded bg-white/95 px-1 text-[13px] leading-5 whitespace-nowrap",
              active ? "font-medium text-brand-700" : "text-slate-600",
            )}
            style={{ transform: `translate(-50%, -50%) translate(${labelX}px, ${labelY}px)` }}
            data-diagram-text="edge"
          >
            {data.label}
            {data.by && (
              <span className={cx(data.label && "ml-1", active ? "text-brand-600" : "text-slate-500")}>
                {data.label ? "· " : ""}
                {data.by}
              </span>
            )}
          </div>
        </EdgeLabelRenderer>
      )}
    </>
  );
});
