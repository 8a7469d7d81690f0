"use client";

import type { ReactNode } from "react";
import { cx } from "../ui/cx";

const button =
  "inline-flex size-7 items-center justify-center rounded-md text-slate-700 hover:bg-slate-100 hover:text-slate-900 focus-visible:outline-2 focus-visible:outline-offset-1 focus-visible:outline-brand-500 disabled:cursor-not-allowed disabled:text-slate-400 disabled:hover:bg-transparent";

function Icon({ children }: { children: ReactNode }) {
  return (
    <svg viewBox="0 0 16 16" className="size-4" fill="none" stroke="currentColor" strokeWidth="1.6" strokeLinecap="round" strokeLinejoin="round" aria-hidden="true">
      {children}
    </svg>
  );
}

export function ToolButton({ label, onClick, disabled, children, testId }: { label: string; onClick: () => void; disabled?: boolean; children: ReactNode; testId?: string }) {
  return (
    <button type="button" className={button} aria-label={label} title={label} onClick={onClick} disabled={disabled} data-testid={testId}>
      {children}
    </button>
  );
}

export const ZoomInIcon = () => (
  <Icon>
    <path d="M8 3.5v9M3.5 8h9" />
  </Icon>
);
export const ZoomOutIcon = () => (
  <Icon>
    <path d="M3.5 8h9" />
  </Icon>
);
export const FitIcon = () => (
  <Icon>
    <path d="M2.5 6V2.5H6M10 2.5h3.5V6M13.5 10v3.5H10M6 13.5H2.5V10" />
  </Icon>
);
export const ExpandIcon = () => (
  <Icon>
    <path d="M9.5 2.5h4v4M13.5 2.5 9 7M6.5 13.5h-4v-4M2.5 13.5 7 9" />
  </Icon>
);
export const CloseIcon = () => (
  <Icon>
    <path d="M4 4l8 8M12 4l-8 8" />
  </Icon>
);

/** The diagram's buttons. */
export function Toolbar({ label, children, className }: { label: string; children: ReactNode; className?: string }) {
  return (
    <div role="toolbar" aria-label={label} className={cx("flex shrink-0 items-center gap-0.5 rounded-lg bg-white p-0.5 ring-1 ring-slate-200", className)}>
      {children}
    </div>
  );
}
