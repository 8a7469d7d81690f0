"use client";

import { useMemo, type ReactNode } from "react";
import { layoutDiagram } from "./layout";
import { browserTextMeasure } from "./measure";
import { ExpandedDiagram } from "./expanded";
import { DiagramLegend, type LegendOptions } from "./legend";
import type { DiagramLayout, DiagramSpec, Highlight } from "./types";

/** The diagram laid out both ways, its own direction first: the window picks whichever shows more. */
function useLayouts(spec: DiagramSpec): DiagramLayout[] {
  return useMemo(() => {
    const measure = browserTextMeasure();
    const own = spec.direction ?? "LR";
    return [layoutDiagram({ ...spec, direction: own }, measure), layoutDiagram({ ...spec, direction: own === "LR" ? "TB" : "LR" }, measure)];
  }, [spec]);
}

export interface DiagramDialogProps {
  spec: DiagramSpec;
  current: string | null;
  highlight: Highlight;
  title: string;
  ariaLabel: string;
  /** Said under the title: what the current state means. */
  description?: ReactNode;
  legend?: LegendOptions;
  testId: string | undefined;
  onClose: () => void;
}

/**
 * A state table laid out and drawn over the window, fitted to it. Loaded only when an operator
 * opens a diagram (DiagramButton): React Flow and dagre stay out of every page's first load.
 */
export default function DiagramDialog({ spec, legend, ...rest }: DiagramDialogProps) {
  const layouts = useLayouts(spec);
  return <ExpandedDiagram layouts={layouts} legend={<DiagramLegend {...legend} />} {...rest} />;
}
