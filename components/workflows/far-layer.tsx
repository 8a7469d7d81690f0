"use client";

import { useEffect, useRef } from "react";
import { useStore, type Edge } from "@xyflow/react";
import { CRITICAL_COLOR, STEP_NODE_HEIGHT, STEP_NODE_WIDTH, stepPhaseStyle, type GraphLayout, type RunNode } from "./run-graph";

/**
 * A big graph zoomed far out, painted on one canvas (the nodes are hidden from React Flow
 * meanwhile, run-view.tsx): every node in view as a box in its phase's colour, every edge as a
 * line, the critical path's in violet. Thousands of DOM nodes and SVG paths cost seconds to
 * draw; this is a few ms a frame at 10,000 steps. The layer takes no pointer events: drag and
 * zoom reach the pane beneath, and a click is hit-tested by the run view.
 */
export function FarLayer({ nodes, edges, layout }: { nodes: RunNode[]; edges: Edge[]; layout: GraphLayout }) {
  const canvas = useRef<HTMLCanvasElement>(null);
  const [tx, ty, zoom] = useStore((s) => s.transform);
  const width = useStore((s) => s.width);
  const height = useStore((s) => s.height);

  useEffect(() => {
    const c = canvas.current;
    const ctx = c?.getContext("2d");
    if (!c || !ctx || width <= 0 || height <= 0) return;
    const dpr = window.devicePixelRatio || 1;
    if (c.width !== Math.round(width * dpr) || c.height !== Math.round(height * dpr)) {
      c.width = Math.round(width * dpr);
      c.height = Math.round(height * dpr);
    }
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.clearRect(0, 0, c.width, c.height);
    ctx.setTransform(dpr * zoom, 0, 0, dpr * zoom, dpr * tx, dpr * ty);
    // The view in flow coordinates, to skip what is outside it.
    const x0 = -tx / zoom;
    const y0 = -ty / zoom;
    const x1 = x0 + width / zoom;
    const y1 = y0 + height / zoom;
    const inView = (p: { x: number; y: number }) => p.x + STEP_NODE_WIDTH >= x0 && p.x <= x1 && p.y + STEP_NODE_HEIGHT >= y0 && p.y <= y1;

    const line = (e: Edge) => {
      const s = layout.positions.get(e.source);
      const t = layout.positions.get(e.target);
      if (!s || !t || (!inView(s) && !inView(t))) return;
      ctx.moveTo(s.x + STEP_NODE_WIDTH, s.y + STEP_NODE_HEIGHT / 2);
      ctx.lineTo(t.x, t.y + STEP_NODE_HEIGHT / 2);
    };
    ctx.beginPath();
    for (const e of edges) if (e.className !== "critical") line(e);
    ctx.strokeStyle = "#cbd5e1";
    ctx.lineWidth = 1 / zoom;
    ctx.stroke();
    ctx.beginPath();
    for (const e of edges) if (e.className === "critical") line(e);
    ctx.strokeStyle = CRITICAL_COLOR;
    ctx.lineWidth = 3 / zoom;
    ctx.stroke();

    let drawn = 0;
    const byColor = new Map<string, RunNode[]>();
    for (const n of nodes) {
      if (!inView(n.position)) continue;
      const color = stepPhaseStyle[n.data.phase].color;
      const list = byColor.get(color);
      if (list) list.push(n);
      else byColor.set(color, [n]);
      drawn++;
    }
    for (const [color, list] of byColor) {
      ctx.fillStyle = color;
      for (const n of list) ctx.fillRect(n.position.x, n.position.y, STEP_NODE_WIDTH, STEP_NODE_HEIGHT);
    }
    ctx.strokeStyle = CRITICAL_COLOR;
    ctx.lineWidth = 4 / zoom;
    for (const n of nodes) if (n.data.critical && inView(n.position)) ctx.strokeRect(n.position.x, n.position.y, STEP_NODE_WIDTH, STEP_NODE_HEIGHT);
    c.dataset.drawn = String(drawn);
  }, [nodes, edges, layout, tx, ty, zoom, width, height]);

  return <canvas ref={canvas} data-testid="run-view-far" className="pointer-events-none absolute inset-0 z-[4]" style={{ width, height }} aria-hidden />;
}
