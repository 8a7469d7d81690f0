/**
 * Lays a state diagram out with dagre: a pure function from spec to positioned nodes and
 * routed edges. Composite groups (the seed's `state Known { … }`) become dagre clusters and
 * are drawn as boxes behind their states. Where a table lists a move from every state of one
 * group to every state of another (the seed's `Known --> Unknown`), it is drawn as one edge
 * between the boxes, as the seed draws it, instead of a dozen crossing lines.
 */
import dagre from "@dagrejs/dagre";
import type { DiagramLayout, DiagramNode, DiagramSpec, GroupNode, Point, StateNode, TransitionEdge } from "./types";

export const STATE_HEIGHT = 40;
const START_SIZE = 14;
export const EDGE_LABEL_HEIGHT = 20;

/**
 * How wide a text is drawn at DIAGRAM_FONT_PX (sizing.ts), in pixels. The browser passes one
 * that measures with the page's font (measure.ts); the estimate is for tests and the server.
 */
export type TextMeasure = (text: string, weight: "normal" | "medium") => number;
export const estimateText: TextMeasure = (text, weight) => text.length * (weight === "medium" ? 8 : 7.6);

export const stateNodeId = (state: string) => `s:${state}`;
export const groupNodeId = (key: string) => `g:${key}`;
const START_ID = "start";

export function stateWidth(label: string, measure: TextMeasure = estimateText): number {
  return Math.max(92, Math.ceil(measure(label, "medium") + 34));
}

/** One end of a drawn edge: a state, or a group standing for all its states. */
export type EdgeEnd = { kind: "state"; id: string } | { kind: "group"; key: string };

export interface EdgePlan {
  id: string;
  from: EdgeEnd;
  to: EdgeEnd;
  /** The states each end stands for. */
  fromStates: string[];
  toStates: string[];
  label: string;
  by: string;
  bidirectional: boolean;
  muted: boolean;
}

/** The text an edge label shows: the move, then who makes it. */
export function edgeLabelText(label: string, by: string): string {
  return by ? (label ? `${label} · ${by}` : by) : label;
}

const pairKey = (a: string, b: string) => `${a}\u0000${b}`;

/** Group key ("Known/PoweredOn") → every state inside it, nested ones included. */
export function groupMembers(spec: DiagramSpec): Map<string, string[]> {
  const members = new Map<string, string[]>();
  for (const s of spec.states) {
    const path = s.groups ?? [];
    for (let i = 1; i <= path.length; i++) {
      const key = path.slice(0, i).join("/");
      members.set(key, [...(members.get(key) ?? []), s.id]);
    }
  }
  return members;
}

/**
 * Which lines to draw. Unlabeled moves that connect every state of a group with every state
 * of another end collapse into one group edge; reciprocal unlabeled pairs become one line
 * with two arrows. Labeled moves are always drawn one by one.
 */
export function planEdges(spec: DiagramSpec): EdgePlan[] {
  const unsupported = new Set(spec.states.filter((s) => s.notYetSupported).map((s) => s.id));
  const unlabeled = new Set(spec.transitions.filter((t) => !t.label && !t.by).map((t) => pairKey(t.from, t.to)));
  const used = new Set<string>();
  const plans: EdgePlan[] = [];
  const members = groupMembers(spec);

  // Candidate ends, biggest first: groups with 2+ states, then single states.
  const groupEnds = [...members.entries()]
    .filter(([, m]) => m.length >= 2)
    .sort((a, b) => b[1].length - a[1].length || a[0].localeCompare(b[0]))
    .map(([key, m]) => ({ end: { kind: "group", key } as EdgeEnd, states: m }));
  const stateEnds = spec.states.map((s) => ({ end: { kind: "state", id: s.id } as EdgeEnd, states: [s.id] }));
  const covers = (from: string[], to: string[]) => from.every((a) => to.every((b) => unlabeled.has(pairKey(a, b)) && !used.has(pairKey(a, b))));
  const markUsed = (from: string[], to: string[]) => from.forEach((a) => to.forEach((b) => used.add(pairKey(a, b))));
  const endId = (e: EdgeEnd) => (e.kind === "state" ? e.id : `[${e.key}]`);

  for (const g of groupEnds) {
    for (const other of [...groupEnds, ...stateEnds]) {
      if (other.states.some((s) => g.states.includes(s))) continue; // nested or overlapping
      const out = covers(g.states, other.states);
      const back = covers(other.states, g.states);
      if (!out && !back) continue;
      if (out) markUsed(g.states, other.states);
      if (back) markUsed(other.states, g.states);
      const [from, to] = out ? [g, other] : [other, g];
      plans.push({
        id: `t:${endId(from.end)}->${endId(to.end)}`,
        from: from.end,
        to: to.end,
        fromStates: from.states,
        toStates: to.states,
        label: "",
        by: "",
        bidirectional: out && back,
        muted: [...from.states, ...to.states].every((s) => unsupported.has(s)),
      });
    }
  }

  // Two moves between the same states (LOST: missing from the heartbeat, or the device
  // revoked; a rollout paused by the server or an operator) are one line whose label names
  // both: React Flow keys edges by id, and the second was not drawn at all.
  const byPair = new Map<string, EdgePlan>();
  for (const t of spec.transitions) {
    const k = pairKey(t.from, t.to);
    const drawn = byPair.get(k);
    if (drawn && t.label && !drawn.bidirectional) {
      // "not reported / revoked · server"; "auto-pause · server / pause · operator".
      const by = t.by ?? "";
      drawn.label = `${drawn.by === by ? drawn.label : edgeLabelText(drawn.label, drawn.by)} / ${t.label}`;
      drawn.by = by;
    }
    if (used.has(k)) continue;
    used.add(k);
    const reverse = pairKey(t.to, t.from);
    const bidirectional = !t.label && !t.by && unlabeled.has(reverse) && !used.has(reverse);
    if (bidirectional) used.add(reverse);
    const plan: EdgePlan = {
      id: `t:${t.from}->${t.to}`,
      from: { kind: "state", id: t.from },
      to: { kind: "state", id: t.to },
      fromStates: [t.from],
      toStates: [t.to],
      label: t.label ?? "",
      by: t.by ?? "",
      bidirectional,
      muted: unsupported.has(t.from) || unsupported.has(t.to),
    };
    byPair.set(k, plan);
    plans.push(plan);
  }
  return plans;
}

