/**
 * The Fleet object (OPERATOR_API.md "Object shapes", DESIGN.md §3) as zod schemas: one
 * contract for the REST/tRPC input (JSON or YAML), the console's editor, the rollout engine
 * (lib/rollout.ts) and the CLI. Kubernetes-style: `{metadata, spec, status}`, `status` written
 * only by the server, unknown fields refused with 400 naming the field (strict objects).
 * Durations are strings like "30s", "10m", "24h"; percentages like "50%". Pure module.
 *
 * Canary rules and defaults follow ExtendedDaemonSet (research/engines.md C.1): replicas 1,
 * duration 10m and noRestartsDuration 5m in auto mode (neither allowed in manual mode),
 * autoPause {enabled, maxRestarts 2}, autoFail {enabled, maxRestarts 5} with
 * autoFail.maxRestarts > autoPause.maxRestarts and canaryTimeout > duration. Batches, success
 * threshold (90%), update timeout (24h) and the disruption budget follow Flight Control (C.3).
 */
import { z } from "zod";
import { ApplicationSpec, ConfigFile, DeviceName, jsonRecord, LabelsSchema, SpecArtifact } from "./protocol";
import { isValidLabelKey, isValidLabelValue, type LabelSelector, type Requirement } from "./label-selector";
import { AgentVersion } from "./agent-version";
import { DURATION, parseDuration } from "./duration";

// ---------------------------------------------------------------------------------------
// Units

export { parseDuration };

export const Duration = z.string().regex(DURATION, 'a duration such as "30s", "10m" or "24h"');

const PERCENT = /^(\d{1,3})%$/;
export const Percentage = z
  .string()
  .regex(PERCENT, 'a percentage such as "90%"')
  .refine((p) => Number(PERCENT.exec(p)?.[1]) <= 100, "at most 100%");

/** "90%" → 0.9 */
export function parsePercentage(text: string): number {
  const m = PERCENT.exec(text);
  if (!m) throw new Error(`not a percentage: "${text}"`);
  return Number(m[1]) / 100;
}

/** A count (integer ≥ 1) or a percentage of a population ("10%"). */
export const CountOrPercent = z.union([z.number().int().min(1), Percentage]);
export type CountOrPercent = z.infer<typeof CountOrPercent>;

/** A count, or a percentage of `population` rounded up (EDS), at least 1 when the population is not empty. */
export function resolveCount(value: CountOrPercent, population: number): number {
  if (population <= 0) return 0;
  const n = typeof value === "number" ? value : Math.ceil(parsePercentage(value) * population);
  return Math.min(population, Math.max(1, n));
}

// ---------------------------------------------------------------------------------------
// Label selectors in object form (Kubernetes LabelSelector)

const LabelKey = z.string().refine(isValidLabelKey, "invalid label key");
const LabelValue = z.string().refine(isValidLabelValue, "invalid label value");

export const LabelSelectorObject = z.strictObject({
  matchLabels: LabelsSchema.optional(),
  matchExpressions: z
    .array(
      z.strictObject({
        key: LabelKey,
        operator: z.enum(["In", "NotIn", "Exists", "DoesNotExist"]),
        values: z.array(LabelValue).optional(),
      }),
    )
    .optional(),
});
export type LabelSelectorObject = z.infer<typeof LabelSelectorObject>;

/** The object form as requirements for lib/label-selector's matcher. An empty selector matches everything. */
export function selectorRequirements(selector: LabelSelectorObject | undefined): LabelSelector {
  if (!selector) return [];
  const out: Requirement[] = Object.entries(selector.matchLabels ?? {}).map(([key, value]) => ({ key, op: "=" as const, values: [value] as [string] }));
  for (const e of selector.matchExpressions ?? []) {
    if (e.operator === "In") out.push({ key: e.key, op: "in", values: e.values ?? [] });
    else if (e.operator === "NotIn") out.push({ key: e.key, op: "notin", values: e.values ?? [] });
    else if (e.operator === "Exists") out.push({ key: e.key, op: "exists", values: [] });
    else out.push({ key: e.key, op: "!exists", values: [] });
  }
  return out;
}

