import { describe, expect, it } from "vitest";
import { unifiedDiff } from "./unified-diff";

/** Applies a unified diff to `before` (the test's own reading of the format). */
function patch(before: string, diff: string): string {
  const a = before === "" ? [] : before.replace(/\n$/, "").split("\n");
  const out: string[] = [];
  let at = 0;
  for (const hunk of diff.split(/^@@ /m).slice(1)) {
    const [header, ...body] = hunk.replace(/\n$/, "").split("\n");
    const start = Number(/^-(\d+)/.exec(header!)![1]);
    const from = start === 0 ? 0 : start - 1;
    out.push(...a.slice(at, from));
    at = from;
    for (const line of body) {
      if (line.startsWith(" ")) {
        expect(a[at]).toBe(line.slice(1));
        out.push(line.slice(1));
        at++;
      } else if (line.startsWith("-")) {
        expect(a[at]).toBe(line.slice(1));
        at++;
      } else out.push(line.slice(1));
    }
  }
  out.push(...a.slice(at));
  return out.length ? out.join("\n") + "\n" : "";
}

describe("unifiedDiff", () => {
  it("is empty for equal texts and has headers and hunks like diff -u", () => {
    expect(unifiedDiff("a\n", "a\n", "x", "y")).toBe("");
    expect(unifiedDiff("a\nb\nc\n", "a\nB\nc\n", "version 1", "version 2")).toBe("--- version 1\n+++ version 2\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n");
    expect(unifiedDiff("", "x: 1\n", "/dev/null", "version 1")).toBe("--- /dev/null\n+++ version 1\n@@ -0,0 +1,1 @@\n+x: 1\n");
  });

  it("separates changes far apart into hunks with three lines of context", () => {
    const before = Array.from({ length: 20 }, (_, i) => `l${i}`).join("\n") + "\n";
    const after = before.replace("l1\n", "L1\n").replace("l18\n", "L18\n");
    const diff = unifiedDiff(before, after, "a", "b");
    expect(diff.match(/^@@ .* @@$/gm)).toEqual(["@@ -1,5 +1,5 @@", "@@ -16,5 +16,5 @@"]);
  });

  it("always patches the old text into the new one (random edits)", () => {
    let seed = 42;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    for (let round = 0; round < 300; round++) {
      const a = Array.from({ length: Math.floor(random() * 30) }, () => "abcde"[Math.floor(random() * 5)]!);
      const b = [...a];
      for (let e = Math.floor(random() * 6); e > 0; e--) {
        const i = Math.floor(random() * (b.length + 1));
        if (random() < 0.5 && b.length) b.splice(i, 1);
        else b.splice(i, 0, "xyz"[Math.floor(random() * 3)]!);
      }
      const before = a.length ? a.join("\n") + "\n" : "";
      const after = b.length ? b.join("\n") + "\n" : "";
      expect(patch(before, unifiedDiff(before, after, "a", "b")), `${JSON.stringify(a)} → ${JSON.stringify(b)}`).toBe(after);
    }
  });
});
