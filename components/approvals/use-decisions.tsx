"use client";

import { useState } from "react";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { errorMessage, trpcErrorCode, useTRPC } from "../trpc";
import { DecisionDialog, type Decision, type DecisionTarget } from "./decision-dialog";

export interface DecisionOutcome {
  kind: "done" | "conflict";
  message: string;
}

/**
 * Approve or reject through the dialog. Decisions are all or nothing on the server: a 409
 * means someone else decided one of them first, so nothing changed; the lists are refetched
 * and the operator is told.
 */
export function useDecisions({
  onDecided,
  afterConflict = "The list has been refreshed: check what is still waiting and decide again.",
}: { onDecided?: (ids: string[], decision: Decision) => void; afterConflict?: string } = {}) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [request, setRequest] = useState<{ decision: Decision; targets: DecisionTarget[]; session: number } | null>(null);
  const [outcome, setOutcome] = useState<DecisionOutcome | null>(null);

  function refresh(ids: string[]) {
    void queryClient.invalidateQueries(trpc.actions.list.pathFilter());
    void queryClient.invalidateQueries(trpc.actions.counts.pathFilter());
    for (const id of ids) {
      void queryClient.invalidateQueries(trpc.actions.get.queryFilter({ id }));
      void queryClient.invalidateQueries(trpc.actions.events.queryFilter({ id }));
    }
  }

  const options = (decision: Decision) => ({
    onSuccess: (_: unknown, input: { ids: string[] }) => {
      const n = input.ids.length;
      setOutcome({ kind: "done" as const, message: `${decision === "approve" ? "Approved" : "Rejected"} ${n === 1 ? "1 action" : `${n} actions`}.` });
      setRequest(null);
      refresh(input.ids);
      onDecided?.(input.ids, decision);
    },
    onError: (error: unknown, input: { ids: string[] }) => {
      if (trpcErrorCode(error) !== "CONFLICT") return; // shown in the dialog
      setOutcome({
        kind: "conflict" as const,
        message: `${input.ids.length === 1 ? "This action was" : "At least one of these actions was"} already decided by someone else, so nothing was changed. ${afterConflict}`,
      });
      setRequest(null);
      refresh(input.ids);
    },
  });
  const approve = useMutation(trpc.actions.approve.mutationOptions(options("approve")));
  const reject = useMutation(trpc.actions.reject.mutationOptions(options("reject")));
  const mutation = request?.decision === "reject" ? reject : approve;
  const busy = approve.isPending || reject.isPending;

  function start(decision: Decision, targets: DecisionTarget[]) {
    if (targets.length === 0 || busy) return;
    approve.reset();
    reject.reset();
    setRequest((prev) => ({ decision, targets, session: (prev?.session ?? 0) + 1 }));
  }

  const dialog = (
    <DecisionDialog
      key={request?.session ?? 0}
      open={request !== null}
      decision={request?.decision ?? "approve"}
      targets={request?.targets ?? []}
      pending={mutation.isPending}
      error={mutation.isError && trpcErrorCode(mutation.error) !== "CONFLICT" ? errorMessage(mutation.error) : null}
      onCancel={() => setRequest(null)}
      onConfirm={(reason) => {
        if (!request) return;
        setOutcome(null);
        mutation.mutate({ ids: request.targets.map((t) => t.id), ...(reason ? { reason } : {}) });
      }}
    />
  );

  return { start, dialog, outcome, clearOutcome: () => setOutcome(null), busy, dialogOpen: request !== null };
}

/** What came of the last decision: done, or refused because someone decided first. */
export function DecisionBanner({ outcome, onDismiss }: { outcome: DecisionOutcome; onDismiss?: () => void }) {
  const conflict = outcome.kind === "conflict";
  return (
    <div
      role={conflict ? "alert" : "status"}
      data-testid={conflict ? "decision-conflict" : "decision-notice"}
      className={
        conflict
          ? "mb-4 flex items-start justify-between gap-3 rounded-md bg-amber-50 px-3 py-2 text-sm text-amber-900 ring-1 ring-amber-600/25 ring-inset"
          : "mb-4 flex items-start justify-between gap-3 rounded-md bg-emerald-50 px-3 py-2 text-sm text-emerald-800 ring-1 ring-emerald-600/20 ring-inset"
      }
    >
      <span>{outcome.message}</span>
      {onDismiss && (
        <button className="shrink-0 text-xs hover:underline" onClick={onDismiss}>
          Dismiss
        </button>
      )}
    </div>
  );
}