interface Rect {
  x: number;
  y: number;
  width: number;
  height: number;
}

const inside = (p: Point, r: Rect) => p.x > r.x && p.x < r.x + r.width && p.y > r.y && p.y < r.y + r.height;

/** Where the segment a→b crosses the border of r (a and b on opposite sides). */
function crossing(a: Point, b: Point, r: Rect): Point {
  let lo = 0;
  let hi = 1;
  const aIn = inside(a, r);
  for (let i = 0; i < 30; i++) {
    const mid = (lo + hi) / 2;
    const p = { x: a.x + (b.x - a.x) * mid, y: a.y + (b.y - a.y) * mid };
    if (inside(p, r) === aIn) lo = mid;
    else hi = mid;
  }
  return { x: a.x + (b.x - a.x) * hi, y: a.y + (b.y - a.y) * hi };
}

const center = (r: Rect): Point => ({ x: r.x + r.width / 2, y: r.y + r.height / 2 });

/** Trims a route so that it starts on the border of `from` and ends on the border of `to`. */
export function clipRoute(points: Point[], from: Rect, to: Rect): Point[] {
  const route = [center(from), ...points, center(to)];
  let start: Point | null = null;
  let startIndex = 0;
  for (let i = 0; i < route.length - 1; i++) {
    const a = route[i] as Point;
    const b = route[i + 1] as Point;
    if (inside(a, from) && !inside(b, from)) {
      start = crossing(a, b, from);
      startIndex = i + 1;
      break;
    }
  }
  let end: Point | null = null;
  let endIndex = route.length - 1;
  for (let i = route.length - 1; i > 0; i--) {
    const a = route[i - 1] as Point;
    const b = route[i] as Point;
    if (!inside(a, to) && inside(b, to)) {
      end = crossing(a, b, to);
      endIndex = i - 1;
      break;
    }
  }
  if (!start || !end || endIndex < startIndex - 1) {
    // Boxes that touch or overlap: a straight line between their centres, clipped.
    const a = center(from);
    const b = center(to);
    return [inside(b, from) ? a : crossing(a, b, from), inside(a, to) ? b : crossing(b, a, to)];
  }
  return [start, ...route.slice(startIndex, endIndex + 1), end];
}

/** The identity for seed 0, else a shuffle fixed by the seed (the same on every machine). */
function seededShuffle(seed: number): <T>(items: readonly T[]) => readonly T[] {
  if (seed === 0) return (items) => items;
  return (items) => {
    let state = (seed * 7919 + 1) % 2147483647;
    const next = () => (state = (state * 16807) % 2147483647) / 2147483647;
    return items
      .map((item) => [next(), item] as const)
      .sort((a, b) => a[0] - b[0])
      .map(([, item]) => item);
  };
}

/**
 * Lays the table out. `order` (the spec's, else 0): 0 gives dagre the states and moves in the
 * table's order, another number a shuffle of them seeded by it. dagre's crossing reduction is a
 * heuristic that starts from that order, so another one can draw the same table with fewer
 * crossings (faults.ts; each console table names its own).
 */
