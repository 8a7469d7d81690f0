"use client";

import { Link } from "@/components/ui/link";
import type { EventRow } from "../trpc";
import { Card, CardHeader } from "../ui/card";
import { EmptyState, ErrorState } from "../ui/states";
import { EventsTable } from "./events-table";

/** "Open in event log →": the event log filtered to one object. */
export function EventLogLink({ kind, name }: { kind: string; name: string }) {
  return (
    <Link href={`/events?kind=${encodeURIComponent(kind)}&name=${encodeURIComponent(name)}`} className="text-xs font-medium text-brand-700 hover:underline">
      Open in event log →
    </Link>
  );
}

/** A detail page's "Events" card: the object's latest events (`events`, its query), newest first. */
export function ObjectEventsCard({
  kind,
  name,
  description,
  events,
  emptyTitle,
}: {
  kind: string;
  name: string;
  description: string;
  events: { data: EventRow[] | undefined; isError: boolean; error: unknown; refetch: () => unknown };
  emptyTitle: string;
}) {
  return (
    <Card>
      <CardHeader title="Events" description={description} actions={<EventLogLink kind={kind} name={name} />} />
      {events.isError ? (
        <ErrorState error={events.error} onRetry={() => void events.refetch()} />
      ) : (
        <EventsTable events={events.data} showObject={false} loadingRows={4} empty={<EmptyState title={emptyTitle} />} />
      )}
    </Card>
  );
}
