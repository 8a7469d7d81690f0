"use client";

import { useState } from "react";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { isTerminalRolloutPhase, type RolloutPhase } from "@/lib/rollout-status";
import { errorMessage, useTRPC } from "../trpc";
import { Button } from "../ui/button";
import { Dialog } from "../ui/dialog";
import { InlineError } from "../ui/states";
import { ReasonDialog } from "../ui/reason-dialog";
import type { Fleet } from "./types";

type Open = "pause" | "promote" | "abort" | null;

const PAUSABLE: readonly RolloutPhase[] = ["Canary", "RollingOut"];
const RESUMABLE: readonly RolloutPhase[] = ["CanaryPaused", "Paused"];
const PROMOTABLE: readonly RolloutPhase[] = ["Canary", "CanaryPaused", "Suspended"];

/**
 * Pause (with a reason), resume, promote and abort (confirmed, with a reason): requests the
 * rollout controller acts on; each answers the fleet as the controller left it. Which
 * buttons show follows the phase table (lib/rollout-status.ts).
 */
export function RolloutControls({ fleet, phase }: { fleet: Fleet; phase: RolloutPhase }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const name = fleet.metadata.name;
  const [open, setOpen] = useState<Open>(null);
  // A fresh reason each time a dialog opens.
  const [session, setSession] = useState(0);

  const done = (next: Fleet) => {
    queryClient.setQueryData(trpc.fleets.get.queryKey({ name }), next);
    void queryClient.invalidateQueries(trpc.fleets.events.queryFilter({ name }));
    void queryClient.invalidateQueries(trpc.fleets.templateVersions.queryFilter({ name }));
    void queryClient.invalidateQueries(trpc.fleets.list.pathFilter());
    setOpen(null);
  };
  const pause = useMutation(trpc.fleets.pause.mutationOptions({ onSuccess: done }));
  const resume = useMutation(trpc.fleets.resume.mutationOptions({ onSuccess: done }));
  const promote = useMutation(trpc.fleets.promote.mutationOptions({ onSuccess: done }));
  const abort = useMutation(trpc.fleets.abort.mutationOptions({ onSuccess: done }));

  if (isTerminalRolloutPhase(phase)) return null;
  const start = (which: Exclude<Open, null>) => {
    setSession((n) => n + 1);
    for (const m of [pause, promote, abort]) m.reset();
    setOpen(which);
  };
  const busy = pause.isPending || resume.isPending || promote.isPending || abort.isPending;

  return (
    <>
      <div className="flex flex-wrap items-center gap-2" data-testid="rollout-controls">
        {PAUSABLE.includes(phase) && (
          <Button onClick={() => start("pause")} disabled={busy} data-testid="rollout-pause">
            Pause…
          </Button>
        )}
        {RESUMABLE.includes(phase) && (
          <Button variant="primary" onClick={() => resume.mutate({ name })} disabled={busy} data-testid="rollout-resume">
            {resume.isPending ? "Resuming…" : "Resume"}
          </Button>
        )}
        {PROMOTABLE.includes(phase) && (
          <Button onClick={() => start("promote")} disabled={busy} data-testid="rollout-promote">
            Promote…
          </Button>
        )}
        <Button variant="danger" onClick={() => start("abort")} disabled={busy} data-testid="rollout-abort">
          Abort…
        </Button>
      </div>
      {resume.isError && (
        <div className="mt-2">
          <InlineError>{errorMessage(resume.error)}</InlineError>
        </div>
      )}
      <ReasonDialog
        key={`pause-${session}`}
        open={open === "pause"}
        pending={pause.isPending}
        error={pause.isError ? errorMessage(pause.error) : null}
        title={`Pause the rollout of ${name}?`}
        onCancel={() => setOpen(null)}
        onConfirm={(reason) => pause.mutate({ name, ...(reason ? { reason } : {}) })}
        confirmLabel={pause.isPending ? "Pausing…" : "Pause rollout"}
        confirmVariant="primary"
        rows={2}
        keyboard
        testIds={{ dialog: "pause-dialog", confirm: "confirm-pause", reason: "pause-reason" }}
      >
        <p>Nothing more gets the new version until someone resumes. Devices that have it keep it.</p>
      </ReasonDialog>
      <ReasonDialog
        key={`abort-${session}`}
        open={open === "abort"}
        pending={abort.isPending}
        error={abort.isError ? errorMessage(abort.error) : null}
        title={`Abort the rollout of ${name}?`}
        onCancel={() => setOpen(null)}
        onConfirm={(reason) => abort.mutate({ name, ...(reason ? { reason } : {}) })}
        cancelLabel="Keep it going"
        confirmLabel={abort.isPending ? "Aborting…" : "Abort and revert"}
        rows={2}
        testIds={{ dialog: "abort-dialog", confirm: "confirm-abort", reason: "abort-reason" }}
      >
        <p>
          The fleet goes back to its previous template version
          {fleet.status.rollout && typeof fleet.status.rollout.previousVersion === "string" ? ` (v${fleet.status.rollout.previousVersion})` : ""}, and every device that got the new
          one is given the previous spec again.
        </p>
      </ReasonDialog>
      <Dialog
        open={open === "promote"}
        onClose={() => !promote.isPending && setOpen(null)}
        title={`Promote the rollout of ${name}?`}
        data-testid="promote-dialog"
        footer={
          <>
            <Button onClick={() => setOpen(null)} disabled={promote.isPending}>
              Cancel
            </Button>
            <Button variant="primary" onClick={() => promote.mutate({ name })} disabled={promote.isPending} data-testid="confirm-promote">
              {promote.isPending ? "Promoting…" : "Promote"}
            </Button>
          </>
        }
      >
        <div className="space-y-3">
          <p>
            {phase === "Suspended"
              ? "The batch that finished under its success threshold is accepted and the next batch starts."
              : "The canary ends now, whatever its duration and restarts, and the batches start."}
          </p>
          {promote.isError && <InlineError>{errorMessage(promote.error)}</InlineError>}
        </div>
      </Dialog>
    </>
  );
}
