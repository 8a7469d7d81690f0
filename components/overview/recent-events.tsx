"use client";

import { Link } from "@/components/ui/link";
import { useQuery } from "@tanstack/react-query";
import { useTRPC } from "../trpc";
import { Card, CardHeader } from "../ui/card";
import { EmptyState, ErrorState } from "../ui/states";
import { Skeleton } from "../ui/skeleton";
import { RelativeTime } from "../ui/time";
import { Actor, ObjectLink } from "../events/object-link";

export function RecentEvents() {
  const trpc = useTRPC();
  const events = useQuery(trpc.events.list.queryOptions({ limit: 10 }));
  return (
    <Card>
      <CardHeader
        title="Recent events"
        actions={
          <Link href="/events" className="text-xs font-medium text-brand-700 hover:underline">
            All events →
          </Link>
        }
      />
      {events.isPending ? (
        <div className="space-y-3 p-4">
          {Array.from({ length: 5 }, (_, i) => (
            <Skeleton key={i} className="h-4 w-full" />
          ))}
        </div>
      ) : events.isError ? (
        <ErrorState error={events.error} onRetry={() => void events.refetch()} />
      ) : events.data.length === 0 ? (
        <EmptyState title="No events yet">Events appear here as devices enroll and report.</EmptyState>
      ) : (
        <ul className="divide-y divide-slate-100 text-sm">
          {events.data.map((e) => (
            <li key={e.id} className="flex items-center gap-3 px-4 py-2">
              <span className="w-16 shrink-0 text-xs text-slate-500">
                <RelativeTime value={e.time} />
              </span>
              <span className="min-w-0 flex-1 truncate">
                <ObjectLink kind={e.objectKind} name={e.objectName} />
                <span className="ml-2 text-slate-700">{e.type}</span>
                {e.reason && <span className="ml-1.5 text-slate-500">({e.reason})</span>}
              </span>
              <span className="hidden shrink-0 text-xs md:inline">
                <Actor actor={e.actor} />
              </span>
            </li>
          ))}
        </ul>
      )}
    </Card>
  );
}
