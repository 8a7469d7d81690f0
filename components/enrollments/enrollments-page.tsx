"use client";

import { useMemo, useState } from "react";
import { Link } from "@/components/ui/link";
import { useSearchParams } from "next/navigation";
import { setSearch } from "../hooks/url-state";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { enrollmentMachine, type EnrollmentState } from "@/lib/enrollment-status";
import { stateNames } from "@/lib/state-machine";
import { errorMessage, useTRPC, type Enrollment } from "../trpc";
import { useMe } from "../hooks/use-me";
import { PageHeader } from "../ui/page-header";
import { Card } from "../ui/card";
import { Button } from "../ui/button";
import { EmptyState, ErrorState, InlineError } from "../ui/states";
import { cx } from "../ui/cx";
import { moveFocus } from "../ui/roving";
import { toggled } from "../ui/selection";
import { EnrollmentsTable } from "./enrollments-table";
import { DenyDialog } from "./deny-dialog";
import { DenyAllDialog } from "./deny-all-dialog";
import { AddDevicesLink } from "../enrollment-tokens/add-devices-link";
import { ApproveDialog } from "./approve-dialog";

const STATUSES = stateNames(enrollmentMachine);
type StatusFilter = EnrollmentState | "All";

function parseStatus(value: string | null): StatusFilter {
  if (value === "All") return "All";
  return (STATUSES as string[]).includes(value ?? "") ? (value as EnrollmentState) : "Pending";
}

