/** Colours of plan, command and node states, keyed by their types so a new state needs a colour. */
import type { PlanNodeState, PlanState } from "@/lib/plan-status";
import type { Tone } from "../ui/badge";

/** The seed's core states in the action legend's colours; every error state red but the operator's and the clock's ends. */
export const planStateTone: Record<PlanState, Tone> = {
  NewPlan: "purple",
  SchedulableWait: "blue",
  Schedulable: "blue",
  Completed: "green",
  IncompleteTargets: "red",
  InconsistentTargets: "red",
  Restricted: "red",
  MissingPlatform: "red",
  MissingSignalNode: "red",
  ApplyFailed: "red",
  Cancelled: "gray",
  DeadlineExceeded: "orange",
};

export const planNodeStateTone: Record<PlanNodeState, Tone> = {
  SignalPending: "slate",
  SignalSent: "blue",
  SignalCompleted: "green",
  SignalMissingNode: "red",
  SignalMissingPlatform: "red",
  SignalApplyFailed: "red",
  SignalSkipped: "gray",
};
