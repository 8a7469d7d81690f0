"use client";

import type { ReactNode } from "react";
import { planMachine, planNodeMachine, type PlanView } from "@/lib/plan-status";
import { Card, CardHeader } from "../ui/card";
import { StatusBadge } from "../status/status-badge";
import { toneOf } from "../status/tones";
import { StateDiagram } from "../state-diagram/state-diagram";
import { DiagramLegend } from "../state-diagram/legend";
import { cx } from "../ui/cx";
import { commandTitle, type NodeRow } from "./plan-view";
import { planDiagramSpec, planNodeDiagramSpec } from "./plan-diagrams";
import { planNodeStateTone, planStateTone } from "./tones";

function Panel({ title, badge, description, children, className }: { title: ReactNode; badge: ReactNode; description?: string | undefined; children: ReactNode; className?: string }) {
  return (
    <div className={cx("min-w-0", className)}>
      <div className="flex flex-wrap items-center justify-between gap-2 px-4 pt-3">
        <h3 className="text-xs font-semibold text-slate-700">{title}</h3>
        {badge}
      </div>
      {description && <p className="px-4 pt-0.5 text-xs text-slate-500">{description}</p>}
      {children}
    </div>
  );
}

/**
 * lib/plan-status's tables drawn live: the plan's processing state, the chosen command's
 * (plans and commands share the seed's states) and one node's signal state, each lit.
 */
export function PlanDiagramsCard({
  plan,
  command,
  onCommand,
  node,
}: {
  plan: PlanView;
  /** The command drawn; null before any exists. */
  command: number | null;
  onCommand: (index: number) => void;
  /** The node whose state the node diagram lights. */
  node: NodeRow | null;
}) {
  const state = plan.status.state;
  const cmd = command === null ? null : (plan.status.commands[command] ?? null);
  return (
    <Card data-testid="plan-diagrams">
      <CardHeader
        title="State diagrams"
        description="The tables the plan engine follows, with the current states lit; they update live. Every move is the plan engine's but those marked operator."
      />
      {/* One under the other: side by side, the plan's table (1,400 px across) would be panned more than seen. */}
      <div className="grid divide-y divide-slate-100">
        <Panel title="Plan" badge={<StatusBadge table={planStateTone} state={state} />} description={planMachine.states[state].description}>
          <StateDiagram
            spec={planDiagramSpec}
            current={state}
            highlight={toneOf(planStateTone, state)}
            title="Plan state"
            ariaLabel={`Plan state diagram, current state ${state}`}
            testId="state-diagram-plan"
          />
        </Panel>
        <Panel
          title={
            <span className="flex flex-wrap items-center gap-1.5">
              Command
              {plan.status.commands.length > 1 ? (
                <select
                  value={command ?? ""}
                  onChange={(e) => onCommand(Number(e.target.value))}
                  className="h-6 rounded border-0 bg-white px-1 text-xs font-normal ring-1 ring-slate-300 ring-inset"
                  data-testid="diagram-command-select"
                  aria-label="Command drawn"
                >
                  {plan.status.commands.map((c) => (
                    <option key={c.id} value={c.id}>
                      #{c.id} {commandTitle(c)}
                    </option>
                  ))}
                </select>
              ) : (
                cmd && <span className="font-normal text-slate-500">#{cmd.id} {commandTitle(cmd)}</span>
              )}
            </span>
          }
          badge={<StatusBadge table={planStateTone} state={cmd?.state} />}
          description={cmd?.description}
        >
          <StateDiagram
            spec={planDiagramSpec}
            current={cmd?.state ?? null}
            highlight={toneOf(planStateTone, cmd?.state)}
            title="Command state"
            ariaLabel={`Command state diagram${cmd ? `, current state ${cmd.state}` : ""}`}
            testId="state-diagram-command"
          />
        </Panel>
      </div>
      <div className="border-t border-slate-100">
        <Panel
          title={
            <span>
              Node{" "}
              {node ? (
                <span className="font-normal text-slate-500" data-testid="diagram-node-name">
                  {node.node.name} <span className="text-slate-600">({node.group === "controllers" ? "controller" : "worker"})</span>
                </span>
              ) : (
                <span className="font-normal text-slate-600">none yet</span>
              )}
              <span className="ml-2 font-normal text-slate-600">click a node in the table to draw its state</span>
            </span>
          }
          badge={<StatusBadge table={planNodeStateTone} state={node?.node.state} />}
          description={node ? planNodeMachine.states[node.node.state].description : undefined}
        >
          <StateDiagram
            spec={planNodeDiagramSpec}
            current={node?.node.state ?? null}
            highlight={toneOf(planNodeStateTone, node?.node.state)}
            title="Node state"
            ariaLabel={`Node state diagram${node ? `, ${node.node.name} is ${node.node.state}` : ""}`}
            testId="state-diagram-node"
          />
        </Panel>
      </div>
      <div className="border-t border-slate-100 px-4 py-2">
        <DiagramLegend notYetSupported={false} />
      </div>
    </Card>
  );
}
