"use client";

import { Link } from "@/components/ui/link";
import { useQuery } from "@tanstack/react-query";
import { useTRPC } from "../trpc";
import { Button } from "../ui/button";
import { shortId } from "../actions/format";

/** Above the actions list filtered by `?request=`: which request, a link to it, and a way out. */
export function RequestFilterNotice({ id, onClear }: { id: string; onClear: () => void }) {
  const trpc = useTRPC();
  const request = useQuery(trpc.requests.get.queryOptions({ id, limit: 1 }));
  return (
    <div className="mb-4 flex flex-wrap items-center justify-between gap-2 rounded-md bg-slate-50 px-3 py-2 text-sm text-slate-700 ring-1 ring-slate-200 ring-inset" data-testid="request-filter">
      <span>
        Only the actions of request{" "}
        <Link prefetch={false} href={`/requests/${encodeURIComponent(id)}`} className="font-medium text-brand-700 hover:underline">
          {request.data?.summary ?? shortId(id)}
        </Link>
        {request.isError && <span className="text-slate-600"> (no such request)</span>}
      </span>
      <Button size="sm" variant="ghost" onClick={onClear} data-testid="clear-request-filter">
        Show every action
      </Button>
    </div>
  );
}
