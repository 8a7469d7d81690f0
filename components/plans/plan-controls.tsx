"use client";

import { useState } from "react";
import { useRouter } from "next/navigation";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import type { PlanView } from "@/lib/plan-status";
import { errorMessage, useTRPC } from "../trpc";
import { useIdempotencyKey } from "../hooks/use-idempotency-key";
import { Button } from "../ui/button";
import { InlineError } from "../ui/states";
import { ReasonDialog } from "../ui/reason-dialog";
import { ApprovalDialog } from "../approvals/approval-dialog";
import { useFourEyes } from "../approvals/use-four-eyes";
import { awaitsApproval, canCancel, canRetry, planApprovalSubject } from "./plan-view";

/**
 * Approve (while the plan waits for it; through the one approval dialog, with a reason), Cancel (confirmed, with an optional reason; not once
 * the plan ended) and Retry (after an error end: a new plan that skips the nodes already
 * SignalCompleted, opened at once). Which buttons show follows lib/plan-status's table.
 */
export function PlanControls({ plan }: { plan: PlanView }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const router = useRouter();
  const id = plan.metadata.id;
  const state = plan.status.state;
  const [cancelling, setCancelling] = useState(false);
  const [approving, setApproving] = useState(false);
  const fourEyes = useFourEyes();
  // A fresh reason each time the dialog opens.
  const [session, setSession] = useState(0);

  const done = (next: PlanView) => {
    queryClient.setQueryData(trpc.plans.get.queryKey({ id: next.metadata.id }), next);
    void queryClient.invalidateQueries(trpc.plans.events.queryFilter({ id: next.metadata.id }));
    void queryClient.invalidateQueries(trpc.plans.list.pathFilter());
  };
  const approve = useMutation(
    trpc.plans.approve.mutationOptions({
      onSuccess: (next) => {
        done(next);
        setApproving(false);
      },
    }),
  );
  const cancel = useMutation(
    trpc.plans.cancel.mutationOptions({
      onSuccess: (next) => {
        done(next);
        setCancelling(false);
      },
    }),
  );
  const retryKey = useIdempotencyKey();
  const retry = useMutation(
    trpc.plans.retry.mutationOptions({
      onSuccess: (created) => {
        retryKey.renew();
        done(created);
        // The old plan now lists its retry.
        void queryClient.invalidateQueries(trpc.plans.get.queryFilter({ id }));
        router.push(`/plans/${encodeURIComponent(created.metadata.id)}`);
      },
    }),
  );

  const showApprove = awaitsApproval(state, plan.status.approval);
  const showCancel = canCancel(state) && plan.status.cancelRequestedBy === null;
  const showRetry = canRetry(state);
  const busy = approve.isPending || cancel.isPending || retry.isPending;
  if (!showApprove && !showCancel && !showRetry) return null;

  const failed = retry.isError ? retry.error : null;
  const blocked = fourEyes(plan.metadata.createdBy, "this plan");
  return (
    <div className="flex flex-col items-end gap-2">
      <div className="flex flex-wrap items-center gap-2" data-testid="plan-controls">
        {showApprove && (
          <Button
            variant="primary"
            onClick={() => {
              setSession((n) => n + 1);
              approve.reset();
              setApproving(true);
            }}
            disabled={busy || blocked !== null}
            title={blocked ?? undefined}
            data-testid="plan-approve"
          >
            Approve…
          </Button>
        )}
        {showRetry && (
          <Button variant="primary" onClick={() => retry.mutate({ id, idempotencyKey: retryKey.idempotencyKey })} disabled={busy} data-testid="plan-retry" title="Run it again as a new plan; nodes already SignalCompleted are skipped">
            {retry.isPending ? "Retrying…" : "Retry"}
          </Button>
        )}
        {showCancel && (
          <Button
            variant="danger"
            onClick={() => {
              setSession((n) => n + 1);
              cancel.reset();
              setCancelling(true);
            }}
            disabled={busy}
            data-testid="plan-cancel"
          >
            Cancel plan…
          </Button>
        )}
      </div>
      {failed && <InlineError>{errorMessage(failed)}</InlineError>}
      <ApprovalDialog
        key={`approve-${session}`}
        decision="approve"
        subject={planApprovalSubject(plan)}
        title="Approve this plan?"
        consequence="Its nodes are signalled from now on, in the plan's order; their actions are created approved by you."
        blocked={blocked}
        open={approving}
        pending={approve.isPending}
        error={approve.isError ? errorMessage(approve.error) : null}
        onCancel={() => setApproving(false)}
        onConfirm={(reason) => approve.mutate({ id, ...(reason ? { reason } : {}) })}
        testIds={{ dialog: "approve-plan-dialog", confirm: "confirm-approve-plan", reason: "approve-plan-reason" }}
      />
      <ReasonDialog
        key={`cancel-${session}`}
        open={cancelling}
        pending={cancel.isPending}
        error={cancel.isError ? errorMessage(cancel.error) : null}
        title="Cancel this plan?"
        onCancel={() => setCancelling(false)}
        onConfirm={(reason) => cancel.mutate({ id, ...(reason ? { reason } : {}) })}
        cancelLabel="Keep it running"
        confirmLabel={cancel.isPending ? "Cancelling…" : "Cancel plan"}
        rows={2}
        testIds={{ dialog: "cancel-plan-dialog", confirm: "confirm-cancel-plan", reason: "cancel-plan-reason" }}
      >
        <p>Nothing more is signalled and the nodes&apos; unfinished actions are cancelled. Nodes already updated keep their update. The plan ends Cancelled; you can retry it later as a new plan.</p>
      </ReasonDialog>
    </div>
  );
}
