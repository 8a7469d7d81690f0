/**
 * The Plan object (seed 000, DESIGN.md §5, OPERATOR_API.md "Plan") as zod schemas: one
 * contract for the REST/tRPC input (JSON or YAML), the console's import dialog, the plan
 * engine (lib/plan.ts), the agent's update executors and the CLI. Pure module.
 *
 * Two dialects share one shape (research/engines.md A.1): k0s Autopilot's
 * `apiVersion: autopilot.k0sproject.io/v1beta2` with commands `k0supdate` / `airgapupdate`,
 * accepted as is (seed 000's YAML, `metadata.annotations: <omitted>` and its `status` block
 * included; status is the server's and is ignored), and Drover's `apiVersion: drover/v1`,
 * which adds the `action` command and two plan-wide settings (`requireApproval`, `deadline`).
 * Unknown fields are refused with the path of the field (strict objects).
 */
import { DEFAULT_HEALTH_POLICY, HEALTH_POLICIES, type HealthPolicy } from "./health-policy";
import { z } from "zod";
import { ActionKind, DeviceName, jsonRecord, Platform } from "./protocol";
import { parseSelector, SelectorError, type LabelSelector } from "./label-selector";
import { Duration } from "./fleet-spec";

export const K0S_PLAN_API_VERSION = "autopilot.k0sproject.io/v1beta2";
export const DROVER_PLAN_API_VERSION = "drover/v1";
export const PLAN_COMMAND_KINDS = ["k0supdate", "airgapupdate", "action"] as const;
export type PlanCommandKind = (typeof PLAN_COMMAND_KINDS)[number];
/** Action kinds a plan signals nodes with for its update commands (the agent's executors). */
export const PLAN_UPDATE_ACTION_KINDS = ["k0supdate", "airgapupdate"] as const;
export type PlanUpdateActionKind = (typeof PLAN_UPDATE_ACTION_KINDS)[number];
export const PLAN_GROUPS = ["controllers", "workers"] as const;
export type PlanGroup = (typeof PLAN_GROUPS)[number];
/** Most nodes one plan may discover over all its commands. */
export const MAX_PLAN_NODES = 20_000;

// ---------------------------------------------------------------------------------------
// Discovery

/**
 * k0s field selectors support `metadata.name` only (docs "Selector Target Discovery"):
 * `metadata.name=worker2`, `==` and `!=`, comma-separated, all must hold.
 */
export interface FieldRequirement {
  op: "=" | "!=";
  name: string;
}

export function parseFieldSelector(text: string): FieldRequirement[] {
  const out: FieldRequirement[] = [];
  for (const raw of text.split(",")) {
    const term = raw.trim();
    if (term === "") continue;
    const m = /^metadata\.name\s*(==|=|!=)\s*(.+)$/.exec(term);
    if (!m) throw new SelectorError(`"${term}": only metadata.name=NAME or metadata.name!=NAME is supported`);
    const name = m[2]!.trim();
    if (!DeviceName.safeParse(name).success) throw new SelectorError(`"${name}" is not a device name`);
    out.push({ op: m[1] === "!=" ? "!=" : "=", name });
  }
  return out;
}

const LabelSelectorText = z.string().max(2000).superRefine((text, ctx) => {
  try {
    parseSelector(text);
  } catch (error) {
    ctx.addIssue({ code: "custom", message: (error as Error).message });
  }
});
const FieldSelectorText = z.string().max(2000).superRefine((text, ctx) => {
  try {
    parseFieldSelector(text);
  } catch (error) {
    ctx.addIssue({ code: "custom", message: (error as Error).message });
  }
});

export const PlanDiscovery = z
  .strictObject({
    static: z.strictObject({ nodes: z.array(DeviceName).min(1, "at least one node").max(MAX_PLAN_NODES) }).optional(),
    /** `{}` selects every node of the group (k0s). */
    selector: z.strictObject({ labels: LabelSelectorText.optional(), fields: FieldSelectorText.optional() }).optional(),
  })
  .refine((d) => (d.static === undefined) !== (d.selector === undefined), "give exactly one of static or selector");
