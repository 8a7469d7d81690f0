"use client";

import { useState } from "react";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import type { ActionState } from "@/lib/action-status";
import { errorMessage, useTRPC } from "../trpc";
import { Button } from "../ui/button";
import { Dialog } from "../ui/dialog";
import { InlineError } from "../ui/states";

/**
 * Cancel, with confirmation. A pending action is CANCELLED at once; a NEW or RUNNING one is
 * flagged and its agent stops it and reports CANCELLED.
 */
export function CancelActionButton({ id, state, kind, device }: { id: string; state: ActionState; kind: string; device: string }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [open, setOpen] = useState(false);
  const [reason, setReason] = useState("");
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

  function close() {
    if (!mutation.isPending) setOpen(false);
  }

  return (
    <>
      <Button
        variant="danger"
        data-testid="cancel-action"
        onClick={() => {
          setReason("");
          mutation.reset();
          setOpen(true);
        }}
      >
        Cancel action…
      </Button>
      <Dialog
        open={open}
        onClose={close}
        title={`Cancel ${kind} on ${device}?`}
        data-testid="cancel-action-dialog"
        footer={
          <>
            <Button onClick={close} disabled={mutation.isPending}>
              Keep it
            </Button>
            <Button
              variant="danger"
              data-testid="confirm-cancel-action"
              disabled={mutation.isPending}
              onClick={() => mutation.mutate({ id, ...(reason.trim() ? { reason: reason.trim() } : {}) })}
            >
              {mutation.isPending ? "Cancelling…" : "Cancel action"}
            </Button>
          </>
        }
      >
        <div className="space-y-3">
          <p>
            {onAgent
              ? `The action is ${state} on the agent. The agent is told in its next long-poll, stops it and reports CANCELLED; until then it stays ${state}.`
              : `The action is ${state}: it becomes CANCELLED at once and never runs.`}
          </p>
          {mutation.isError && <InlineError>{errorMessage(mutation.error)}</InlineError>}
          <label className="block">
            <span className="mb-1 block text-slate-700">
              Reason <span className="text-slate-400">(optional)</span>
            </span>
            <textarea
              data-testid="cancel-reason"
              rows={2}
              maxLength={1024}
              value={reason}
              onChange={(e) => setReason(e.target.value)}
              className="block w-full rounded-md border-0 px-3 py-2 text-sm text-slate-900 ring-1 ring-slate-300 ring-inset focus:ring-2 focus:ring-red-500 focus:outline-none"
            />
          </label>
        </div>
      </Dialog>
    </>
  );
}
