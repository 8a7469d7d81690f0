/** Colours of a rollout's phases and of template version outcomes, keyed by their types so a new name needs a colour. */
import type { RolloutPhase } from "@/lib/rollout-status";
import type { Tone } from "../ui/badge";
import type { TemplateVersionItem } from "./types";

export const rolloutPhaseTone: Record<RolloutPhase, Tone> = {
  New: "purple",
  Canary: "blue",
  CanaryPaused: "amber",
  RollingOut: "blue",
  Suspended: "orange",
  Paused: "amber",
  Completed: "green",
  CanaryFailed: "red",
  Aborted: "red",
  Superseded: "gray",
};

export const templateOutcomeTone: Record<TemplateVersionItem["outcome"], Tone> = {
  Pending: "purple",
  RollingOut: "blue",
  Active: "green",
  Failed: "red",
  Superseded: "gray",
};

/** Fleet condition badges: True is notable for problem conditions, not for DevicesUpToDate. */
export function conditionTone(type: string, status: string): Tone {
  if (status === "Unknown") return "gray";
  const problem = type === "CanaryPaused" || type === "CanaryFailed" || type === "OverlappingSelectors";
  if (problem) return status === "True" ? (type === "CanaryFailed" ? "red" : "amber") : "gray";
  if (type === "DevicesUpToDate") return status === "True" ? "green" : "amber";
  return status === "True" ? "blue" : "gray";
}
