import { describe, expect, it } from "vitest";
import { actionDiagramSpec } from "@/components/actions/action-diagram";
import { rolloutDiagramSpec } from "@/components/fleets/rollout-diagram";
import { edgeLabelText, planEdges } from "./layout";

describe("planEdges", () => {
  it("draws two moves between the same states as one line naming both (LOST: missing from the heartbeat, or the device revoked)", () => {
    const lost = planEdges(actionDiagramSpec).filter((p) => p.id === "t:RUNNING->LOST" || p.id === "t:NEW->LOST");
    expect(lost.map((p) => [p.id, edgeLabelText(p.label, p.by)])).toEqual([
      ["t:NEW->LOST", "not reported / revoked · server"],
      ["t:RUNNING->LOST", "not reported / revoked · server"],
    ]);
    // One line a pair: React Flow keys edges by id.
    const ids = planEdges(actionDiagramSpec).map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("names who makes each when the two are made by different actors", () => {
    const paused = planEdges(rolloutDiagramSpec).find((p) => p.id === "t:Canary->CanaryPaused")!;
    expect(edgeLabelText(paused.label, paused.by)).toBe("auto-pause · server / pause · operator");
  });
});
