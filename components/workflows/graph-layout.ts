/**
 * Laying a DAG out left to right (issue 9), pure and free of React so it runs in the layout
 * worker (layout.worker.ts), on the page for small graphs, and in tests.
 *
 * Two layouts: dagre (network-simplex ranks, crossing minimisation, Brandes-Köpf coordinates)
 * for small graphs (DAGRE_MAX_SIZE), where it is fast enough and draws the tidiest picture;
 * and a plain layered layout of our own for bigger ones. dagre is superlinear: on this machine
 * 2,000 steps take 1.2 s as a chain of fans and 61 s as a random DAG with two dependencies a
 * step, far past the page's 1 s budget; the layered layout does 10,000 steps in well under a
 * second (numbers in docs/architecture.md, Capacity).
 */
import dagre from "@dagrejs/dagre";

export const STEP_NODE_WIDTH = 184;
export const STEP_NODE_HEIGHT = 58;
const NODE_SEP = 24;
const RANK_SEP = 64;
const MARGIN = 8;

/**
 * dagre lays the graph out while its nodes and edges number at most this; past it, layeredLayout.
 * dagre's cost grows with the edges (each edge spanning several columns adds a dummy node per
 * column) and quickly: 20 steps and 28 edges 25–55 ms, 50 and 87 edges 160–490 ms, 200 and
 * 352 edges 1.6 s on this machine.
 */
export const DAGRE_MAX_SIZE = 100;

export interface LayoutGraph {
  /** Node ids in a stable order (the spec's): ties in the layout follow it. */
  nodes: string[];
  edges: { id: string; source: string; target: string }[];
}

export interface GraphLayout {
  /** Top-left corner of each node. */
  positions: Map<string, { x: number; y: number }>;
  edges: { id: string; source: string; target: string }[];
  width: number;
  height: number;
}

/** The layout the run view uses: dagre for small graphs, layeredLayout for big ones. Edges to unknown nodes are dropped. */
export function layoutGraph(graph: LayoutGraph): GraphLayout {
  const known = new Set(graph.nodes);
  const edges = graph.edges.filter((e) => known.has(e.source) && known.has(e.target) && e.source !== e.target);
  const g = { nodes: graph.nodes, edges };
  return g.nodes.length + g.edges.length <= DAGRE_MAX_SIZE ? dagreLayout(g) : layeredLayout(g);
}

/** dagre, left to right: sources before their targets. */
export function dagreLayout(graph: LayoutGraph): GraphLayout {
  const g = new dagre.graphlib.Graph();
  g.setGraph({ rankdir: "LR", nodesep: NODE_SEP, ranksep: RANK_SEP, marginx: MARGIN, marginy: MARGIN });
  g.setDefaultEdgeLabel(() => ({}));
  for (const id of graph.nodes) g.setNode(id, { width: STEP_NODE_WIDTH, height: STEP_NODE_HEIGHT });
  for (const e of graph.edges) g.setEdge(e.source, e.target);
  dagre.layout(g);
  const positions = new Map<string, { x: number; y: number }>();
  let width = 0;
  let height = 0;
  for (const id of graph.nodes) {
    const n = g.node(id);
    positions.set(id, { x: n.x - STEP_NODE_WIDTH / 2, y: n.y - STEP_NODE_HEIGHT / 2 });
    width = Math.max(width, n.x + STEP_NODE_WIDTH / 2);
    height = Math.max(height, n.y + STEP_NODE_HEIGHT / 2);
  }
  return { positions, edges: graph.edges, width, height };
}

/**
 * A layered layout in O((V + E) × sweeps): ranks by longest path from the sources (a node one
 * column right of its furthest dependency), the order inside each column by barycentres of
 * the neighbours' positions (sweeps left to right and back, as Sugiyama's method, without
 * dummy nodes for long edges), then each node placed as close as it can to the mean height of
 * its dependencies without overlapping the one above it. A cycle (refused by the server, so
 * only a broken spec) cannot hang it: nodes left over by the topological walk go in column 0.
 */
