import { z } from "zod";
import { router, viewerProcedure, operatorProcedure } from "../trpc/init";
import { listEvents } from "../events/events";
import { idempotencyKeyField, idempotent } from "../idempotency/idempotency";
import { WORKFLOW_PHASES } from "../../lib/workflow-status";
import { StepName, WorkflowName } from "../../lib/workflow-spec";
import { listStepTargets, retryWorkflowTarget, skipWorkflowTarget, stepOutputs } from "./targets";
import { OutputGroupsInput } from "../actions/output-groups";
import { cancelWorkflow, createWorkflow, deleteWorkflow, getWorkflow, listWorkflows, parseWorkflowInput, rerunWorkflow, updateWorkflow } from "./workflows";

const ByName = z.object({ name: WorkflowName });
/** A target is the device name the step targeted: checked for length only, so a name the step was given that is no device can still be skipped. */
const TargetMove = ByName.extend({ step: StepName, target: z.string().min(1).max(253), reason: z.string().trim().min(1).max(500) });

export const workflowsRouter = router({
  list: viewerProcedure
    .input(
      z
        .object({
          phase: z.array(z.enum(WORKFLOW_PHASES as [string, ...string[]])).optional(),
          limit: z.coerce.number().int().min(1).max(500).default(100),
          cursor: z.string().max(63).optional(),
        })
        .default({ limit: 100 }),
    )
    .query(({ ctx, input }) => listWorkflows(ctx.server, { phase: input.phase as never }, input)),
  get: viewerProcedure.input(ByName).query(({ ctx, input }) => getWorkflow(ctx.server, input.name)),
  events: viewerProcedure
    .input(ByName.extend({ limit: z.number().int().min(1).max(500).default(100) }))
    .query(({ ctx, input }) => listEvents(ctx.server, { kind: "Workflow", name: input.name, limit: input.limit })),
  /** A Workflow object (JSON, or YAML already parsed), validated by `parseWorkflowInput` (strict, full paths). Creating starts it unless `start: false` (a draft). */
  create: operatorProcedure
    .input(z.object({ workflow: z.unknown(), start: z.boolean().optional(), ...idempotencyKeyField }))
    .mutation(({ ctx, input }) =>
      idempotent(ctx, "workflows.create", input, (idempotency) => createWorkflow(ctx.server, parseWorkflowInput(input.workflow), ctx.actor, { start: input.start, idempotency })),
    ),
  update: operatorProcedure
    .input(ByName.extend({ workflow: z.unknown() }))
    .mutation(({ ctx, input }) => updateWorkflow(ctx.server, input.name, parseWorkflowInput(input.workflow), ctx.actor)),
  delete: operatorProcedure.input(ByName).mutation(({ ctx, input }) => deleteWorkflow(ctx.server, input.name, ctx.actor)),
  rerun: operatorProcedure.input(ByName).mutation(({ ctx, input }) => rerunWorkflow(ctx.server, input.name, ctx.actor)),
  /** The same move as rerun under the name a draft's operator looks for: a draft or a finished workflow starts a run. */
  start: operatorProcedure.input(ByName).mutation(({ ctx, input }) => rerunWorkflow(ctx.server, input.name, ctx.actor)),
  cancel: operatorProcedure
    .input(ByName.extend({ reason: z.string().trim().min(1).max(500).optional() }))
    .mutation(({ ctx, input }) => cancelWorkflow(ctx.server, input.name, ctx.actor, input.reason)),
  /** A job step's current attempt: its targets with their phase and the moves an operator may make (issue 21). */
  targets: viewerProcedure.input(ByName.extend({ step: StepName })).query(({ ctx, input }) => listStepTargets(ctx.server, input.name, input.step)),
  /** The current attempt's targets' actions grouped by identical output (issue 21), as `requests.outputs`. */
  targetOutputs: viewerProcedure.input(OutputGroupsInput.extend({ name: WorkflowName, step: StepName })).query(({ ctx, input }) => {
    const { name, step, ...page } = input;
    return stepOutputs(ctx.server, name, step, page);
  }),
  /** Move on without one target, with a reason: it counts as finished, not failed; its unfinished action is cancelled. */
  skipTarget: operatorProcedure.input(TargetMove).mutation(({ ctx, input }) => skipWorkflowTarget(ctx.server, input.name, input.step, input.target, ctx.actor, input.reason)),
  /** Run a failed target again, with a reason: a new action made as the step made the first; its step runs again if it failed for it. */
  retryTarget: operatorProcedure.input(TargetMove).mutation(({ ctx, input }) => retryWorkflowTarget(ctx.server, input.name, input.step, input.target, ctx.actor, input.reason)),
});
