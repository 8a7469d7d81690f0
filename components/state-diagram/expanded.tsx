"use client";

import { useEffect, useMemo, useRef, type ReactNode } from "react";
import { DiagramView, TOOLBAR_ROW_PX } from "./diagram-view";
import { CloseIcon, ToolButton } from "./controls";
import { chooseLayout, EXPANDED_ZOOM } from "./sizing";
import { useBoxSize } from "./use-box-size";
import type { DiagramLayout, Highlight } from "./types";

/**
 * The diagram over the whole window (a modal <dialog>: Escape and the focus trap come with
 * it), fitted to it, with zoom, fit and pan; the wheel zooms here.
 */
export function ExpandedDiagram({
  layouts,
  current,
  highlight,
  title,
  ariaLabel,
  description,
  legend,
  testId,
  onClose,
}: {
  layouts: DiagramLayout[];
  current: string | null;
  highlight: Highlight;
  title: string;
  ariaLabel: string;
  description?: ReactNode;
  legend?: ReactNode;
  testId: string | undefined;
  onClose: () => void;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  const body = useRef<HTMLDivElement>(null);
  const { width, height } = useBoxSize(body);

  useEffect(() => {
    const d = dialog.current;
    if (d && !d.open) d.showModal();
  }, []);

  const drawn = useMemo(() => {
    const canvas = height - TOOLBAR_ROW_PX;
    if (width <= 0 || canvas <= 0) return null;
    return { layout: layouts[chooseLayout(layouts, width, canvas, EXPANDED_ZOOM)] as DiagramLayout, box: { width, height: canvas } };
  }, [layouts, width, height]);

  return (
    <dialog
      ref={dialog}
      aria-label={`${title} diagram`}
      data-testid={testId}
      data-current={current ?? ""}
      onCancel={(e) => {
        e.preventDefault();
        onClose();
      }}
      className="m-auto h-[calc(100vh-2rem)] max-h-none w-[calc(100vw-2rem)] max-w-none overflow-hidden rounded-xl bg-white p-0 text-slate-900 shadow-2xl ring-1 ring-slate-900/10"
    >
      <div className="flex h-full flex-col">
        <div className="border-b border-slate-200 px-5 py-3">
          <h2 className="text-base font-semibold">{title}</h2>
          {description && <p className="mt-0.5 text-sm text-slate-600">{description}</p>}
        </div>
        <div ref={body} className="relative min-h-0 flex-1">
          {drawn && (
            <DiagramView
              layout={drawn.layout}
              box={drawn.box}
              range={EXPANDED_ZOOM}
              current={current}
              highlight={highlight}
              ariaLabel={ariaLabel}
              name={`${title} diagram`}
              hint="Drag to pan; the wheel and the buttons zoom."
              extraButtons={
                <ToolButton label="Close diagram" onClick={onClose}>
                  <CloseIcon />
                </ToolButton>
              }
            />
          )}
        </div>
        {legend && <div className="border-t border-slate-200 px-5 py-2">{legend}</div>}
      </div>
    </dialog>
  );
}
