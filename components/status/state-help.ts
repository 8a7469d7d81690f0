/**
 * What each state means, for the tooltip of its badge: every tone table the console colours
 * states with, paired with the state table (lib/*-status) whose descriptions the engine and the
 * diagrams share. A state name on screen (SignalSent, PENDING_SCHEDULE) is then never left
 * unexplained: hover or focus it for the sentence.
 */
import { actionMachine } from "@/lib/action-status";
import { applicationSummaryMachine, decommissioningMachine, lifecycleMachine, summaryMachine, updatedMachine, updateStateMachine } from "@/lib/device-status";
import { enrollmentMachine } from "@/lib/enrollment-status";
import { planMachine, planNodeMachine } from "@/lib/plan-status";
import { rolloutMachine } from "@/lib/rollout-status";
import type { StateMachine } from "@/lib/state-machine";
import { stepMachine, targetMachine, workflowMachine } from "@/lib/workflow-status";
import { rolloutPhaseTone } from "../fleets/tones";
import { planNodeStateTone, planStateTone } from "../plans/tones";
import { stepPhaseTone, targetPhaseTone, workflowPhaseTone } from "../workflows/tones";
import type { Tone } from "../ui/badge";
import {
  actionStateTone,
  applicationSummaryTone,
  decommissioningTone,
  enrollmentTone,
  lifecycleTone,
  summaryTone,
  updatedTone,
  updateStateTone,
} from "./tones";

const MACHINES = new Map<Record<string, Tone>, StateMachine<string>>([
  [actionStateTone, actionMachine],
  [summaryTone, summaryMachine],
  [updatedTone, updatedMachine],
  [updateStateTone, updateStateMachine],
  [applicationSummaryTone, applicationSummaryMachine],
  [lifecycleTone, lifecycleMachine],
  [decommissioningTone, decommissioningMachine],
  [enrollmentTone, enrollmentMachine],
  [planStateTone, planMachine],
  [planNodeStateTone, planNodeMachine],
  [rolloutPhaseTone, rolloutMachine],
  [workflowPhaseTone, workflowMachine],
  [stepPhaseTone, stepMachine],
  [targetPhaseTone, targetMachine],
] as [Record<string, Tone>, StateMachine<string>][]);

/** The sentence that explains `state`, if the table it is coloured with has a state machine. */
export function stateHelp(table: Record<string, Tone>, state: string): string | undefined {
  return MACHINES.get(table)?.states[state]?.description;
}
