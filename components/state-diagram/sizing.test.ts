import { describe, expect, it } from "vitest";
import {
  chooseLayout,
  DIAGRAM_FONT_PX,
  EXPANDED_ZOOM,
  fitViewport,
  fitZoom,
  hiddenShare,
  MAX_ZOOM,
  MIN_TEXT_PX,
  overflows,
  READABLE_ZOOM,
  stepZoom,
  VIEW_PADDING,
} from "@/components/state-diagram/sizing";
import { layoutDiagram, stateWidth } from "@/components/state-diagram/layout";
import { specFromMachine } from "@/components/state-diagram/from-machine";
import { deviceStatusMachines } from "@/lib/device-status";
import type { StateMachine } from "@/lib/state-machine";

const P = VIEW_PADDING;
/** A range that never enlarges: the figures below read as designed size vs shrunk. */
const UNENLARGED = { minZoom: READABLE_ZOOM, maxZoom: 1 };

describe("the readable floor", () => {
  it("keeps the diagram's text at MIN_TEXT_PX or more at the smallest zoom", () => {
    expect(DIAGRAM_FONT_PX * READABLE_ZOOM).toBeGreaterThanOrEqual(MIN_TEXT_PX - 1e-9);
    expect(EXPANDED_ZOOM.minZoom).toBe(READABLE_ZOOM);
  });
});

describe("fitZoom", () => {
  const rows: { name: string; content: { width: number; height: number }; box: { width: number; height?: number }; want: number }[] = [
    { name: "fits at zoom 1: not enlarged past maxZoom", content: { width: 400, height: 200 }, box: { width: 1000 }, want: 1 },
    { name: "a little too wide: shrunk just enough", content: { width: 1000 + 2 * P - 2 * P, height: 200 }, box: { width: 950 + 2 * P }, want: 0.95 },
    { name: "far too wide: stops at the readable floor, never below", content: { width: 2000, height: 300 }, box: { width: 600 }, want: READABLE_ZOOM },
    { name: "too tall for the box: the floor again", content: { width: 300, height: 2000 }, box: { width: 1000, height: 400 }, want: READABLE_ZOOM },
    { name: "empty diagram", content: { width: 0, height: 0 }, box: { width: 500 }, want: 1 },
  ];
  for (const r of rows) it(r.name, () => expect(fitZoom(r.content, r.box, UNENLARGED)).toBeCloseTo(r.want, 6));

  it("the expanded view may draw a small diagram larger, up to its maximum", () => {
    expect(fitZoom({ width: 200, height: 100 }, { width: 1800, height: 900 }, EXPANDED_ZOOM)).toBe(EXPANDED_ZOOM.maxZoom);
  });
});

describe("fitViewport", () => {
  it("centres a diagram that fits", () => {
    const v = fitViewport({ x: 24, y: 24, width: 400, height: 200 }, { width: 1000, height: 232 }, UNENLARGED);
    expect(v.zoom).toBe(1);
    expect(v.x + 24).toBe((1000 - 400) / 2);
    expect(v.y + 24).toBe(16);
  });

  it("a diagram too wide even at the floor is centred on the current state", () => {
    const content = { x: 0, y: 0, width: 3000, height: 100 };
    const v = fitViewport(content, { width: 1000, height: 200 }, UNENLARGED, { x: 1500, y: 50 });
    expect(v.zoom).toBe(READABLE_ZOOM);
    expect(1500 * v.zoom + v.x).toBeCloseTo(500, 6); // the focus at the box's middle
  });

  it("never pans past the diagram's edges to reach a state near one", () => {
    const content = { x: 10, y: 0, width: 3000, height: 100 };
    const box = { width: 1000, height: 200 };
    const start = fitViewport(content, box, UNENLARGED, { x: 20, y: 50 });
    expect(start.x + 10 * start.zoom).toBeCloseTo(P, 6);
    const end = fitViewport(content, box, UNENLARGED, { x: 3000, y: 50 });
    expect(end.x + 3010 * end.zoom).toBeCloseTo(1000 - P, 6);
  });

  it("without a current state, shows the start", () => {
    const v = fitViewport({ x: 0, y: 0, width: 3000, height: 100 }, { width: 1000, height: 200 }, UNENLARGED, null);
    expect(v.x).toBe(P);
  });
});

