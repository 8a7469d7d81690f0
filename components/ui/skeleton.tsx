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
              {/* At most these widths, never more than the cell: placeholder rows must not make a narrow table scroll sideways. */}
              <Skeleton className={cx("h-3.5 w-full", c === 0 ? "max-w-32" : c % 2 ? "max-w-20" : "max-w-16")} />
            </td>
          ))}
        </tr>
      ))}
    </>
  );
}
