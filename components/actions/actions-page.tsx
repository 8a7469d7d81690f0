"use client";

import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { useTRPC } from "../trpc";
import { useMe } from "../hooks/use-me";
import { Card } from "../ui/card";
import { PageHeader } from "../ui/page-header";
import { EmptyState, ErrorState, ListEmptyState } from "../ui/states";
import { CursorPagination } from "../devices/pagination";
import { selectorError } from "../devices/text-filters";
import { ActionFilters } from "./action-filters";
import { ActionsTable } from "./actions-table";
import { CreateActionButton } from "./create-action-dialog";
import { dateParamError, hasActionFilters, listInput } from "./params";
import { useActionParams } from "./use-action-params";
import { RequestFilterNotice } from "../requests/request-filter-notice";

export function ActionsPage() {
  const trpc = useTRPC();
  const { canOperate } = useMe();
  const { params, update } = useActionParams();
  const selectorInvalid = selectorError(params.selector) !== null;
  // A created-at range the server would refuse (not RFC 3339, or empty): the filter says why; the list is not asked.
  const datesInvalid = dateParamError(params) !== null;
  const invalid = selectorInvalid || datesInvalid;

  const list = useQuery({
    ...trpc.actions.list.queryOptions(listInput(params)),
    placeholderData: keepPreviousData,
    enabled: !invalid,
  });

  const filtered = hasActionFilters(params);
  const page = params.cursors.length + 1;
  const total = list.data?.total;

  return (
    <>
      <PageHeader
        title="Actions"
        description={
          total !== undefined
            ? `${total.toLocaleString()} action${total === 1 ? "" : "s"}${filtered ? " match these filters" : ""}, newest first.`
            : "Every action run on a device, newest first."
        }
        actions={canOperate && <CreateActionButton />}
      />
      <ActionFilters params={params} update={update} />
      {params.request && <RequestFilterNotice id={params.request} onClear={() => update({ request: "", cursors: [] })} />}
      <Card>
        {list.isError && !list.data ? (
          <ErrorState error={list.error} onRetry={() => void list.refetch()} title="Could not load actions" />
        ) : (
          <>
            <ActionsTable
              items={invalid ? [] : list.data?.items}
              loading={list.isPlaceholderData}
              empty={
                <ListEmptyState noun="actions" selectorInvalid={selectorInvalid} page={page} onFirstPage={() => update({ cursors: [] })}>
                  {datesInvalid ? (
                    <EmptyState title="Fix the created-at range to see actions" />
                  ) : filtered ? (
                    <EmptyState title="No actions match these filters">Loosen the filters, or clear them.</EmptyState>
                  ) : (
                    <EmptyState title="No actions yet">
                      {canOperate ? "Run one on a device or on every device a label selector matches with “New action”." : "Operators run actions on devices from here."}
                    </EmptyState>
                  )}
                </ListEmptyState>
              }
            />
            <CursorPagination params={params} update={update} nextCursor={list.data?.nextCursor} noun="actions" shown={list.data?.items.length ?? 0} total={invalid ? 0 : total} />
          </>
        )}
      </Card>
    </>
  );
}
