/**
 * The operator API's answers as zod schemas: the OpenAPI document's success bodies
 * (`response` in routes.ts) and what tests/operator-openapi.test.ts checks every real answer
 * against. They describe what the procedures return after the route's `output` wrapper and a
 * JSON round trip (dates as ISO strings).
 *
 * Objects the server builds are strict: a field the code adds, renames or drops without
 * this file fails the test, so the document (and the CLI's generated types) cannot drift
 * from the code. What operators or agents wrote (specs, args, hooks, the rollout engine's
 * state) reuses their own schemas or stays open.
 */
import { z } from "zod";
import { AgentCapabilities, EnrollmentStatus, LabelsSchema, RenderedSpec, StatusReport, SystemFacts } from "../../lib/protocol";
import { FleetSpec, DeviceTemplateSpec } from "../../lib/fleet-spec";
import { WorkflowSpec, WORKFLOW_API_VERSION } from "../../lib/workflow-spec";
import { PLAN_COMMAND_KINDS } from "../../lib/plan-spec";
import { PLAN_NODE_STATES, PLAN_STATES } from "../../lib/plan-status";
import { STEP_PHASES, TARGET_PHASES, WORKFLOW_PHASES } from "../../lib/workflow-status";
import { ACTION_STATES } from "../../lib/action-status";
import { WAIT_REASONS } from "../../lib/action-wait";
import { HEALTH_POLICIES } from "../../lib/health-policy";
import { ROLES } from "../auth/roles";
import { TOKEN_STATUSES } from "../auth/tokens";
import { ENROLLMENT_TOKEN_STATUSES } from "../enrollment-tokens/tokens";
import { TEMPLATE_VERSION_OUTCOMES } from "../fleets/fleets";
import { REQUEST_ORIGINS } from "../requests/requests";
import { HISTORY_RANGES } from "../overview/buckets";
import { DeviceInventoryDoc } from "../devices/inventory-doc";

const Time = z.iso.datetime();
const enumOf = <T extends string>(names: readonly T[]) => z.enum(names as [T, ...T[]]);
/** A JSON object the server passes through as it was written (args, hooks, a plan's spec). */
const OpenRecord = z.record(z.string(), z.unknown());
const Labels = LabelsSchema;
const ConditionStatus = z.enum(["True", "False", "Unknown"]);

// ---------------------------------------------------------------------------------------
// auth

export const TokenCreatedResponse = z.strictObject({
  id: z.string(),
  token: z.string().describe("The secret: send it as `Authorization: Bearer <token>`"),
  expiresAt: Time,
  username: z.string(),
  role: z.enum(ROLES),
});

export const MeResponse = z.strictObject({ username: z.string(), role: z.enum(ROLES) });

export const ApiTokenView = z.strictObject({
  id: z.string(),
  name: z.string().nullable(),
  username: z.string(),
  createdAt: Time,
  expiresAt: Time,
  lastUsedAt: Time.nullable(),
  revokedAt: Time.nullable(),
  revokedBy: z.string().nullable(),
  status: enumOf(TOKEN_STATUSES),
  current: z.boolean().describe("The token this request was made with"),
});

// ---------------------------------------------------------------------------------------
// devices

const DeviceListItem = z.strictObject({
  id: z.string(),
  name: z.string(),
  alias: z.string().nullable(),
  role: z.string(),
  platform: z.string(),
  agentVersion: z.string(),
  labels: Labels,
  fleet: z.string().nullable().describe("The fleet that manages it; null: unmanaged"),
  owner: z.string().nullable(),
  templateVersion: z.string().nullable(),
  renderedVersion: z.number().int(),
  summary: z.string(),
  updatedStatus: z.string(),
  updatingReason: z.string().nullable(),
  updatedInfo: z.string().nullable(),
  applicationSummary: z.string(),
  lifecycle: z.string(),
  lastSeen: Time.nullable(),
  createdAt: Time,
  credentialRevokedAt: Time.nullable().describe("When its credential was revoked (by an operator, or at the end of its decommission); null: it is not"),
});

