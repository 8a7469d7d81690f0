"use client";

import { useState } from "react";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import type { ActionState } from "@/lib/action-status";
import { errorMessage, useTRPC } from "../trpc";
import { Button } from "../ui/button";
import { ReasonDialog } from "../ui/reason-dialog";

/**
 * Cancel, with confirmation. A pending action is CANCELLED at once; a NEW or RUNNING one is
 * flagged and its agent stops it and reports CANCELLED.
 */
export function CancelActionButton({ id, state, kind, device }: { id: string; state: ActionState; kind: string; device: string }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [open, setOpen] = useState(false);
  // A new session per opening starts the reason afresh.
  const [session, setSession] = useState(0);
  const mutation = useMutation(
    trpc.actions.cancel.mutationOptions({
      onSuccess: (action) => {
        queryClient.setQueryData(trpc.actions.get.queryKey({ id }), action);
        void queryClient.invalidateQueries(trpc.actions.events.queryFilter({ id }));
        void queryClient.invalidateQueries(trpc.actions.list.pathFilter());
        void queryClient.invalidateQueries(trpc.actions.counts.pathFilter());
        setOpen(false);
      },
    }),
  );
  const onAgent = state === "NEW" || state === "RUNNING";

  return (
    <>
      <Button
        variant="danger"
        data-testid="cancel-action"
        onClick={() => {
          setSession((n) => n + 1);
          mutation.reset();
          setOpen(true);
        }}
      >
        Cancel action…
      </Button>
      <ReasonDialog
        key={session}
        open={open}
        pending={mutation.isPending}
        error={mutation.isError ? errorMessage(mutation.error) : null}
        title={`Cancel ${kind} on ${device}?`}
        onCancel={() => setOpen(false)}
        onConfirm={(reason) => mutation.mutate({ id, ...(reason ? { reason } : {}) })}
        cancelLabel="Keep it"
        confirmLabel={mutation.isPending ? "Cancelling…" : "Cancel action"}
        rows={2}
        testIds={{ dialog: "cancel-action-dialog", confirm: "confirm-cancel-action", reason: "cancel-reason" }}
      >
        <p>
          {onAgent
            ? `The action is ${state} on the agent. The agent is told in its next long-poll, stops it and reports CANCELLED; until then it stays ${state}.`
            : `The action is ${state}: it becomes CANCELLED at once and never runs.`}
        </p>
      </ReasonDialog>
    </>
  );
}
