/**
 * The run view's layout off the main thread (issue 9): a big graph's layout takes tens to
 * hundreds of ms, during which the page would freeze. One request in, one layout out, tagged with
 * the request's id so the page keeps only the latest.
 */
import { layoutGraph, type LayoutGraph } from "./graph-layout";

export interface LayoutRequest {
  id: number;
  graph: LayoutGraph;
}
export interface LayoutResponse {
  id: number;
  positions: [string, { x: number; y: number }][];
  width: number;
  height: number;
  /** Time spent laying out, in the worker. */
  ms: number;
}

const scope = self as unknown as { onmessage: ((e: MessageEvent<LayoutRequest>) => void) | null; postMessage: (m: LayoutResponse) => void };
scope.onmessage = (e) => {
  const t0 = performance.now();
  const layout = layoutGraph(e.data.graph);
  scope.postMessage({ id: e.data.id, positions: [...layout.positions], width: layout.width, height: layout.height, ms: performance.now() - t0 });
};
