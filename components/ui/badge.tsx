import type { ReactNode } from "react";
import { cx } from "./cx";

export type Tone = "green" | "amber" | "red" | "blue" | "gray" | "purple" | "orange" | "slate";

const TONES: Record<Tone, { badge: string; dot: string }> = {
  green: { badge: "bg-emerald-50 text-emerald-700 ring-emerald-600/20", dot: "bg-emerald-500" },
  amber: { badge: "bg-amber-50 text-amber-800 ring-amber-600/25", dot: "bg-amber-500" },
  red: { badge: "bg-red-50 text-red-700 ring-red-600/20", dot: "bg-red-500" },
  blue: { badge: "bg-sky-50 text-sky-700 ring-sky-600/20", dot: "bg-sky-500" },
  gray: { badge: "bg-slate-100 text-slate-600 ring-slate-500/20", dot: "bg-slate-400" },
  purple: { badge: "bg-violet-50 text-violet-700 ring-violet-600/20", dot: "bg-violet-500" },
  orange: { badge: "bg-orange-50 text-orange-700 ring-orange-600/25", dot: "bg-orange-500" },
  slate: { badge: "bg-white text-slate-700 ring-slate-300", dot: "bg-slate-500" },
};

export function toneDot(tone: Tone): string {
  return TONES[tone].dot;
}

export function Badge({ tone = "gray", children, dot = true, className, ...rest }: { tone?: Tone; children: ReactNode; dot?: boolean; className?: string; "data-testid"?: string; title?: string }) {
  return (
    <span
      className={cx("inline-flex items-center gap-1.5 rounded-full px-2 py-0.5 text-xs font-medium ring-1 ring-inset whitespace-nowrap", TONES[tone].badge, className)}
      {...rest}
    >
      {dot && <span aria-hidden className={cx("size-1.5 rounded-full", TONES[tone].dot)} />}
      {children}
    </span>
  );
}
