import { describe, expect, it } from "vitest";
import { RolloutPolicy } from "@/lib/fleet-spec";
import { rolloutLines, savePreview } from "./save-preview";
import type { Fleet } from "./types";

const policy = (p: unknown) => RolloutPolicy.parse(p);

describe("the rollout a template change starts, told before saving", () => {
  it.each([
    ["no policy: every member at once", undefined, 53, ["All 53 members get version 4 at once: this fleet has no rollout policy."]],
    [
      "a canary of a percentage, auto",
      policy({ canary: { replicas: "10%" } }),
      53,
      ["Canary: 6 devices first, watched for 10m (no restart for 5m).", "Then the rest of the 53 members.", "A stage goes on when 90% of its devices succeed."],
    ],
    ["a manual canary", policy({ canary: { replicas: 2, validationMode: "manual" } }), 10, ["Canary: 2 devices first, until an operator promotes it.", "Then the rest of the 10 members.", "A stage goes on when 90% of its devices succeed."]],
    [
      "batches by count and by selector, with a disruption budget",
      policy({ deviceSelection: { strategy: "BatchSequence", sequence: [{ limit: 1 }, { limit: "50%", successThreshold: "100%" }, { selector: { matchLabels: { site: "a" } } }] }, successThreshold: "80%", disruptionBudget: { maxUnavailable: 3 } }),
      10,
      ["Batch 1: 1 device.", "Batch 2: 5 devices (50%), 100% to succeed.", "Batch 3: every member matching site=a.", "Then the rest of the 10 members.", "A stage goes on when 80% of its devices succeed; at most 3 unavailable at once."],
    ],
    ["a policy with neither canary nor batches: one batch", policy({}), 4, ["All 4 members, as one batch.", "A stage goes on when 90% of its devices succeed."]],
  ])("%s", (_name, p, members, lines) => {
    expect(rolloutLines(p, members, 4)).toEqual(lines);
  });
});

describe("what a save changes", () => {
  const fleet = {
    metadata: { labels: {} },
    spec: { selector: { matchLabels: { app: "x" } }, template: { spec: { version: "1.0.0", applications: [] } } },
    status: { templateVersion: "3", devices: { total: 5 } },
  } as unknown as Fleet;
  const input = (spec: Record<string, unknown>, selector = { matchLabels: { app: "x" } }) => ({ metadata: { name: "f" }, spec: { selector, template: { spec: { version: "1.0.0", applications: [], ...spec } } } }) as never;

  it("a template change: its diff against the current version, the next version, the rollout", () => {
    const p = savePreview(fleet, input({ version: "1.1.0" }));
    expect(p).toMatchObject({ templateChanged: true, otherChanges: [], nextVersion: 4, rollout: ["All 5 members get version 4 at once: this fleet has no rollout policy."] });
    expect(p.diff).toContain("--- version 3\n+++ version 4\n");
    expect(p.diff).toContain("-version: 1.0.0\n+version: 1.1.0");
  });

  it("no template change: no version, no rollout; the other parts changed are named", () => {
    expect(savePreview(fleet, input({}, { matchLabels: { app: "y" } }))).toEqual({ templateChanged: false, otherChanges: ["selector"], diff: "", nextVersion: null, rollout: [] });
  });
});
