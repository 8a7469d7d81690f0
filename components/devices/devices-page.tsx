"use client";

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

export function DevicesPage() {
  const trpc = useTRPC();
  const { params, update } = useDeviceParams();
  const selectorInvalid = selectorError(params.selector) !== null;
  const cursor = params.cursors.at(-1);
  const heartbeat = useHeartbeatInterval();

  const list = useQuery({
    ...trpc.devices.list.queryOptions({
      labelSelector: params.selector || undefined,
      search: params.search || undefined,
      fleet: params.fleet || undefined,
      summary: params.status.summary.length ? params.status.summary : undefined,
      updated: params.status.updated.length ? params.status.updated : undefined,
      applicationSummary: params.status.applicationSummary.length ? params.status.applicationSummary : undefined,
      lifecycle: params.status.lifecycle.length ? params.status.lifecycle : undefined,
      limit: params.limit,
      cursor,
    }),
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

  return (
    <>
      <PageHeader
        title="Devices"
        description={list.data ? `${list.data.total.toLocaleString()} device${list.data.total === 1 ? "" : "s"}${filtered ? (list.data.total === 1 ? " matches these filters" : " match these filters") : ""}` : "Every enrolled device, filtered by label and status."}
      />
      <DeviceFilters params={params} update={update} />
      <Card>
        {list.isError && !list.data ? (
          <ErrorState error={list.error} onRetry={() => void list.refetch()} title="Could not load devices" />
        ) : (
          <>
            <DevicesTable
              items={selectorInvalid ? [] : list.data?.items}
              loading={list.isFetching}
              onLabelClick={addLabel}
              empty={
                <ListEmptyState noun="devices" selectorInvalid={selectorInvalid} page={page} onFirstPage={() => update({ cursors: [] })}>
                  {filtered ? (
                    <EmptyState title="No devices match these filters">Loosen the label selector or status filters.</EmptyState>
                  ) : (
                    <EmptyState title="No devices yet">
                      Devices appear here once their enrollment request is approved. Start an agent with <code className="rounded bg-slate-100 px-1">drover-agent</code> or
                      approve pending requests on the Enrollments page.
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