export const DeviceListResponse = z.strictObject({
  items: z.array(DeviceListItem),
  total: z.number().int(),
  nextCursor: z.string().nullable(),
  hiddenDecommissioned: z.number().int().describe("Decommissioned devices the filter left out"),
});

const { actions: _actions, system: _system, ...reportedShape } = StatusReport.shape;

export const DeviceResponse = z.strictObject({
  ...DeviceListItem.shape,
  enrollmentId: z.string().nullable(),
  spec: RenderedSpec.nullable().describe("The rendered spec the device should run; null: none yet"),
  renderedAt: Time.nullable(),
  decommissionRequestedAt: Time.nullable(),
  decommissionRequestedBy: z.string().nullable(),
  decommissioning: z.string().nullable(),
  decommissionInfo: z.string().nullable(),
  conflictPaused: z.boolean(),
  reported: z
    .object({ ...reportedShape, capabilities: AgentCapabilities.optional() })
    .nullable()
    .describe("The agent's last status report (its resources, applications, conditions); null before the first"),
  fleetTemplateVersion: z.string().nullable(),
  conditions: z.array(z.strictObject({ type: z.string(), status: ConditionStatus, reason: z.string(), message: z.string(), lastTransitionTime: Time.nullable() })),
  inventory: DeviceInventoryDoc,
});

export const BulkResponse = z.strictObject({
  matched: z.number().int(),
  changed: z.number().int(),
  skipped: z.array(z.strictObject({ reason: z.string(), count: z.number().int(), names: z.array(z.string()) })),
});

// ---------------------------------------------------------------------------------------
// enrollments and enrollment tokens

export const EnrollmentView = z.strictObject({
  id: z.string(),
  deviceName: z.string(),
  status: EnrollmentStatus,
  labels: Labels.describe("The labels the agent asked for"),
  approvedLabels: Labels.nullable().describe("Labels the approving operator put over them"),
  platform: z.string(),
  role: z.string(),
  agentVersion: z.string(),
  system: SystemFacts.nullable(),
  clientAddress: z.string().nullable().describe("The address the request first came from, at firstSeenAt"),
  firstSeenAt: Time,
  lastSeenAt: Time,
  lastSeenAddress: z.string().nullable(),
  reason: z.string().nullable(),
  decidedBy: z.string().nullable(),
  decidedAt: Time.nullable(),
  tokenIssuedAt: Time.nullable(),
  tokenId: z.string().nullable().describe("The enrollment token it came with"),
  createdAt: Time,
});

export const EnrollmentDenyManyResponse = z.strictObject({ count: z.number().int(), items: z.array(EnrollmentView) });

export const EnrollmentTokenView = z.strictObject({
  id: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  prefix: z.string().describe("The secret's first characters, to recognise it"),
  labels: Labels,
  uses: z.number().int(),
  maxUses: z.number().int().nullable(),
  expiresAt: Time.nullable(),
  autoApprove: z.boolean(),
  status: enumOf(ENROLLMENT_TOKEN_STATUSES),
  createdBy: z.string(),
  createdAt: Time,
  revokedAt: Time.nullable(),
  revokedBy: z.string().nullable(),
});

export const EnrollmentTokenCreatedResponse = z.strictObject({
  ...EnrollmentTokenView.shape,
  token: z.string().describe("The secret, shown this once"),
});

// ---------------------------------------------------------------------------------------
// events

export const EventView = z.strictObject({
  id: z.number().int(),
  time: Time,
  objectKind: z.string(),
  objectName: z.string(),
  type: z.string(),
  reason: z.string(),
  message: z.string(),
  actor: z.string(),
});

// ---------------------------------------------------------------------------------------
// actions and requests

