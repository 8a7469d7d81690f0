"use client";

import { useEffect, useRef } from "react";
import { Panel, useReactFlow, useStore } from "@xyflow/react";
import { STEP_NODE_HEIGHT, STEP_NODE_WIDTH, stepPhaseStyle, type GraphLayout, type RunNode } from "./run-graph";

const W = 160;
const H = 100;

/**
 * The minimap of a big graph, drawn on one canvas. React Flow's MiniMap renders an SVG rect per
 * node, each subscribed to the store: at 10,000 steps that is 10,000 elements to restyle and
 * 10,000 selectors to run on every frame of a pan. Here the nodes are painted once per change
 * of colours or layout, and only the viewport's frame follows the pan. Click or drag to move
 * the view there.
 */
export function CanvasMiniMap({ nodes, layout }: { nodes: RunNode[]; layout: GraphLayout }) {
  const canvas = useRef<HTMLCanvasElement>(null);
  const { setCenter, getZoom } = useReactFlow();
  const [tx, ty, zoom] = useStore((s) => s.transform);
  const paneW = useStore((s) => s.width);
  const paneH = useStore((s) => s.height);
  const scale = Math.min(W / Math.max(1, layout.width), H / Math.max(1, layout.height));
  const offX = (W - layout.width * scale) / 2;
  const offY = (H - layout.height * scale) / 2;

  useEffect(() => {
    const c = canvas.current;
    const ctx = c?.getContext("2d");
    if (!c || !ctx) return;
    const dpr = window.devicePixelRatio || 1;
    c.width = W * dpr;
    c.height = H * dpr;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, W, H);
    const w = Math.max(1, STEP_NODE_WIDTH * scale);
    const h = Math.max(1, STEP_NODE_HEIGHT * scale);
    // One fill per colour: far fewer state changes than one per node.
    const byColor = new Map<string, RunNode[]>();
    for (const n of nodes) {
      const color = stepPhaseStyle[n.data.phase].color;
      const list = byColor.get(color);
      if (list) list.push(n);
      else byColor.set(color, [n]);
    }
    for (const [color, list] of byColor) {
      ctx.fillStyle = color;
      for (const n of list) ctx.fillRect(offX + n.position.x * scale, offY + n.position.y * scale, w, h);
    }
  }, [nodes, scale, offX, offY]);

  const moveTo = (e: React.PointerEvent<HTMLDivElement>) => {
    const r = e.currentTarget.getBoundingClientRect();
    void setCenter((e.clientX - r.left - offX) / scale, (e.clientY - r.top - offY) / scale, { zoom: getZoom() });
  };
  // The viewport in flow coordinates, then in the minimap's.
  const view = { x: -tx / zoom, y: -ty / zoom, w: paneW / zoom, h: paneH / zoom };
  const frame = {
    left: Math.max(0, offX + view.x * scale),
    top: Math.max(0, offY + view.y * scale),
    right: Math.min(W, offX + (view.x + view.w) * scale),
    bottom: Math.min(H, offY + (view.y + view.h) * scale),
  };

  return (
    <Panel position="bottom-right">
      <div
        className="relative cursor-pointer overflow-hidden rounded border border-slate-200 bg-white/90 shadow-sm"
        style={{ width: W, height: H }}
        data-testid="run-view-minimap"
        role="img"
        aria-label="Minimap: click to move the view"
        onPointerDown={(e) => {
          e.currentTarget.setPointerCapture(e.pointerId);
          moveTo(e);
        }}
        onPointerMove={(e) => {
          if (e.buttons & 1) moveTo(e);
        }}
      >
        <canvas ref={canvas} style={{ width: W, height: H }} className="block" />
        {frame.right > frame.left && frame.bottom > frame.top && (
          <div
            className="pointer-events-none absolute border border-brand-600 bg-brand-500/10"
            style={{ left: frame.left, top: frame.top, width: frame.right - frame.left, height: frame.bottom - frame.top }}
          />
        )}
      </div>
    </Panel>
  );
}
