/** The header row of a plain list table: one column heading per name. */
export function TableHeader({ columns }: { columns: readonly string[] }) {
  return (
    <thead className="border-b border-slate-200 bg-slate-50/80 text-xs font-medium text-slate-500">
      <tr>
        {columns.map((c) => (
          <th key={c} scope="col" className="px-3 py-2.5 font-medium whitespace-nowrap first:pl-4">
            {c}
          </th>
        ))}
      </tr>
    </thead>
  );
}