export type PlanDiscovery = z.infer<typeof PlanDiscovery>;

export const PlanTarget = z.strictObject({
  discovery: PlanDiscovery,
  /** Workers signalled at once; controllers are always one at a time (k0s ignores it there). */
  limits: z.strictObject({ concurrent: z.number().int().min(1).max(10_000).default(1) }).optional(),
});
export type PlanTarget = z.infer<typeof PlanTarget>;

export const PlanTargets = z.strictObject({ controllers: PlanTarget.optional(), workers: PlanTarget.optional() });
export type PlanTargets = z.infer<typeof PlanTargets>;

// ---------------------------------------------------------------------------------------
// Commands

const Sha256 = z.string().regex(/^[a-fA-F0-9]{64}$/, "64 hex digits");
export const PlatformResource = z.strictObject({ url: z.url({ protocol: /^https?$/ }), sha256: Sha256.optional() });
export type PlatformResource = z.infer<typeof PlatformResource>;
export const Platforms = jsonRecord(PlatformResource)
  .refine((p) => Object.keys(p).length > 0, "at least one platform, e.g. linux-amd64")
  .refine((p) => Object.keys(p).every((k) => Platform.safeParse(k).success), "platform keys are os-arch, e.g. linux-amd64");

const Version = z.string().trim().min(1).max(128);

export const K0sUpdateCommand = z.strictObject({
  version: Version,
  forceupdate: z.boolean().optional(),
  platforms: Platforms,
  targets: PlanTargets,
});
export const AirgapUpdateCommand = z.strictObject({ version: Version, platforms: Platforms, workers: PlanTarget });
/** Drover's own: run an action kind on the targets (no platform needed). */
export const ActionCommand = z.strictObject({ kind: ActionKind, args: jsonRecord(z.unknown()).default({}), targets: PlanTargets });

export const PlanCommand = z
  .strictObject({
    k0supdate: K0sUpdateCommand.optional(),
    airgapupdate: AirgapUpdateCommand.optional(),
    action: ActionCommand.optional(),
    /** Drover's own: the least healthy node summary its signals go to (lib/health-policy.ts); Degraded by default. */
    healthPolicy: z.enum(HEALTH_POLICIES).optional(),
  })
  .refine((c) => [c.k0supdate, c.airgapupdate, c.action].filter((x) => x !== undefined).length === 1, "each command is exactly one of k0supdate, airgapupdate or action");
export type PlanCommand = z.infer<typeof PlanCommand>;

// ---------------------------------------------------------------------------------------
// The plan

export const PlanMetadata = z.strictObject({
  /** Optional; k0s requires `autopilot`, Drover gives every plan its own id and keeps this as a label. */
  name: z.string().trim().min(1).max(253).optional(),
  /** Tolerated as anything: seed 000's example has the placeholder `<omitted>` there. */
  annotations: z.unknown().optional(),
  labels: z.unknown().optional(),
});

export const PlanSpec = z.strictObject({
  /** User-provided, informational (k0s); Drover's own id is server-made, so reuse is harmless. */
  id: z.string().max(253).optional(),
  /** Informational only (k0s: "Autopilot does nothing with this"). */
  timestamp: z.string().max(253).optional(),
  commands: z.array(PlanCommand).min(1, "at least one command").max(50, "at most 50 commands"),
  /** drover/v1: the whole plan waits for one operator's approval before any node is signalled. */
  requireApproval: z.boolean().optional(),
  /** drover/v1: from creation; past it the plan ends DeadlineExceeded and its unfinished actions are cancelled. */
  deadline: Duration.optional(),
});
export type PlanSpec = z.infer<typeof PlanSpec>;

