/**
 * The operator REST API (../shared/OPERATOR_API.md) as a table over the console's tRPC
 * procedures: each route names a procedure and how to build its input from the path,
 * query and body. One implementation, two surfaces; the OpenAPI document reads this table.
 */
import { z } from "zod";
import { FleetInput } from "../../lib/fleet-spec";
import { PlanInput } from "../../lib/plan-spec";
import { WorkflowInput } from "../../lib/workflow-spec";
import { LabelsSchema } from "../../lib/protocol";
import { invalid } from "../errors";
import {
  ActionPage,
  ActionView,
  ApiTokenView,
  BulkResponse,
  DeviceListResponse,
  DeviceResponse,
  EnrollmentDenyManyResponse,
  EnrollmentTokenCreatedResponse,
  EnrollmentTokenView,
  EnrollmentView,
  EventView,
  FleetDeleted,
  FleetObject,
  itemsOf,
  MeResponse,
  MetricsHistoryResponse,
  NudgeResponse,
  PlanObject,
  PlanPage,
  RequestDecided,
  RequestDetail,
  RequestOutputs,
  RequestPage,
  TemplateVersionView,
  TokenCreatedResponse,
  WorkflowDeleted,
  WorkflowObject,
  WorkflowPage,
  WorkflowStepOutputs,
  WorkflowTargets,
} from "./responses";

export interface RestRoute {
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  /** Path under /api/v1 with `{param}` placeholders. */
  path: string;
  /** Dotted procedure path in the app router. */
  procedure: string;
  summary: string;
  input?: (req: { params: Record<string, string>; query: Record<string, string>; body: Record<string, unknown> }) => unknown;
  /** Wraps the procedure's output (e.g. arrays into `{items}`). */
  output?: (result: unknown) => unknown;
  status?: number;
  /** No bearer token needed. */
  public?: boolean;
  /** The body may also be YAML (`Content-Type: application/yaml`); the front door admits it here only. */
  yaml?: boolean;
  /**
   * The request body's schema for the OpenAPI document, where the procedure's input does not
   * show it. Without one the document shows the procedure's input less the path parameters
   * (no body when nothing is left).
   */
  body?: z.ZodType;
  /**
   * The success answer's schema (server/rest/responses.ts), after `output`; null: no body
   * (204). Required, so a new route cannot go undocumented; tests/operator-openapi.test.ts
   * checks real answers against it.
   */
  response: z.ZodType | null;
  /** Query parameters of a non-GET route, for the OpenAPI document (a GET's come from its input). */
  query?: { name: string; description: string; schema: Record<string, unknown> }[];
  /**
   * A create that takes an `Idempotency-Key` header (issue 22, server/idempotency/): the handler
   * puts it in the input's `idempotencyKey`. Every creating POST (201) has it, /auth/token aside.
   */
  idempotent?: boolean;
}

/** `?start=false` → false: a query flag spelled true or false, anything else 400 naming it (before the procedure, whose zod message would be a dump). */
function queryBoolean(name: string, value: string): boolean {
  if (value === "true" || value === "false") return value === "true";
  throw invalid(`${name}: expected true or false, got ${JSON.stringify(value)}`);
}

const items = (result: unknown) => ({ items: result });

/** `POST /enrollments/{id}/approve`'s body for the OpenAPI document (the procedure's input has `ids`). */
const ApproveOneBody = z.object({ reason: z.string().max(1024).optional(), labels: LabelsSchema.optional() });
/** The body of the one-id routes over a bulk procedure (its input has `ids`). */
const ReasonBody = z.object({ reason: z.string().max(1024).optional() });

const WORKFLOW_BODY = "a Workflow object {metadata: {name}, spec: {steps, failFast?, activeDeadlineSeconds?, schedule?: {cron, timezone?, suspend?}}} as JSON or YAML (Content-Type: application/yaml); unknown fields are refused naming the field";

const FLEET_BODY = "a Fleet object {metadata, spec} as JSON or YAML (Content-Type: application/yaml); unknown fields are refused naming the field";

