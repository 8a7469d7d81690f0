"use client";

import { useMemo, useState } from "react";
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { useTRPC } from "../trpc";
import { Card } from "../ui/card";
import { PageHeader } from "../ui/page-header";
import { EmptyState, ErrorState, ListEmptyState } from "../ui/states";
import { formatSelector, parseSelector, type Requirement } from "@/lib/label-selector";
import { DeviceFilters, hasFilters } from "./device-filters";
import { DevicesTable } from "./devices-table";
import { CursorPagination } from "./pagination";
import { useDeviceParams } from "./use-device-params";
import { selectorError } from "./text-filters";
import { useHeartbeatInterval } from "../hooks/use-heartbeat-interval";
import { useMe } from "../hooks/use-me";
import { toggled } from "../ui/selection";
import { Button } from "../ui/button";
import { BulkBar, type BulkTarget } from "./bulk-bar";
import { AddDevicesLink } from "../enrollment-tokens/add-devices-link";
import { Link } from "@/components/ui/link";
import type { DeviceParams } from "./params";

/** The list's filter as devices.list and the bulk operations take it. */
function listFilter(params: DeviceParams) {
  return {
    labelSelector: params.selector || undefined,
    search: params.search || undefined,
    fleet: params.fleet || undefined,
    summary: params.status.summary.length ? params.status.summary : undefined,
    updated: params.status.updated.length ? params.status.updated : undefined,
    applicationSummary: params.status.applicationSummary.length ? params.status.applicationSummary : undefined,
    lifecycle: params.status.lifecycle.length ? params.status.lifecycle : undefined,
    decommissioned: params.showDecommissioned ? ("show" as const) : ("hide" as const),
  };
}

export function DevicesPage() {
  const trpc = useTRPC();
  const { params, update } = useDeviceParams();
  const selectorInvalid = selectorError(params.selector) !== null;
  const cursor = params.cursors.at(-1);
  const heartbeat = useHeartbeatInterval();
  const { canOperate } = useMe();
  const filter = useMemo(() => listFilter(params), [params]);

  const list = useQuery({
    ...trpc.devices.list.queryOptions({ ...filter, sort: params.sort, order: params.order, limit: params.limit, cursor }),
    placeholderData: keepPreviousData,
    enabled: !selectorInvalid,
    refetchInterval: heartbeat,
  });

  function addLabel(key: string, value: string) {
    let reqs: Requirement[] = [];
    try {
      reqs = parseSelector(params.selector).filter((r) => r.key !== key);
    } catch {
      reqs = [];
    }
    update({ selector: formatSelector([...reqs, { key, op: "=", values: [value] }]) });
  }

  const filtered = hasFilters(params);
  const page = params.cursors.length + 1;

  // Selection (operators): names on this page, or every device the filter matches. A new
  // filter starts a new selection (what was ticked may no longer be listed).
  const filterKey = JSON.stringify(filter);
  const [selection, setSelection] = useState<{ key: string; names: ReadonlySet<string>; allMatching: boolean }>({ key: filterKey, names: new Set(), allMatching: false });
  const [notice, setNotice] = useState<string | null>(null);
  const current = selection.key === filterKey ? selection : { key: filterKey, names: new Set<string>(), allMatching: false };
  const onPage = new Set((list.data?.items ?? []).map((d) => d.name));
  const selected = new Set([...current.names].filter((n) => onPage.has(n)));
  const total = list.data?.total ?? 0;
  const pageAllSelected = onPage.size > 0 && selected.size === onPage.size;
  const target: BulkTarget | null = current.allMatching ? { filter, total } : selected.size ? { names: [...selected] } : null;
  const select = (names: ReadonlySet<string>, allMatching = false) => setSelection({ key: filterKey, names, allMatching });

  return (
    <>
      <PageHeader
        title="Devices"
        actions={<AddDevicesLink />}
        description={list.data ? `${list.data.total.toLocaleString()} device${list.data.total === 1 ? "" : "s"}${filtered ? (list.data.total === 1 ? " matches these filters" : " match these filters") : ""}` : "Every enrolled device, filtered by label and status."}
      />
      <DeviceFilters params={params} update={update} hiddenDecommissioned={list.data?.hiddenDecommissioned} />
      {notice && (
        <div role="status" className="mb-3 flex items-center justify-between gap-3 rounded-md bg-emerald-50 px-3 py-2 text-sm text-emerald-800 ring-1 ring-emerald-600/20 ring-inset" data-testid="bulk-notice">
          {notice}
          <button className="text-xs text-emerald-700 hover:underline" onClick={() => setNotice(null)}>
            Dismiss
          </button>
        </div>
      )}
      <Card>
        {canOperate && (
          <div className="flex min-h-12 flex-wrap items-center justify-between gap-3 border-b border-slate-200 px-4 py-2">
            <span className="text-sm text-slate-600" data-testid="selection-count">
              {current.allMatching ? (
                <>
                  All {total.toLocaleString()} matching devices selected.{" "}
                  <Button size="sm" variant="ghost" data-testid="clear-selection" onClick={() => select(new Set())}>
                    Clear selection
                  </Button>
                </>
              ) : selected.size ? (
                <>
                  {selected.size.toLocaleString()} selected.
                  {pageAllSelected && total > selected.size && (
                    <Button size="sm" variant="ghost" data-testid="select-all-matching" onClick={() => select(selected, true)}>
                      Select all {total.toLocaleString()} matching
                    </Button>
                  )}
                </>
              ) : (
                "Select devices to label, resume or decommission them together."
              )}
            </span>
            <BulkBar
              target={target}
              onDone={(text) => {
                setNotice(text);
                select(new Set());
              }}
            />
          </div>
        )}
        {list.isError && !list.data ? (
          <ErrorState error={list.error} onRetry={() => void list.refetch()} title="Could not load devices" />
        ) : (
          <>
            <DevicesTable
              items={selectorInvalid ? [] : list.data?.items}
              loading={list.isPlaceholderData}
              onLabelClick={addLabel}
              sorting={{ sort: params.sort, order: params.order, onSort: (sort, order) => update({ sort, order }) }}
              selection={
                canOperate
                  ? {
                      selected: current.allMatching ? onPage : selected,
                      onToggle: (name) => select(current.allMatching ? toggled(onPage, name) : toggled(selected, name)),
                      onToggleAll: (names, on) => select(on ? new Set(names) : new Set()),
                    }
                  : undefined
              }
              empty={
                <ListEmptyState noun="devices" selectorInvalid={selectorInvalid} page={page} onFirstPage={() => update({ cursors: [] })}>
                  {filtered ? (
                    <EmptyState title="No devices match these filters">Loosen the label selector or status filters.</EmptyState>
                  ) : (
                    <EmptyState title="No devices yet">
                      Devices appear here once their enrollment request is approved. On{" "}
                      <Link href="/enrollment-tokens" className="font-medium text-brand-700 hover:underline" data-testid="empty-add-devices">
                        Add devices
                      </Link>
                      , make a token and copy the command that installs <code className="rounded bg-slate-100 px-1">drover-agent</code> with it; or approve pending requests on
                      the{" "}
                      <Link href="/enrollments" className="font-medium text-brand-700 hover:underline">
                        Enrollments
                      </Link>{" "}
                      page.
                    </EmptyState>
                  )}
                </ListEmptyState>
              }
            />
            <CursorPagination params={params} update={update} nextCursor={list.data?.nextCursor} shown={list.data?.items.length ?? 0} total={selectorInvalid ? 0 : list.data?.total} />
          </>
        )}
      </Card>
    </>
  );
}
