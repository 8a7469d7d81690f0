import { describe, expect, it } from "vitest";
import { alignedData, formatValue, resolveColor, seriesColor, stackData, summarize, withAlpha, yRange } from "@/components/charts/shape";
import { actionSeries, collectingText, deviceSeries, firstSampled, parseRange, refetchDelayMs, SUMMARY_COLORS } from "@/components/overview/history";

describe("chart data shaping", () => {
  it("aligns every series on the times, padding short ones with null and cutting long ones", () => {
    const data = alignedData([10, 20, 30], [
      { label: "a", values: [1, 2] },
      { label: "b", values: [1, 2, 3, 4] },
    ]);
    expect(data).toEqual([[10, 20, 30], [1, 2, null], [1, 2, 3]]);
  });

  it("stacks visible series as running sums, with a band from each to the one below", () => {
    const raw = alignedData([1, 2, 3], [
      { label: "Online", values: [5, 4, null] },
      { label: "Offline", values: [1, null, null] },
      { label: "Error", values: [0, 2, null] },
    ]);
    const { data, bands } = stackData(raw, [true, true, true]);
    expect(data).toEqual([[1, 2, 3], [5, 4, null], [6, 4, null], [6, 6, null]]);
    expect(bands).toEqual([{ series: [2, 1] }, { series: [3, 2] }]);
  });

  it("leaves a hidden series out of the sums and the bands", () => {
    const raw = alignedData([1, 2], [
      { label: "a", values: [1, 1] },
      { label: "b", values: [10, 10] },
      { label: "c", values: [2, 3] },
    ]);
    const { data, bands } = stackData(raw, [true, false, true]);
    expect(data[1]).toEqual([1, 1]);
    expect(data[2]).toEqual([10, 10]); // drawn as is, but hidden
    expect(data[3]).toEqual([3, 4]);
    expect(bands).toEqual([{ series: [3, 1] }]);
  });

  it("summarizes latest, lowest, highest and mean, ignoring gaps", () => {
    expect(summarize([{ label: "x", values: [2, null, 6, 4, null] }])).toEqual([{ label: "x", latest: 4, min: 2, max: 6, mean: 4 }]);
    expect(summarize([{ label: "y", values: [null] }])).toEqual([{ label: "y", latest: null, min: null, max: null, mean: null }]);
  });

  it("formats values for axes, tooltips and the text alternative", () => {
    expect(formatValue(null)).toBe("–");
    expect(formatValue(1234)).toBe("1,234");
    expect(formatValue(12_345)).toBe("12.3k");
    expect(formatValue(2_500_000)).toBe("2.5M");
    expect(formatValue(0.333)).toBe("0.33");
    expect(formatValue(42.26, "/min")).toBe("42.3 /min");
  });

  it("scales from zero to a round number above the highest value", () => {
    expect(yRange(null)).toEqual([0, 1]);
    expect(yRange(0)).toEqual([0, 1]);
    expect(yRange(95)).toEqual([0, 100]);
    expect(yRange(7)).toEqual([0, 8]);
  });

  it("resolves palette variables and adds transparency to palette colours", () => {
    const read = (name: string) => (name === "--color-sky-500" ? " oklch(68.5% 0.169 237.323)" : "");
    expect(resolveColor("var(--color-sky-500)", read)).toBe("oklch(68.5% 0.169 237.323)");
    expect(resolveColor("#ff0000", read)).toBe("#ff0000");
    expect(withAlpha("oklch(68.5% 0.169 237.323)", 0.3)).toBe("oklch(68.5% 0.169 237.323 / 0.3)");
    expect(withAlpha("#2f6fed", 0.5)).toBe("#2f6fed80");
    expect(seriesColor({ label: "a", values: [] }, 0)).toBe("var(--color-sky-500)");
  });
});

describe("the overview's history as chart series", () => {
  it("reads the range from the URL, 1 h by default", () => {
    expect(parseRange("24h")).toBe("24h");
    expect(parseRange("7d")).toBe("7d");
    expect(parseRange("2d")).toBe("1h");
    expect(parseRange(null)).toBe("1h");
  });

  it("stacks the statuses that had devices, in the table's order, each its own colour", () => {
    const series = deviceSeries({ Offline: [1, 0], Online: [2, 3], Error: [0, 0], Brandnew: [null, 1] }, "summary");
    expect(series.map((s) => s.label)).toEqual(["Online", "Offline", "Brandnew"]);
    expect(series[0]!.color).toBe("var(--color-emerald-500)");
    expect(series[2]!.color).toBe("var(--color-slate-500)");
    expect(new Set(Object.values(SUMMARY_COLORS)).size).toBe(Object.keys(SUMMARY_COLORS).length);
  });

  it("draws actions created and each final state that occurred", () => {
    const series = actionSeries({ createdPerMinute: [1, 2], finishedPerMinute: { FAILED: [0, 1], DONE: [1, 1], LOST: [0, 0] } });
    expect(series.map((s) => s.label)).toEqual(["created", "finished DONE", "finished FAILED"]);
  });

  it("polls just after the next sample, within bounds, and says when the first sample comes", () => {
    expect(refetchDelayMs({ nextSampleAt: 100, sampleSeconds: 60 }, 95_000)).toBe(6_000);
    expect(refetchDelayMs({ nextSampleAt: 100, sampleSeconds: 60 }, 120_000)).toBe(1_000);
    expect(refetchDelayMs({ nextSampleAt: 1_000, sampleSeconds: 60 }, 0)).toBe(61_000);
    expect(collectingText(100, 58_200)).toBe("Collecting — first sample in 42 s");
    expect(collectingText(100, 100_500)).toBe("Collecting — first sample any moment");
  });

  it("starts a young history at its first sample", () => {
    expect(firstSampled([null, null, 0, 5])).toBe(2);
    expect(firstSampled([null, null])).toBe(0);
  });
});
