"use client";

import { commandNodes, planNodeMachine, type PlanCommandStatusView } from "@/lib/plan-status";
import { Card, CardHeader } from "../ui/card";
import { StatusBadge } from "../status/status-badge";
import { RelativeTime } from "../ui/time";
import { CountsBar, CountsLegend } from "../fleets/counts-bar";
import { toneOf } from "../status/tones";
import { DiagramButton } from "../state-diagram/diagram-button";
import { NodeTable } from "./node-table";
import { planDiagramSpec, planNodeDiagramSpec } from "./plan-diagrams";
import { commandTitle, countSegments, focusNode, nodeRows, progressText, type NodeRow } from "./plan-view";
import { planNodeStateTone, planStateTone } from "./tones";

function concurrencyText(c: PlanCommandStatusView): string {
  const parts: string[] = [];
  const nodes = commandNodes(c);
  if (nodes.controllers) parts.push("controllers one at a time");
  if (nodes.workers) parts.push(`workers ${c.concurrent === 1 ? "one at a time" : `${c.concurrent} at once`}`);
  return parts.length ? parts.join(", then ") : `${c.concurrent} at once`;
}

/** One command of the plan: what it runs, its state and why, its counts, and its nodes live. */
export function CommandCard({
  command,
  active,
  notRun,
  focusedNode,
  onFocusNode,
  skipFor = null,
}: {
  command: PlanCommandStatusView;
  /** The plan ended before this command ran (commandNotRun). */
  notRun: boolean;
  /** The command the plan is processing now. */
  active: boolean;
  /** The node the operator picked in this command (else the one the command waits on): its row is marked, the node diagram lights its state. */
  focusedNode: NodeRow | null;
  onFocusNode: (key: string) => void;
  /** The plan's id when an operator may skip its waiting nodes (it runs); null otherwise. */
  skipFor?: string | null;
}) {
  const c = command;
  const segments = countSegments(c.counts);
  const node = focusedNode ?? focusNode(nodeRows(c), null);
  return (
    <Card data-testid={`command-${c.id}`}>
      <CardHeader
        title={
          <span className="flex flex-wrap items-center gap-2">
            <span className="text-slate-500">#{c.id}</span>
            <span data-testid={`command-title-${c.id}`}>{commandTitle(c)}</span>
            <StatusBadge table={planStateTone} state={c.state} data-testid={`command-state-${c.id}`} />
            <DiagramButton
              spec={planDiagramSpec}
              current={c.state}
              highlight={toneOf(planStateTone, c.state)}
              title="Command state"
              description={c.description}
              legend={{ notYetSupported: false }}
              testId={`state-diagram-command-${c.id}`}
            />
            {active && <span className="text-xs font-normal text-brand-700">processing now</span>}
            {notRun && (
              <span className="text-xs font-normal text-slate-500" data-testid={`command-not-run-${c.id}`}>
                not run: the plan ended before it
              </span>
            )}
          </span>
        }
        description={
          <>
            <span data-testid={`command-description-${c.id}`}>{c.description}</span>
            <span className="mt-0.5 block text-slate-500">
              Signals nodes with a <code className="font-mono">{c.actionKind}</code> action, {concurrencyText(c)}
              {c.startedAt && (
                <>
                  {" "}
                  · started <RelativeTime value={c.startedAt} />
                </>
              )}
              {c.endedAt && (
                <>
                  {" "}
                  · ended <RelativeTime value={c.endedAt} />
                </>
              )}
            </span>
          </>
        }
      />
      <div className="space-y-1.5 border-b border-slate-100 px-4 py-3">
        <div className="flex flex-wrap items-center justify-between gap-2 text-xs text-slate-600">
          <span className="flex items-center gap-2">
            <span className="font-medium tabular-nums" data-testid={`command-progress-${c.id}`} data-completed={c.counts.SignalCompleted} data-total={c.counts.total}>
              {progressText(c.counts)}
            </span>
            {node && (
              <DiagramButton
                spec={planNodeDiagramSpec}
                current={node.node.state}
                highlight={toneOf(planNodeStateTone, node.node.state)}
                title="Node state"
                label={`Node states (${node.node.name})`}
                description={`${node.node.name} (${node.group === "controllers" ? "controller" : "worker"}): ${planNodeMachine.states[node.node.state].description} Pick another node in the table to light its state.`}
                legend={{ notYetSupported: false }}
                testId={`state-diagram-node-${c.id}`}
              />
            )}
          </span>
          <CountsLegend segments={segments.filter((s) => s.count > 0)} />
        </div>
        <CountsBar segments={segments} total={c.counts.total} />
      </div>
      <NodeTable command={c} focused={focusedNode ? `${focusedNode.group}/${focusedNode.node.name}` : null} onFocus={onFocusNode} skipFor={skipFor} />
    </Card>
  );
}
