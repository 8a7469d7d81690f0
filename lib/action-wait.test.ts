/** Why an action waits (issue 10), one row per rule of lib/action-wait.ts. */
import { describe, expect, it } from "vitest";
import { explainWait, type WaitFacts, type WaitReason } from "./action-wait";

const AT = new Date("2026-11-23T10:00:00Z");
const facts = (patch: Partial<WaitFacts> = {}): WaitFacts => ({
  state: "PENDING_SCHEDULE",
  kind: "reboot",
  offeredAt: null,
  cancelRequested: false,
  expiresAt: null,
  healthPolicy: "Degraded",
  device: { name: "edge-1", summary: "Online", lifecycle: "Enrolled", decommissionRequested: false },
  earlier: null,
  fullPolicies: [],
  ...patch,
});
const device = (patch: Partial<WaitFacts["device"]>) => ({ device: { ...facts().device, ...patch } });

describe("explainWait", () => {
  const rows: [string, WaitFacts, WaitReason | null, RegExp | null][] = [
    ["PENDING_APPROVE: an operator decides", facts({ state: "PENDING_APPROVE" }), "Approval", /approve or reject.*reboot needs approval/],
    ["PENDING_SCHEDULE on a Degraded device: it goes by default", facts(device({ summary: "Degraded" })), "NextPoll", /ready: it goes out on edge-1's next poll/],
    [
      "PENDING_SCHEDULE on a Degraded device, Online only",
      facts({ healthPolicy: "Online", ...device({ summary: "Degraded" }) }),
      "DeviceNotOnline",
      /^device edge-1 is Degraded: this action goes to devices that are Online \(its health policy, Online\); it goes out once the device is Online again$/,
    ],
    ["PENDING_SCHEDULE on a device in Error", facts(device({ summary: "Error" })), "DeviceNotOnline", /^device edge-1 is Error: this action goes to devices that are Online or Degraded; it goes out once/],
    ["PENDING_SCHEDULE on a device in Error, Error allowed", facts({ healthPolicy: "Error", ...device({ summary: "Error" }) }), "NextPoll", /ready/],
    ["PENDING_SCHEDULE on an Offline device, whatever the policy", facts({ healthPolicy: "Error", ...device({ summary: "Offline" }) }), "DeviceNotOnline", /is Offline: .* Online, Degraded or Error/],
    ["decommission requested wins over not Online", facts(device({ summary: "Offline", decommissionRequested: true })), "DeviceLeaving", /asked to decommission: it gets no new actions/],
    ["not Enrolled", facts(device({ lifecycle: "Decommissioned" })), "DeviceLeaving", /is Decommissioned/],
    [
      "a full concurrency policy names its selector, its max and who holds it",
      facts({ fullPolicies: [{ selector: "drover/role=controller", max: 1, busy: ["ctl-2"] }] }),
      "ConcurrencyPolicy",
      /"drover\/role=controller" allows 1 device at once and is full: ctl-2/,
    ],
    ["many holders are counted, not all listed", facts({ fullPolicies: [{ selector: "site=a", max: 2, busy: ["a", "b", "c", "d", "e"] }] }), "ConcurrencyPolicy", /a, b, c and 2 more/],
    ["ready: the next poll", facts(), "NextPoll", /goes out on edge-1's next poll/],
    ["offered: waiting for the agent to confirm", facts({ offeredAt: AT }), "Delivering", /sent to the agent at 2026-11-23T10:00:00.000Z/],
    ["offered wins over the device's state (the agent may have it)", facts({ offeredAt: AT, ...device({ summary: "Degraded" }) }), "Delivering", null],
    ["NEW behind a running action", facts({ state: "NEW", earlier: { id: "0123456789abcdef", kind: "exec", state: "RUNNING" } }), "EarlierAction", /one action at a time: waits for exec 01234567 \(RUNNING\)/],
    ["NEW, nothing before it", facts({ state: "NEW" }), "Queued", /will start it when possible/],
    ["NEW, cancel requested", facts({ state: "NEW", cancelRequested: true }), "Cancelling", /cancel requested/],
    ["RUNNING, cancel requested", facts({ state: "RUNNING", cancelRequested: true }), "Cancelling", /waiting for the agent to stop it/],
    ["RUNNING: not waiting", facts({ state: "RUNNING" }), null, null],
    ["DONE: not waiting", facts({ state: "DONE" }), null, null],
    ["CANCELLED: not waiting", facts({ state: "CANCELLED" }), null, null],
  ];
  it.each(rows)("%s", (_rule, f, reason, message) => {
    const wait = explainWait(f);
    expect(wait?.reason ?? null).toBe(reason);
    if (message) expect(wait?.message).toMatch(message);
  });

  it("an expiry is said with the reason", () => {
    const wait = explainWait(facts({ ...device({ summary: "Offline" }), expiresAt: new Date("2026-11-23T11:00:00Z") }));
    expect(wait).toEqual({ reason: "DeviceNotOnline", message: expect.stringMatching(/Online or Degraded again; cancelled if not started by 2026-11-23T11:00:00.000Z$/) });
  });
});
