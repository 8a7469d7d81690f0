"use client";

/** A copy of `set` with `id` flipped in or out. */
export function toggled(set: ReadonlySet<string>, id: string): Set<string> {
  const next = new Set(set);
  if (next.has(id)) next.delete(id);
  else next.add(id);
  return next;
}

/** A row's (or the header's) selection checkbox. */
export function SelectCheckbox({
  label,
  testId,
  checked,
  indeterminate,
  disabled,
  onChange,
}: {
  label: string;
  testId: string;
  checked: boolean;
  indeterminate?: boolean;
  disabled?: boolean;
  onChange: () => void;
}) {
  return (
    <input
      type="checkbox"
      aria-label={label}
      data-testid={testId}
      checked={checked}
      ref={
        indeterminate === undefined
          ? undefined
          : (el) => {
              if (el) el.indeterminate = indeterminate;
            }
      }
      disabled={disabled}
      onChange={onChange}
      className="size-3.5 accent-brand-600"
    />
  );
}

/** The header cell selecting (or clearing) every selectable row on the page: `ids`. */
export function SelectAllHeader({
  ids,
  selected,
  onToggleAll,
  label,
  testId,
}: {
  ids: string[];
  selected: ReadonlySet<string>;
  onToggleAll: (ids: string[], select: boolean) => void;
  label: string;
  testId: string;
}) {
  const allSelected = ids.length > 0 && ids.every((id) => selected.has(id));
  const someSelected = ids.some((id) => selected.has(id));
  return (
    <th className="w-10 py-2 pl-4">
      <SelectCheckbox
        label={label}
        testId={testId}
        checked={allSelected}
        indeterminate={someSelected && !allSelected}
        disabled={ids.length === 0}
        onChange={() => onToggleAll(ids, !allSelected)}
      />
    </th>
  );
}
