function Key({ children }: { children: string }) {
  return <kbd className="rounded border border-slate-300 bg-white px-1.5 py-px font-mono text-[11px] text-slate-700 shadow-[0_1px_0_0_rgb(203_213_225)]">{children}</kbd>;
}

/** The inbox's keyboard shortcuts, always in sight. */
export function ShortcutLegend({ canOperate }: { canOperate: boolean }) {
  const item = "inline-flex items-center gap-1.5";
  return (
    <div className="mt-3 flex flex-wrap items-center gap-x-4 gap-y-1.5 text-xs text-slate-500" data-testid="shortcut-legend" aria-label="Keyboard shortcuts">
      <span className={item}>
        <Key>j</Key>
        <Key>k</Key> move
      </span>
      {canOperate && (
        <>
          <span className={item}>
            <Key>x</Key> select
          </span>
          <span className={item}>
            <Key>a</Key> approve selected (or focused)
          </span>
          <span className={item}>
            <Key>r</Key> reject selected (or focused)
          </span>
        </>
      )}
      <span className={item}>
        <Key>Enter</Key> open
      </span>
    </div>
  );
}