export const restRoutes: RestRoute[] = [
  {
    method: "POST",
    path: "/auth/token",
    procedure: "auth.createToken",
    response: TokenCreatedResponse,
    summary: "Exchange a username and password (and an optional name, e.g. ci-pipeline) for an operator token of that user's role",
    input: ({ body }) => body,
    status: 201,
    public: true,
  },
  { method: "GET", path: "/me", procedure: "auth.me", response: MeResponse, summary: "The caller's username and role" },
  {
    method: "GET",
    path: "/tokens",
    procedure: "auth.tokens",
    response: itemsOf(ApiTokenView),
    summary: "API tokens, newest first: your own, or everyone's for an admin (?username= narrows it); never the token itself",
    input: ({ query }) => query,
    output: items,
  },
  {
    method: "POST",
    path: "/tokens/{id}/revoke",
    procedure: "auth.revokeToken",
    response: ApiTokenView,
    summary: "Revoke an API token (your own, or anyone's for an admin): the next request with it is 401. Already revoked: no change",
    input: ({ params }) => params,
  },
  {
    method: "GET",
    path: "/devices",
    procedure: "devices.list",
    response: DeviceListResponse,
    summary:
      "Devices with their derived statuses, a page at a time (cursor = nextCursor of the previous page), sorted by ?sort=name|status|fleet|updated|applications|lifecycle|lastSeen|created&order=asc|desc (ties by name; null sorts first ascending). " +
      "Decommissioned devices are left out unless ?decommissioned=show or ?lifecycle= names Decommissioned; hiddenDecommissioned says how many the filter left out",
    input: ({ query }) => query,
  },
  {
    method: "POST",
    path: "/devices/decommission",
    procedure: "devices.bulkDecommission",
    response: BulkResponse,
    summary:
      "Request decommissioning of many devices: {names: [...]} (at most 10,000) or {filter: {labelSelector, summary, updated, applicationSummary, lifecycle, fleet, search, decommissioned}}, and {reason?}. " +
      "Devices that are not Enrolled are skipped. {matched, changed, skipped: [{reason, count, names}]}",
    input: ({ body }) => body,
  },
  {
    method: "POST",
    path: "/devices/resume",
    procedure: "devices.bulkResume",
    response: BulkResponse,
    summary: "Resume many ConflictPaused devices: {names} or {filter} as for /devices/decommission; the others are skipped. {matched, changed, skipped}",
    input: ({ body }) => body,
  },
  {
    method: "POST",
    path: "/devices/labels",
    procedure: "devices.bulkLabel",
    response: BulkResponse,
    summary:
      "Add and remove labels on many devices: {names} or {filter} as for /devices/decommission, {add: {key: value}, remove: [key]}; fleet membership follows at once. Devices whose labels are already so are skipped. {matched, changed, skipped}",
    input: ({ body }) => body,
  },
  {
    method: "GET",
    path: "/devices/{name}",
    procedure: "devices.get",
    response: DeviceResponse,
    summary:
      "One device in full, with its alias and inventory {system (host facts as last sent in full), systemAt, usage (the last report's), usageAt, history: [{at, cpuPercent, memoryPercent, diskPercent}] (one a minute at most, the last 120)}",
    input: ({ params }) => params,
  },
  {
    method: "PATCH",
    path: "/devices/{name}",
    procedure: "devices.update",
    response: DeviceResponse,
    summary:
      "Edit a device: {labels?: {key: value}} replaces its labels (it joins, leaves or changes fleet at once), {alias?: string | null} its display name (empty or null clears it); unknown fields are refused",
    input: ({ params, body }) => ({ ...body, name: params.name }),
  },
  {
    method: "POST",
    path: "/devices/{name}/decommission",
    procedure: "devices.decommission",
    response: DeviceResponse,
    summary: "Request decommissioning: the agent is told in its long-poll",
    input: ({ params }) => params,
  },
  {
    method: "POST",
    path: "/devices/{name}/revoke",
    procedure: "devices.revoke",
    response: DeviceResponse,
    summary:
      "Revoke the device's credential {reason} (operator role; issue 23), without its cooperation: a key or token thought stolen. From now on every request with its certificate or token is 401 UNAUTHENTICATED saying an operator revoked it, and its held poll ends so at once; " +
      "actions of it waiting for approval or to be scheduled are cancelled, those it held (NEW, RUNNING) become LOST (error: its outcome cannot be known), and no new ones go to it. It stays listed (condition CredentialRevoked: when, by whom, why) and goes Offline as any silent device; a decommission of it then completes at once on the server. " +
      "Already revoked (a Decommissioned device included): 200, nothing changes, no second event",
    input: ({ params, body }) => ({ name: params.name, reason: body.reason }),
    body: z.object({ reason: z.string().min(1).max(500).describe("why (shown with the device and in its CredentialRevoked event)") }),
  },
  {
    method: "PUT",
    path: "/devices/{name}/labels",
    procedure: "devices.setLabels",
    response: DeviceResponse,
    summary: "Replace a device's labels {labels: {key: value}}; it joins, leaves or changes fleet at once",
    input: ({ params, body }) => ({ name: params.name, labels: body.labels }),
  },
  {
    method: "POST",
    path: "/devices/{name}/resume",
    procedure: "devices.resume",
    response: DeviceResponse,
    summary: "Resume a ConflictPaused device",
    input: ({ params }) => params,
  },
  {
    method: "GET",
    path: "/enrollments",
    procedure: "enrollments.list",
    response: itemsOf(EnrollmentView),
    summary:
      "Enrollment requests, newest first; each with its host facts (system), the address it first came from (clientAddress, at firstSeenAt) and the agent's latest contact (lastSeenAddress, lastSeenAt)",
    input: ({ query }) => query,
    output: items,
  },
  {
    method: "GET",
    path: "/enrollments/{id}",
    procedure: "enrollments.get",
    response: EnrollmentView,
    summary: "One enrollment request: requested labels, platform, role, agent version, host facts (system), first and last seen (address and time), decision and labels added at approval (approvedLabels)",
    input: ({ params }) => params,
  },
  {
    method: "POST",
    path: "/enrollments/approve",
    procedure: "enrollments.approve",
    response: itemsOf(EnrollmentView),
    summary: "Approve many Pending requests at once (all or nothing); {ids, reason?, labels?: {key: value}} puts labels on every device over those it asked for (the operator wins)",
    input: ({ body }) => body,
    output: items,
  },
  {
    method: "POST",
    path: "/enrollments/deny",
    procedure: "enrollments.denyMany",
    response: EnrollmentDenyManyResponse,
    summary:
      "Deny many Pending requests at once: {ids} (all or nothing), or {allPending: true} for every Pending one, optionally only those from {clientAddress}; {count, items}",
    input: ({ body }) => body,
  },
  {
    method: "POST",
    path: "/enrollments/reopen",
    procedure: "enrollments.reopen",
    response: itemsOf(EnrollmentView),
    summary: "Revert many denials at once (all or nothing): the Denied requests are Pending again",
    input: ({ body }) => body,
    output: items,
  },
  {
    method: "POST",
    path: "/enrollments/{id}/approve",
    procedure: "enrollments.approve",
    response: EnrollmentView,
    summary: "Approve one Pending request; {reason?, labels?: {key: value}} puts labels on the device over those it asked for (the operator wins), and its fleet membership follows them at once",
    input: ({ params, body }) => ({ ids: [params.id], reason: body.reason, labels: body.labels }),
    body: ApproveOneBody,
    output: (r) => (r as unknown[])[0],
  },
  {
    method: "POST",
    path: "/enrollments/{id}/deny",
    procedure: "enrollments.deny",
    response: EnrollmentView,
    summary: "Deny one Pending request",
    input: ({ params, body }) => ({ ids: [params.id], reason: body.reason }),
    body: ReasonBody,
    output: (r) => (r as unknown[])[0],
  },
  {
    method: "POST",
    path: "/enrollments/{id}/reopen",
    procedure: "enrollments.reopen",
    response: EnrollmentView,
    summary: "Revert a denial: the Denied request is Pending again, for an operator to decide (the agent finds it so within 5 minutes)",
    input: ({ params, body }) => ({ ids: [params.id], reason: body.reason }),
    body: ReasonBody,
    output: (r) => (r as unknown[])[0],
  },
  {
    method: "POST",
    path: "/enrollment-tokens",
    idempotent: true,
    procedure: "enrollmentTokens.create",
    response: EnrollmentTokenCreatedResponse,
    summary:
      "Create an enrollment token (operator role): {name, description?, labels?: {key: value}, expiresInSeconds?, maxUses?, autoApprove?}. " +
      "Agents enrolling with it (enrollmentToken in POST /api/agent/v1/enrollments) get its labels over their own and, with autoApprove, are approved at once. " +
      "The answer's `token` is the secret, shown this once: only its SHA-256 is kept",
    input: ({ body }) => body,
    status: 201,
  },
  {
    method: "GET",
    path: "/enrollment-tokens",
    procedure: "enrollmentTokens.list",
    response: itemsOf(EnrollmentTokenView),
    summary: "Enrollment tokens, newest first: name, prefix (to recognise one), labels, uses of maxUses, expiry, autoApprove, status (Active, Expired, UsedUp, Revoked); never the secret",
    input: ({ query }) => query,
    output: items,
  },
  {
    method: "GET",
    path: "/enrollment-tokens/{id}",
    procedure: "enrollmentTokens.get",
    response: EnrollmentTokenView,
    summary: "One enrollment token (never its secret)",
    input: ({ params }) => params,
  },
  {
    method: "DELETE",
    path: "/enrollment-tokens/{id}",
    procedure: "enrollmentTokens.revoke",
    response: EnrollmentTokenView,
    summary: "Revoke an enrollment token (operator role): enrollments with it are refused from now on (403); devices it enrolled stay. Already revoked: no change. The token, revoked",
    input: ({ params }) => params,
  },
  { method: "GET", path: "/events", procedure: "events.list", response: itemsOf(EventView), summary: "The event log, newest first", input: ({ query }) => query, output: items },
  {
    method: "POST",
    path: "/actions",
    idempotent: true,
    procedure: "actions.create",
    response: itemsOf(ActionView),
    summary:
      "Create an action for a device, or for every Enrolled device a label selector matches. It is offered to a device whose summary its healthPolicy admits: Online and Degraded by default; Online asks for Online only, Error allows devices in Error too",
    input: ({ body }) => body,
    output: items,
    status: 201,
  },
  {
    method: "GET",
    path: "/actions",
    procedure: "actions.list",
    response: ActionPage,
    summary: "Actions, newest first, a page at a time; ?createdAfter= (inclusive) and ?createdBefore= (exclusive) take RFC 3339 date-times with an offset",
    input: ({ query }) => query,
  },
  {
    method: "POST",
    path: "/actions/approve",
    procedure: "actions.approve",
    response: itemsOf(ActionView),
    summary: "Approve many PENDING_APPROVE actions at once (all or nothing)",
    input: ({ body }) => body,
    output: items,
  },
  {
    method: "POST",
    path: "/actions/reject",
    procedure: "actions.reject",
    response: itemsOf(ActionView),
    summary: "Reject many PENDING_APPROVE actions at once (all or nothing)",
    input: ({ body }) => body,
    output: items,
  },
  { method: "GET", path: "/actions/{id}", procedure: "actions.get", response: ActionView, summary: "One action with its output and approval record", input: ({ params }) => params },
  {
    method: "POST",
    path: "/actions/{id}/approve",
    procedure: "actions.approve",
    response: ActionView,
    summary: "Approve one PENDING_APPROVE action (409 if it was already decided)",
    input: ({ params, body }) => ({ ids: [params.id], reason: body.reason }),
    body: ReasonBody,
    output: (r) => (r as unknown[])[0],
  },
  {
    method: "POST",
    path: "/actions/{id}/reject",
    procedure: "actions.reject",
    response: ActionView,
    summary: "Reject one PENDING_APPROVE action",
    input: ({ params, body }) => ({ ids: [params.id], reason: body.reason }),
    body: ReasonBody,
    output: (r) => (r as unknown[])[0],
  },
  {
    method: "POST",
    path: "/actions/{id}/cancel",
    procedure: "actions.cancel",
    response: ActionView,
    summary: "Cancel: pending at once; NEW or RUNNING through the agent",
    input: ({ params, body }) => ({ id: params.id, reason: body.reason }),
  },
  {
    method: "POST",
    path: "/actions/{id}/rerun",
    idempotent: true,
    procedure: "actions.rerun",
    response: ActionView,
    summary:
      "Run an ended action (DONE, FAILED, CANCELLED, LOST) again: a new action with the same device, kind, args, approval requirement and health policy, created as any new one is, with rerunOf set to this id. 409 when it has not ended",
    input: ({ params }) => ({ id: params.id }),
    status: 201,
  },
  {
    method: "GET",
    path: "/requests",
    procedure: "requests.list",
    response: RequestPage,
    summary:
      "Action requests (one per create call, plan command or workflow step attempt), newest first, a page at a time, each with its progress counted by action state; ?pendingApproval=true for those with actions waiting for approval",
    input: ({ query }) => query,
  },
  {
    method: "GET",
    path: "/requests/{id}",
    procedure: "requests.get",
    response: RequestDetail,
    summary: "One action request with its progress (the waiting actions counted by why they wait) and the first page of its actions (?limit=)",
    input: ({ params, query }) => ({ ...query, id: params.id }),
  },
  {
    method: "GET",
    path: "/requests/{id}/outputs",
    procedure: "requests.outputs",
    response: RequestOutputs,
    summary: "The request's actions grouped by identical (state, error, output) after trimming trailing whitespace (no output counts as empty), largest group first, a page at a time (?limit= groups, at most 200, 50 by default; ?offset= the previous page's nextOffset). Each group: its state, output (past 8 KiB, the first and last 4 KiB), error, count, and its first ?devices= (20) device names with their action ids. ?search= keeps only the actions whose output, error or device name contains it (case-insensitive) before grouping" ,
    input: ({ params, query }) => ({ ...query, id: params.id }),
  },
  {
    method: "POST",
    path: "/requests/{id}/approve",
    procedure: "requests.approve",
    response: RequestDecided,
    summary:
      "Approve every action of the request still waiting for approval, as a unit {reason?}; those already decided one by one are left as they are. {request, moved}. 409 when none waits",
    input: ({ params, body }) => ({ id: params.id, reason: body.reason }),
  },
  {
    method: "POST",
    path: "/requests/{id}/reject",
    procedure: "requests.reject",
    response: RequestDecided,
    summary: "Reject every action of the request still waiting for approval, as a unit {reason?}: they are CANCELLED. {request, moved}. 409 when none waits",
    input: ({ params, body }) => ({ id: params.id, reason: body.reason }),
  },
  { method: "GET", path: "/fleets", procedure: "fleets.list", response: itemsOf(FleetObject), summary: "Fleets by name, each {metadata, spec, status}", output: items },
  {
    method: "POST",
    path: "/fleets",
    idempotent: true,
    procedure: "fleets.create",
    response: FleetObject,
    summary: `Create a fleet: ${FLEET_BODY}. Its template becomes version 1; matching devices join and get it at once`,
    input: ({ body }) => body,
    status: 201,
    yaml: true,
    body: FleetInput,
  },
  { method: "GET", path: "/fleets/{name}", procedure: "fleets.get", response: FleetObject, summary: "One fleet {metadata, spec, status}", input: ({ params }) => params },
  {
    method: "PUT",
    path: "/fleets/{name}",
    procedure: "fleets.update",
    response: FleetObject,
    summary:
      `Replace a fleet's spec: ${FLEET_BODY}; metadata.name must be the name in the path. A changed template makes a new ` +
      "immutable template version: without a rollout policy every member gets it at once; with one, its rollout starts (the canary gets it in this request) and supersedes any rollout still running. The same object again changes nothing (metadata.generation stays)",
    input: ({ params, body }) => ({ name: params.name, fleet: body }),
    output: (r) => (r as { fleet: unknown }).fleet,
    yaml: true,
    body: FleetInput,
  },
  {
    method: "DELETE",
    path: "/fleets/{name}",
    procedure: "fleets.delete",
    response: FleetDeleted,
    summary:
      "Delete a fleet: its members become unmanaged and keep the spec they have (same renderedVersion); any that another fleet matches joins it. {deleted, devicesReleased}",
    input: ({ params }) => params,
  },
  {
    method: "GET",
    path: "/fleets/{name}/templateversions",
    procedure: "fleets.templateVersions",
    response: itemsOf(TemplateVersionView),
    summary: "The fleet's template versions, newest first, each with author, time, diff against the version it replaced, and outcome",
    input: ({ params, query }) => ({ ...query, name: params.name }),
    output: items,
  },
  ...(
    [
      ["pause", "Pause the rollout {reason?}: nothing more gets the new version until resumed (CanaryPaused in the canary)"],
      ["resume", "Resume a paused rollout; resuming an auto-paused canary turns auto-pause off for the rest of it (auto-fail still applies)"],
      ["promote", "End the canary now (the only way to end a manual-validation canary), or approve a batch suspended under its success threshold"],
      ["abort", "Abort the rollout {reason?}: the fleet reverts to the previous template version and every member gets it back"],
    ] as const
  ).map(
    ([kind, summary]): RestRoute => ({
      method: "POST",
      path: `/fleets/{name}/rollout/${kind}`,
      procedure: `fleets.${kind}`,
      response: FleetObject,
      summary: `${summary}. Recorded as a request (who, why) that the rollout controller acts on at once; answers the fleet after it ran, 409 when there is no rollout in progress or nothing to ${kind}`,
      input: ({ params, body }) => ({ name: params.name, ...(kind === "pause" || kind === "abort" ? { reason: body.reason } : {}) }),
      body: kind === "pause" || kind === "abort" ? z.object({ reason: z.string().min(1).max(500).optional().describe("why (shown in the condition and the events)") }) : z.object({}),
    }),
  ),
  {
    method: "POST",
    path: "/plans",
    idempotent: true,
    procedure: "plans.create",
    response: PlanObject,
    summary:
      "Create a plan: a k0s Autopilot Plan (apiVersion autopilot.k0sproject.io/v1beta2, seed 000's YAML as is) or Drover's (drover/v1, with the action command), JSON or YAML (Content-Type: application/yaml); " +
      "?requireApproval=true makes the whole plan wait for one operator's approval, ?deadline=30m ends it DeadlineExceeded when it runs longer. The server gives it its own id; discovery happens now (NewPlan) and the first nodes are signalled in this request",
    input: ({ body, query }) => ({
      plan: body,
      ...(query.requireApproval !== undefined ? { requireApproval: query.requireApproval === "true" ? true : query.requireApproval === "false" ? false : query.requireApproval } : {}),
      ...(query.deadline !== undefined ? { deadline: query.deadline } : {}),
    }),
    query: [
      { name: "requireApproval", description: "true: the whole plan waits for one operator's approval (POST /plans/{id}/approve)", schema: { type: "boolean" } },
      { name: "deadline", description: "A duration (30m, 2h): the plan ends DeadlineExceeded when it runs longer", schema: { type: "string", maxLength: 32 } },
    ],
    status: 201,
    yaml: true,
    body: PlanInput,
  },
  {
    method: "GET",
    path: "/plans",
    procedure: "plans.list",
    response: PlanPage,
    summary: "Plans, newest first (?state=SchedulableWait,ApplyFailed&limit=&cursor=), each with its state, commands' states and node counts",
    input: ({ query }) => ({ ...query, ...(query.state ? { state: query.state.split(",") } : {}) }),
  },
  {
    method: "GET",
    path: "/plans/{id}",
    procedure: "plans.get",
    response: PlanObject,
    summary:
      "One plan in k0s's status shape: status.state, status.commands[i] = {id: i, state, description, kind, <kind>: {controllers: [{name, state, lastUpdatedTimestamp, message, actionId…}], workers: [...]}}, the nodes under the command's own key as in spec.commands[i] (k0supdate.controllers / .workers, airgapupdate.workers, action.controllers / .workers)",
    input: ({ params }) => params,
  },
  {
    method: "POST",
    path: "/plans/{id}/approve",
    procedure: "plans.approve",
    response: PlanObject,
    summary:
      "Approve a plan that waits for approval {reason?}: its nodes' actions are created approved by you, the reason in their approval record. 409 when it does not wait or was approved; 403 under DROVER_FOUR_EYES=1 when you submitted it",
    input: ({ params, body }) => ({ id: params.id, reason: body.reason }),
    body: z.object({ reason: z.string().min(1).max(500).optional() }),
  },
  {
    method: "POST",
    path: "/plans/{id}/cancel",
    procedure: "plans.cancel",
    response: PlanObject,
    summary: "Cancel a running plan {reason?}: nothing more is signalled and its unfinished actions are cancelled (running ones through their agents). 409 when it has ended",
    input: ({ params, body }) => ({ id: params.id, reason: body.reason }),
    body: z.object({ reason: z.string().min(1).max(500).optional() }),
  },
  {
    method: "POST",
    path: "/plans/{id}/nodes/{node}/skip",
    procedure: "plans.skipNode",
    response: PlanObject,
    summary:
      "Move on without one node of a running plan {reason, command?} (operator role): the node becomes SignalSkipped with the reason, counts as done for its command, and an action it waited on is cancelled. command names the command when the node is in several. 409 when the plan has ended or the node is not SignalPending or SignalSent",
    input: ({ params, body }) => ({ id: params.id, node: params.node, reason: body.reason, command: body.command }),
    body: z.object({ reason: z.string().min(1).max(500), command: z.number().int().min(0).max(1000).optional() }),
  },
  {
    method: "POST",
    path: "/plans/{id}/retry",
    idempotent: true,
    procedure: "plans.retry",
    response: PlanObject,
    summary: "Run a plan that ended in an error state (or was cancelled) again as a new plan, which skips the nodes already SignalCompleted. 409 for a running or Completed plan",
    input: ({ params }) => params,
    status: 201,
  },
  {
    method: "POST",
    path: "/workflows",
    idempotent: true,
    procedure: "workflows.create",
    response: WorkflowObject,
    summary: `Create a workflow and start it: ${WORKFLOW_BODY}. Refused with 400 naming the culprit: a cycle (its path), an unknown dependency, a step with both or neither of jobTemplate and externalRef, an unknown or cyclic reference to another workflow. A bad spec.schedule.cron or timezone is 400 naming it. The first steps start in this request; with ?start=false it is saved as a draft (Pending, run 0, nothing runs) that POST /workflows/{name}/start starts. A workflow with spec.schedule is not started by create (unless ?start=true): its schedule starts runs (startedBy schedule), one at a time`,
    input: ({ query, body }) => ({ workflow: body, ...(query.start !== undefined ? { start: queryBoolean("start", query.start) } : {}) }),
    query: [{ name: "start", description: "false: save as a draft without starting a run; true: start now even with a schedule (default: true without spec.schedule, false with one)", schema: { type: "boolean" } }],
    status: 201,
    yaml: true,
    body: WorkflowInput,
  },
  {
    method: "GET",
    path: "/workflows",
    procedure: "workflows.list",
    response: WorkflowPage,
    summary: "Workflows by name (?phase=Running,Failed&limit=&cursor=), each with its phase, run and step counts by phase",
    input: ({ query }) => ({ ...query, ...(query.phase ? { phase: query.phase.split(",") } : {}) }),
  },
  {
    method: "GET",
    path: "/workflows/{name}",
    procedure: "workflows.get",
    response: WorkflowObject,
    summary:
      "One workflow {metadata, spec, status}: status.phase, conditions Complete/Failed with reason (StepFailed, DeadlineExceeded, Cancelled) and message, startTime, completionTime, statuses: {step: {phase, complete, attempts, actions, workflow, waitingFor, message}}, runs (the last 20: run, phase, startedBy, times), schedule ({cron, timezone, suspend, nextRunTime, lastScheduleTime} or null)",
    input: ({ params }) => params,
  },
  {
    method: "PUT",
    path: "/workflows/{name}",
    procedure: "workflows.update",
    response: WorkflowObject,
    summary: `Replace a workflow's spec: ${WORKFLOW_BODY}; metadata.name must be the name in the path. While it runs, only steps that have not started may change (409 naming the step otherwise, nothing changed); new steps start when their dependencies allow`,
    input: ({ params, body }) => ({ name: params.name, workflow: body }),
    yaml: true,
    body: WorkflowInput,
  },
  {
    method: "DELETE",
    path: "/workflows/{name}",
    procedure: "workflows.delete",
    response: WorkflowDeleted,
    summary: "Delete a workflow: its unfinished actions are cancelled (running ones through their agents); workflows it references are not owned and keep running. {deleted, actionsCancelled}",
    input: ({ params }) => params,
  },
  {
    method: "POST",
    path: "/workflows/{name}/rerun",
    procedure: "workflows.rerun",
    response: WorkflowObject,
    summary: "Start a draft or a finished workflow from its saved spec (a new run; the same as /start). 409 while it runs",
    input: ({ params }) => params,
  },
  {
    method: "POST",
    path: "/workflows/{name}/start",
    procedure: "workflows.start",
    response: WorkflowObject,
    summary: "Start a draft (Pending, saved with ?start=false) or a finished workflow from its saved spec: a new run, its first steps started in this request. 409 while it runs",
    input: ({ params }) => params,
  },
  {
    method: "POST",
    path: "/workflows/{name}/cancel",
    procedure: "workflows.cancel",
    response: WorkflowObject,
    summary: "Stop a running workflow without deleting it {reason?}: Failed (Cancelled), its unfinished actions cancelled. 409 when it is not running",
    input: ({ params, body }) => ({ name: params.name, reason: body.reason }),
    body: z.object({ reason: z.string().min(1).max(500).optional() }),
  },
  {
    method: "GET",
    path: "/workflows/{name}/steps/{step}/targets",
    procedure: "workflows.targets",
    response: WorkflowTargets,
    summary:
      "A job step's targets in its current attempt (the first 500; total counts all): each device with its phase (Waiting, Running, Done, Failed from its action; Skipped by an operator), action id and state, error, who skipped it and why, and the moves an operator may make now (skip, retry). 400 for a step that references another workflow",
    input: ({ params }) => params,
  },
  {
    method: "GET",
    path: "/workflows/{name}/steps/{step}/outputs",
    procedure: "workflows.targetOutputs",
    response: WorkflowStepOutputs,
    summary: "The actions a job step's targets hold in its current attempt (a retried target's newest) grouped by identical (state, error, output) after trimming trailing whitespace (no output counts as empty), largest group first, a page at a time (?limit= groups, at most 200, 50 by default; ?offset= the previous page's nextOffset). Each group: its state, output (past 8 KiB, the first and last 4 KiB), error, count, and its first ?devices= (20) device names with their action ids. ?search= keeps only the actions whose output, error or device name contains it (case-insensitive) before grouping. 400 for a step that references another workflow" ,
    input: ({ params, query }) => ({ ...query, name: params.name, step: params.step }),
  },
  {
    method: "POST",
    path: "/workflows/{name}/steps/{step}/targets/{target}/skip",
    procedure: "workflows.skipTarget",
    response: WorkflowObject,
    summary:
      "Move on without one target of a running workflow's step {reason} (operator role): a target that has not finished (Waiting, Running, or Failed) becomes Skipped with the reason (event WorkflowTargetSkipped, the operator as actor); it counts as finished, not failed, so the step Succeeds once every other target is DONE or skipped. Its unfinished action is cancelled (through its agent when running). A step Retrying or Failed only for skipped targets runs again (and the steps omitted for its failure wait again). 409 when the run has ended or the target has finished (Done, Skipped)",
    input: ({ params, body }) => ({ name: params.name, step: params.step, target: params.target, reason: body.reason }),
    body: z.object({ reason: z.string().min(1).max(500) }),
  },
  {
    method: "POST",
    path: "/workflows/{name}/steps/{step}/targets/{target}/retry",
    procedure: "workflows.retryTarget",
    response: WorkflowObject,
    summary:
      "Run a Failed target (its action FAILED, CANCELLED, timed out or LOST, or it got none) of a running workflow's step again {reason} (operator role): a new action from the step's jobTemplate, made by the action engine as the step made the first (approval and health policy, a rerun of the last action), event WorkflowTargetRetried. A step Retrying or Failed goes back to Running (and the steps omitted for its failure wait again). 409 when the run has ended, the target has not failed, or the device is not Enrolled",
    input: ({ params, body }) => ({ name: params.name, step: params.step, target: params.target, reason: body.reason }),
    body: z.object({ reason: z.string().min(1).max(500) }),
  },
  {
    method: "GET",
    path: "/metrics/history",
    procedure: "overview.history",
    response: MetricsHistoryResponse,
    summary:
      "The fleet's metrics over time (?range=1h|24h|7d, default 1h), one value per time bucket (times: each bucket's end, unix seconds; null where nothing was sampled): devices per summary status and lifecycle, heartbeats and actions created/finished per minute, rollouts' and plans' progress in percent, plans and workflows running. Sampled every DROVER_METRICS_SAMPLE_SECONDS (60), kept DROVER_METRICS_RETENTION_DAYS (7)",
    input: ({ query }) => query,
  },
  { method: "POST", path: "/nudge", procedure: "ops.nudge", response: NudgeResponse, summary: "Reconcile one Device, Action, Plan (by id) or Workflow (by name) now", input: ({ body }) => body },
];

const yamlRoutes = restRoutes
  .filter((r) => r.yaml)
  .map((r) => ({ method: r.method, pattern: new RegExp("^/api/v1" + r.path.replace(/\{(\w+)\}/g, "[^/]+") + "/?$") }));

/** Whether `method path` is an operator API route whose body may be YAML (the front door asks). */
export function acceptsYaml(method: string | undefined, pathname: string): boolean {
  return yamlRoutes.some((r) => r.method === method && r.pattern.test(pathname));
}
