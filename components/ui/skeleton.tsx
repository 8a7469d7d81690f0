import { cx } from "./cx";

export function Skeleton({ className }: { className?: string }) {
  return <div aria-hidden className={cx("skeleton rounded", className ?? "h-4 w-full")} />;
}

/** Placeholder rows for a table while its first page loads. */
export function SkeletonRows({ rows = 8, columns }: { rows?: number; columns: number }) {
  return (
    <>
      {Array.from({ length: rows }, (_, r) => (
        <tr key={r} className="border-b border-slate-100" aria-hidden>
          {Array.from({ length: columns }, (_, c) => (
            <td key={c} className="px-3 py-3">
              <Skeleton className={cx("h-3.5", c === 0 ? "w-32" : c % 2 ? "w-20" : "w-16")} />
            </td>
          ))}
        </tr>
      ))}
    </>
  );
}
