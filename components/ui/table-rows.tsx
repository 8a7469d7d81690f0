import type { ReactNode } from "react";
import { SkeletonRows } from "./skeleton";

/**
 * A table body's rows: placeholder rows while `items` loads (undefined), `empty` across every
 * column when there are none, else `children` for each item (it gives each row its key).
 */
export function TableRows<T>({
  items,
  columns,
  loadingRows = 8,
  empty,
  children,
}: {
  items: readonly T[] | undefined;
  columns: number;
  loadingRows?: number;
  empty: ReactNode;
  children: (item: T, index: number) => ReactNode;
}) {
  if (!items) return <SkeletonRows columns={columns} rows={loadingRows} />;
  if (items.length === 0) {
    return (
      <tr>
        <td colSpan={columns}>{empty}</td>
      </tr>
    );
  }
  return <>{items.map((item, index) => children(item, index))}</>;
}