export function layeredLayout(graph: LayoutGraph, sweeps = 4): GraphLayout {
  const n = graph.nodes.length;
  const index = new Map<string, number>();
  graph.nodes.forEach((id, i) => index.set(id, i));
  const preds: number[][] = Array.from({ length: n }, () => []);
  const succs: number[][] = Array.from({ length: n }, () => []);
  for (const e of graph.edges) {
    const s = index.get(e.source);
    const t = index.get(e.target);
    if (s === undefined || t === undefined || s === t) continue;
    preds[t]!.push(s);
    succs[s]!.push(t);
  }

  // Ranks: Kahn's walk in spec order, each node one right of its furthest dependency.
  const rank = new Int32Array(n);
  const indegree = Int32Array.from(preds, (p) => p.length);
  const queue: number[] = [];
  for (let i = 0; i < n; i++) if (indegree[i] === 0) queue.push(i);
  const seen = new Uint8Array(n);
  for (let head = 0; head < queue.length; head++) {
    const v = queue[head]!;
    seen[v] = 1;
    for (const w of succs[v]!) {
      rank[w] = Math.max(rank[w]!, rank[v]! + 1);
      if (--indegree[w]! === 0) queue.push(w);
    }
  }
  let maxRank = 0;
  for (let i = 0; i < n; i++) maxRank = Math.max(maxRank, seen[i] ? rank[i]! : (rank[i] = 0));

  // Columns in the walk's order: a node's first order follows its dependencies'.
  const columns: number[][] = Array.from({ length: maxRank + 1 }, () => []);
  for (const v of queue) columns[rank[v]!]!.push(v);
  for (let i = 0; i < n; i++) if (!seen[i]) columns[0]!.push(i);
  // A node's place in its column as a fraction (0..1), so columns of different sizes compare.
  const place = new Float64Array(n);
  const setPlaces = (col: number[]) => col.forEach((v, i) => (place[v] = col.length > 1 ? i / (col.length - 1) : 0.5));
  for (const col of columns) setPlaces(col);
  const bary = new Float64Array(n);
  const reorder = (col: number[], neighbours: number[][]) => {
    for (const v of col) {
      const ns = neighbours[v]!;
      if (ns.length === 0) {
        bary[v] = place[v]!; // keeps its place
        continue;
      }
      let sum = 0;
      for (const w of ns) sum += place[w]!;
      bary[v] = sum / ns.length;
    }
    col.sort((a, b) => bary[a]! - bary[b]! || a - b);
    setPlaces(col);
  };
  for (let s = 0; s < sweeps; s++) {
    for (let r = 1; r <= maxRank; r++) reorder(columns[r]!, preds);
    for (let r = maxRank - 1; r >= 0; r--) reorder(columns[r]!, succs);
  }

  // Heights: the tallest column sets the scale; each node goes to the mean height of its
  // dependencies (the middle of the picture for a source) unless the node above is in the way,
  // then the column moves up as a block to sit centred on where it wanted to be.
  const rowH = STEP_NODE_HEIGHT + NODE_SEP;
  const tallest = Math.max(...columns.map((c) => c.length));
  const y = new Float64Array(n);
  for (const col of columns) {
    let wantSum = 0;
    let prev = -Infinity;
    for (let i = 0; i < col.length; i++) {
      const v = col[i]!;
      const ps = preds[v]!;
      let want: number;
      if (ps.length) {
        let sum = 0;
        for (const p of ps) sum += y[p]!;
        want = sum / ps.length;
      } else {
        want = ((tallest - col.length) / 2 + i) * rowH;
      }
      wantSum += want;
      y[v] = Math.max(want, prev + rowH);
      prev = y[v]!;
    }
    let gotSum = 0;
    for (const v of col) gotSum += y[v]!;
    const shift = (gotSum - wantSum) / Math.max(1, col.length);
    for (const v of col) y[v] = y[v]! - shift;
  }
  let top = Infinity;
  for (let i = 0; i < n; i++) top = Math.min(top, y[i]!);
  if (!Number.isFinite(top)) top = 0;

  const positions = new Map<string, { x: number; y: number }>();
  let width = 0;
  let height = 0;
  for (let i = 0; i < n; i++) {
    const p = { x: MARGIN + rank[i]! * (STEP_NODE_WIDTH + RANK_SEP), y: MARGIN + y[i]! - top };
    positions.set(graph.nodes[i]!, p);
    width = Math.max(width, p.x + STEP_NODE_WIDTH);
    height = Math.max(height, p.y + STEP_NODE_HEIGHT);
  }
  return { positions, edges: graph.edges, width: width + MARGIN, height: height + MARGIN };
}
