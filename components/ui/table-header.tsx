import type { ReactNode } from "react";
import { cx } from "./cx";

/**
 * A column heading: its name, or its name aligned right (a column of buttons), or `wide`: a
 * less important column shown only from 1280 px, so that the main lists fit without sideways
 * scrolling at 768–1279 px (issue 10). Its cells take `WIDE_ONLY` too.
 */
export type Column = string | { label: string; align?: "right"; wide?: boolean };

export const WIDE_ONLY = "hidden xl:table-cell";

/**
 * The header row of a list table: one heading per column, after `leading` (e.g. the
 * select-all checkbox's cell) when there is one.
 */
export function TableHeader({ columns, leading }: { columns: readonly Column[]; leading?: ReactNode }) {
  return (
    <thead className="border-b border-slate-200 bg-slate-50/80 text-xs font-medium text-slate-600">
      <tr>
        {leading}
        {columns.map((c) => {
          const { label, align, wide } = typeof c === "string" ? { label: c, align: undefined, wide: false } : c;
          return (
            <th key={label} scope="col" className={cx("px-3 py-2.5 font-medium whitespace-nowrap first:pl-4", align === "right" && "pr-4 text-right", wide && WIDE_ONLY)}>
              {label}
            </th>
          );
        })}
      </tr>
    </thead>
  );
}
