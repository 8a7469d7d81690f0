/**
 * What makes a laid-out state diagram hard to read, counted: moves whose lines cross, a line
 * drawn through another move's label, labels over each other. Each table the console draws
 * names the order (layoutDiagram's) that draws it with none; diagram-specs.test.ts holds them to it.
 */
import { edgeLabelText, EDGE_LABEL_HEIGHT, estimateText, layoutDiagram, type TextMeasure } from "./layout";
import type { DiagramLayout, DiagramSpec, Point } from "./types";

export interface LayoutFaults {
  /** Pairs of line segments of two different moves that cross. */
  crossings: number;
  /** A move's line passing through another move's label. */
  throughLabels: number;
  /** Two labels over each other. */
  labelOverlaps: number;
}

type Segment = readonly [Point, Point];
interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

const side = (p: Point, q: Point, r: Point) => (q.x - p.x) * (r.y - p.y) - (q.y - p.y) * (r.x - p.x);

/** Whether two segments cross at a point inside both (touching ends do not count). */
function cross([a, b]: Segment, [c, d]: Segment): boolean {
  const d1 = side(c, d, a);
  const d2 = side(c, d, b);
  const d3 = side(a, b, c);
  const d4 = side(a, b, d);
  return d1 * d2 < 0 && d3 * d4 < 0;
}

/** Whether a segment passes through a box's inside (Liang–Barsky clipping). */
function through([a, b]: Segment, box: Box): boolean {
  let t0 = 0;
  let t1 = 1;
  const dx = b.x - a.x;
  const dy = b.y - a.y;
  const edges: [number, number][] = [
    [-dx, a.x - box.x],
    [dx, box.x + box.width - a.x],
    [-dy, a.y - box.y],
    [dy, box.y + box.height - a.y],
  ];
  for (const [p, q] of edges) {
    if (p === 0) {
      if (q <= 0) return false;
      continue;
    }
    const t = q / p;
    if (p < 0) t0 = Math.max(t0, t);
    else t1 = Math.min(t1, t);
    if (t0 >= t1) return false;
  }
  return true;
}

const overlap = (a: Box, b: Box) => a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;

/** The faults of a layout; `measure` must be the one it was laid out with (label sizes). */
export function layoutFaults(layout: DiagramLayout, measure: TextMeasure = estimateText): LayoutFaults {
  const routed = layout.edges.filter((e) => e.data?.points);
  const segments = routed.map((e) => {
    const p = e.data!.points!;
    return p.slice(1).map((q, i) => [p[i]!, q] as const);
  });
  const labels = routed.map((e): Box | null => {
    const text = edgeLabelText(e.data!.label, e.data!.by);
    const at = e.data!.labelPosition;
    if (!text || !at) return null;
    const width = Math.ceil(measure(text, "normal") + 12);
    return { x: at.x - width / 2, y: at.y - EDGE_LABEL_HEIGHT / 2, width, height: EDGE_LABEL_HEIGHT };
  });
  const faults: LayoutFaults = { crossings: 0, throughLabels: 0, labelOverlaps: 0 };
  for (let i = 0; i < routed.length; i++) {
    for (let j = 0; j < routed.length; j++) {
      if (i === j) continue;
      const label = labels[j];
      if (label && segments[i]!.some((s) => through(s, label))) faults.throughLabels++;
      if (j < i) continue;
      for (const a of segments[i]!) for (const b of segments[j]!) if (cross(a, b)) faults.crossings++;
      const other = labels[i];
      if (label && other && overlap(label, other)) faults.labelOverlaps++;
    }
  }
  return faults;
}

export const faultCount = (f: LayoutFaults) => f.crossings + f.throughLabels + f.labelOverlaps;

/**
 * The order (layoutDiagram's) in [0, tries) that draws the table in its own direction with the
 * fewest faults, the lowest on a tie: what a table's `order` should be.
 */
export function bestOrder(spec: DiagramSpec, measure: TextMeasure = estimateText, tries = 300): { order: number; faults: LayoutFaults } {
  let best: { order: number; faults: LayoutFaults } | null = null;
  for (let order = 0; order < tries; order++) {
    const faults = layoutFaults(layoutDiagram(spec, measure, order), measure);
    if (!best || faultCount(faults) < faultCount(best.faults)) best = { order, faults };
    if (faultCount(faults) === 0) break;
  }
  return best!;
}
