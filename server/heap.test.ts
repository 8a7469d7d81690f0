import { describe, expect, it } from "vitest";
import { collectAllGarbage, heapReading, reclaimAfterBursts, shouldReclaim, type HeapReading, type Reclaimed } from "./heap";

const MiB = 2 ** 20;
const policy = { minSpareBytes: 64 * MiB, checkMs: 15_000 };
const heap = (committedMb: number, usedMb: number): HeapReading => ({ committed: committedMb * MiB, used: usedMb * MiB });

describe("shouldReclaim: after a burst, not during one, not again for nothing", () => {
  it.each([
    // [why, now, previous look, committed after the last reclaim (MB), reclaim?]
    ["more than half unused, the heap stopped growing", heap(265, 96), heap(265, 90), null, true],
    ["the heap still grows: the burst is not over", heap(265, 96), heap(250, 90), null, false],
    ["no earlier look to tell", heap(265, 96), null, null, false],
    ["less unused than used", heap(180, 100), heap(180, 100), null, false],
    ["more than half unused but under 64 MB of it", heap(110, 50), heap(110, 50), null, false],
    ["a reclaim left it at 240 MB: not again until it grows 64 MB past that", heap(265, 96), heap(265, 96), 240, false],
    ["grown 70 MB since the last reclaim", heap(310, 100), heap(310, 100), 240, true],
  ] as const)("%s", (_why, now, previous, reclaimedTo, expected) => {
    expect(shouldReclaim(now, previous, reclaimedTo === null ? null : reclaimedTo * MiB, policy)).toBe(expected);
  });
});

describe("collectAllGarbage: gives back the pages a burst left", () => {
  it("a heap holding a few objects per page among a burst's garbage commits far less after it", async () => {
    // What a ramp leaves: objects that stay (one in every few hundred) scattered among garbage.
    const kept: unknown[] = [];
    let garbage: unknown[] = [];
    for (let i = 0; i < 20_000; i++) {
      kept.push({ i, name: `kept-${i}` });
      for (let j = 0; j < 40; j++) garbage.push({ j, text: `garbage-${i}-${j}`, more: [i, j] });
      if (garbage.length > 200_000) garbage = [];
    }
    garbage = [];
    const before = heapReading();
    await collectAllGarbage();
    const after = heapReading();
    expect(kept).toHaveLength(20_000);
    // Tens of MB committed for the burst; what stays is ≈ 2 MB.
    expect(before.committed - after.committed).toBeGreaterThan(20 * MiB);
  });
});

describe("reclaimAfterBursts: looks at the heap on its own, reclaims once a burst is over, not again for nothing", () => {
  it("the second look at a heap more than half unused and no longer growing reclaims; the looks after it do not", async () => {
    // The heap as the server would see it: a burst over (265 MB committed, 96 used), then what the collection left.
    const looks = [heap(265, 90), heap(265, 96), heap(150, 60), heap(150, 60), heap(150, 60), heap(150, 60)];
    let n = 0;
    const read = () => looks[Math.min(n++, looks.length - 1)]!;
    const reclaimed: Reclaimed[] = [];
    const looking = reclaimAfterBursts((r) => reclaimed.push(r), { minSpareBytes: 64 * MiB, checkMs: 20 }, read);
    try {
      await expect.poll(() => n, { timeout: 5_000 }).toBeGreaterThanOrEqual(6);
    } finally {
      looking.stop();
    }
    expect(reclaimed).toHaveLength(1);
    expect(reclaimed[0]).toMatchObject({ before: heap(265, 96), after: heap(150, 60) });
  });
});
