import { describe, expect, it } from "vitest";
import { actionMachine } from "@/lib/action-status";
import { planNodeMachine } from "@/lib/plan-status";
import { planNodeStateTone } from "../plans/tones";
import { stateHelp } from "./state-help";
import { actionStateTone, resourceTone } from "./tones";

describe("a state's badge explains it", () => {
  it("every state of an action and of a plan node has its sentence (PENDING_SCHEDULE and SignalSent stood unexplained)", () => {
    for (const s of Object.keys(actionMachine.states)) expect(stateHelp(actionStateTone, s), s).toBe(actionMachine.states[s as keyof typeof actionMachine.states]?.description);
    for (const s of Object.keys(planNodeMachine.states)) expect(stateHelp(planNodeStateTone, s), s).toMatch(/\w/);
    expect(stateHelp(actionStateTone, "PENDING_SCHEDULE")).toMatch(/\w{3,}/);
  });
  it("a table with no state machine, or a state not in it: none", () => {
    expect(stateHelp(resourceTone, "Healthy")).toBeUndefined();
    expect(stateHelp(actionStateTone, "NoSuchState")).toBeUndefined();
  });
});
