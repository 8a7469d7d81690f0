"use client";

import { useMemo, useRef, useState } from "react";
import { layoutDiagram } from "./layout";
import { browserTextMeasure } from "./measure";
import { DiagramView, TOOLBAR_ROW_PX } from "./diagram-view";
import { ExpandIcon, ToolButton } from "./controls";
import { ExpandedDiagram } from "./expanded";
import { CARD_ZOOM, cardHeight, chooseLayout } from "./sizing";
import { useBoxSize } from "./use-box-size";
import type { DiagramLayout, DiagramSpec, Highlight } from "./types";

/** The diagram laid out both ways, its own direction first: the box picks whichever shows more. */
export function useLayouts(spec: DiagramSpec): DiagramLayout[] {
  return useMemo(() => {
    const measure = browserTextMeasure();
    const own = spec.direction ?? "LR";
    return [layoutDiagram({ ...spec, direction: own }, measure), layoutDiagram({ ...spec, direction: own === "LR" ? "TB" : "LR" }, measure)];
  }, [spec]);
}

export interface StateDiagramProps {
  spec: DiagramSpec;
  /** The state to highlight, or null when none applies. */
  current: string | null;
  highlight?: Highlight;
  /** What the diagram is ("Device status"): the expanded view's title, the toolbar's name. */
  title: string;
  ariaLabel: string;
  testId?: string;
  /** The tallest the card's box may grow before the diagram pans up and down. */
  maxHeight?: number;
}

/**
 * A read-only, live state diagram in a card: the layout is computed once per spec, the
 * highlight follows `current`. Its box is as tall as the diagram at a readable zoom
 * (sizing.ts); zoom, fit and pan in place, or expand it to the whole window.
 */
export function StateDiagram({ spec, current, highlight = "blue", title, ariaLabel, testId, maxHeight = 760 }: StateDiagramProps) {
  const ref = useRef<HTMLDivElement>(null);
  const { width } = useBoxSize(ref);
  const [expanded, setExpanded] = useState(false);
  const layouts = useLayouts(spec);

  const drawn = useMemo(() => {
    if (width <= 0) return null;
    const layout = layouts[chooseLayout(layouts, width, maxHeight, CARD_ZOOM)] as DiagramLayout;
    return { layout, box: { width, height: cardHeight(layout, width, { ...CARD_ZOOM, minHeight: 72, maxHeight }) } };
  }, [layouts, width, maxHeight]);

  return (
    <>
      <div ref={ref} className="w-full" data-testid={testId} data-current={current ?? ""} data-direction={drawn ? directionOf(spec, drawn.layout, layouts) : undefined}>
        <div style={{ minHeight: drawn ? undefined : 160 + TOOLBAR_ROW_PX }}>
          {drawn && (
            <DiagramView
              layout={drawn.layout}
              box={drawn.box}
              range={CARD_ZOOM}
              current={current}
              highlight={highlight}
              ariaLabel={ariaLabel}
              name={`${title} diagram`}
              extraButtons={
                <ToolButton label="Expand diagram" onClick={() => setExpanded(true)}>
                  <ExpandIcon />
                </ToolButton>
              }
            />
          )}
        </div>
      </div>
      {/* Beside the card's box, not in it: its texts and buttons are not the card's. */}
      {expanded && (
        <ExpandedDiagram layouts={layouts} current={current} highlight={highlight} title={title} ariaLabel={ariaLabel} testId={testId ? `${testId}-expanded` : undefined} onClose={() => setExpanded(false)} />
      )}
    </>
  );
}

function directionOf(spec: DiagramSpec, layout: DiagramLayout, layouts: DiagramLayout[]): "LR" | "TB" {
  const own = spec.direction ?? "LR";
  return layout === layouts[0] ? own : own === "LR" ? "TB" : "LR";
}
