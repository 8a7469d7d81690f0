"use client";

import { memo } from "react";
import { Handle, Position, type NodeProps } from "@xyflow/react";
import type { GroupNode, Highlight, StartNode, StateNode } from "./types";
import { cx } from "../ui/cx";

// White text on each fill is at least 4.5:1 (WCAG AA): emerald, amber, sky and orange at 700.
const CURRENT: Record<Highlight, string> = {
  green: "bg-emerald-700 border-emerald-800 text-white shadow-emerald-700/30",
  amber: "bg-amber-700 border-amber-800 text-white shadow-amber-700/30",
  red: "bg-red-600 border-red-700 text-white shadow-red-600/30",
  blue: "bg-sky-700 border-sky-800 text-white shadow-sky-700/30",
  gray: "bg-slate-600 border-slate-700 text-white shadow-slate-600/30",
  purple: "bg-violet-600 border-violet-700 text-white shadow-violet-600/30",
  orange: "bg-orange-700 border-orange-800 text-white shadow-orange-700/30",
  slate: "bg-slate-700 border-slate-800 text-white shadow-slate-700/30",
};

// Edges are routed by the layout; handles exist because React Flow attaches edges to them.
const hidden = "!size-1 !min-w-0 !border-0 !bg-transparent opacity-0";

function Handles() {
  return (
    <>
      <Handle type="target" position={Position.Left} className={hidden} isConnectable={false} />
      <Handle type="source" position={Position.Right} className={hidden} isConnectable={false} />
    </>
  );
}

export const StateNodeView = memo(function StateNodeView({ data }: NodeProps<StateNode>) {
  const notes = [data.transient && "transient, not reported", data.notYetSupported && "not yet supported", data.terminal && "final"].filter(Boolean);
  return (
    <div
      title={[data.label, data.description, notes.length ? `(${notes.join(", ")})` : ""].filter(Boolean).join("\n")}
      data-testid={`state-${data.stateId}`}
      data-current={data.current ? "true" : undefined}
      className={cx(
        // 13px (DIAGRAM_FONT_PX): at the smallest zoom a diagram allows, still 12px on screen.
        "relative flex h-full w-full items-center justify-center rounded-lg border px-3 text-[13px] leading-5 font-medium whitespace-nowrap transition-colors duration-300",
        data.current
          ? cx(CURRENT[data.highlight], "shadow-lg ring-4 ring-offset-0", ringOf(data.highlight))
          : data.notYetSupported
            ? "border-dashed border-slate-300 bg-white text-slate-500"
            : data.next
              ? "border-slate-400 bg-white text-slate-800"
              : "border-slate-300 bg-white text-slate-700",
        data.transient && !data.current && "border-dashed",
        data.transient && data.current && "border-dashed",
        data.terminal && !data.current && "outline outline-1 outline-offset-2 outline-slate-300",
      )}
    >
      <Handles />
      <span data-diagram-text="state">{data.label}</span>
      {data.current && (
        <span className="absolute -top-3 -right-3 rounded-full bg-white px-1.5 text-[13px] leading-[18px] font-semibold text-slate-800 shadow ring-1 ring-slate-300" data-diagram-text="now">
          now
        </span>
      )}
    </div>
  );
});

function ringOf(h: Highlight): string {
  switch (h) {
    case "green":
      return "ring-emerald-500/20";
    case "amber":
      return "ring-amber-500/25";
    case "red":
      return "ring-red-500/20";
    case "blue":
      return "ring-sky-500/20";
    case "purple":
      return "ring-violet-500/20";
    case "orange":
      return "ring-orange-500/25";
    default:
      return "ring-slate-500/20";
  }
}

export const GroupNodeView = memo(function GroupNodeView({ data }: NodeProps<GroupNode>) {
  return (
    <div
      className={cx(
        "pointer-events-none h-full w-full rounded-xl border",
        data.innerLevels > 0 ? "border-slate-300 bg-slate-50/70" : "border-slate-300 bg-white/60",
        data.containsCurrent && "border-slate-400",
      )}
    >
      <Handles />
      <div className="px-2.5 pt-0.5 text-[13px] leading-5 font-semibold text-slate-600" data-diagram-text="group">
        {data.label}
      </div>
    </div>
  );
});

export const StartNodeView = memo(function StartNodeView(_props: NodeProps<StartNode>) {
  return (
    <div className="h-full w-full rounded-full bg-slate-800" title="initial state">
      <Handles />
    </div>
  );
});
