"use client";

import { useState } from "react";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { Link } from "@/components/ui/link";
import type { TargetMove } from "@/lib/workflow-status";
import type { WorkflowTargetView } from "@/server/workflows/targets";
import type { WorkflowObject } from "@/server/workflows/workflows";
import { StatusBadge } from "../status/status-badge";
import { Button } from "../ui/button";
import { ReasonDialog } from "../ui/reason-dialog";
import { errorMessage, useTRPC } from "../trpc";
import { shortId } from "../actions/format";
import { targetPhaseTone } from "./run-graph";

/**
 * A job step's targets in its current attempt (issue 21), each with its phase and action, and
 * for operators the moves the server says it allows now (skip, retry), each asking a reason.
 */
export function StepTargets({ workflow, step, canOperate }: { workflow: string; step: string; canOperate: boolean }) {
  const trpc = useTRPC();
  const targets = useQuery(trpc.workflows.targets.queryOptions({ name: workflow, step }));
  const [moving, setMoving] = useState<{ target: string; move: TargetMove } | null>(null);
  if (targets.isPending) return <p className="text-slate-500">Loading targets…</p>;
  if (targets.isError) return <p className="text-red-700">{errorMessage(targets.error)}</p>;
  const { items, total } = targets.data;
  if (total === 0) return <p className="text-slate-500">No target in this attempt.</p>;
  return (
    <>
      <ul className="max-h-64 space-y-1 overflow-y-auto" data-testid="step-targets">
        {items.map((t) => (
          <TargetRow key={t.target} target={t} canOperate={canOperate} onMove={(move) => setMoving({ target: t.target, move })} />
        ))}
      </ul>
      {total > items.length && <p className="mt-1 text-slate-500">First {items.length} of {total} shown.</p>}
      {moving && <TargetMoveDialog key={`${moving.target}/${moving.move}`} workflow={workflow} step={step} {...moving} onClose={() => setMoving(null)} />}
    </>
  );
}

function TargetRow({ target: t, canOperate, onMove }: { target: WorkflowTargetView; canOperate: boolean; onMove: (m: TargetMove) => void }) {
  return (
    <li className="flex flex-wrap items-center gap-1.5" data-testid="step-target" data-target={t.target}>
      <span className="min-w-0 truncate font-mono" title={t.target}>
        {t.target}
      </span>
      <StatusBadge table={targetPhaseTone} state={t.phase} data-testid="step-target-phase" />
      {t.actionId && (
        <Link href={`/actions/${encodeURIComponent(t.actionId)}`} className="font-mono text-brand-700 hover:underline" title={t.actionId}>
          {shortId(t.actionId)}
        </Link>
      )}
      {canOperate &&
        t.moves.map((m) => (
          <Button key={m} variant="secondary" size="sm" onClick={() => onMove(m)} data-testid={`target-${m}-${t.target}`}>
            {m === "skip" ? "Skip" : "Retry"}
          </Button>
        ))}
      {(t.skipReason || (t.phase === "Failed" && t.error)) && (
        <span className="w-full break-words text-slate-500">{t.skipReason ? `skipped by ${t.skippedBy ?? "?"}: ${t.skipReason}` : t.error}</span>
      )}
    </li>
  );
}

/** Skip or retry one target with a required reason: recorded with the operator's name in the workflow's events. */
function TargetMoveDialog({ workflow, step, target, move, onClose }: { workflow: string; step: string; target: string; move: TargetMove; onClose: () => void }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const options = {
    onSuccess: (next: WorkflowObject) => {
      queryClient.setQueryData(trpc.workflows.get.queryKey({ name: workflow }), next);
      void queryClient.invalidateQueries(trpc.workflows.targets.queryFilter({ name: workflow, step }));
      void queryClient.invalidateQueries(trpc.workflows.events.queryFilter({ name: workflow }));
      onClose();
    },
  };
  const skip = useMutation(trpc.workflows.skipTarget.mutationOptions(options));
  const retry = useMutation(trpc.workflows.retryTarget.mutationOptions(options));
  const m = move === "skip" ? skip : retry;
  return (
    <ReasonDialog
      open
      required
      keyboard
      pending={m.isPending}
      error={m.isError ? errorMessage(m.error) : null}
      title={move === "skip" ? `Skip ${target}?` : `Retry ${target}?`}
      onCancel={onClose}
      onConfirm={(reason) => m.mutate({ name: workflow, step, target, reason })}
      cancelLabel="Keep as is"
      confirmLabel={m.isPending ? (move === "skip" ? "Skipping…" : "Retrying…") : move === "skip" ? "Skip target" : "Retry target"}
      confirmVariant="primary"
      placeholder={move === "skip" ? "Why the step may go on without it, e.g. the device is in the repair shop" : "Why it should run again, e.g. the disk was cleaned"}
      testIds={{ dialog: "target-move-dialog", confirm: "confirm-target-move", reason: "target-move-reason" }}
    >
      {move === "skip" ? (
        <p>
          Step <span className="font-medium">{step}</span> goes on without <span className="font-medium">{target}</span>: the target counts as finished (not failed), and its
          unfinished action is cancelled (through its agent if it is running). The reason is recorded.
        </p>
      ) : (
        <p>
          <span className="font-medium">{target}</span> gets a new action for step <span className="font-medium">{step}</span>, made as the step made the first (approval and
          health policy apply). A step that failed for it runs again. The reason is recorded.
        </p>
      )}
    </ReasonDialog>
  );
}
