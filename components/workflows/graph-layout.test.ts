/**
 * The run view's big-graph model (issue 9): the layered layout (graph-layout.ts), fan-outs folded
 * into counted groups (collapse.ts), the critical path (critical-path.ts), and how runGraph draws
 * them (run-graph.ts). Pure functions, no browser.
 */
import { describe, expect, it } from "vitest";
import type { WorkflowStepView } from "@/server/workflows/workflows";
import { DAGRE_MAX_SIZE, layeredLayout, layoutGraph, STEP_NODE_HEIGHT, STEP_NODE_WIDTH } from "@/components/workflows/graph-layout";
import { BIG_GRAPH_STEPS, defaultCollapsed, displayGraph, FAN_MIN, fanGroups, groupPhase, groupSummary } from "@/components/workflows/collapse";
import { criticalPath } from "@/components/workflows/critical-path";
import { CRITICAL_COLOR, layoutRunGraph, runGraph, specGraph, type FanNode, type StepNode } from "@/components/workflows/run-graph";

const job = (dependencies?: string[]) => ({ ...(dependencies ? { dependencies } : {}), jobTemplate: { kind: "noop" as const, args: {}, targets: { devices: ["d1"] } } });
type Steps = Record<string, ReturnType<typeof job>>;

function view(over: Partial<WorkflowStepView>): WorkflowStepView {
  return { phase: "Pending", complete: false, attempts: 0, maxAttempts: 1, actions: [], targets: null, workflow: null, waitingFor: [], message: "", startedAt: null, finishedAt: null, nextAttemptAt: null, ...over };
}

/** start → n fan members → join → tail */
function fan(n: number): { steps: Steps } {
  const steps: Steps = { start: job() };
  for (let i = 0; i < n; i++) steps[`f${i}`] = job(["start"]);
  steps.join = job(Array.from({ length: n }, (_, i) => `f${i}`));
  steps.tail = job(["join"]);
  return { steps };
}

/** n steps, each depending on up to two of the 30 before it (a seeded pseudo-random DAG, no fans to fold). */
function randomDag(n: number): { steps: Steps } {
  let seed = 7;
  const r = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
  const steps: Steps = {};
  for (let i = 0; i < n; i++) steps[`r${i}`] = job(i === 0 ? undefined : [...new Set([0, 1].map(() => `r${Math.max(0, i - 1 - Math.floor(r() * 30))}`))]);
  return { steps };
}

function overlaps(positions: Map<string, { x: number; y: number }>): number {
  const byColumn = new Map<number, number[]>();
  for (const p of positions.values()) byColumn.set(p.x, [...(byColumn.get(p.x) ?? []), p.y]);
  let bad = 0;
  for (const ys of byColumn.values()) {
    ys.sort((a, b) => a - b);
    for (let i = 1; i < ys.length; i++) if (ys[i]! - ys[i - 1]! < STEP_NODE_HEIGHT) bad++;
  }
  return bad;
}

