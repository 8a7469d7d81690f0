/**
 * The status axes a device is filtered and counted by, with their state tables. Filter
 * options come from the tables (never a second list), less the states the seed marks as
 * not yet supported.
 */
import { applicationSummaryMachine, lifecycleMachine, summaryMachine, updatedMachine } from "@/lib/device-status";
import { stateNames, type StateMachine } from "@/lib/state-machine";
import type { Tone } from "../ui/badge";
import { applicationSummaryTone, lifecycleTone, summaryTone, updatedTone } from "./tones";

export interface StatusAxis {
  /** Key in devices.counts and devices.list input. */
  key: "summary" | "updated" | "applicationSummary" | "lifecycle";
  /** URL query parameter. */
  param: string;
  title: string;
  machine: StateMachine<string>;
  tones: Record<string, Tone>;
}

export const STATUS_AXES: readonly StatusAxis[] = [
  { key: "summary", param: "summary", title: "Status", machine: summaryMachine, tones: summaryTone },
  { key: "updated", param: "updated", title: "Update", machine: updatedMachine, tones: updatedTone },
  { key: "applicationSummary", param: "apps", title: "Applications", machine: applicationSummaryMachine, tones: applicationSummaryTone },
  { key: "lifecycle", param: "lifecycle", title: "Lifecycle", machine: lifecycleMachine, tones: lifecycleTone },
];

export function axisOptions(axis: StatusAxis): string[] {
  return stateNames(axis.machine).filter((s) => !axis.machine.states[s]?.notYetSupported);
}
