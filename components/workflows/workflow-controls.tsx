"use client";

import { Link } from "@/components/ui/link";
import { useState } from "react";
import { useRouter } from "next/navigation";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import type { WorkflowObject } from "@/server/workflows/workflows";
import { errorMessage, useTRPC } from "../trpc";
import { Button } from "../ui/button";
import { Dialog } from "../ui/dialog";
import { InlineError } from "../ui/states";
import { ReasonDialog } from "../ui/reason-dialog";

/**
 * Rerun (a finished workflow: a new run from its saved spec), Cancel (a running one, confirmed,
 * with an optional reason: it ends Failed, Cancelled) and Delete (confirmed; back to the list).
 * The server refuses the same moves (409), so these follow lib/workflow-status's table.
 */
export function WorkflowControls({ workflow }: { workflow: WorkflowObject }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const router = useRouter();
  const name = workflow.metadata.name;
  const phase = workflow.status.phase;
  const [dialog, setDialog] = useState<"cancel" | "delete" | null>(null);
  // A fresh reason each time the dialog opens.
  const [session, setSession] = useState(0);

  const done = (next: WorkflowObject) => {
    queryClient.setQueryData(trpc.workflows.get.queryKey({ name }), next);
    void queryClient.invalidateQueries(trpc.workflows.events.queryFilter({ name }));
    void queryClient.invalidateQueries(trpc.workflows.list.pathFilter());
  };
  const rerun = useMutation(trpc.workflows.rerun.mutationOptions({ onSuccess: done }));
  const cancel = useMutation(
    trpc.workflows.cancel.mutationOptions({
      onSuccess: (next) => {
        done(next);
        setDialog(null);
      },
    }),
  );
  const remove = useMutation(
    trpc.workflows.delete.mutationOptions({
      onSuccess: () => {
        void queryClient.invalidateQueries(trpc.workflows.list.pathFilter());
        queryClient.removeQueries(trpc.workflows.get.queryFilter({ name }));
        router.push("/workflows");
      },
    }),
  );

  const finished = phase === "Succeeded" || phase === "Failed";
  const showCancel = phase === "Running" && workflow.status.cancelRequestedBy === null;
  const busy = rerun.isPending || cancel.isPending || remove.isPending;
  const open = (d: "cancel" | "delete") => {
    setSession((n) => n + 1);
    cancel.reset();
    remove.reset();
    setDialog(d);
  };

  return (
    <div className="flex flex-col items-end gap-2">
      <div className="flex flex-wrap items-center gap-2" data-testid="workflow-controls">
        <Link
          href={`/workflows/${encodeURIComponent(name)}/edit`}
          data-testid="workflow-edit"
          title={phase === "Running" ? "Steps that have not started can still change" : "Change the definition of the next run"}
          className="inline-flex h-9 items-center rounded-md bg-white px-3.5 text-sm font-medium text-slate-700 shadow-sm ring-1 ring-slate-300 ring-inset hover:bg-slate-50"
        >
          Edit
        </Link>
        {(finished || phase === "Pending") && (
          <Button
            variant="primary"
            onClick={() => rerun.mutate({ name })}
            disabled={busy}
            data-testid={finished ? "workflow-rerun" : "workflow-start"}
            title={finished ? `Start run ${workflow.status.run + 1} from the saved spec` : workflow.status.schedule ? "Start one run now; the schedule stays as it is" : "Start the draft's first run"}
          >
            {rerun.isPending ? "Starting…" : finished ? "Rerun" : "Start"}
          </Button>
        )}
        {showCancel && (
          <Button variant="danger" onClick={() => open("cancel")} disabled={busy} data-testid="workflow-cancel">
            Cancel run…
          </Button>
        )}
        <Button variant="ghost" className="text-red-700 hover:bg-red-50 hover:text-red-800" onClick={() => open("delete")} disabled={busy} data-testid="workflow-delete">
          Delete…
        </Button>
      </div>
      {rerun.isError && <InlineError>{errorMessage(rerun.error)}</InlineError>}
      <ReasonDialog
        key={`cancel-${session}`}
        open={dialog === "cancel"}
        pending={cancel.isPending}
        error={cancel.isError ? errorMessage(cancel.error) : null}
        title={`Cancel run ${workflow.status.run} of ${name}?`}
        onCancel={() => setDialog(null)}
        onConfirm={(reason) => cancel.mutate({ name, ...(reason ? { reason } : {}) })}
        cancelLabel="Keep it running"
        confirmLabel={cancel.isPending ? "Cancelling…" : "Cancel run"}
        rows={2}
        testIds={{ dialog: "cancel-workflow-dialog", confirm: "confirm-cancel-workflow", reason: "cancel-workflow-reason" }}
      >
        <p>No new step starts and the steps&apos; unfinished actions are cancelled. The run ends Failed (Cancelled); the workflow is kept and can be rerun.</p>
      </ReasonDialog>
      <Dialog
        open={dialog === "delete"}
        onClose={() => !remove.isPending && setDialog(null)}
        title={`Delete workflow ${name}?`}
        data-testid="delete-workflow-dialog"
        footer={
          <>
            <Button onClick={() => setDialog(null)} disabled={remove.isPending}>
              Keep it
            </Button>
            <Button variant="danger" disabled={remove.isPending} onClick={() => remove.mutate({ name })} data-testid="confirm-delete-workflow">
              {remove.isPending ? "Deleting…" : "Delete workflow"}
            </Button>
          </>
        }
      >
        <div className="space-y-3">
          <p>
            The definition, its run history and step statuses go; its unfinished actions are cancelled. Workflows it references keep running; a workflow following this one&apos;s run sees
            that step fail. The events stay.
          </p>
          {remove.isError && <InlineError>{errorMessage(remove.error)}</InlineError>}
        </div>
      </Dialog>
    </div>
  );
}
