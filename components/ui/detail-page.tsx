import type { ReactNode } from "react";
import { trpcErrorCode } from "../trpc";
import { Card } from "./card";
import { PageHeader } from "./page-header";
import { Skeleton } from "./skeleton";
import { EmptyState, ErrorState } from "./states";

const LINE_WIDTHS = ["w-40", "w-full", "w-3/4", "w-2/3"];

/** A detail page while its object loads: the header (title known or a placeholder) over placeholder cards. */
export function DetailLoading({ title, breadcrumb, cards = 2, lines = 3 }: { title: ReactNode; breadcrumb: ReactNode; cards?: number; lines?: 3 | 4 }) {
  return (
    <>
      <PageHeader title={title} breadcrumb={breadcrumb} />
      <div className="grid gap-4 lg:grid-cols-2">
        {Array.from({ length: cards }, (_, i) => (
          <Card key={i} className="space-y-3 p-4">
            {LINE_WIDTHS.slice(0, lines).map((w) => (
              <Skeleton key={w} className={`h-4 ${w}`} />
            ))}
          </Card>
        ))}
      </div>
    </>
  );
}

/**
 * A detail page whose object could not be read: NOT_FOUND says so (`notFound`, with a way on),
 * any other error shows it with Retry.
 */
export function DetailError({
  title,
  breadcrumb,
  error,
  onRetry,
  notFound,
  errorTitle,
}: {
  title: ReactNode;
  breadcrumb: ReactNode;
  error: unknown;
  onRetry: () => void;
  notFound: { title: string; hint: ReactNode };
  errorTitle: string;
}) {
  return (
    <>
      <PageHeader title={title} breadcrumb={breadcrumb} />
      <Card>
        {trpcErrorCode(error) === "NOT_FOUND" ? (
          <EmptyState title={notFound.title}>{notFound.hint}</EmptyState>
        ) : (
          <ErrorState error={error} onRetry={onRetry} title={errorTitle} />
        )}
      </Card>
    </>
  );
}