export const ActionView = z.strictObject({
  id: z.string(),
  device: z.string(),
  deviceSummary: z.string(),
  kind: z.string(),
  args: OpenRecord,
  state: enumOf(ACTION_STATES),
  origin: z.string(),
  requestId: z.string().nullable(),
  rerunOf: z.string().nullable(),
  requireApproval: z.boolean(),
  healthPolicy: enumOf(HEALTH_POLICIES).describe("The least healthy device summary it is offered to: Online (only Online devices), Degraded (Online or Degraded, the default) or Error (Online, Degraded or Error)"),
  decision: z.string().nullable(),
  decisionReason: z.string().nullable(),
  decidedBy: z.string().nullable(),
  decidedAt: Time.nullable(),
  createdBy: z.string().nullable(),
  createdAt: Time,
  updatedAt: Time,
  expiresAt: Time.nullable(),
  offeredAt: Time.nullable(),
  startedAt: Time.nullable(),
  finishedAt: Time.nullable(),
  cancelRequestedAt: Time.nullable(),
  cancelRequestedBy: z.string().nullable(),
  error: z.string().nullable(),
  output: z.string().nullable().optional().describe("What the command printed (GET /actions/{id} only)"),
  waiting: z.strictObject({ reason: enumOf(WAIT_REASONS), message: z.string() }).nullable().describe("Why it has not run yet; null once it runs or ended"),
  refusal: z.string().nullable().describe("Why the device would refuse it (its capabilities), if it would"),
});

export const ActionPage = z.strictObject({ items: z.array(ActionView), total: z.number().int(), nextCursor: z.string().nullable() });

const RequestProgress = z.strictObject({
  total: z.number().int(),
  done: z.number().int(),
  failed: z.number().int(),
  cancelled: z.number().int(),
  running: z.number().int(),
  waiting: z.number().int(),
  pendingApproval: z.number().int(),
  byState: z.record(z.string(), z.number().int()).describe("Actions per state"),
  waitingBy: z
    .array(z.strictObject({ reason: enumOf(WAIT_REASONS), count: z.number().int(), message: z.string() }))
    .nullable()
    .describe("The waiting actions counted by why they wait (GET /requests/{id}); null in lists"),
});

export const RequestView = z.strictObject({
  id: z.string(),
  kind: z.string(),
  args: OpenRecord,
  origin: enumOf(REQUEST_ORIGINS),
  ref: z.string().nullable(),
  summary: z.string(),
  targetKind: z.string(),
  target: z.string(),
  requireApproval: z.boolean(),
  decision: z.string().nullable(),
  decisionReason: z.string().nullable(),
  decidedBy: z.string().nullable(),
  decidedAt: Time.nullable(),
  createdBy: z.string(),
  createdAt: Time,
  progress: RequestProgress,
});

export const RequestPage = z.strictObject({ items: z.array(RequestView), total: z.number().int(), nextCursor: z.string().nullable() });
export const RequestDetail = z.strictObject({ ...RequestView.shape, actions: ActionPage.describe("The first page of its actions (?limit=)") });
export const RequestDecided = z.strictObject({ request: RequestView, moved: z.number().int().describe("Actions this decision moved") });

/** A page of actions grouped by identical (state, error, output): server/actions/output-groups.ts. */
const OutputGroups = {
  actions: z.number().int().describe("Actions grouped (those matching ?search=)"),
  groups: z.number().int().describe("Groups in all; items is one page of them, largest first"),
  offset: z.number().int(),
  items: z.array(
    z.strictObject({
      state: enumOf(ACTION_STATES),
      output: z.string().describe("The output shared by the group, trailing whitespace trimmed (\"\" for none); past 8 KiB its first and last 4 KiB around a marker"),
      outputChars: z.number().int().describe("The trimmed output's whole length in characters"),
      error: z.string().nullable().describe("The error shared by the group, trimmed the same way (cut past 2 KiB)"),
      count: z.number().int().describe("Actions in the group"),
      devices: z.array(z.string()).describe("The first ?devices= (20) device names, by name"),
      actionIds: z.array(z.string()).describe("Their actions: actionIds[i] is devices[i]'s"),
    }),
  ),
  nextOffset: z.number().int().nullable().describe("?offset= of the next page; null on the last"),
};
export const RequestOutputs = z.strictObject({ request: z.string(), ...OutputGroups });
export const WorkflowStepOutputs = z.strictObject({ workflow: z.string(), step: z.string(), run: z.number().int(), attempt: z.number().int(), ...OutputGroups });

