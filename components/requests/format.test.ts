/**
 * The console's pure pieces for action requests (issue 10): the progress line and bar, the
 * actions list's `?request=` filter, and which live events refresh request views.
 */
import { describe, expect, it } from "vitest";
import { isSettled, progressLine, progressSegments, type ProgressCounts } from "@/components/requests/format";
import { actionParamsToSearch, actionsHref, hasActionFilters, listInput, parseActionParams } from "@/components/actions/params";
import { REQUESTS_SETTLE_MS, settleDelayMs, targetId, targetsFor } from "@/components/live/invalidation";

const progress = (p: Partial<ProgressCounts>): ProgressCounts => ({ total: 0, done: 0, failed: 0, cancelled: 0, running: 0, waiting: 0, pendingApproval: 0, byState: {}, waitingBy: null, ...p });

describe("request progress", () => {
  it("reads as the issue puts it, and the bar splits waiting for approval from other waiting", () => {
    const p = progress({ total: 50, done: 41, waiting: 9 });
    expect(progressLine(p)).toBe("41/50 done, 9 waiting, 0 failed");
    expect(progressLine(progress({ total: 1996, done: 1000, running: 3, waiting: 990, failed: 2, cancelled: 1 }))).toBe("1,000/1,996 done, 3 running, 990 waiting, 2 failed, 1 cancelled");
    const bar = progressSegments(progress({ total: 10, waiting: 7, pendingApproval: 4, done: 3 }));
    expect(Object.fromEntries(bar.map((s) => [s.key, s.count]))).toEqual({ done: 3, running: 0, waiting: 3, approval: 4, failed: 0, cancelled: 0 });
    expect(isSettled(progress({ total: 4, done: 3, failed: 1 }))).toBe(true);
    expect(isSettled(progress({ total: 4, done: 3, running: 1 }))).toBe(false);
  });
});

describe("the actions list's ?request= filter", () => {
  it("round-trips through the URL, counts as a filter, and reaches the list input", () => {
    const p = parseActionParams(new URLSearchParams("request=5d1c-aa&state=DONE"));
    expect(p.request).toBe("5d1c-aa");
    expect(hasActionFilters(p)).toBe(true);
    expect(actionParamsToSearch(p)).toBe("?state=DONE&request=5d1c-aa");
    expect(listInput(p)).toMatchObject({ request: "5d1c-aa", state: ["DONE"] });
    expect(actionsHref({ request: "r1" })).toBe("/actions?request=r1");
    expect(listInput(parseActionParams(new URLSearchParams("")))).not.toHaveProperty("request");
  });
});

describe("live updates", () => {
  it("action and request events refresh request views after the burst", () => {
    expect(targetsFor({ objectKind: "ActionRequest", objectName: "r1", type: "RequestApproved" }).map(targetId)).toEqual(["events.list", "requests"]);
    const action = targetsFor({ objectKind: "Action", objectName: "a1", type: "ActionStateChanged" });
    expect(action.map(targetId)).toContain("requests");
    expect(settleDelayMs({ kind: "requests" })).toBe(REQUESTS_SETTLE_MS);
  });
});
