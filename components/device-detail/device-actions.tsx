"use client";

import { Link } from "@/components/ui/link";
import { useQuery } from "@tanstack/react-query";
import { useTRPC } from "../trpc";
import { Card, CardHeader } from "../ui/card";
import { EmptyState, ErrorState } from "../ui/states";
import { ActionsTable } from "../actions/actions-table";
import { actionsHref } from "../actions/params";

const RECENT = 10;

/** This device's latest actions; live through the actions.list invalidation. */
export function DeviceActions({ name }: { name: string }) {
  const trpc = useTRPC();
  const list = useQuery(trpc.actions.list.queryOptions({ device: name, limit: RECENT }));
  const total = list.data?.total;
  return (
    <Card data-testid="device-actions">
      <CardHeader
        title="Actions"
        description={
          total === undefined ? "The latest actions on this device, newest first." : total > RECENT ? `The latest ${RECENT} of ${total.toLocaleString()}, newest first.` : "Newest first."
        }
        actions={
          <Link href={actionsHref({ device: name })} className="text-xs font-medium text-brand-700 hover:underline" data-testid="device-actions-all">
            All actions of this device →
          </Link>
        }
      />
      {list.isError ? (
        <ErrorState error={list.error} onRetry={() => void list.refetch()} title="Could not load this device's actions" />
      ) : (
        <ActionsTable items={list.data?.items} showDevice={false} loadingRows={3} empty={<EmptyState title="No actions on this device yet" />} />
      )}
    </Card>
  );
}