// ---------------------------------------------------------------------------------------
// The device template: what becomes each member's rendered spec (its parts are the agent
// protocol's: lib/protocol.ts RenderedSpec)

export const DeviceTemplateSpec = z
  .strictObject({
    version: z.string().min(1).max(128),
    artifact: SpecArtifact.optional(),
    config: z.strictObject({ files: z.array(ConfigFile).max(256).default([]) }).default({ files: [] }),
    applications: z.array(ApplicationSpec).max(64).default([]),
    hooks: jsonRecord(z.unknown()).default({}),
    /** The agent version members run (issue 12): one the server holds (checked at apply); they upgrade themselves to it. */
    agent: z.strictObject({ version: AgentVersion }).optional(),
  })
  .superRefine((spec, ctx) => {
    const seen = new Set<string>();
    spec.applications.forEach((a, i) => {
      if (seen.has(a.name)) ctx.addIssue({ code: "custom", path: ["applications", i, "name"], message: `duplicate application "${a.name}"` });
      seen.add(a.name);
    });
    const paths = new Set<string>();
    spec.config.files.forEach((f, i) => {
      if (paths.has(f.path)) ctx.addIssue({ code: "custom", path: ["config", "files", i, "path"], message: `duplicate file "${f.path}"` });
      paths.add(f.path);
    });
  });
export type DeviceTemplateSpec = z.infer<typeof DeviceTemplateSpec>;

// ---------------------------------------------------------------------------------------
// Rollout policy

export const CANARY_DEFAULTS = {
  replicas: 1,
  duration: "10m",
  noRestartsDuration: "5m",
  autoPauseMaxRestarts: 2,
  autoFailMaxRestarts: 5,
} as const;

export const CanaryPolicy = z
  .strictObject({
    replicas: CountOrPercent.default(CANARY_DEFAULTS.replicas),
    selector: LabelSelectorObject.optional(),
    /** Canary phase length; default 10m in auto mode, refused in manual mode. */
    duration: Duration.optional(),
    /** Minimum time since the last restart to end the canary; default 5m in auto mode, refused in manual. */
    noRestartsDuration: Duration.optional(),
    autoPause: z.strictObject({ enabled: z.boolean().default(true), maxRestarts: z.number().int().min(0).default(CANARY_DEFAULTS.autoPauseMaxRestarts) }).default({
      enabled: true,
      maxRestarts: CANARY_DEFAULTS.autoPauseMaxRestarts,
    }),
    autoFail: z
      .strictObject({ enabled: z.boolean().default(true), maxRestarts: z.number().int().min(0).default(CANARY_DEFAULTS.autoFailMaxRestarts), canaryTimeout: Duration.optional() })
      .default({ enabled: true, maxRestarts: CANARY_DEFAULTS.autoFailMaxRestarts }),
    validationMode: z.enum(["auto", "manual"]).default("auto"),
  })
  .superRefine((c, ctx) => {
    // ExtendedDaemonSet's validation rules, in its words.
    if (c.validationMode === "manual" && c.duration !== undefined) {
      ctx.addIssue({ code: "custom", path: ["duration"], message: "canary duration does not have effect with validationMode=manual" });
    }
    if (c.validationMode === "manual" && c.noRestartsDuration !== undefined) {
      ctx.addIssue({ code: "custom", path: ["noRestartsDuration"], message: "canary noRestartsDuration does not have effect with validationMode=manual" });
    }
    if (c.autoFail.enabled && c.autoPause.enabled && c.autoFail.maxRestarts <= c.autoPause.maxRestarts) {
      ctx.addIssue({ code: "custom", path: ["autoFail", "maxRestarts"], message: "canary autoFail.maxRestarts must be higher than autoPause.maxRestarts" });
    }
    const duration = c.duration ?? (c.validationMode === "auto" ? CANARY_DEFAULTS.duration : undefined);
    if (c.autoFail.canaryTimeout !== undefined && duration !== undefined && parseDuration(c.autoFail.canaryTimeout) <= parseDuration(duration)) {
      ctx.addIssue({ code: "custom", path: ["autoFail", "canaryTimeout"], message: "canary autoFail.canaryTimeout must be greater than the canary duration" });
    }
  });
