"use client";

import { useMemo, useState } from "react";
import { useRouter } from "next/navigation";
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { useTRPC, type ActionListItem } from "../trpc";
import { useMe } from "../hooks/use-me";
import { Card } from "../ui/card";
import { PageHeader } from "../ui/page-header";
import { EmptyState, ErrorState, ListEmptyState } from "../ui/states";
import { Button } from "../ui/button";
import { toggled } from "../ui/selection";
import { CursorPagination } from "../devices/pagination";
import { selectorError } from "../devices/text-filters";
import { ActionFilters } from "../actions/action-filters";
import { listInput } from "../actions/params";
import { useActionParams } from "../actions/use-action-params";
import { argsSummary } from "../actions/format";
import { ApprovalsTable } from "./approvals-table";
import { ShortcutLegend } from "./shortcut-legend";
import { DecisionBanner, useDecisions } from "./use-decisions";
import { useInboxKeys } from "./use-inbox-keys";
import type { Decision, DecisionTarget } from "./decision-dialog";
import { useFourEyes } from "./use-four-eyes";
import { PendingRequests } from "../requests/pending-requests";
import { useRequestDecision } from "../requests/use-request-decision";


/** PENDING_APPROVE actions across the fleet: decide one, a selection, or a page at once. */
export function ApprovalsPage() {
  const trpc = useTRPC();
  const router = useRouter();
  const { canOperate } = useMe();
  const fourEyes = useFourEyes();
  const target = (a: ActionListItem): DecisionTarget => ({ id: a.id, kind: a.kind, device: a.device, args: argsSummary(a.args, 200), refusal: a.refusal, blocked: fourEyes(a.createdBy, "this action") });
  const { params, update } = useActionParams();
  const selectorInvalid = selectorError(params.selector) !== null;

  const list = useQuery({
    ...trpc.actions.list.queryOptions({ ...listInput({ ...params, origin: "" }), state: ["PENDING_APPROVE"] }),
    placeholderData: keepPreviousData,
    enabled: !selectorInvalid,
  });
  const items = useMemo(() => (selectorInvalid ? [] : list.data?.items), [selectorInvalid, list.data]);

  const [picked, setPicked] = useState<ReadonlySet<string>>(new Set());
  // The focused row by id, and where it was: when it leaves the list (decided), the row
  // that takes its place is focused, so j/k/x/a keep flowing.
  const [focus, setFocus] = useState<{ id: string; index: number } | null>(null);
  // Only what is still on screen counts as selected: decided actions leave the list live.
  const selectedItems = useMemo(() => (items ?? []).filter((a) => picked.has(a.id)), [items, picked]);
  const selected = useMemo(() => new Set(selectedItems.map((a) => a.id)), [selectedItems]);
  const focused = useMemo(() => {
    if (!items?.length || !focus) return -1;
    const at = items.findIndex((a) => a.id === focus.id);
    return at >= 0 ? at : Math.min(focus.index, items.length - 1);
  }, [items, focus]);
  const focusRow = (index: number) => {
    const a = items?.[index];
    setFocus(a ? { id: a.id, index } : null);
  };

  // A whole request (issue 10) is decided apart from the per-action rows below.
  const requestDecision = useRequestDecision();
  const decisions = useDecisions({
    onDecided: (ids) =>
      setPicked((prev) => {
        const next = new Set(prev);
        for (const id of ids) next.delete(id);
        return next;
      }),
  });

  function toggle(id: string) {
    setPicked((prev) => toggled(prev, id));
  }

  /** The selection, or else the focused row: what a or r acts on. */
  function decide(decision: Decision) {
    if (!canOperate) return;
    const focusedItem = items?.[focused];
    const targets = selectedItems.length ? selectedItems : focusedItem ? [focusedItem] : [];
    decisions.start(decision, targets.map(target));
  }

  useInboxKeys(!!items && items.length > 0, {
    move: (delta) => {
      if (!items?.length) return;
      const next = focused < 0 ? (delta > 0 ? 0 : items.length - 1) : Math.min(items.length - 1, Math.max(0, focused + delta));
      focusRow(next);
    },
    toggle: () => {
      const a = items?.[focused];
      if (a && canOperate) toggle(a.id);
    },
    approve: () => decide("approve"),
    reject: () => decide("reject"),
    open: () => {
      const a = items?.[focused];
      if (a) router.push(`/actions/${encodeURIComponent(a.id)}`);
    },
  });

  const filtered = params.kind !== "" || params.device !== "" || params.selector !== "";
  const page = params.cursors.length + 1;
  const total = list.data?.total;
  const n = selectedItems.length;

  return (
    <>
      <PageHeader
        title="Approvals"
        description={
          total === undefined
            ? "Actions that wait for an operator before they may run."
            : total === 0
              ? "Nothing is waiting for a decision."
              : `${total.toLocaleString()} action${total === 1 ? "" : "s"} waiting for approval${filtered ? " match these filters" : ""}, newest first.`
        }
      />
      <ActionFilters params={params} update={update} inbox />

      {decisions.outcome && <DecisionBanner outcome={decisions.outcome} onDismiss={decisions.clearOutcome} />}
      {requestDecision.outcome && <DecisionBanner outcome={requestDecision.outcome} onDismiss={requestDecision.clearOutcome} />}
      <PendingRequests canOperate={canOperate} busy={requestDecision.busy || decisions.busy} onDecide={requestDecision.start} />

      <Card>
        {canOperate && (
          <div className="flex min-h-12 flex-wrap items-center justify-between gap-3 border-b border-slate-200 px-4 py-2">
            <span className="text-sm text-slate-600" data-testid="selection-count">
              {n ? `${n} selected` : "Select actions to decide them together, or decide each on its row."}
            </span>
            <span className="flex gap-2">
              <Button size="sm" variant="primary" data-testid="approve-actions" disabled={n === 0 || decisions.busy} onClick={() => decisions.start("approve", selectedItems.map(target))}>
                Approve{n ? ` ${n}` : ""}…
              </Button>
              <Button size="sm" data-testid="reject-actions" disabled={n === 0 || decisions.busy} onClick={() => decisions.start("reject", selectedItems.map(target))}>
                Reject{n ? ` ${n}` : ""}…
              </Button>
            </span>
          </div>
        )}
        {list.isError && !list.data ? (
          <ErrorState error={list.error} onRetry={() => void list.refetch()} title="Could not load actions waiting for approval" />
        ) : (
          <>
            <ApprovalsTable
              items={items}
              loading={list.isPlaceholderData}
              canOperate={canOperate}
              selected={selected}
              focused={focused}
              busy={decisions.busy}
              onFocus={focusRow}
              onToggle={toggle}
              onToggleAll={(ids, select) =>
                setPicked((prev) => {
                  const next = new Set(prev);
                  for (const id of ids) {
                    if (select) next.add(id);
                    else next.delete(id);
                  }
                  return next;
                })
              }
              approveBlocked={(a) => fourEyes(a.createdBy, "this action")}
              onApprove={(a) => decisions.start("approve", [target(a)])}
              onReject={(a) => decisions.start("reject", [target(a)])}
              empty={
                <ListEmptyState noun="actions" selectorInvalid={selectorInvalid} page={page} onFirstPage={() => update({ cursors: [] })}>
                  <EmptyState title="No actions waiting for approval">
                    {filtered ? "None match these filters; others may be waiting." : "Actions whose kind or request needs approval appear here until an operator decides."}
                  </EmptyState>
                </ListEmptyState>
              }
            />
            {(total ?? 0) > 0 && (
              <CursorPagination params={params} update={update} nextCursor={list.data?.nextCursor} noun="actions" shown={items?.length ?? 0} total={total} />
            )}
          </>
        )}
      </Card>
      {(items?.length ?? 0) > 0 && <ShortcutLegend canOperate={canOperate} />}
      {decisions.dialog}
      {requestDecision.dialog}
    </>
  );
}
