import { Button } from "../ui/button";
import { PAGE_SIZES } from "./params";

export function Pagination({
  page,
  limit,
  shown,
  total,
  hasNext,
  onPrev,
  onNext,
  onFirst,
  onLimit,
  noun = "devices",
}: {
  page: number;
  limit: number;
  shown: number;
  total: number | undefined;
  hasNext: boolean;
  onPrev: () => void;
  onNext: () => void;
  onFirst: () => void;
  onLimit: (limit: number) => void;
  /** What the rows are, plural ("No actions"). */
  noun?: string;
}) {
  const start = (page - 1) * limit + (shown ? 1 : 0);
  const end = (page - 1) * limit + shown;
  return (
    <div className="flex flex-wrap items-center justify-between gap-3 border-t border-slate-200 px-4 py-2.5 text-sm text-slate-600">
      <div data-testid="pagination-summary">
        {total === undefined ? (
          "…"
        ) : total === 0 ? (
          `No ${noun}`
        ) : (
          <>
            <span className="font-medium text-slate-900 tabular-nums">
              {start.toLocaleString()}–{end.toLocaleString()}
            </span>{" "}
            of <span className="font-medium text-slate-900 tabular-nums">{total.toLocaleString()}</span>
          </>
        )}
      </div>
      <div className="flex items-center gap-2">
        <label className="flex items-center gap-1.5 text-xs text-slate-500">
          Rows
          <select
            value={limit}
            onChange={(e) => onLimit(Number(e.target.value))}
            className="h-7 rounded-md border-0 bg-white px-1.5 text-xs ring-1 ring-slate-300 ring-inset"
            data-testid="page-size"
          >
            {PAGE_SIZES.map((n) => (
              <option key={n} value={n}>
                {n}
              </option>
            ))}
          </select>
        </label>
        {page > 2 && (
          <Button size="sm" variant="ghost" onClick={onFirst}>
            First
          </Button>
        )}
        <Button size="sm" onClick={onPrev} disabled={page <= 1} data-testid="page-prev">
          ← Previous
        </Button>
        <span className="px-1 text-xs text-slate-500 tabular-nums">Page {page}</span>
        <Button size="sm" onClick={onNext} disabled={!hasNext} data-testid="page-next">
          Next →
        </Button>
      </div>
    </div>
  );
}

/** Where a cursor-paged list is: the cursors walked so far (page = cursors + 1) and the page size. */
export interface Paging {
  cursors: string[];
  limit: number;
}

/** Pagination driven by the list's URL state: first / previous / next walk the cursor stack. */
export function CursorPagination({
  params,
  update,
  nextCursor,
  shown,
  total,
  noun,
}: {
  params: Paging;
  update: (patch: Partial<Paging>) => void;
  nextCursor: string | null | undefined;
  shown: number;
  total: number | undefined;
  noun?: string;
}) {
  return (
    <Pagination
      noun={noun}
      page={params.cursors.length + 1}
      limit={params.limit}
      shown={shown}
      total={total}
      hasNext={!!nextCursor}
      onFirst={() => update({ cursors: [] })}
      onPrev={() => update({ cursors: params.cursors.slice(0, -1) })}
      onNext={() => {
        if (nextCursor) update({ cursors: [...params.cursors, nextCursor] });
      }}
      onLimit={(limit) => update({ limit })}
    />
  );
}
