import type { Point } from "./types";

/** A B-spline through the layout's route points (d3's curveBasis). */
export function basisPath(points: readonly Point[]): string {
  const [first, second] = points;
  if (!first || !second) return "";
  if (points.length === 2) return `M${first.x},${first.y}L${second.x},${second.y}`;
  let d = `M${first.x},${first.y}`;
  let x0 = first.x;
  let y0 = first.y;
  let x1 = second.x;
  let y1 = second.y;
  d += `L${(5 * x0 + x1) / 6},${(5 * y0 + y1) / 6}`;
  for (let i = 2; i < points.length; i++) {
    const p = points[i] as Point;
    d += `C${(2 * x0 + x1) / 3},${(2 * y0 + y1) / 3} ${(x0 + 2 * x1) / 3},${(y0 + 2 * y1) / 3} ${(x0 + 4 * x1 + p.x) / 6},${(y0 + 4 * y1 + p.y) / 6}`;
    x0 = x1;
    y0 = y1;
    x1 = p.x;
    y1 = p.y;
  }
  d += `C${(2 * x0 + x1) / 3},${(2 * y0 + y1) / 3} ${(x0 + 2 * x1) / 3},${(y0 + 2 * y1) / 3} ${x1},${y1}`;
  return d;
}
