/** Colours of workflow phases, keyed by their type so a new phase needs a colour (steps: run-graph.ts). */
import type { StepPhase, TargetPhase, WorkflowPhase } from "@/lib/workflow-status";
import type { Tone } from "../ui/badge";

export const workflowPhaseTone: Record<WorkflowPhase, Tone> = {
  Pending: "gray",
  Running: "blue",
  Succeeded: "green",
  Failed: "red",
};

/** The run view's colours: Pending grey, Running blue, Retrying amber, Succeeded green, Failed red, Skipped and Omitted muted. */
export const stepPhaseTone: Record<StepPhase, Tone> = {
  Pending: "gray",
  Running: "blue",
  Retrying: "amber",
  Succeeded: "green",
  Failed: "red",
  Skipped: "slate",
  Omitted: "slate",
};

/** A step target's phase (lib/workflow-status targetMachine, issue 21). */
export const targetPhaseTone: Record<TargetPhase, Tone> = {
  Waiting: "gray",
  Running: "blue",
  Done: "green",
  Failed: "red",
  Skipped: "slate",
};
