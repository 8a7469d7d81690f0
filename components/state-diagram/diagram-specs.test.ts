import { describe, expect, it } from "vitest";
import { actionDiagramSpec } from "@/components/actions/action-diagram";
import { deviceAxisSpecs } from "@/components/device-detail/axis-specs";
import { rolloutDiagramSpec } from "@/components/fleets/rollout-diagram";
import { planDiagramSpec, planNodeDiagramSpec } from "@/components/plans/plan-diagrams";
import { layoutDiagram } from "./layout";
import { bestOrder, faultCount, layoutFaults } from "./faults";
import type { DiagramSpec } from "./types";

/**
 * Every state table the console draws is laid out without crossing lines, lines through labels
 * or labels over labels (issue 21: the rollout diagram's edges and labels crossed). When a table
 * changes and this fails, the message names the `order` that draws it best.
 */
const TABLES: Record<string, { spec: DiagramSpec; faults?: number }> = {
  action: { spec: actionDiagramSpec },
  rollout: { spec: rolloutDiagramSpec },
  plan: { spec: planDiagramSpec },
  // Its two retry loops cannot both be drawn inside the ranks: one crossing in any of 300 orders.
  "plan node": { spec: planNodeDiagramSpec, faults: 1 },
  ...Object.fromEntries(Object.entries(deviceAxisSpecs).map(([k, spec]) => [`device ${k}`, { spec }])),
};

describe("the console's state diagrams draw without crossings", () => {
  for (const [name, { spec, faults = 0 }] of Object.entries(TABLES)) {
    it(name, () => {
      const found = layoutFaults(layoutDiagram(spec));
      const hint = faultCount(found) > faults ? `; order ${JSON.stringify(bestOrder(spec))} draws it best` : "";
      expect(faultCount(found), `${name}: ${JSON.stringify(found)} with order ${spec.order ?? 0}${hint}`).toBeLessThanOrEqual(faults);
    });
  }

  it("the order is a fixed shuffle: the same on every run, the table's own at 0", () => {
    const a = layoutDiagram(rolloutDiagramSpec, undefined, 5);
    const b = layoutDiagram(rolloutDiagramSpec, undefined, 5);
    expect(a.nodes.map((n) => n.position)).toEqual(b.nodes.map((n) => n.position));
    expect(faultCount(layoutFaults(layoutDiagram(rolloutDiagramSpec, undefined, 0)))).toBeGreaterThan(0);
  });
});