export type CanaryPolicy = z.infer<typeof CanaryPolicy>;

/** The canary's effective durations in ms (defaults applied; null where manual mode has none). */
export function canaryDurations(c: CanaryPolicy): { durationMs: number | null; noRestartsMs: number | null; timeoutMs: number | null } {
  const auto = c.validationMode === "auto";
  return {
    durationMs: auto ? parseDuration(c.duration ?? CANARY_DEFAULTS.duration) : null,
    noRestartsMs: auto ? parseDuration(c.noRestartsDuration ?? CANARY_DEFAULTS.noRestartsDuration) : null,
    timeoutMs: c.autoFail.enabled && c.autoFail.canaryTimeout ? parseDuration(c.autoFail.canaryTimeout) : null,
  };
}

export const Batch = z.strictObject({
  selector: LabelSelectorObject.optional(),
  /** Of the population (fleet ∩ selector), counting devices earlier batches already updated. */
  limit: CountOrPercent.optional(),
  successThreshold: Percentage.optional(),
});
export type Batch = z.infer<typeof Batch>;

export const DisruptionBudget = z
  .strictObject({
    groupBy: z.array(LabelKey).default([]),
    maxUnavailable: z.number().int().min(1).optional(),
    minAvailable: z.number().int().min(1).optional(),
  })
  .refine((b) => b.maxUnavailable !== undefined || b.minAvailable !== undefined, "set maxUnavailable, minAvailable or both");
export type DisruptionBudget = z.infer<typeof DisruptionBudget>;

export const ROLLOUT_DEFAULTS = { successThreshold: "90%", defaultUpdateTimeout: "24h" } as const;

export const RolloutPolicy = z.strictObject({
  canary: CanaryPolicy.optional(),
  deviceSelection: z.strictObject({ strategy: z.literal("BatchSequence"), sequence: z.array(Batch).min(1) }).optional(),
  successThreshold: Percentage.default(ROLLOUT_DEFAULTS.successThreshold),
  disruptionBudget: DisruptionBudget.optional(),
  defaultUpdateTimeout: Duration.default(ROLLOUT_DEFAULTS.defaultUpdateTimeout),
});
export type RolloutPolicy = z.infer<typeof RolloutPolicy>;

// ---------------------------------------------------------------------------------------
// The Fleet object

export const FleetName = DeviceName;

export const FleetSpec = z.strictObject({
  /** A device belongs to at most one fleet; on overlap it stays where it is. */
  selector: LabelSelectorObject,
  template: z.strictObject({ spec: DeviceTemplateSpec }),
  /** Without one, a template change goes to every member at once. */
  rolloutPolicy: RolloutPolicy.optional(),
});
export type FleetSpec = z.infer<typeof FleetSpec>;

/** What an operator sends (POST/PUT, JSON or YAML). `status` may be sent back as read; it is ignored. */
export const FleetInput = z.strictObject({
  apiVersion: z.literal("drover/v1").optional(),
  kind: z.literal("Fleet").optional(),
  metadata: z.strictObject({ name: FleetName, labels: LabelsSchema.optional() }),
  spec: FleetSpec,
  status: z.unknown().optional(),
});
export type FleetInput = z.infer<typeof FleetInput>;

/** Kubernetes-style condition. */
export interface Condition {
  type: string;
  status: "True" | "False" | "Unknown";
  reason: string;
  message: string;
  lastTransitionTime: string;
}