export const PlanInput = z
  .strictObject({
    apiVersion: z.enum([K0S_PLAN_API_VERSION, DROVER_PLAN_API_VERSION]),
    kind: z.literal("Plan"),
    metadata: PlanMetadata.optional(),
    spec: PlanSpec,
    /** Written by the server only: accepted (seed 000's example carries one) and ignored. */
    status: z.unknown().optional(),
  })
  .superRefine((plan, ctx) => {
    if (plan.apiVersion !== K0S_PLAN_API_VERSION) return;
    plan.spec.commands.forEach((c, i) => {
      if (c.action) ctx.addIssue({ code: "custom", path: ["spec", "commands", i, "action"], message: `the action command is Drover's: use apiVersion ${DROVER_PLAN_API_VERSION}` });
    });
    for (const key of ["requireApproval", "deadline"] as const) {
      if (plan.spec[key] !== undefined) ctx.addIssue({ code: "custom", path: ["spec", key], message: `is Drover's: use apiVersion ${DROVER_PLAN_API_VERSION}, or the create option` });
    }
  });
export type PlanInput = z.infer<typeof PlanInput>;

/** Options given with a create, for either dialect (the k0s YAML has no place for them). */
export const PlanCreateOptions = z.strictObject({
  requireApproval: z.boolean().optional(),
  deadline: Duration.optional(),
});
export type PlanCreateOptions = z.infer<typeof PlanCreateOptions>;

// ---------------------------------------------------------------------------------------
// Reading a command uniformly

export interface CommandShape {
  kind: PlanCommandKind;
  /** Update commands: the version; action: the action kind. */
  version: string | null;
  platforms: Record<string, PlatformResource> | null;
  targets: Partial<Record<PlanGroup, PlanTarget>>;
  action: { kind: string; args: Record<string, unknown> } | null;
  forceupdate: boolean;
  /** Which nodes its signals go to, by their summary (lib/health-policy.ts). */
  healthPolicy: HealthPolicy;
}

export function commandShape(c: PlanCommand): CommandShape {
  const healthPolicy = c.healthPolicy ?? DEFAULT_HEALTH_POLICY;
  if (c.k0supdate)
    return { kind: "k0supdate", version: c.k0supdate.version, platforms: c.k0supdate.platforms, targets: c.k0supdate.targets, action: null, forceupdate: c.k0supdate.forceupdate ?? false, healthPolicy };
  if (c.airgapupdate)
    return { kind: "airgapupdate", version: c.airgapupdate.version, platforms: c.airgapupdate.platforms, targets: { workers: c.airgapupdate.workers }, action: null, forceupdate: false, healthPolicy };
  const a = c.action!;
  return { kind: "action", version: null, platforms: null, targets: a.targets, action: { kind: a.kind, args: a.args }, forceupdate: false, healthPolicy };
}

/** A discovery's selector as requirements (labels) and name requirements (fields). */
export function discoverySelector(d: PlanDiscovery): { labels: LabelSelector; fields: FieldRequirement[] } | null {
  if (!d.selector) return null;
  return { labels: parseSelector(d.selector.labels ?? ""), fields: parseFieldSelector(d.selector.fields ?? "") };
}

export function describeDiscovery(d: PlanDiscovery): string {
  if (d.static) return `static ${d.static.nodes.join(", ")}`;
  const parts = [d.selector?.labels ? `labels ${d.selector.labels}` : "", d.selector?.fields ? `fields ${d.selector.fields}` : ""].filter(Boolean);
  return parts.length ? `selector ${parts.join("; ")}` : "selector {} (every node)";
}

// ---------------------------------------------------------------------------------------
// The signal: what a node's action carries (agent/executors read it)

/** Args of a `k0supdate` / `airgapupdate` action: the node's platform's file and the version to apply. */
export const PlanSignalArgs = z.object({
  planId: z.string(),
  command: z.number().int().min(0),
  version: Version,
  platform: Platform,
  url: z.url(),
  sha256: Sha256.optional(),
  forceupdate: z.boolean().optional(),
});
export type PlanSignalArgs = z.infer<typeof PlanSignalArgs>;
