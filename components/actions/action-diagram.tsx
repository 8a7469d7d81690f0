"use client";

import { actionMachine } from "@/lib/action-status";
import type { ActionState } from "@/lib/action-status";
import { Card, CardHeader } from "../ui/card";
import { StatusBadge } from "../status/status-badge";
import { actionStateTone } from "../status/tones";
import { StateDiagram } from "../state-diagram/state-diagram";
import { specFromMachine } from "../state-diagram/from-machine";
import { DiagramLegend } from "../state-diagram/legend";

/** lib/action-status's table, the one the engine enforces, with this action's state lit. */
export function ActionDiagram({ state }: { state: ActionState }) {
  return (
    <Card data-testid="diagram-action">
      <CardHeader
        title="State"
        description={actionMachine.states[state]?.description}
        actions={<StatusBadge table={actionStateTone} state={state} data-testid="diagram-action-current" />}
      />
      <StateDiagram
        spec={specFromMachine(actionMachine)}
        current={state}
        highlight={actionStateTone[state]}
        title="Action state"
        ariaLabel={`Action state diagram, current state ${state}`}
        testId="state-diagram-action"
      />
      <div className="border-t border-slate-100 px-4 py-2">
        <DiagramLegend transient={false} notYetSupported={false} />
      </div>
    </Card>
  );
}
