"use client";

import { useState } from "react";
import { useSearchParams } from "next/navigation";
import { setSearch } from "../hooks/url-state";
import { useInfiniteQuery } from "@tanstack/react-query";
import { useTRPC, useTRPCClient, type EventRow, type ObjectKind } from "../trpc";
import { PageHeader } from "../ui/page-header";
import { Card } from "../ui/card";
import { Button } from "../ui/button";
import { EmptyState, ErrorState } from "../ui/states";
import { useDebouncedEffect } from "../hooks/use-debounced-effect";
import { EventsTable } from "./events-table";
import { kindLabel } from "./object-link";

const KINDS = ["Device", "EnrollmentRequest", "Action", "ActionRequest", "Fleet", "Plan", "Workflow", "User", "Server"] as const satisfies readonly ObjectKind[];
// Fails to compile if the server gains a kind this list lacks.
const _allKinds: Exclude<ObjectKind, (typeof KINDS)[number]> extends never ? true : never = true;
void _allKinds;

const PAGE = 100;

function parseKind(v: string | null): ObjectKind | undefined {
  return (KINDS as readonly string[]).includes(v ?? "") ? (v as ObjectKind) : undefined;
}

export function EventsPage() {
  const trpc = useTRPC();
  const client = useTRPCClient();
  const sp = useSearchParams();
  const kind = parseKind(sp.get("kind"));
  const name = sp.get("name")?.trim() || undefined;

  // Keyed under events.list, so the live invalidation of that path reaches it.
  const input = { kind, name };
  const events = useInfiniteQuery({
    queryKey: [trpc.events.list.pathKey()[0], { input, type: "infinite" }] as const,
    queryFn: ({ pageParam, signal }) => client.events.list.query({ ...input, limit: PAGE, ...(pageParam !== null ? { beforeId: pageParam } : {}) }, { signal }),
    initialPageParam: null as number | null,
    getNextPageParam: (last: EventRow[]) => (last.length < PAGE ? undefined : (last[last.length - 1]?.id ?? undefined)),
  });

  function setParams(patch: { kind?: string | undefined; name?: string | undefined }, replace = false) {
    const params = new URLSearchParams(sp.toString());
    for (const [k, v] of Object.entries(patch)) {
      if (v) params.set(k, v);
      else params.delete(k);
    }
    setSearch(params.toString(), { replace });
  }

  const rows = events.data?.pages.flat();
  const filtered = kind !== undefined || name !== undefined;

  return (
    <>
      <PageHeader title="Event log" description="Every state change, who made it and why. New events appear at the top as they happen." />
      <div className="mb-4 flex flex-wrap items-center gap-2">
        <label className="sr-only" htmlFor="event-kind">
          Object kind
        </label>
        <select
          id="event-kind"
          data-testid="event-kind"
          value={kind ?? ""}
          onChange={(e) => setParams({ kind: e.target.value || undefined })}
          className="h-9 rounded-md border-0 bg-white px-3 text-sm shadow-xs ring-1 ring-slate-300 ring-inset focus:ring-2 focus:ring-brand-500 focus:outline-none"
        >
          <option value="">All kinds</option>
          {KINDS.map((k) => (
            <option key={k} value={k}>
              {kindLabel(k)}
            </option>
          ))}
        </select>
        <NameFilter value={name ?? ""} onApply={(v) => setParams({ name: v.trim() || undefined }, true)} />
        {filtered && (
          <Button variant="ghost" size="sm" onClick={() => setParams({ kind: undefined, name: undefined })}>
            Clear filters
          </Button>
        )}
      </div>
      <Card>
        {events.isError && !rows ? (
          <ErrorState error={events.error} onRetry={() => void events.refetch()} title="Could not load events" />
        ) : (
          <>
            <EventsTable
              events={rows}
              empty={
                filtered ? (
                  <EmptyState title="No events match these filters">The name must match the object&apos;s name exactly.</EmptyState>
                ) : (
                  <EmptyState title="No events yet">Events are written for every enrollment, status change and operator action.</EmptyState>
                )
              }
            />
            {rows && rows.length > 0 && (
              <div className="flex items-center justify-between border-t border-slate-200 px-4 py-2.5 text-sm text-slate-500">
                <span>
                  {rows.length.toLocaleString()} event{rows.length === 1 ? "" : "s"} shown
                </span>
                {events.hasNextPage ? (
                  <Button size="sm" data-testid="load-older" onClick={() => void events.fetchNextPage()} disabled={events.isFetchingNextPage}>
                    {events.isFetchingNextPage ? "Loading…" : "Load older"}
                  </Button>
                ) : (
                  <span className="text-xs">Beginning of the log</span>
                )}
              </div>
            )}
          </>
        )}
      </Card>
    </>
  );
}

function NameFilter({ value, onApply }: { value: string; onApply: (v: string) => void }) {
  const [text, setText] = useState(value);
  const [seen, setSeen] = useState(value);
  if (seen !== value) {
    setSeen(value);
    setText(value);
  }
  useDebouncedEffect(text, 350, (t) => {
    if (t.trim() !== value.trim()) onApply(t);
  });
  return (
    <>
      <label className="sr-only" htmlFor="event-name">
        Object name
      </label>
      <input
        id="event-name"
        data-testid="event-name"
        type="search"
        value={text}
        onChange={(e) => setText(e.target.value)}
        placeholder="Object name (exact)"
        className="h-9 w-64 rounded-md border-0 bg-white px-3 text-sm shadow-xs ring-1 ring-slate-300 ring-inset placeholder:text-slate-400 focus:ring-2 focus:ring-brand-500 focus:outline-none"
      />
    </>
  );
}