// ---------------------------------------------------------------------------------------
// fleets

export const FleetObject = z.strictObject({
  apiVersion: z.string(),
  kind: z.literal("Fleet"),
  metadata: z.strictObject({
    name: z.string(),
    labels: Labels,
    generation: z.number().int(),
    createdAt: Time,
    updatedAt: Time,
    createdBy: z.string(),
    updatedBy: z.string(),
  }),
  spec: FleetSpec,
  status: z.strictObject({
    templateVersion: z.string(),
    observedGeneration: z.number().int(),
    conditions: z.array(z.strictObject({ type: z.string(), status: ConditionStatus, reason: z.string(), message: z.string(), lastTransitionTime: Time })),
    devices: z.strictObject({ total: z.number().int(), upToDate: z.number().int(), updating: z.number().int(), outOfDate: z.number().int(), unknown: z.number().int() }),
    // The rollout controller's state as it keeps it: the fields below always, the engine's own beside them.
    rollout: z
      .looseObject({
        phase: z.string(),
        templateVersion: z.string(),
        previousVersion: z.string().nullable(),
        startedAt: Time,
        updatedAt: Time,
        endedAt: Time.nullable(),
        canaryDevices: z.array(z.string()),
        lastBatchReport: z.unknown(),
      })
      .nullable()
      .describe("The rollout the fleet shows (in progress, or the last one while it still describes the fleet); null: none"),
  }),
});

export const FleetDeleted = z.strictObject({ deleted: z.string(), devicesReleased: z.number().int() });

export const TemplateVersionView = z.strictObject({
  version: z.string(),
  spec: DeviceTemplateSpec,
  author: z.string(),
  createdAt: Time,
  diff: z.string().describe("Against the version it replaced"),
  outcome: enumOf(TEMPLATE_VERSION_OUTCOMES),
  outcomeMessage: z.string().nullable(),
  current: z.boolean(),
});

// ---------------------------------------------------------------------------------------
// plans

const PlanState = enumOf(PLAN_STATES);
const PlanCounts = z.strictObject({ ...Object.fromEntries(PLAN_NODE_STATES.map((s) => [s, z.number().int()])), total: z.number().int() });
const PlanApproval = z.strictObject({ required: z.boolean(), approvedBy: z.string().nullable(), approvedAt: Time.nullable(), reason: z.string().nullable() });
const PlanNode = z.strictObject({
  name: z.string(),
  state: enumOf(PLAN_NODE_STATES),
  message: z.string(),
  lastUpdatedTimestamp: Time,
  actionId: z.string().nullable(),
  actionState: z.string().nullable(),
  role: z.string().nullable(),
  platform: z.string().nullable(),
  deviceSummary: z.string().nullable(),
});

const PlanCommandFields = {
  id: z.number().int(),
  actionKind: z.string(),
  description: z.string(),
  version: z.string().nullable(),
  state: PlanState,
  concurrent: z.number().int(),
  counts: PlanCounts,
  startedAt: Time.nullable(),
  endedAt: Time.nullable(),
};
const PlanCommandNodes = z.strictObject({ controllers: z.array(PlanNode).optional(), workers: z.array(PlanNode).optional() });
/** k0s's PlanCommandStatus: the nodes under the command's own key, as in spec.commands[i]. */
const PlanCommandStatus = z.discriminatedUnion("kind", [
  z.strictObject({ ...PlanCommandFields, kind: z.literal("k0supdate"), k0supdate: PlanCommandNodes }),
  z.strictObject({ ...PlanCommandFields, kind: z.literal("airgapupdate"), airgapupdate: z.strictObject({ workers: z.array(PlanNode).optional() }) }),
  z.strictObject({ ...PlanCommandFields, kind: z.literal("action"), action: PlanCommandNodes }),
]);

