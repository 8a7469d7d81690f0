import { cx } from "./cx";

/**
 * `tabbable: false` keeps clickable chips out of the tab order: in a list row the row's own link
 * is the one stop (issue 10), and the label selector input does the same by keyboard.
 */
export function LabelChips({ labels, max, onSelect, tabbable = true }: { labels: Record<string, string>; max?: number; onSelect?: (key: string, value: string) => void; tabbable?: boolean }) {
  const entries = Object.entries(labels).sort(([a], [b]) => a.localeCompare(b));
  if (entries.length === 0) return <span className="text-xs text-slate-500">no labels</span>;
  const shown = max === undefined ? entries : entries.slice(0, max);
  const rest = entries.length - shown.length;
  return (
    <span className="flex flex-wrap gap-1">
      {shown.map(([k, v]) => {
        const text = (
          <>
            <span className="text-slate-600">{k}</span>
            <span className="text-slate-600">=</span>
            <span className="font-medium text-slate-700">{v}</span>
          </>
        );
        const cls = "inline-flex max-w-56 items-center truncate rounded bg-slate-100 px-1.5 py-0.5 font-mono text-[11px] ring-1 ring-slate-200 ring-inset";
        return onSelect ? (
          <button
            key={k}
            type="button"
            tabIndex={tabbable ? undefined : -1}
            title={`Filter by ${k}=${v}`}
            onClick={(e) => {
              e.stopPropagation();
              onSelect(k, v);
            }}
            className={cx(cls, "hover:bg-brand-50 hover:ring-brand-500/40")}
          >
            {text}
          </button>
        ) : (
          <span key={k} className={cls} title={`${k}=${v}`}>
            {text}
          </span>
        );
      })}
      {rest > 0 && (
        <span className="rounded px-1 py-0.5 text-[11px] text-slate-500" title={entries.slice(shown.length).map(([k, v]) => `${k}=${v}`).join("\n")}>
          +{rest}
        </span>
      )}
    </span>
  );
}
