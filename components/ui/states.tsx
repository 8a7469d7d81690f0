import type { ReactNode } from "react";
import { Button } from "./button";
import { errorMessage } from "../trpc";

export function EmptyState({ title, children, icon }: { title: string; children?: ReactNode; icon?: ReactNode }) {
  return (
    <div className="flex flex-col items-center justify-center px-6 py-14 text-center" data-testid="empty-state">
      <div className="mb-3 flex size-10 items-center justify-center rounded-full bg-slate-100 text-slate-400">
        {icon ?? (
          <svg viewBox="0 0 20 20" fill="currentColor" className="size-5" aria-hidden>
            <path d="M3 4.75A1.75 1.75 0 0 1 4.75 3h10.5A1.75 1.75 0 0 1 17 4.75v10.5A1.75 1.75 0 0 1 15.25 17H4.75A1.75 1.75 0 0 1 3 15.25V4.75Zm3 2.5a.75.75 0 0 0 0 1.5h8a.75.75 0 0 0 0-1.5H6Zm0 3a.75.75 0 0 0 0 1.5h5a.75.75 0 0 0 0-1.5H6Z" />
          </svg>
        )}
      </div>
      <p className="text-sm font-medium text-slate-900">{title}</p>
      {children && <div className="mt-1 max-w-md text-sm text-slate-500">{children}</div>}
    </div>
  );
}

export function ErrorState({ error, onRetry, title = "Could not load this" }: { error: unknown; onRetry?: () => void; title?: string }) {
  return (
    <div role="alert" className="flex flex-col items-center justify-center px-6 py-12 text-center" data-testid="error-state">
      <div className="mb-3 flex size-10 items-center justify-center rounded-full bg-red-50 text-red-500">
        <svg viewBox="0 0 20 20" fill="currentColor" className="size-5" aria-hidden>
          <path fillRule="evenodd" d="M8.5 2.9a1.7 1.7 0 0 1 3 0l6.3 11.3A1.7 1.7 0 0 1 16.3 17H3.7a1.7 1.7 0 0 1-1.5-2.5L8.5 2.9ZM10 7a.75.75 0 0 1 .75.75v3.5a.75.75 0 0 1-1.5 0v-3.5A.75.75 0 0 1 10 7Zm0 7.5a1 1 0 1 0 0-2 1 1 0 0 0 0 2Z" clipRule="evenodd" />
        </svg>
      </div>
      <p className="text-sm font-medium text-slate-900">{title}</p>
      <p className="mt-1 max-w-md text-sm text-slate-500">{errorMessage(error)}</p>
      {onRetry && (
        <Button className="mt-4" size="sm" onClick={onRetry}>
          Retry
        </Button>
      )}
    </div>
  );
}

/** An inline error line under a form or above a table. */
export function InlineError({ children }: { children: ReactNode }) {
  return (
    <p role="alert" className="rounded-md bg-red-50 px-3 py-2 text-sm text-red-700 ring-1 ring-red-600/15 ring-inset">
      {children}
    </p>
  );
}

/**
 * A paged, label-filtered list's empty state: first an invalid selector, then a page that
 * emptied under the user (with a way back), else `children`, the list's own empty state.
 */
export function ListEmptyState({
  noun,
  selectorInvalid,
  page,
  onFirstPage,
  children,
}: {
  /** What the rows are, plural. */
  noun: string;
  selectorInvalid: boolean;
  page: number;
  onFirstPage: () => void;
  children: ReactNode;
}) {
  if (selectorInvalid) return <EmptyState title={`Fix the label selector to see ${noun}`} />;
  if (page > 1)
    return (
      <EmptyState title="Nothing on this page any more">
        <Button size="sm" className="mt-2" onClick={onFirstPage}>
          Back to the first page
        </Button>
      </EmptyState>
    );
  return children;
}
