/**
 * What saving the fleet editor's YAML will do (issue 21), shown before it is saved: the
 * template's diff against the current version and the rollout that diff starts, under the
 * policy being saved (the server rolls a new template out with it). Decided as the server
 * decides (server/fleets/fleets.ts updateFleet): a part changed when its key-sorted JSON
 * differs; no policy means every member at once. Pure: the fleet as loaded, the parsed input.
 */
import YAML from "yaml";
import { formatSelector } from "@/lib/label-selector";
import { resolveCount, selectorRequirements, type FleetInput, type RolloutPolicy } from "@/lib/fleet-spec";
import { stableJson } from "@/lib/stable-json";
import { unifiedDiff } from "@/lib/unified-diff";
import type { Fleet } from "./types";

export interface SavePreview {
  /** The template changed: a new template version, and a rollout. */
  templateChanged: boolean;
  /** The other parts that change: selector, rolloutPolicy, labels. */
  otherChanges: string[];
  /** The template's unified diff, as the template versions list shows it; "" when unchanged. */
  diff: string;
  /** The template version the save makes, or null. */
  nextVersion: number | null;
  /** The rollout it starts, a sentence a line; empty when the template does not change. */
  rollout: string[];
}

const specYaml = (spec: unknown) => YAML.stringify(spec, { sortMapEntries: false });
const devices = (n: number) => `${n.toLocaleString("en-US")} device${n === 1 ? "" : "s"}`;

export function savePreview(current: Pick<Fleet, "metadata" | "spec" | "status">, next: FleetInput): SavePreview {
  const templateChanged = stableJson(current.spec.template.spec) !== stableJson(next.spec.template.spec);
  const otherChanges = [
    stableJson(current.spec.selector) !== stableJson(next.spec.selector) ? "selector" : null,
    stableJson(current.spec.rolloutPolicy ?? null) !== stableJson(next.spec.rolloutPolicy ?? null) ? "rolloutPolicy" : null,
    stableJson(current.metadata.labels) !== stableJson(next.metadata.labels ?? {}) ? "labels" : null,
  ].filter((x): x is string => x !== null);
  if (!templateChanged) return { templateChanged, otherChanges, diff: "", nextVersion: null, rollout: [] };
  const version = Number(current.status.templateVersion);
  const nextVersion = version + 1;
  const diff = unifiedDiff(specYaml(current.spec.template.spec), specYaml(next.spec.template.spec), `version ${version}`, `version ${nextVersion}`);
  const members = current.status.devices.total;
  return { templateChanged, otherChanges, diff, nextVersion, rollout: rolloutLines(next.spec.rolloutPolicy, members, nextVersion) };
}

/** The rollout a new template version starts over `members` devices (the fleet's members now). */
export function rolloutLines(policy: RolloutPolicy | undefined, members: number, version: number): string[] {
  if (!policy) return [`All ${members.toLocaleString("en-US")} members get version ${version} at once: this fleet has no rollout policy.`];
  const lines: string[] = [];
  const c = policy.canary;
  if (c) {
    const n = c.selector ? null : resolveCount(c.replicas, members);
    const who = c.selector ? `${String(c.replicas)} of the members matching ${formatSelector(selectorRequirements(c.selector))}` : devices(n ?? 0);
    lines.push(
      c.validationMode === "manual"
        ? `Canary: ${who} first, until an operator promotes it.`
        : `Canary: ${who} first, watched for ${c.duration ?? "10m"} (no restart for ${c.noRestartsDuration ?? "5m"}).`,
    );
  }
  const sequence = policy.deviceSelection?.sequence ?? [];
  sequence.forEach((b, i) => {
    const among = b.selector ? ` of the members matching ${formatSelector(selectorRequirements(b.selector))}` : "";
    const size = b.limit === undefined ? `every member${among ? among.replace(" of the members", "") : ""}` : b.selector ? `${String(b.limit)}${among}` : `${devices(resolveCount(b.limit, members))}${typeof b.limit === "string" ? ` (${b.limit})` : ""}`;
    lines.push(`Batch ${i + 1}: ${size}${b.successThreshold ? `, ${b.successThreshold} to succeed` : ""}.`);
  });
  if (c || sequence.length > 0) lines.push(`Then the rest of the ${members.toLocaleString("en-US")} members.`);
  else lines.push(`All ${members.toLocaleString("en-US")} members, as one batch.`);
  lines.push(`A stage goes on when ${policy.successThreshold} of its devices succeed${policy.disruptionBudget?.maxUnavailable ? `; at most ${policy.disruptionBudget.maxUnavailable} unavailable at once` : ""}.`);
  return lines;
}