describe("chooseLayout: the direction that shows the most at a readable size", () => {
  const wide = { width: 1900, height: 330 }; // left to right
  const tall = { width: 780, height: 820 }; // top to bottom
  const rows = [
    { name: "both fit: the diagram's own direction", candidates: [{ width: 900, height: 40 }, { width: 180, height: 420 }], width: 1000, maxHeight: 760, want: 0 },
    { name: "its own direction would pan: the other fits", candidates: [wide, tall], width: 1000, maxHeight: 900, want: 1 },
    { name: "neither fits: the one that hides less", candidates: [wide, tall], width: 1000, maxHeight: 760, want: 1 },
    { name: "nearly equal: stays with its own", candidates: [{ width: 1100, height: 300 }, { width: 1100, height: 300 }], width: 1000, maxHeight: 760, want: 0 },
  ];
  for (const r of rows) it(r.name, () => expect(chooseLayout(r.candidates, r.width, r.maxHeight, UNENLARGED)).toBe(r.want));

  it("hiddenShare is 0 when the whole diagram shows", () => {
    expect(hiddenShare({ width: 500, height: 300 }, 1000, 760, UNENLARGED)).toBe(0);
    expect(hiddenShare({ width: 4000, height: 300 }, 1000, 760, UNENLARGED)).toBeGreaterThan(0.7);
  });
});

describe("overflows: the card says it pans only when part of the diagram is out of view", () => {
  const content = { x: 24, y: 24, width: 900, height: 300 };
  const rows = [
    { name: "fits at zoom 1", box: { width: 1000, height: 340 }, zoom: 1, want: false },
    { name: "zoomed in past the box", box: { width: 1000, height: 340 }, zoom: 1.25, want: true },
    { name: "too wide at the floor", box: { width: 700, height: 340 }, zoom: READABLE_ZOOM, want: true },
    { name: "too tall", box: { width: 1000, height: 200 }, zoom: 1, want: true },
  ];
  for (const r of rows) it(r.name, () => expect(overflows(content, r.box, r.zoom)).toBe(r.want));
});

describe("stepZoom", () => {
  const rows = [
    { name: "in", zoom: 1, dir: 1 as const, want: 1.25 },
    { name: "out", zoom: 1.25, dir: -1 as const, want: 1 },
    { name: "out stops at the readable floor", zoom: 1, dir: -1 as const, want: READABLE_ZOOM },
    { name: "out from the floor stays there", zoom: READABLE_ZOOM, dir: -1 as const, want: READABLE_ZOOM },
    { name: "in stops at the maximum", zoom: 2.4, dir: 1 as const, want: MAX_ZOOM },
  ];
  for (const r of rows) it(r.name, () => expect(stepZoom(r.zoom, r.dir)).toBeCloseTo(r.want, 6));
});

describe("layout", () => {
  it("sizes a state's box from the measured text, and reports where its content starts", () => {
    expect(stateWidth("Online", () => 200)).toBe(234);
    const spec = specFromMachine(deviceStatusMachines.lifecycle as StateMachine<string>);
    const narrow = layoutDiagram(spec, () => 50);
    const wide = layoutDiagram(spec, () => 150);
    expect(wide.width).toBeGreaterThan(narrow.width);
    expect(narrow.x).toBeGreaterThan(0); // dagre's margin
    for (const n of narrow.nodes) expect(n.position.x).toBeGreaterThanOrEqual(narrow.x - 1e-6);
  });

  it("the bounds hold every edge label", () => {
    const spec = specFromMachine(deviceStatusMachines.updateState as StateMachine<string>);
    const l = layoutDiagram(spec);
    for (const e of l.edges) {
      const p = e.data?.labelPosition;
      if (!p) continue;
      expect(p.x).toBeGreaterThan(l.x);
      expect(p.x).toBeLessThan(l.x + l.width);
    }
  });
});
