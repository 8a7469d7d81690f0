"use client";

import { useState } from "react";
import { useRouter } from "next/navigation";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { errorMessage, useTRPC, type ActionDetail } from "../trpc";
import { Button } from "../ui/button";
import { Dialog } from "../ui/dialog";
import { argsSummary } from "./format";
import { useIdempotencyKey } from "../hooks/use-idempotency-key";

/**
 * Rerun an ended action, confirmed (issue 10): the server makes a new action with the same
 * device, kind, args and approval requirement, by the rules of any new one (it may wait for
 * approval, or be refused when the device has left); the page then opens the new action.
 */
export function RerunActionButton({ action }: { action: Pick<ActionDetail, "id" | "kind" | "device" | "args" | "requireApproval" | "state"> }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const router = useRouter();
  const [open, setOpen] = useState(false);
  const { idempotencyKey, renew } = useIdempotencyKey();
  const mutation = useMutation(
    trpc.actions.rerun.mutationOptions({
      onSuccess: (created) => {
        renew();
        void queryClient.invalidateQueries(trpc.actions.list.pathFilter());
        void queryClient.invalidateQueries(trpc.actions.counts.pathFilter());
        void queryClient.invalidateQueries(trpc.actions.reruns.queryFilter({ id: action.id }));
        setOpen(false);
        router.push(`/actions/${encodeURIComponent(created.id)}`);
      },
    }),
  );
  const args = argsSummary(action.args, 120);

  return (
    <>
      <Button
        variant="primary"
        data-testid="rerun-action"
        onClick={() => {
          mutation.reset();
          setOpen(true);
        }}
      >
        Rerun…
      </Button>
      <Dialog
        open={open}
        onClose={() => setOpen(false)}
        title={`Run ${action.kind} on ${action.device} again?`}
        data-testid="rerun-action-dialog"
        footer={
          <>
            <Button onClick={() => setOpen(false)}>Keep as is</Button>
            <Button variant="primary" data-testid="confirm-rerun-action" disabled={mutation.isPending} onClick={() => mutation.mutate({ id: action.id, idempotencyKey })}>
              {mutation.isPending ? "Creating…" : "Rerun"}
            </Button>
          </>
        }
      >
        <p>
          A new action is created with the same device, kind and args{args ? <> (<code className="text-[12px]">{args}</code>)</> : null}, and linked to this {action.state}{" "}
          one.{" "}
          {action.requireApproval ? "Like this one, it waits for an operator's approval before it runs." : "It follows the same rules as any new action: the approval policy, and it runs once the device is Online."}
        </p>
        {mutation.isError && (
          <p className="mt-3 rounded-md bg-red-50 px-3 py-2 text-red-800" role="alert" data-testid="rerun-action-error">
            {errorMessage(mutation.error)}
          </p>
        )}
      </Dialog>
    </>
  );
}
