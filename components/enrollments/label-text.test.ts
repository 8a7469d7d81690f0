/** The labels editor's reading of what is typed (components/enrollments/label-text.ts): the server's label rules. */
import { describe, expect, it } from "vitest";
import { labelsProblem, mergedLabels, parseLabelText } from "@/components/enrollments/label-text";
import { formatBytes } from "@/components/enrollments/format";

describe("parseLabelText", () => {
  it("key=value, several separated by commas or spaces; an empty value; a prefixed key", () => {
    expect(parseLabelText("")).toEqual({ ok: true, labels: {} });
    expect(parseLabelText("site=lab, owner=ops  example.com/tier=")).toEqual({ ok: true, labels: { site: "lab", owner: "ops", "example.com/tier": "" } });
    expect(parseLabelText("a=1,a=2")).toEqual({ ok: true, labels: { a: "2" } });
  });
  it("names what is wrong", () => {
    expect(parseLabelText("site")).toMatchObject({ ok: false, error: expect.stringContaining("write key=value") });
    expect(parseLabelText("bad!key=x")).toMatchObject({ ok: false, error: expect.stringContaining("“bad!key” is not a valid key") });
    expect(parseLabelText("site=not/ok")).toMatchObject({ ok: false, error: expect.stringContaining("not a valid value for site") });
    expect(parseLabelText(`k=${"x".repeat(64)}`)).toMatchObject({ ok: false });
  });
});

describe("merging with the requested labels", () => {
  it("the operator wins; more than 64 together is a problem for the request that would carry them", () => {
    expect(mergedLabels({ site: "unknown", rack: "4" }, { site: "lab" })).toEqual({ site: "lab", rack: "4" });
    const sixty = Object.fromEntries(Array.from({ length: 60 }, (_, i) => [`k${i}`, "v"]));
    const five = Object.fromEntries(Array.from({ length: 5 }, (_, i) => [`x${i}`, "v"]));
    expect(labelsProblem(five, [{}, sixty])).toBe("A device would carry 65 labels with these; 64 at most.");
    expect(labelsProblem({ k0: "w" }, [sixty])).toBeNull();
  });
});

describe("formatBytes", () => {
  it("binary units", () => {
    expect(formatBytes(512)).toBe("512 B");
    expect(formatBytes(16e9)).toBe("14.9 GiB");
    expect(formatBytes(5e11)).toBe("466 GiB");
    expect(formatBytes(2 * 1024 ** 4)).toBe("2.0 TiB");
  });
});
