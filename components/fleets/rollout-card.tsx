"use client";

import { Card, CardHeader } from "../ui/card";
import { StatusBadge } from "../status/status-badge";
import { toneOf } from "../status/tones";
import { RelativeTime } from "../ui/time";
import { DiagramButton } from "../state-diagram/diagram-button";
import { Actor } from "../events/object-link";
import { RolloutControls } from "./rollout-controls";
import { RolloutProgress } from "./rollout-progress";
import { rolloutDiagramSpec } from "./rollout-diagram";
import { rolloutPhaseTone } from "./tones";
import { conditionOf, type Fleet, type RolloutView } from "./types";

/**
 * The open rollout: its phase, the RolloutInProgress message, progress per stage, the
 * operator's controls; lib/rollout-status's table, with the phase lit, one click away (rollout-diagram.ts).
 */
export function RolloutCard({ fleet, rollout, canOperate }: { fleet: Fleet; rollout: RolloutView | null; canOperate: boolean }) {
  const inProgress = conditionOf(fleet.status.conditions, "RolloutInProgress");
  const phase = rollout?.phase ?? null;
  return (
    <Card data-testid="rollout">
      <CardHeader
        title={
          rollout ? (
            <span className="flex flex-wrap items-center gap-2">
              Rollout of v{rollout.templateVersion}
              {rollout.previousVersion && <span className="font-normal text-slate-500">from v{rollout.previousVersion}</span>}
              <StatusBadge table={rolloutPhaseTone} state={rollout.phaseText} data-testid="rollout-phase" />
              <DiagramButton
                spec={rolloutDiagramSpec}
                current={phase}
                highlight={toneOf(rolloutPhaseTone, phase)}
                title="Rollout phase"
                legend={{ notYetSupported: false }}
                testId="state-diagram-rollout"
              />
            </span>
          ) : (
            "Rollout"
          )
        }
        description={
          rollout ? (
            <>
              {inProgress?.message && <span data-testid="rollout-message">{inProgress.message}</span>}
              {rollout.startedAt && (
                <span className="ml-1 text-slate-400">
                  · started <RelativeTime value={rollout.startedAt} />
                </span>
              )}
            </>
          ) : fleet.spec.rolloutPolicy ? (
            "No rollout in progress. The next template change rolls out under this fleet's rollout policy."
          ) : (
            "No rollout in progress. This fleet has no rollout policy: a template change goes to every member at once."
          )
        }
        actions={canOperate && rollout && phase ? <RolloutControls fleet={fleet} phase={phase} /> : undefined}
      />
      {rollout?.pause && (
        <p className="border-b border-slate-100 px-4 py-2 text-sm text-amber-800" data-testid="rollout-pause-info">
          Paused ({rollout.pause.source === "auto" ? "automatically" : "by an operator"}): {rollout.pause.message || rollout.pause.reason}
          {rollout.pause.source === "operator" && rollout.pause.actor && (
            <span className="ml-1 text-xs">
              — <Actor actor={rollout.pause.actor} />
            </span>
          )}
        </p>
      )}
      {rollout?.ended && (
        <p className="border-b border-slate-100 px-4 py-2 text-sm text-slate-600" data-testid="rollout-ended">
          {rollout.ended.reason}: {rollout.ended.message}
        </p>
      )}
      {rollout && <RolloutProgress rollout={rollout} />}
    </Card>
  );
}