export function EnrollmentsPage() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const { canOperate } = useMe();
  const sp = useSearchParams();
  const status = parseStatus(sp.get("status"));
  const q = sp.get("q") ?? "";
  const address = sp.get("address")?.trim() || null;
  const byAddress = address ? { clientAddress: address } : {};

  const list = useQuery(trpc.enrollments.list.queryOptions({ status: status === "All" ? undefined : status, limit: 1000, ...byAddress }));
  const counts = useQuery(trpc.devices.counts.queryOptions());
  // The pending requests of one address, for "Deny all pending (N)" (the same query as the
  // list itself on the Pending tab). At most 1,000 are listed: past that the count says so.
  const pendingFromAddress = useQuery({
    ...trpc.enrollments.list.queryOptions({ status: "Pending", limit: 1000, clientAddress: address ?? "" }),
    enabled: address !== null,
  });

  // The bulk bar and the selection only where pending requests are listed: on Approved and
  // Denied they would be controls that do nothing (issue 10).
  const selectable = canOperate && (status === "Pending" || status === "All");
  const [selectedRaw, setSelected] = useState<ReadonlySet<string>>(new Set());
  const [denyTargets, setDenyTargets] = useState<Enrollment[] | null>(null);
  const [approveTargets, setApproveTargets] = useState<Enrollment[] | null>(null);
  const [denyAllOpen, setDenyAllOpen] = useState(false);
  const [notice, setNotice] = useState<string | null>(null);

  const items = useMemo(() => {
    const needle = q.trim().toLowerCase();
    return list.data?.filter((e) => !needle || e.deviceName.includes(needle));
  }, [list.data, q]);

  // Selection only ever holds requests that are still on screen and still pending.
  const selected = useMemo(() => {
    const pending = new Set((items ?? []).filter((e) => e.status === "Pending").map((e) => e.id));
    return new Set([...selectedRaw].filter((id) => pending.has(id)));
  }, [selectedRaw, items]);
  const selectedItems = (items ?? []).filter((e) => selected.has(e.id));

  const refresh = () => {
    void queryClient.invalidateQueries(trpc.enrollments.list.pathFilter());
    void queryClient.invalidateQueries(trpc.devices.counts.pathFilter());
  };

  const approve = useMutation(
    trpc.enrollments.approve.mutationOptions({
      onSuccess: (rows) => {
        setNotice(`Approved ${rows.length === 1 ? rows[0]?.deviceName : `${rows.length} requests`}.`);
        setSelected(new Set());
        setApproveTargets(null);
        refresh();
      },
      onError: () => refresh(),
    }),
  );
  const deny = useMutation(
    trpc.enrollments.deny.mutationOptions({
      onSuccess: (rows) => {
        setNotice(`Denied ${rows.length === 1 ? rows[0]?.deviceName : `${rows.length} requests`}.`);
        setSelected(new Set());
        setDenyTargets(null);
        refresh();
      },
      onError: () => refresh(),
    }),
  );
  const denyAll = useMutation(
    trpc.enrollments.denyMany.mutationOptions({
      onSuccess: ({ count }) => {
        setNotice(`Denied ${count.toLocaleString()} pending request${count === 1 ? "" : "s"}${address ? ` from ${address}` : ""}.`);
        setSelected(new Set());
        setDenyAllOpen(false);
      },
      onSettled: () => refresh(),
    }),
  );
  const reopen = useMutation(
    trpc.enrollments.reopen.mutationOptions({
      onSuccess: (rows) => setNotice(`Reopened ${rows[0]?.deviceName ?? "the request"}: it is Pending again; its agent finds it so within 5 minutes.`),
      onSettled: () => refresh(),
    }),
  );
  const busy = approve.isPending || deny.isPending || denyAll.isPending || reopen.isPending;

  function setStatus(next: StatusFilter) {
    const params = new URLSearchParams(sp.toString());
    if (next === "Pending") params.delete("status");
    else params.set("status", next);
    setSearch(params.toString());
  }

  /** Approving asks first: labels to add, the names (issue 10). */
  function doApprove(targets: Enrollment[]) {
    setNotice(null);
    deny.reset();
    approve.reset();
    setApproveTargets(targets);
  }

  const pendingCount = counts.data?.pendingEnrollments;
  const tabs: StatusFilter[] = [...STATUSES, "All"];
  const denyAllCount = address ? pendingFromAddress.data?.length : pendingCount;
  const denyAllLabel = denyAllCount === undefined ? "" : ` (${denyAllCount >= 1000 && address ? "1,000+" : denyAllCount.toLocaleString()})`;
  const hrefWith = (changes: Record<string, string | null>) => {
    const params = new URLSearchParams(sp.toString());
    for (const [k, v] of Object.entries(changes)) {
      if (v === null) params.delete(k);
      else params.set(k, v);
    }
    const text = params.toString();
    return text ? `/enrollments?${text}` : "/enrollments";
  };

  return (
    <>
      <PageHeader title="Enrollment requests" description="Devices asking to join the fleet. Approving issues the device's credential once." actions={<AddDevicesLink variant="secondary" />} />

      <div className="mb-4 flex flex-wrap items-center justify-between gap-3">
        {/* WAI-ARIA tabs: one tab stop, Left/Right/Home/End move and select (issue 10). */}
        <div className="inline-flex rounded-lg bg-slate-200/60 p-0.5" role="tablist" aria-label="Filter by status" onKeyDown={(e) => moveFocus(e)?.click()}>
          {tabs.map((t) => (
            <button
              key={t}
              id={`enrollments-tab-${t}`}
              role="tab"
              aria-selected={status === t}
              aria-controls="enrollments-panel"
              tabIndex={status === t ? 0 : -1}
              data-roving
              data-testid={`status-tab-${t}`}
              onClick={() => setStatus(t)}
              className={cx("rounded-md px-3 py-1.5 text-sm font-medium", status === t ? "bg-white text-slate-900 shadow-sm" : "text-slate-600 hover:text-slate-900")}
            >
              {t}
              {t === "Pending" && pendingCount !== undefined && pendingCount > 0 && (
                <span className="palette-light ml-1.5 rounded-full bg-amber-400 px-1.5 text-[11px] font-semibold text-slate-900 tabular-nums">{pendingCount}</span>
              )}
            </button>
          ))}
        </div>
        {address && (
          <span className="text-sm text-slate-600" data-testid="address-filter">
            From <code className="rounded bg-slate-100 px-1">{address}</code>{" "}
            <Link href={hrefWith({ address: null })} className="text-brand-700 hover:underline">
              all addresses
            </Link>
          </span>
        )}
        {q && (
          <span className="text-sm text-slate-600">
            Showing requests matching <code className="rounded bg-slate-100 px-1">{q}</code>{" "}
            <Link href={status === "Pending" ? "/enrollments" : `/enrollments?status=${status}`} className="text-brand-700 hover:underline">
              clear
            </Link>
          </span>
        )}
      </div>

      {notice && (
        <div role="status" className="mb-3 flex items-center justify-between rounded-md bg-emerald-50 px-3 py-2 text-sm text-emerald-800 ring-1 ring-emerald-600/20 ring-inset" data-testid="enrollment-notice">
          {notice}
          <button className="text-xs text-emerald-700 hover:underline" onClick={() => setNotice(null)}>
            Dismiss
          </button>
        </div>
      )}
      {denyAll.isError && !denyAllOpen && (
        <div className="mb-3">
          <InlineError>Denying failed: {errorMessage(denyAll.error)}</InlineError>
        </div>
      )}
      {reopen.isError && (
        <div className="mb-3">
          <InlineError>Reopening failed: {errorMessage(reopen.error)}</InlineError>
        </div>
      )}
      {approve.isError && approveTargets === null && (
        <div className="mb-3">
          <InlineError>Approval failed: {errorMessage(approve.error)}</InlineError>
        </div>
      )}

      <div role="tabpanel" id="enrollments-panel" aria-labelledby={`enrollments-tab-${status}`}>
      <Card>
        {selectable && (
          <div className="flex min-h-12 items-center justify-between gap-3 border-b border-slate-200 px-4 py-2">
            <span className="text-sm text-slate-600" data-testid="selection-count">
              {selected.size ? `${selected.size} selected` : "Select pending requests to approve or deny them together."}
            </span>
            <span className="flex gap-2">
              <Button size="sm" variant="primary" data-testid="approve-selected" disabled={selected.size === 0 || busy} onClick={() => doApprove(selectedItems)}>
                {approve.isPending ? "Approving…" : `Approve${selected.size ? ` ${selected.size}` : ""}`}
              </Button>
              <Button
                size="sm"
                data-testid="deny-selected"
                disabled={selected.size === 0 || busy}
                onClick={() => {
                  deny.reset();
                  setDenyTargets(selectedItems);
                }}
              >
                Deny{selected.size ? ` ${selected.size}` : ""}…
              </Button>
              <Button
                size="sm"
                variant="danger-outline"
                data-testid="deny-all-pending"
                disabled={busy || !denyAllCount}
                title={address ? `Deny every pending request from ${address}` : "Deny every pending request, e.g. to clear a flood"}
                onClick={() => {
                  denyAll.reset();
                  setNotice(null);
                  setDenyAllOpen(true);
                }}
              >
                Deny all pending{address ? ` from ${address}` : ""}
                {denyAllLabel}…
              </Button>
            </span>
          </div>
        )}
        {list.isError ? (
          <ErrorState error={list.error} onRetry={() => void list.refetch()} title="Could not load enrollment requests" />
        ) : (
          <EnrollmentsTable
            items={items}
            canOperate={canOperate}
            selectable={selectable}
            selected={selected}
            busy={busy}
            onToggle={(id) => setSelected((prev) => toggled(prev, id))}
            onToggleAll={(ids, select) => setSelected(select ? new Set(ids) : new Set())}
            onApprove={(e) => doApprove([e])}
            onReopen={(e) => {
              setNotice(null);
              reopen.mutate({ ids: [e.id] });
            }}
            onDeny={(e) => {
              deny.reset();
              setDenyTargets([e]);
            }}
            addressHref={(a) => hrefWith({ address: a })}
            empty={
              status === "Pending" && !q ? (
                <EmptyState title="No pending requests">New devices appear here when their agent asks to enroll.</EmptyState>
              ) : (
                <EmptyState title={`No ${status === "All" ? "" : `${status.toLowerCase()} `}requests${q ? ` matching “${q}”` : ""}`} />
              )
            }
          />
        )}
      </Card>
      </div>

      <DenyAllDialog
        key={denyAllOpen ? "deny-all-open" : "deny-all-closed"}
        open={denyAllOpen}
        count={denyAllCount ?? 0}
        address={address}
        pending={denyAll.isPending}
        error={denyAll.isError ? errorMessage(denyAll.error) : null}
        onCancel={() => setDenyAllOpen(false)}
        onConfirm={(reason) => denyAll.mutate({ allPending: true, ...(address ? { clientAddress: address } : {}), ...(reason ? { reason } : {}) })}
      />
      <ApproveDialog
        key={`approve:${approveTargets?.map((e) => e.id).join(",") ?? "none"}`}
        open={approveTargets !== null}
        targets={approveTargets ?? []}
        pending={approve.isPending}
        error={approve.isError ? errorMessage(approve.error) : null}
        onCancel={() => setApproveTargets(null)}
        onConfirm={(labels) => {
          if (approveTargets?.length) approve.mutate({ ids: approveTargets.map((e) => e.id), ...(Object.keys(labels).length ? { labels } : {}) });
        }}
      />
      <DenyDialog
        key={denyTargets?.map((e) => e.id).join(",") ?? "none"}
        open={denyTargets !== null}
        names={(denyTargets ?? []).map((e) => e.deviceName)}
        pending={deny.isPending}
        error={deny.isError ? errorMessage(deny.error) : null}
        onCancel={() => setDenyTargets(null)}
        onConfirm={(reason) => {
          setNotice(null);
          if (denyTargets?.length) deny.mutate({ ids: denyTargets.map((e) => e.id), ...(reason ? { reason } : {}) });
        }}
      />
    </>
  );
}
