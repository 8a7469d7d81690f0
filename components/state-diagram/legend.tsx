/** Which of the legend's optional entries a table needs. */
export interface LegendOptions {
  transient?: boolean;
  notYetSupported?: boolean;
}

/** What the diagram's styles mean; a table without transient or unsupported states can leave those out. */
export function DiagramLegend({ transient = true, notYetSupported = true }: LegendOptions = {}) {
  const item = "inline-flex items-center gap-1.5";
  return (
    <div className="flex flex-wrap items-center gap-x-4 gap-y-1 text-xs text-slate-600">
      <span className={item}>
        <span className="inline-block h-3 w-5 rounded bg-sky-700" /> current
      </span>
      <span className={item}>
        <span className="inline-block h-0.5 w-5 bg-brand-600" /> possible next move
      </span>
      {transient && (
        <span className={item}>
          <span className="inline-block h-3 w-5 rounded border border-dashed border-slate-400 bg-white" /> transient (not reported)
        </span>
      )}
      {notYetSupported && (
        <span className={item}>
          <span className="inline-block h-3 w-5 rounded border border-dashed border-slate-300 bg-white opacity-60" /> not yet supported
        </span>
      )}
      <span className={item}>
        <span className="inline-block h-3 w-5 rounded border border-slate-300 bg-white outline outline-1 outline-offset-1 outline-slate-300" /> final
      </span>
      <span className={item}>
        <span className="inline-block size-2.5 rounded-full bg-slate-800" /> initial
      </span>
      <span className={item}>
        <span className="inline-block h-3 w-5 rounded border border-slate-300 bg-slate-50" /> composite state (a group of states)
      </span>
    </div>
  );
}
