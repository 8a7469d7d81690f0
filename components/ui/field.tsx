import type { ReactNode } from "react";
import { cx } from "./cx";

/**
 * One labelled value in a definition list (`<dl>`) of a detail page: one line, cut with an
 * ellipsis; `wrap` for a value of several parts (a time and who) that must be read whole.
 */
export function Field({ label, wrap = false, children }: { label: string; wrap?: boolean; children: ReactNode }) {
  return (
    <div className="min-w-0">
      <dt className="text-xs text-slate-500">{label}</dt>
      <dd className={cx("mt-0.5 text-sm text-slate-900", wrap ? "break-words" : "truncate")}>{children}</dd>
    </div>
  );
}
