"use client";

import dynamic from "next/dynamic";
import { useEffect, useRef, useState, type ReactNode } from "react";
import { cx } from "../ui/cx";
import type { LegendOptions } from "./legend";
import type { DiagramSpec, Highlight } from "./types";

const DiagramDialog = dynamic(() => import("./diagram-dialog"), { ssr: false });

export interface DiagramButtonProps {
  spec: DiagramSpec;
  /** The state to light, or null when none applies. */
  current: string | null;
  highlight?: Highlight;
  /** What the diagram is ("Device status"): the dialog's title and the button's name. */
  title: string;
  /** Said under the dialog's title: what the current state means. */
  description?: ReactNode;
  legend?: LegendOptions;
  /** The dialog's test id; the button's is `${testId}-open`. */
  testId: string;
  /** The button's visible text ("Diagram"). */
  label?: string;
  /** Only the icon (in a row of several): the name is the button's label and tooltip. */
  iconOnly?: boolean;
}

/**
 * The state table behind a state chip, one click away: the page opens on what the operator came
 * for, and the diagram, when asked for, has the whole window and is never clipped.
 */
export function DiagramButton({ spec, current, highlight = "blue", title, description, legend, testId, label = "Diagram", iconOnly = false }: DiagramButtonProps) {
  const [open, setOpen] = useState(false);
  const button = useRef<HTMLButtonElement>(null);
  // Closed: focus back on the button, once the modal dialog (which makes the page inert) is gone.
  const wasOpen = useRef(false);
  useEffect(() => {
    if (wasOpen.current && !open) button.current?.focus();
    wasOpen.current = open;
  }, [open]);
  const name = `${title} diagram`;
  return (
    <>
      <button
        ref={button}
        type="button"
        onClick={() => setOpen(true)}
        aria-haspopup="dialog"
        aria-label={`Show the ${title.toLowerCase()} diagram`}
        title={`${title}: every state and move, the current one lit`}
        className={cx(
          "inline-flex items-center gap-1 rounded-md text-xs font-medium text-slate-600 hover:bg-slate-100 hover:text-slate-900 focus-visible:outline-2 focus-visible:outline-offset-1 focus-visible:outline-brand-500",
          iconOnly ? "size-7 justify-center" : "h-7 px-2",
        )}
        data-testid={`${testId}-open`}
      >
        <DiagramIcon />
        {!iconOnly && <span>{label}</span>}
      </button>
      {open && (
        <DiagramDialog
          spec={spec}
          current={current}
          highlight={highlight}
          title={title}
          ariaLabel={`${name}${current ? `, current state ${current}` : ""}`}
          description={description}
          legend={legend}
          testId={testId}
          onClose={() => setOpen(false)}
        />
      )}
    </>
  );
}

function DiagramIcon() {
  return (
    <svg viewBox="0 0 16 16" className="size-4 shrink-0" fill="none" stroke="currentColor" strokeWidth="1.5" strokeLinecap="round" strokeLinejoin="round" aria-hidden="true">
      <rect x="1.5" y="2" width="5" height="3.5" rx="1" />
      <rect x="9.5" y="10.5" width="5" height="3.5" rx="1" />
      <path d="M4 5.5v3.5a1.5 1.5 0 0 0 1.5 1.5h4" />
      <path d="M8 9l1.5 1.5L8 12" />
    </svg>
  );
}
