/**
 * lib/yaml-problems: YAML checked with a zod schema, each problem at the line it concerns. The
 * plan import (components/plans/plan-yaml.ts) and the fleet editor both use it; the fleet's
 * cases are in console-fleet-editor.test.ts. Pure.
 */
import { describe, expect, it } from "vitest";
import { PlanInput } from "@/lib/plan-spec";
import { parseYamlWith } from "@/lib/yaml-problems";
import { deadlineProblem, NEW_PLAN_YAML, parsePlanYaml } from "@/components/plans/plan-yaml";
import { SEED_000_PLAN_WITH_STATUS } from "@/tests/helpers/seed-plans";


const lineOfText = (text: string, needle: string) => text.split("\n").findIndex((l) => l.includes(needle)) + 1;

describe("a plan's problems at their lines", () => {
  it("accepts seed 000's example and the import dialog's own", () => {
    const seed = parseYamlWith(SEED_000_PLAN_WITH_STATUS, PlanInput, "write a Plan object");
    expect(seed.problems).toEqual([]);
    expect(seed.input?.spec.commands.map((c) => Object.keys(c)[0])).toEqual(["airgapupdate", "k0supdate"]);
    const own = parsePlanYaml(NEW_PLAN_YAML);
    expect(own.problems).toEqual([]);
    expect(own.input?.apiVersion).toBe("drover/v1");
  });

  it("an unknown field is reported at its own line, not its parent's", () => {
    const text = SEED_000_PLAN_WITH_STATUS.replace("      targets:\n", "      tragets: {}\n      targets:\n");
    const { problems, input } = parseYamlWith(text, PlanInput, "write a Plan object");
    expect(input).toBeNull();
    expect(problems).toEqual([{ line: lineOfText(text, "tragets"), path: "spec.commands.1.k0supdate", message: expect.stringContaining("tragets") }]);
  });

  it("a bad version is reported at the version's line, with the path the server names", () => {
    const text = SEED_000_PLAN_WITH_STATUS.replace("  - k0supdate:\n      version: v1.24.12+k0s.0", '  - k0supdate:\n      version: ""');
    const { problems } = parsePlanYaml(text);
    expect(problems).toEqual([{ line: lineOfText(text, 'version: ""'), path: "spec.commands.1.k0supdate.version", message: expect.any(String) }]);
    // A number is not a version either (YAML reads 1.31 as one).
    const numeric = parsePlanYaml(NEW_PLAN_YAML.replace("version: v1.31.2+k0s.0", "version: 1.31"));
    expect(numeric.problems).toMatchObject([{ line: lineOfText(NEW_PLAN_YAML, "version: v1.31.2"), path: "spec.commands.0.k0supdate.version" }]);
  });

  it("a missing field points at its parent's line; Drover's fields in a k0s plan are refused at theirs", () => {
    const text = NEW_PLAN_YAML.replace(/ {8}platforms:\n {10}linux-amd64:\n {12}url: .*\n/, "");
    expect(parsePlanYaml(text).problems).toEqual([{ line: lineOfText(text, "- k0supdate:"), path: "spec.commands.0.k0supdate.platforms", message: expect.any(String) }]);
    const k0s = SEED_000_PLAN_WITH_STATUS.replace("  id: id123", "  requireApproval: true\n  id: id123");
    expect(parsePlanYaml(k0s).problems).toEqual([{ line: lineOfText(k0s, "requireApproval"), path: "spec.requireApproval", message: expect.stringContaining("drover/v1") }]);
  });

  it("syntax errors carry their line and no path; an empty text says what to write", () => {
    const broken = parsePlanYaml("apiVersion: drover/v1\nkind: Plan\nspec:\n  commands: [\n");
    expect(broken.input).toBeNull();
    expect(broken.problems[0]).toMatchObject({ path: null, line: expect.any(Number) });
    expect(parsePlanYaml("# nothing\n").problems).toEqual([{ line: 1, path: null, message: "the document is empty: write a Plan object" }]);
  });

  it("checks the create option's deadline", () => {
    expect(deadlineProblem("")).toBeNull();
    expect(deadlineProblem("30m")).toBeNull();
    expect(deadlineProblem("soon")).toMatch(/duration/);
  });
});