describe("layered layout (big graphs)", () => {
  it("puts every step right of all its dependencies, never two steps on top of each other", () => {
    const spec = randomDag(3000);
    const layout = layeredLayout(specGraph(spec));
    expect(layout.positions.size).toBe(3000);
    for (const [name, s] of Object.entries(spec.steps)) {
      for (const d of s.dependencies ?? []) expect(layout.positions.get(name)!.x).toBeGreaterThanOrEqual(layout.positions.get(d)!.x + STEP_NODE_WIDTH);
    }
    expect(overlaps(layout.positions)).toBe(0);
    for (const p of layout.positions.values()) {
      expect(p.x + STEP_NODE_WIDTH).toBeLessThanOrEqual(layout.width);
      expect(p.y).toBeGreaterThanOrEqual(0);
      expect(p.y + STEP_NODE_HEIGHT).toBeLessThanOrEqual(layout.height);
    }
  });

  it("lays out 10,000 steps in well under a second (dagre takes 61 s on 2,000 of these)", () => {
    const graph = specGraph(randomDag(10_000));
    const t = performance.now();
    const layout = layoutGraph(graph);
    expect(layout.positions.size).toBe(10_000);
    // Generous for a shared CI core; measured 170–230 ms here.
    expect(performance.now() - t).toBeLessThan(3000);
  });

  it("small graphs keep dagre, bigger ones the layered layout; both put the diamond's B and C in one column", () => {
    const diamond = { steps: { A: job(), B: job(["A"]), C: job(["A"]), D: job(["B", "C"]) } };
    const a = layoutRunGraph(diamond);
    const b = layeredLayout(specGraph(diamond));
    for (const l of [a, b]) {
      expect(l.positions.get("B")!.x).toBe(l.positions.get("C")!.x);
      expect(l.positions.get("B")!.y).not.toBe(l.positions.get("C")!.y);
      expect(l.positions.get("D")!.x).toBeGreaterThan(l.positions.get("B")!.x);
    }
    expect(DAGRE_MAX_SIZE).toBeGreaterThanOrEqual(8);
  });

  it("a cycle (a broken spec) does not hang the layout", () => {
    const graph = { nodes: ["a", "b", "c"], edges: [{ id: "1", source: "a", target: "b" }, { id: "2", source: "b", target: "a" }, { id: "3", source: "b", target: "c" }] };
    expect(layeredLayout(graph).positions.size).toBe(3);
  });
});

describe("fan-outs", () => {
  it("groups FAN_MIN or more steps with the same dependencies and dependents, not fewer", () => {
    const groups = fanGroups(fan(FAN_MIN));
    expect(groups).toHaveLength(1);
    expect(groups[0]).toMatchObject({ id: "fan:f0", dependencies: ["start"], dependents: ["join"] });
    expect(groups[0]!.members).toHaveLength(FAN_MIN);
    expect(fanGroups(fan(FAN_MIN - 1))).toEqual([]);
  });

  it("a member with another dependent is not interchangeable: it stays out of the group", () => {
    const spec = fan(25);
    spec.steps.extra = job(["f3"]);
    const [g] = fanGroups(spec);
    expect(g!.members).toHaveLength(24);
    expect(g!.members).not.toContain("f3");
  });

  it("a collapsed fan is one node with one edge in and one out; expanded, every member is back", () => {
    const spec = fan(120);
    const groups = fanGroups(spec);
    const collapsed = displayGraph(spec, groups, new Set(["fan:f0"]));
    expect(collapsed.nodes).toEqual(["start", "fan:f0", "join", "tail"]);
    expect(collapsed.edges.map((e) => e.id)).toEqual(["start->fan:f0", "fan:f0->join", "join->tail"]);
    expect(collapsed.nodeOf("f57")).toBe("fan:f0");
    const expanded = displayGraph(spec, groups, new Set());
    expect(expanded.nodes).toHaveLength(123);
    expect(expanded.edges).toHaveLength(241);
    expect(expanded.key).not.toBe(collapsed.key);
  });

  it("big graphs start with their fans collapsed, small ones expanded", () => {
    const groups = fanGroups(fan(30));
    expect(defaultCollapsed(33, groups).size).toBe(0);
    expect([...defaultCollapsed(BIG_GRAPH_STEPS, groups)]).toEqual(["fan:f0"]);
  });

  it("a group shows its count and phase counts: 120 steps: 80 Succeeded, 40 Running", () => {
    const members = Array.from({ length: 120 }, (_, i) => `f${i}`);
    const s = groupSummary(members, (m) => (Number(m.slice(1)) < 80 ? "Succeeded" : "Running"));
    expect(s.label).toBe("120 steps: 80 Succeeded, 40 Running");
    expect(groupPhase(s.counts)).toBe("Running");
    expect(groupPhase([["Succeeded", 3], ["Skipped", 1]])).toBe("Succeeded");
    expect(groupPhase([["Succeeded", 3], ["Failed", 1]])).toBe("Failed");
  });

  it("runGraph draws a collapsed fan as one counted node coloured by its members", () => {
    const spec = fan(40);
    const display = displayGraph(spec, fanGroups(spec), new Set(["fan:f0"]));
    const layout = layoutGraph(display);
    const statuses: Record<string, WorkflowStepView> = { start: view({ phase: "Succeeded" }) };
    for (let i = 0; i < 40; i++) statuses[`f${i}`] = view({ phase: i < 30 ? "Succeeded" : "Running" });
    const { nodes, edges } = runGraph(spec, layout, statuses, null, { display });
    expect(nodes.map((n) => n.id)).toEqual(["start", "fan:f0", "join", "tail"]);
    const group = nodes[1] as FanNode;
    expect(group.type).toBe("fan");
    expect(group.data).toMatchObject({ count: 40, label: "40 steps: 30 Succeeded, 10 Running", phase: "Running", kind: "noop" });
    // Into the fan: satisfied (start Succeeded) and animated (members run); out of it: not yet.
    expect(edges.find((e) => e.id === "start->fan:f0")).toMatchObject({ animated: true, style: { stroke: "#10b981" } });
    expect(edges.find((e) => e.id === "fan:f0->join")!.style!.stroke).toBe("#cbd5e1");
  });
});

