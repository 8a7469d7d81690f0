"use client";

/**
 * The run view's layout as a hook (issue 9): a small graph is laid out at once on the page; a
 * bigger one in a Web Worker (layout.worker.ts) so the page stays responsive, the previous
 * layout staying on screen meanwhile. Each finished layout leaves a `drover:layout` performance
 * measure (the bench reads it) with the worker's own time in its detail.
 */
import { useEffect, useMemo, useState } from "react";
import { layoutGraph, type GraphLayout, type LayoutGraph } from "./graph-layout";
import type { LayoutRequest, LayoutResponse } from "./layout.worker";

/** Nodes and edges up to which the page lays the graph out itself (dagre: ≈ 50 ms at most). */
export const SYNC_LAYOUT_MAX_SIZE = 60;

type Keyed = LayoutGraph & { key: string };

export interface GraphLayoutState<G extends Keyed> {
  /** The latest finished layout, and the graph it is for (not `graph` while one is pending). */
  layout: GraphLayout | null;
  graph: G | null;
  /** A layout of `graph` is being computed. */
  pending: boolean;
}

let worker: Worker | null | undefined;
let nextId = 1;
const waiting = new Map<number, (r: LayoutResponse) => void>();

/** One worker for the page, created on first use; null where workers are not available. */
function layoutWorker(): Worker | null {
  if (worker !== undefined) return worker;
  try {
    worker = new Worker(new URL("./layout.worker.ts", import.meta.url), { type: "module", name: "drover-layout" });
    worker.onmessage = (e: MessageEvent<LayoutResponse>) => {
      waiting.get(e.data.id)?.(e.data);
      waiting.delete(e.data.id);
    };
    worker.onerror = () => {
      // A broken worker (failed to load): lay out on the page from now on.
      worker?.terminate();
      worker = null;
      for (const [id, done] of waiting) done({ id, positions: [], width: 0, height: 0, ms: NaN });
      waiting.clear();
    };
  } catch {
    worker = null;
  }
  return worker;
}

// Started with the page's code, so it has loaded and compiled by the time the workflow's spec arrives.
if (typeof window !== "undefined") layoutWorker();

function onPage(graph: LayoutGraph): LayoutResponse {
  const t0 = performance.now();
  const l = layoutGraph(graph);
  return { id: 0, positions: [...l.positions], width: l.width, height: l.height, ms: performance.now() - t0 };
}

/** Lays `graph` out in the worker (or on the page without one); `ms` is the layout's own time. */
function requestLayout(graph: LayoutGraph): { promise: Promise<LayoutResponse>; cancel: () => void } {
  const w = layoutWorker();
  const id = nextId++;
  if (!w) {
    let cancelled = false;
    const promise = new Promise<LayoutResponse>((resolve) => setTimeout(() => !cancelled && resolve(onPage(graph)), 0));
    return { promise, cancel: () => (cancelled = true) };
  }
  const promise = new Promise<LayoutResponse>((resolve) => {
    waiting.set(id, (r) => resolve(r.positions.length || graph.nodes.length === 0 ? r : onPage(graph)));
  });
  const request: LayoutRequest = { id, graph: { nodes: graph.nodes, edges: graph.edges } };
  w.postMessage(request);
  return { promise, cancel: () => waiting.delete(id) };
}

function toLayout(r: LayoutResponse, graph: LayoutGraph): GraphLayout {
  return { positions: new Map(r.positions), edges: graph.edges, width: r.width, height: r.height };
}

export function useGraphLayout<G extends Keyed>(graph: G): GraphLayoutState<G> {
  const sync = graph.nodes.length + graph.edges.length <= SYNC_LAYOUT_MAX_SIZE;
  // eslint-disable-next-line react-hooks/exhaustive-deps -- laid out again only when the drawn shape changes
  const syncLayout = useMemo(() => (sync ? layoutGraph(graph) : null), [sync, graph.key]);
  const [done, setDone] = useState<{ key: string; graph: G; layout: GraphLayout } | null>(null);

  useEffect(() => {
    if (sync) return;
    const t0 = performance.now();
    const { promise, cancel } = requestLayout(graph);
    let live = true;
    void promise.then((r) => {
      if (!live) return;
      performance.measure("drover:layout", { start: t0, end: performance.now(), detail: { nodes: graph.nodes.length, edges: graph.edges.length, layoutMs: r.ms } });
      setDone({ key: graph.key, graph, layout: toLayout(r, graph) });
    });
    return () => {
      live = false;
      cancel();
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps -- laid out again only when the drawn shape changes
  }, [sync, graph.key]);

  if (syncLayout) return { layout: syncLayout, graph, pending: false };
  return { layout: done?.layout ?? null, graph: done?.graph ?? null, pending: done?.key !== graph.key };
}
