/**
 * The plan import's model: the YAML (either dialect of lib/plan-spec) validated with
 * PlanInput, the schema the server checks with, each problem at its line (lib/yaml-problems).
 * Pure.
 */
import { PlanInput } from "@/lib/plan-spec";
import { Duration } from "@/lib/fleet-spec";
import { parseYamlWith, type YamlProblem } from "@/lib/yaml-problems";
import type { Document } from "yaml";

export interface ParsedPlan {
  doc: Document | null;
  /** The plain value, as written: what is sent (the server validates what the operator wrote). */
  value: unknown;
  problems: YamlProblem[];
  input: PlanInput | null;
}

export function parsePlanYaml(text: string): ParsedPlan {
  const { doc, value, problems, input } = parseYamlWith(text, PlanInput, "write a Plan object");
  return { doc, value, problems, input };
}

/** The create option's deadline ("30m", "2h"), or why not; empty is none. */
export function deadlineProblem(text: string): string | null {
  if (text.trim() === "") return null;
  const r = Duration.safeParse(text.trim());
  return r.success ? null : (r.error.issues[0]?.message ?? "not a duration");
}

/** A small Drover plan to start from: a k0s update of controllers one at a time, then workers. */
export const NEW_PLAN_YAML = `apiVersion: drover/v1
kind: Plan
metadata:
  name: k0s-v1.31.2
spec:
  commands:
    # Controllers are updated one at a time, then the workers, two at once.
    - k0supdate:
        version: v1.31.2+k0s.0
        platforms:
          linux-amd64:
            url: https://github.com/k0sproject/k0s/releases/download/v1.31.2+k0s.0/k0s-v1.31.2+k0s.0-amd64
        targets:
          controllers:
            discovery:
              static:
                nodes: [controller-0]
          workers:
            discovery:
              selector:
                labels: site=lab
            limits:
              concurrent: 2
`;