export function layoutDiagram(spec: DiagramSpec, measure: TextMeasure = estimateText, order = spec.order ?? 0): DiagramLayout {
  const shuffle = seededShuffle(order);
  const g = new dagre.graphlib.Graph({ compound: true, multigraph: true });
  g.setGraph({ rankdir: spec.direction ?? "LR", nodesep: 30, ranksep: 48, edgesep: 26, marginx: 24, marginy: 24 });
  g.setDefaultEdgeLabel(() => ({}));

  const members = groupMembers(spec);
  for (const key of members.keys()) {
    g.setNode(groupNodeId(key), {});
    const parent = key.includes("/") ? key.slice(0, key.lastIndexOf("/")) : null;
    if (parent) g.setParent(groupNodeId(key), groupNodeId(parent));
  }

  for (const s of shuffle(spec.states)) {
    g.setNode(stateNodeId(s.id), { width: stateWidth(s.label ?? s.id, measure), height: STATE_HEIGHT });
    if (s.groups?.length) g.setParent(stateNodeId(s.id), groupNodeId(s.groups.join("/")));
  }

  const known = new Set(spec.states.map((s) => s.id));
  const initial = spec.initial !== undefined && known.has(spec.initial) ? spec.initial : null;
  if (initial) {
    g.setNode(START_ID, { width: START_SIZE, height: START_SIZE });
    g.setEdge(START_ID, stateNodeId(initial), {}, "start");
  }

  const plans = planEdges(spec).filter((p) => p.fromStates.every((s) => known.has(s)) && p.toStates.every((s) => known.has(s)));
  const labelWidths = new Map<string, number>();
  for (const p of shuffle(plans)) {
    // dagre routes between states; a group edge is laid out between one state of each end.
    const text = edgeLabelText(p.label, p.by);
    if (text) labelWidths.set(p.id, Math.ceil(measure(text, "normal") + 12));
    const label = text ? { width: labelWidths.get(p.id), height: EDGE_LABEL_HEIGHT, labelpos: "c" as const } : {};
    g.setEdge(stateNodeId(p.fromStates[0] as string), stateNodeId(p.toStates[0] as string), label, p.id);
  }

  dagre.layout(g);

  // How deep each group nests: outer boxes are drawn behind inner ones.
  const innerLevels = (key: string) => Math.max(0, ...[...members.keys()].filter((k) => k.startsWith(`${key}/`)).map((k) => k.split("/").length - key.split("/").length));

  const rects = new Map<string, Rect>();
  const nodes: DiagramNode[] = [];
  const bounds = { minX: Infinity, minY: Infinity, maxX: -Infinity, maxY: -Infinity };
  const grow = (r: Rect) => {
    bounds.minX = Math.min(bounds.minX, r.x);
    bounds.minY = Math.min(bounds.minY, r.y);
    bounds.maxX = Math.max(bounds.maxX, r.x + r.width);
    bounds.maxY = Math.max(bounds.maxY, r.y + r.height);
  };

  // Outer groups first, so they render behind inner ones.
  const keys = [...members.keys()].sort((a, b) => a.split("/").length - b.split("/").length);
  for (const key of keys) {
    const n = g.node(groupNodeId(key));
    if (!n || n.x === undefined || n.y === undefined) continue;
    // dagre's cluster box already keeps a margin around its states; the label sits in it.
    const levels = innerLevels(key);
    const rect = { x: n.x - n.width / 2, y: n.y - n.height / 2, width: n.width, height: n.height };
    rects.set(groupNodeId(key), rect);
    grow(rect);
    const node: GroupNode = {
      id: groupNodeId(key),
      type: "stateGroup",
      position: { x: rect.x, y: rect.y },
      width: rect.width,
      height: rect.height,
      zIndex: -1 - levels,
      selectable: false,
      draggable: false,
      focusable: false,
      data: { label: key.split("/").at(-1) ?? key, innerLevels: levels, containsCurrent: false },
      ariaLabel: `composite state ${key.replaceAll("/", " / ")}`,
    };
    nodes.push(node);
  }

  for (const s of spec.states) {
    const n = g.node(stateNodeId(s.id));
    if (!n || n.x === undefined || n.y === undefined) continue;
    const rect = { x: n.x - n.width / 2, y: n.y - n.height / 2, width: n.width, height: n.height };
    rects.set(stateNodeId(s.id), rect);
    grow(rect);
    const node: StateNode = {
      id: stateNodeId(s.id),
      type: "state",
      position: { x: rect.x, y: rect.y },
      width: rect.width,
      height: rect.height,
      draggable: false,
      data: {
        stateId: s.id,
        label: s.label ?? s.id,
        description: s.description ?? "",
        transient: s.transient ?? false,
        notYetSupported: s.notYetSupported ?? false,
        terminal: s.terminal ?? false,
        groupPath: (s.groups ?? []).join("/"),
        current: false,
        next: false,
        highlight: "gray",
      },
    };
    nodes.push(node);
  }

  const edges: TransitionEdge[] = [];
  if (initial) {
    const n = g.node(START_ID);
    if (n && n.x !== undefined && n.y !== undefined) {
      grow({ x: n.x - START_SIZE / 2, y: n.y - START_SIZE / 2, width: START_SIZE, height: START_SIZE });
      nodes.push({ id: START_ID, type: "start", position: { x: n.x - START_SIZE / 2, y: n.y - START_SIZE / 2 }, width: START_SIZE, height: START_SIZE, draggable: false, data: {} });
      const e = g.edge({ v: START_ID, w: stateNodeId(initial), name: "start" });
      edges.push({
        id: "t:start",
        type: "transition",
        source: START_ID,
        target: stateNodeId(initial),
        data: { label: "", by: "", points: clonePoints(e?.points), labelPosition: null, bidirectional: false, active: false, muted: false, fromStates: [], toStates: [initial] },
      });
    }
  }

  const nodeIdOf = (end: EdgeEnd) => (end.kind === "state" ? stateNodeId(end.id) : groupNodeId(end.key));
  for (const p of plans) {
    const e = g.edge({ v: stateNodeId(p.fromStates[0] as string), w: stateNodeId(p.toStates[0] as string), name: p.id });
    const source = nodeIdOf(p.from);
    const target = nodeIdOf(p.to);
    let points = clonePoints(e?.points);
    const fromRect = rects.get(source);
    const toRect = rects.get(target);
    if (points && fromRect && toRect && (p.from.kind === "group" || p.to.kind === "group")) points = clipRoute(points, fromRect, toRect);
    const labelPosition = (p.label || p.by) && e?.x !== undefined && e.y !== undefined ? { x: e.x, y: e.y } : null;
    for (const pt of points ?? []) grow({ x: pt.x, y: pt.y, width: 0, height: 0 });
    const labelWidth = labelWidths.get(p.id);
    if (labelPosition && labelWidth) grow({ x: labelPosition.x - labelWidth / 2, y: labelPosition.y - EDGE_LABEL_HEIGHT / 2, width: labelWidth, height: EDGE_LABEL_HEIGHT });
    edges.push({
      id: p.id,
      type: "transition",
      source,
      target,
      data: { label: p.label, by: p.by, points, labelPosition, bidirectional: p.bidirectional, active: false, muted: p.muted, fromStates: p.fromStates, toStates: p.toStates },
    });
  }

  if (!Number.isFinite(bounds.minX)) return { nodes, edges, x: 0, y: 0, width: 0, height: 0 };
  return { nodes, edges, x: bounds.minX, y: bounds.minY, width: bounds.maxX - bounds.minX, height: bounds.maxY - bounds.minY };
}

