/** Colours of workflow phases, keyed by their type so a new phase needs a colour (steps: run-graph.ts). */
import type { WorkflowPhase } from "@/lib/workflow-status";
import type { Tone } from "../ui/badge";

export const workflowPhaseTone: Record<WorkflowPhase, Tone> = {
  Pending: "gray",
  Running: "blue",
  Succeeded: "green",
  Failed: "red",
};
