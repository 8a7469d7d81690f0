"use client";

import { Link } from "@/components/ui/link";
import { useState } from "react";
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { useTRPC, type RouterOutputs } from "../trpc";
import { Card, CardHeader } from "../ui/card";
import { Button } from "../ui/button";
import { RelativeTime } from "../ui/time";
import { StatusBadge } from "../status/status-badge";
import { actionStateTone, summaryTone } from "../status/tones";
import { actorName, argsSummary } from "../actions/format";
import { useFourEyes } from "../approvals/use-four-eyes";
import { actionsHref } from "../actions/params";
import { RequestProgress } from "./request-progress";
import type { RequestTarget } from "./use-request-decision";

export type RequestListItem = RouterOutputs["requests"]["list"]["items"][number];

const SHOWN = 20;

/**
 * The inbox's requests (issue 10): one row per operator's request that has actions waiting
 * for approval, "exec on 1,996 devices matching site=lab, by admin — Approve all 1,996 /
 * Reject", with its actions underneath on expand. Nothing shows when none waits.
 */
export function PendingRequests({ canOperate, busy, onDecide }: { canOperate: boolean; busy: boolean; onDecide: (verb: "approve" | "reject", target: RequestTarget) => void }) {
  const trpc = useTRPC();
  const list = useQuery({ ...trpc.requests.list.queryOptions({ pendingApproval: true, limit: SHOWN }), placeholderData: keepPreviousData });
  const items = list.data?.items ?? [];
  if (items.length === 0) return null;
  const total = list.data?.total ?? items.length;
  return (
    <Card className="mb-4" data-testid="pending-requests">
      <CardHeader
        title={`Requests waiting for a decision (${total.toLocaleString("en-US")})`}
        description="One row per request: a create over a selector, a plan command, a workflow step. Deciding a request decides every action of it still waiting, at once."
      />
      <ul className="divide-y divide-slate-100">
        {items.map((r) => (
          <RequestRow key={r.id} r={r} canOperate={canOperate} busy={busy} onDecide={onDecide} />
        ))}
      </ul>
      {total > items.length && (
        <p className="border-t border-slate-100 px-4 py-2 text-xs text-slate-600">
          The {SHOWN} newest of {total.toLocaleString("en-US")} are shown; decide them to see the rest.
        </p>
      )}
    </Card>
  );
}

function RequestRow({ r, canOperate, busy, onDecide }: { r: RequestListItem; canOperate: boolean; busy: boolean; onDecide: (verb: "approve" | "reject", target: RequestTarget) => void }) {
  const [open, setOpen] = useState(false);
  const n = r.progress.pendingApproval;
  const target = { id: r.id, summary: r.summary, pendingApproval: n, kind: r.kind, args: argsSummary(r.args, 200), createdBy: r.createdBy };
  const blocked = useFourEyes()(r.createdBy, "this request");
  const panelId = `request-actions-${r.id}`;
  return (
    <li className="px-4 py-3" data-testid={`request-row-${r.id}`} data-pending={n}>
      <div className="flex flex-wrap items-start justify-between gap-3">
        <div className="min-w-0 flex-1">
          <Link prefetch={false} href={`/requests/${encodeURIComponent(r.id)}`} className="font-medium text-slate-900 hover:text-brand-700 hover:underline" data-testid="request-summary">
            {r.summary}
          </Link>
          <div className="mt-0.5 text-xs text-slate-600">
            by {actorName(r.createdBy)} · <RelativeTime value={r.createdAt} /> · {r.origin}
          </div>
          <div className="mt-2 max-w-md">
            <RequestProgress progress={r.progress} testId={`request-progress-${r.id}`} />
          </div>
        </div>
        <span className="flex shrink-0 items-center gap-1.5">
          <Button size="sm" variant="ghost" aria-expanded={open} aria-controls={panelId} onClick={() => setOpen((v) => !v)} data-testid={`expand-request-${r.id}`}>
            {open ? "Hide actions" : `Show ${r.progress.total === 1 ? "the action" : "actions"}`}
          </Button>
          {canOperate && (
            <>
              <Button size="sm" variant="primary" disabled={busy || n === 0 || blocked !== null} title={blocked ?? undefined} onClick={() => onDecide("approve", target)} data-testid={`approve-request-${r.id}`}>
                Approve all {n.toLocaleString("en-US")}
              </Button>
              <Button size="sm" disabled={busy || n === 0} onClick={() => onDecide("reject", target)} data-testid={`reject-request-${r.id}`}>
                Reject
              </Button>
            </>
          )}
        </span>
      </div>
      {open && <RequestActions id={r.id} panelId={panelId} total={r.progress.total} />}
    </li>
  );
}

/** The first actions of a request, each with its device and state; the rest one link away. */
function RequestActions({ id, panelId, total }: { id: string; panelId: string; total: number }) {
  const trpc = useTRPC();
  const actions = useQuery(trpc.actions.list.queryOptions({ request: id, limit: 20 }));
  return (
    <div id={panelId} className="mt-3 rounded-md bg-slate-50 px-3 py-2 ring-1 ring-slate-200 ring-inset" data-testid={`request-actions-${id}`}>
      {actions.isPending ? (
        <p className="text-xs text-slate-600">Loading actions…</p>
      ) : actions.isError ? (
        <p className="text-xs text-red-700">Could not load the actions.</p>
      ) : (
        <ul className="divide-y divide-slate-200 text-sm">
          {actions.data.items.map((a) => (
            <li key={a.id} className="flex flex-wrap items-center justify-between gap-2 py-1.5" data-testid={`request-action-${a.id}`}>
              <span className="flex items-center gap-2">
                <Link prefetch={false} href={`/devices/${encodeURIComponent(a.device)}`} className="font-medium text-brand-700 hover:underline">
                  {a.device}
                </Link>
                <StatusBadge table={summaryTone} state={a.deviceSummary} />
              </span>
              <span className="flex items-center gap-2">
                {a.waiting && <span className="max-w-xs truncate text-xs text-slate-600" title={a.waiting.message}>{a.waiting.message}</span>}
                <Link prefetch={false} href={`/actions/${encodeURIComponent(a.id)}`} aria-label={`${a.kind} on ${a.device}: ${a.state}`}>
                  <StatusBadge table={actionStateTone} state={a.state} />
                </Link>
              </span>
            </li>
          ))}
        </ul>
      )}
      {total > 20 && (
        <Link prefetch={false} href={actionsHref({ request: id })} className="mt-1 inline-block text-xs font-medium text-brand-700 hover:underline">
          All {total.toLocaleString("en-US")} actions of this request →
        </Link>
      )}
    </div>
  );
}