function clonePoints(points: Point[] | undefined): Point[] | null {
  return points && points.length >= 2 ? points.map((p) => ({ x: p.x, y: p.y })) : null;
}

/**
 * Marks the current state, the moves that leave it and the groups that hold it. Pure; the
 * layout is reused as the current state changes.
 */
export function highlightDiagram(layout: DiagramLayout, current: string | null, highlight: StateNode["data"]["highlight"]): DiagramLayout {
  const next = new Set<string>();
  const edges = layout.edges.map((e) => {
    const d = e.data;
    if (current === null || !d) return e;
    const forward = d.fromStates.includes(current);
    const backward = d.bidirectional && d.toStates.includes(current);
    if (!forward && !backward) return e;
    for (const s of forward ? d.toStates : d.fromStates) next.add(s);
    return { ...e, data: { ...d, active: true }, zIndex: 1 };
  });
  let holder: string | null = null;
  const nodes = layout.nodes.map((n): DiagramNode => {
    if (n.type !== "state") return n;
    const isCurrent = n.data.stateId === current;
    if (isCurrent) holder = n.data.groupPath;
    const isNext = !isCurrent && next.has(n.data.stateId);
    if (!isCurrent && !isNext) return n;
    return { ...n, data: { ...n.data, current: isCurrent, next: isNext, highlight } };
  });
  const path = holder as string | null;
  return {
    ...layout,
    edges,
    nodes: nodes.map((n): DiagramNode => {
      if (n.type !== "stateGroup" || !path) return n;
      const key = n.id.slice(2);
      return path === key || path.startsWith(`${key}/`) ? { ...n, data: { ...n.data, containsCurrent: true } } : n;
    }),
  };
}
