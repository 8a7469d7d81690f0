"use client";

import { useState } from "react";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { errorMessage, trpcErrorCode, useTRPC } from "../trpc";
import { ApprovalDialog } from "../approvals/approval-dialog";
import { useFourEyes } from "../approvals/use-four-eyes";
import type { DecisionOutcome } from "../approvals/use-decisions";

export interface RequestTarget {
  id: string;
  summary: string;
  /** Actions of the request still waiting for approval: what the decision moves. */
  pendingApproval: number;
  kind: string;
  /** Its arguments in one line (actions/format argsSummary). */
  args: string;
  createdBy: string;
}

type Verb = "approve" | "reject";

/**
 * Approve or reject a whole request through a confirmation with a reason. The server moves
 * every action of it still waiting for approval in one go and says how many; those decided
 * one by one meanwhile are left as they are. A 409 means none was waiting any more.
 */
export function useRequestDecision() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const fourEyes = useFourEyes();
  const [asked, setAsked] = useState<{ verb: Verb; target: RequestTarget; session: number } | null>(null);
  const [outcome, setOutcome] = useState<DecisionOutcome | null>(null);

  function refresh() {
    void queryClient.invalidateQueries(trpc.requests.list.pathFilter());
    void queryClient.invalidateQueries(trpc.requests.get.pathFilter());
    void queryClient.invalidateQueries(trpc.actions.list.pathFilter());
    void queryClient.invalidateQueries(trpc.actions.counts.pathFilter());
  }

  const options = (verb: Verb) => ({
    onSuccess: (answer: { moved: number; request: { summary: string } }) => {
      const n = answer.moved;
      setOutcome({ kind: "done" as const, message: `${verb === "approve" ? "Approved" : "Rejected"} ${n.toLocaleString("en-US")} action${n === 1 ? "" : "s"} of “${answer.request.summary}”.` });
      setAsked(null);
      refresh();
    },
    onError: (error: unknown) => {
      if (trpcErrorCode(error) !== "CONFLICT") return; // shown in the dialog
      setOutcome({ kind: "conflict" as const, message: "No action of this request waits for approval any more: someone decided them first, so nothing was changed." });
      setAsked(null);
      refresh();
    },
  });
  const approve = useMutation(trpc.requests.approve.mutationOptions(options("approve")));
  const reject = useMutation(trpc.requests.reject.mutationOptions(options("reject")));
  const mutation = asked?.verb === "reject" ? reject : approve;
  const busy = approve.isPending || reject.isPending;

  function start(verb: Verb, target: RequestTarget) {
    if (busy) return;
    approve.reset();
    reject.reset();
    setAsked((prev) => ({ verb, target, session: (prev?.session ?? 0) + 1 }));
  }

  const n = asked?.target.pendingApproval ?? 0;
  const count = `${n.toLocaleString("en-US")} action${n === 1 ? "" : "s"}`;
  const isApprove = asked?.verb !== "reject";
  const t = asked?.target;
  const dialog = (
    <ApprovalDialog
      key={asked?.session ?? 0}
      decision={isApprove ? "approve" : "reject"}
      subject={{ kind: "request", work: t ? `${t.kind}${t.args ? `: ${t.args}` : ""}` : "", devices: n }}
      title={`${isApprove ? "Approve" : "Reject"} ${t?.summary ?? "this request"}?`}
      consequence={
        <>
          {isApprove
            ? `The ${count} of this request still waiting for approval are scheduled on their devices (PENDING_SCHEDULE), each as soon as its device is Online.`
            : `The ${count} of this request still waiting for approval will not run (CANCELLED).`}{" "}
          Actions already decided one by one are left as they are.
        </>
      }
      blocked={fourEyes(t?.createdBy, "this request")}
      open={asked !== null}
      pending={mutation.isPending}
      error={mutation.isError && trpcErrorCode(mutation.error) !== "CONFLICT" ? errorMessage(mutation.error) : null}
      confirmLabel={`${isApprove ? "Approve" : "Reject"} all ${n.toLocaleString("en-US")}`}
      onCancel={() => setAsked(null)}
      onConfirm={(reason) => {
        if (!asked) return;
        setOutcome(null);
        mutation.mutate({ id: asked.target.id, ...(reason ? { reason } : {}) });
      }}
      testIds={{ dialog: "request-decision-dialog", confirm: "confirm-request-decision", reason: "request-decision-reason" }}
    />
  );

  return { start, dialog, outcome, clearOutcome: () => setOutcome(null), busy };
}