describe("critical path", () => {
  // a → b → c → d, and a → e → d: the longest chain by step count is a, b, c, d.
  const spec = { steps: { a: job(), b: job(["a"]), c: job(["b"]), e: job(["a"]), d: job(["c", "e"]) } };

  it("without durations: the longest chain of dependencies by step count", () => {
    const p = criticalPath(spec);
    expect(p).toMatchObject({ steps: ["a", "b", "c", "d"], edges: ["a->b", "b->c", "c->d"], by: "steps", length: 4 });
  });

  it("with durations: the longest chain by time, a running step counting the time so far and one not started the mean", () => {
    const t = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s)).toISOString();
    const statuses = {
      a: view({ phase: "Succeeded", startedAt: t(0), finishedAt: t(10) }),
      b: view({ phase: "Succeeded", startedAt: t(10), finishedAt: t(11) }),
      c: view({ phase: "Succeeded", startedAt: t(11), finishedAt: t(12) }),
      e: view({ phase: "Running", startedAt: t(10) }),
    };
    // e has run 50 s so far: a, e, d (10 + 50 + mean 4) beats a, b, c, d (10 + 1 + 1 + 4).
    const p = criticalPath(spec, statuses, Date.parse(t(60)));
    expect(p.by).toBe("duration");
    expect(p.steps).toEqual(["a", "e", "d"]);
    expect(p.length).toBe(64_000);
    // Early on, e has run 1 s: the chain through b and c is longer again.
    expect(criticalPath(spec, statuses, Date.parse(t(11))).steps).toEqual(["a", "b", "c", "d"]);
  });

  it("an empty spec or a lone step", () => {
    expect(criticalPath({ steps: {} })).toMatchObject({ steps: [], edges: [], length: 0 });
    expect(criticalPath({ steps: { x: job() } }).steps).toEqual(["x"]);
  });

  it("runGraph marks the path's nodes and edges, through a collapsed fan as through its group", () => {
    const f = fan(30);
    const display = displayGraph(f, fanGroups(f), new Set(["fan:f0"]));
    const critical = criticalPath(f);
    expect(critical.steps).toEqual(["start", "f0", "join", "tail"]);
    const { nodes, edges } = runGraph(f, layoutGraph(display), {}, null, { display, critical });
    expect(nodes.filter((n) => n.data.critical).map((n) => n.id)).toEqual(["start", "fan:f0", "join", "tail"]);
    expect(edges.filter((e) => e.className === "critical").map((e) => e.id)).toEqual(["start->fan:f0", "fan:f0->join", "join->tail"]);
    expect(edges.find((e) => e.id === "join->tail")!.style!.stroke).toBe(CRITICAL_COLOR);
    // Off: nothing marked.
    const off = runGraph(f, layoutGraph(display), {}, null, { display });
    expect(off.nodes.some((n) => n.data.critical) || off.edges.some((e) => e.className)).toBe(false);
    expect((off.nodes[0] as StepNode).data.step).toBe("start");
  });
});
