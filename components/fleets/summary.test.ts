import { describe, expect, it } from "vitest";
import { rolloutSummary, type Fleet } from "./types";

const fleet = (phase: string | null, upToDate = { status: "True", reason: "UpToDate", message: "All 50 devices are up to date" }): Pick<Fleet, "status"> =>
  ({
    status: {
      rollout: phase ? { phase, templateVersion: "3", previousTemplateVersion: "2" } : null,
      conditions: [{ type: "DevicesUpToDate", lastTransitionTime: "2026-11-28T00:00:00Z", ...upToDate }],
    },
  }) as unknown as Pick<Fleet, "status">;

describe("the fleets list's rollout column", () => {
  it("a running or completed rollout: its phase", () => {
    expect(rolloutSummary(fleet("CanaryPaused"))).toMatchObject({ text: "CanaryPaused", phase: "CanaryPaused" });
    expect(rolloutSummary(fleet("Completed"))).toMatchObject({ text: "Completed", phase: "Completed" });
  });
  it("no rollout: the members' state", () => {
    expect(rolloutSummary(fleet(null))).toMatchObject({ text: "UpToDate", phase: null });
    expect(rolloutSummary(fleet(null)).ended).toBeUndefined();
  });
  it("an aborted or failed rollout no longer leads: the members' state does, and the end is a note (it read a red Aborted beside 50/50 UpToDate)", () => {
    expect(rolloutSummary(fleet("Aborted"))).toEqual({ text: "UpToDate", phase: null, title: "All 50 devices are up to date", ended: "v3 Aborted: the fleet went back to version 2" });
    expect(rolloutSummary(fleet("CanaryFailed")).ended).toBe("v3 CanaryFailed: the fleet went back to version 2");
    expect(rolloutSummary(fleet("Superseded")).ended).toBe("v3 Superseded: a newer version replaced it");
  });
});
