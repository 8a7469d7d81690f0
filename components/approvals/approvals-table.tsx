"use client";

import { Link } from "@/components/ui/link";
import { useEffect, useRef, type ReactNode } from "react";
import type { ActionListItem } from "../trpc";
import { StatusBadge } from "../status/status-badge";
import { summaryTone } from "../status/tones";
import { RelativeTime } from "../ui/time";
import { TableHeader } from "../ui/table-header";
import { TableRows } from "../ui/table-rows";
import { Button } from "../ui/button";
import { cx } from "../ui/cx";
import { SelectAllHeader, SelectCheckbox } from "../ui/selection";
import { actorName, argsSummary, shortId } from "../actions/format";

export function ApprovalsTable({
  items,
  loading,
  canOperate,
  selected,
  focused,
  busy,
  onFocus,
  onToggle,
  onToggleAll,
  onApprove,
  approveBlocked = () => null,
  onReject,
  empty,
}: {
  items: ActionListItem[] | undefined;
  /** The rows are the previous query's (another filter, sort or page) while this one loads: dimmed. Not for a live refetch of the same list, which would dim it at every update. */
  loading: boolean;
  canOperate: boolean;
  selected: ReadonlySet<string>;
  focused: number;
  busy: boolean;
  onFocus: (index: number) => void;
  onToggle: (id: string) => void;
  onToggleAll: (ids: string[], select: boolean) => void;
  onApprove: (a: ActionListItem) => void;
  /** Why the signed-in operator may not approve this row (four eyes), or null. */
  approveBlocked?: (a: ActionListItem) => string | null;
  onReject: (a: ActionListItem) => void;
  empty: ReactNode;
}) {
  const ids = (items ?? []).map((a) => a.id);
  const columns = canOperate ? 6 : 4;
  const focusedRow = useRef<HTMLTableRowElement>(null);

  // Keep the row the keyboard moved to in view.
  useEffect(() => {
    focusedRow.current?.scrollIntoView({ block: "nearest" });
  }, [focused]);

  return (
    <div className="overflow-x-auto">
      <table className="w-full text-left text-sm" data-testid="approvals-table">
        <TableHeader
          leading={
            canOperate && <SelectAllHeader ids={ids} selected={selected} onToggleAll={onToggleAll} label="Select every action on this page" testId="approval-select-all" />
          }
          columns={["Action", "Device", "Requested", "Origin", ...(canOperate ? [{ label: "Decide", align: "right" as const }] : [])]}
        />
        <tbody className={cx("transition-opacity", loading && items && "opacity-60")}>
          <TableRows items={items} columns={columns} loadingRows={6} empty={empty}>
            {(a, i) => {
              const isFocused = i === focused;
              const isSelected = selected.has(a.id);
              const args = argsSummary(a.args, 80);
              return (
                <tr
                  key={a.id}
                  ref={isFocused ? focusedRow : undefined}
                  data-testid={`approval-row-${a.id}`}
                  data-focused={isFocused ? "true" : undefined}
                  aria-selected={isSelected}
                  onClick={(e) => {
                    if ((e.target as HTMLElement).closest("a,button,input")) return;
                    onFocus(i);
                  }}
                  className={cx(
                    "border-b border-slate-100 align-top",
                    isSelected ? "bg-brand-50/60" : "hover:bg-slate-50/60",
                    isFocused && "shadow-[inset_3px_0_0_0_var(--color-brand-600)]",
                  )}
                >
                  {canOperate && (
                    <td className="py-2.5 pl-4">
                      <SelectCheckbox
                        label={`Select ${a.kind} on ${a.device}`}
                        testId={`approval-select-${a.id}`}
                        checked={isSelected}
                        onChange={() => {
                          onFocus(i);
                          onToggle(a.id);
                        }}
                      />
                    </td>
                  )}
                  <td className={cx("py-2.5 pr-3", !canOperate && "pl-4")}>
                    <Link prefetch={false} href={`/actions/${encodeURIComponent(a.id)}`} className="font-medium text-slate-900 hover:text-brand-700 hover:underline">
                      {a.kind}
                    </Link>
                    <span className="ml-2 font-mono text-[11px] text-slate-500" title={a.id}>
                      {shortId(a.id)}
                    </span>
                    {args && <div className="max-w-md truncate font-mono text-[11px] text-slate-500" title={JSON.stringify(a.args, null, 2)}>{args}</div>}
                    {a.refusal && (
                      <div className="mt-0.5 max-w-md text-xs font-medium text-red-700" role="note" data-testid={`approval-refusal-${a.id}`}>
                        The device will refuse it: {a.refusal}
                      </div>
                    )}
                  </td>
                  <td className="px-3 py-2.5">
                    <Link prefetch={false} href={`/devices/${encodeURIComponent(a.device)}`} className="font-medium text-brand-700 hover:underline">
                      {a.device}
                    </Link>
                    <div className="mt-0.5">
                      <StatusBadge table={summaryTone} state={a.deviceSummary} />
                    </div>
                  </td>
                  <td className="px-3 py-2.5 text-slate-600">
                    <RelativeTime value={a.createdAt} />
                    <div className="text-xs text-slate-500">by {actorName(a.createdBy)}</div>
                  </td>
                  <td className="px-3 py-2.5 text-slate-600">{a.origin}</td>
                  {canOperate && (
                    <td className="px-3 py-2 pr-4 text-right whitespace-nowrap">
                      <span className="inline-flex gap-1.5">
                        <Button
                          size="sm"
                          variant="primary"
                          data-testid={`approve-action-${a.id}`}
                          disabled={busy || approveBlocked(a) !== null}
                          title={approveBlocked(a) ?? undefined}
                          onClick={() => onApprove(a)}
                        >
                          Approve
                        </Button>
                        <Button size="sm" data-testid={`reject-action-${a.id}`} disabled={busy} onClick={() => onReject(a)}>
                          Reject
                        </Button>
                      </span>
                    </td>
                  )}
                </tr>
              );
            }}
          </TableRows>
        </tbody>
      </table>
    </div>
  );
}