export const PlanObject = z.strictObject({
  apiVersion: z.string(),
  kind: z.literal("Plan"),
  metadata: z.strictObject({
    id: z.string(),
    name: z.string().nullable(),
    createdBy: z.string(),
    creationTimestamp: Time,
    retryOf: z.string().nullable(),
    retriedBy: z.array(z.string()),
  }),
  spec: OpenRecord.describe("The plan as it was sent"),
  status: z.strictObject({
    state: PlanState,
    message: z.string(),
    counts: PlanCounts,
    approval: PlanApproval,
    activeCommand: z.number().int().nullable(),
    cancelRequestedBy: z.string().nullable(),
    deadline: z.string().nullable(),
    deadlineAt: Time.nullable(),
    startedAt: Time.nullable(),
    endedAt: Time.nullable(),
    commands: z.array(PlanCommandStatus),
  }),
});

export const PlanPage = z.strictObject({
  items: z.array(
    z.strictObject({
      id: z.string(),
      name: z.string().nullable(),
      apiVersion: z.string(),
      specId: z.string().nullable(),
      state: PlanState,
      message: z.string(),
      counts: PlanCounts,
      commands: z.array(z.strictObject({ kind: enumOf(PLAN_COMMAND_KINDS), state: PlanState })),
      approval: PlanApproval,
      retryOf: z.string().nullable(),
      createdBy: z.string(),
      createdAt: Time,
      endedAt: Time.nullable(),
    }),
  ),
  total: z.number().int(),
  nextCursor: z.string().nullable(),
});

// ---------------------------------------------------------------------------------------
// workflows

const WorkflowPhase = enumOf(WORKFLOW_PHASES);

export const WorkflowObject = z.strictObject({
  apiVersion: z.literal(WORKFLOW_API_VERSION),
  kind: z.literal("Workflow"),
  metadata: z.strictObject({
    name: z.string(),
    labels: z.record(z.string(), z.string()).optional(),
    generation: z.number().int(),
    run: z.number().int(),
    creationTimestamp: Time,
    createdBy: z.string(),
    updatedBy: z.string(),
  }),
  spec: WorkflowSpec,
  status: z.strictObject({
    phase: WorkflowPhase,
    reason: z.string().nullable(),
    message: z.string(),
    run: z.number().int(),
    conditions: z.array(
      z.strictObject({ type: z.enum(["Complete", "Failed"]), status: z.enum(["True", "False"]), reason: z.string(), message: z.string(), lastTransitionTime: Time.nullable() }),
    ),
    startTime: Time.nullable(),
    completionTime: Time.nullable(),
    cancelRequestedBy: z.string().nullable(),
    order: z.array(z.string()).describe("Step names, dependencies first"),
    statuses: z.record(
      z.string(),
      z.strictObject({
        phase: enumOf(STEP_PHASES),
        complete: z.boolean(),
        attempts: z.number().int(),
        maxAttempts: z.number().int(),
        actions: z.array(z.string()),
        targets: z
          .strictObject({
            total: z.number().int(),
            done: z.number().int(),
            failed: z.number().int().describe("Ended otherwise than DONE, not counting those cancelled"),
            skipped: z.number().int().optional().describe("Skipped by an operator: neither done nor failed"),
            waitingApproval: z.number().int().optional().describe("Their action waits for an operator's approval"),
            cancelled: z.number().int().optional().describe("Their action was cancelled (the run was cancelled, or an operator cancelled it)"),
          })
          .nullable(),
        workflow: z.strictObject({ name: z.string(), run: z.number().int().nullable() }).nullable(),
        waitingFor: z.array(z.string()),
        message: z.string(),
        startedAt: Time.nullable(),
        finishedAt: Time.nullable(),
        nextAttemptAt: Time.nullable(),
      }),
    ),
    runs: z.array(
      z.strictObject({ run: z.number().int(), phase: z.string(), reason: z.string().nullable(), startedBy: z.string(), startTime: Time, completionTime: Time.nullable() }),
    ),
    schedule: z
      .strictObject({ cron: z.string(), timezone: z.string(), suspend: z.boolean(), nextRunTime: Time.nullable(), lastScheduleTime: Time.nullable() })
      .nullable()
      .optional(),
  }),
});

