"use client";

import { memo } from "react";
import { Handle, Position, type Node, type NodeProps } from "@xyflow/react";
import type { StepPhase } from "@/lib/workflow-status";
import { cx } from "../../ui/cx";
import { stepPhaseStyle } from "../run-graph";

export interface EditorNodeData extends Record<string, unknown> {
  step: string;
  /** A job's action kind, or "→ workflow" for a reference. */
  kind: string;
  /** Targets in a few words ("2 devices", "site=lab"). */
  detail: string;
  problems: string[];
  /** Started in the current run: the server refuses any change to it. */
  locked: boolean;
  /** Its phase in the current run, while the workflow runs. */
  phase: StepPhase | null;
}
export type EditorNode = Node<EditorNodeData, "draft">;

// Big enough to grab with a mouse; a drag from the right (source) handle to another step's
// left (target) handle makes that step depend on this one.
const handle = "!size-3 !border-2 !border-slate-400 !bg-white hover:!border-brand-600 [&.connectingto.valid]:!bg-emerald-400 [&.connectingto:not(.valid)]:!border-red-500 [&.connectingto:not(.valid)]:!bg-red-200";

function LockIcon() {
  return (
    <svg viewBox="0 0 20 20" fill="currentColor" className="size-3.5 shrink-0" aria-label="locked">
      <path fillRule="evenodd" d="M10 1a4.5 4.5 0 0 0-4.5 4.5V9H5a2 2 0 0 0-2 2v6a2 2 0 0 0 2 2h10a2 2 0 0 0 2-2v-6a2 2 0 0 0-2-2h-.5V5.5A4.5 4.5 0 0 0 10 1Zm3 8V5.5a3 3 0 1 0-6 0V9h6Z" clipRule="evenodd" />
    </svg>
  );
}

/** One step as drawn: its name, what it does, a red marker and its first message when it has problems, a lock once it started. */
export const EditorNodeView = memo(function EditorNodeView({ data, selected }: NodeProps<EditorNode>) {
  const bad = data.problems.length > 0;
  const phaseStyle = data.phase ? stepPhaseStyle[data.phase] : null;
  return (
    <div
      data-testid={`editor-node-${data.step}`}
      data-locked={data.locked}
      data-problems={data.problems.length}
      title={[data.step, ...data.problems, ...(data.locked ? [`started (${data.phase ?? "Running"}): locked, the server refuses changes to it`] : [])].join("\n")}
      className={cx(
        "relative flex h-full w-full flex-col justify-center rounded-lg border-2 px-2.5 text-left",
        phaseStyle && data.locked ? phaseStyle.node : "border-slate-300 bg-white text-slate-800",
        bad && "!border-red-500",
        data.locked && "border-dashed",
        selected && "ring-4 ring-brand-500/40",
      )}
    >
      <Handle type="target" position={Position.Left} className={handle} isConnectable={!data.locked} data-testid={`handle-target-${data.step}`} />
      <Handle type="source" position={Position.Right} className={handle} data-testid={`handle-source-${data.step}`} />
      {bad && (
        <span
          className="absolute -top-2 -right-2 flex size-5 items-center justify-center rounded-full bg-red-600 text-[11px] font-bold text-white shadow"
          data-testid={`editor-node-problem-${data.step}`}
          aria-label={`${data.problems.length} problem(s)`}
        >
          {data.problems.length}
        </span>
      )}
      <div className="flex items-center justify-between gap-2">
        <span className="truncate text-[13px] font-semibold">{data.step}</span>
        {data.locked && (
          <span className="flex items-center gap-1 text-[10px] font-semibold tracking-wide uppercase opacity-80" data-testid={`editor-node-locked-${data.step}`}>
            <LockIcon />
            {data.phase}
          </span>
        )}
      </div>
      <div className="truncate font-mono text-[10px] opacity-70">{data.kind}</div>
      <div className={cx("truncate text-[11px]", bad ? "font-medium text-red-700" : "opacity-80")} data-testid={`editor-node-message-${data.step}`}>
        {bad ? data.problems[0] : data.detail || "\u00a0"}
      </div>
    </div>
  );
});
