"use client";

import type { XY } from "@/lib/workflow-editor";

/**
 * Where the operator put each step, kept in this browser per workflow: the spec has no room
 * for positions (the server's schema is strict), and a saved workflow opened again should look
 * as it was drawn. Steps it does not know are laid out (placeMissing).
 */
const key = (name: string) => `drover.workflow-editor.positions.${name}`;

export function loadPositions(name: string, steps: Record<string, unknown>): Record<string, XY> {
  if (typeof window === "undefined") return {};
  try {
    const stored = JSON.parse(window.localStorage.getItem(key(name)) ?? "{}") as Record<string, XY>;
    const out: Record<string, XY> = {};
    for (const s of Object.keys(steps)) {
      const p = stored[s];
      if (p && Number.isFinite(p.x) && Number.isFinite(p.y)) out[s] = { x: p.x, y: p.y };
    }
    // Only a complete set: a partial one would mix a drawing with a layout.
    return Object.keys(out).length === Object.keys(steps).length ? out : {};
  } catch {
    return {};
  }
}

export function savePositions(name: string, positions: Record<string, XY>): void {
  try {
    window.localStorage.setItem(key(name), JSON.stringify(positions));
  } catch {
    // Storage full or disabled: the next visit lays the steps out instead.
  }
}