export const WorkflowTargets = z.strictObject({
  workflow: z.string(),
  step: z.string(),
  run: z.number().int(),
  attempt: z.number().int().describe("The step's current attempt: the targets listed are its own"),
  stepPhase: enumOf(STEP_PHASES),
  total: z.number().int().describe("Targets of the attempt; items holds the first 500"),
  items: z.array(
    z.strictObject({
      target: z.string().describe("The device's name as targeted"),
      phase: enumOf(TARGET_PHASES).describe("Waiting, Running, Done, Failed (from its action), or Skipped by an operator"),
      actionId: z.string().nullable(),
      actionState: enumOf(ACTION_STATES).nullable(),
      error: z.string().nullable().describe("Why it got no action, or its action's error"),
      skippedBy: z.string().nullable(),
      skipReason: z.string().nullable(),
      moves: z.array(z.enum(["skip", "retry"])).describe("What an operator may do with it now: POST .../targets/{target}/skip or /retry"),
    }),
  ),
});

export const WorkflowPage = z.strictObject({
  items: z.array(
    z.strictObject({
      name: z.string(),
      phase: WorkflowPhase,
      reason: z.string().nullable(),
      message: z.string(),
      generation: z.number().int(),
      run: z.number().int(),
      steps: z.number().int(),
      counts: z.partialRecord(enumOf(STEP_PHASES), z.number().int()).describe("Steps per phase"),
      schedule: z.string().nullable().optional(),
      nextRunTime: Time.nullable().optional(),
      waitingApproval: z.number().int().optional().describe("Actions of its running run waiting for an operator's approval"),
      startTime: Time.nullable(),
      completionTime: Time.nullable(),
      createdBy: z.string(),
      createdAt: Time,
    }),
  ),
  total: z.number().int(),
  nextCursor: z.string().nullable(),
});

export const WorkflowDeleted = z.strictObject({ deleted: z.string(), actionsCancelled: z.number().int() });

// ---------------------------------------------------------------------------------------
// metrics and nudge

const Points = z.array(z.number().nullable());

export const MetricsHistoryResponse = z.strictObject({
  range: z.enum(HISTORY_RANGES),
  bucketSeconds: z.number(),
  sampleSeconds: z.number(),
  nextSampleAt: z.number(),
  samples: z.number().int(),
  times: z.array(z.number()),
  devices: z.strictObject({ summary: z.record(z.string(), Points), lifecycle: z.record(z.string(), Points) }),
  heartbeatsPerMinute: Points,
  actions: z.strictObject({ createdPerMinute: Points, finishedPerMinute: z.record(z.string(), Points) }),
  rollouts: z.array(z.strictObject({ id: z.string(), fleet: z.string(), version: z.string(), phase: z.string(), percent: Points, updated: Points, total: Points })),
  plans: z.array(z.strictObject({ id: z.string(), name: z.string().nullable(), state: z.string(), percent: Points, done: Points, total: Points })),
  plansRunning: Points,
  workflowsRunning: Points,
});

export const NudgeResponse = z.strictObject({ nudged: z.string().describe("Kind/name of what was reconciled") });

/** `{items: [...]}`: the routes whose `output` wraps a list. */
export const itemsOf = <T extends z.ZodType>(item: T) => z.strictObject({ items: z.array(item) });
