import { z } from "zod";
import { router, viewerProcedure, operatorProcedure } from "../trpc/init";
import { stateNames } from "../../lib/state-machine";
import { applicationSummaryMachine, lifecycleMachine, summaryMachine, updatedMachine } from "../../lib/device-status";
import { DEVICE_SORTS, deviceCounts, getDevice, listDevices, type DeviceSort } from "./queries";
import { bulkDecommission, bulkLabel, bulkResume, MAX_BULK_NAMES, type BulkTarget } from "./bulk";
import { isValidLabelKey } from "../../lib/label-selector";
import { requestDecommission, resumeDevice, revokeCredential, REVOKE_REASON_MAX } from "./lifecycle";
import { listEvents } from "../events/events";
import { LabelsSchema } from "../../lib/protocol";
import { setDeviceLabels, updateDevice } from "./labels";
import { DeviceAliasInput } from "../../lib/device-alias";

const oneOrMany = <T extends z.ZodType>(item: T) =>
  z.preprocess((v) => (typeof v === "string" ? v.split(",").filter(Boolean) : v), z.array(item)).optional();

const enumOf = (names: string[]) => z.enum(names as [string, ...string[]]);

/** What a list shows: the filters, without paging (the bulk operations take it too). */
export const DeviceFilterInput = z.object({
  labelSelector: z.string().max(1024).optional(),
  summary: oneOrMany(enumOf(stateNames(summaryMachine))),
  updated: oneOrMany(enumOf(stateNames(updatedMachine))),
  applicationSummary: oneOrMany(enumOf(stateNames(applicationSummaryMachine))),
  lifecycle: oneOrMany(enumOf(stateNames(lifecycleMachine))),
  /** Members of this fleet. */
  fleet: z.string().max(63).optional(),
  search: z.string().max(63).optional(),
  /** Decommissioned devices are hidden unless `show` (or unless `lifecycle` names Decommissioned). */
  decommissioned: z.enum(["hide", "show"]).default("hide"),
});

export const DeviceListInput = DeviceFilterInput.extend({
  /** The column to sort by; ties by name. Null (never seen, no fleet) sorts as the smallest value. */
  sort: z.enum(Object.keys(DEVICE_SORTS) as [DeviceSort, ...DeviceSort[]]).default("name"),
  order: z.enum(["asc", "desc"]).default("asc"),
  limit: z.coerce.number().int().min(1).max(500).default(50),
  /** nextCursor of the previous page, with the same sort and order. */
  cursor: z.string().max(2048).optional(),
});

/**
 * Which devices a bulk operation works on: `names`, or every device `filter` matches (the
 * list's filters, Decommissioned hidden unless `decommissioned: "show"`), never both.
 */
const bulkTarget = {
  names: z.array(z.string().min(1).max(63)).min(1).max(MAX_BULK_NAMES).optional(),
  filter: DeviceFilterInput.strict().optional(),
};
const ONE_TARGET = { message: "give either names or filter (not both)", path: ["names"] };
const oneTarget = (t: { names?: string[] | undefined; filter?: unknown }) => (t.names === undefined) !== (t.filter === undefined);
const target = (t: { names?: string[] | undefined; filter?: z.infer<typeof DeviceFilterInput> | undefined }): BulkTarget =>
  t.names ? { names: t.names } : { filter: t.filter ?? { decommissioned: "hide" } };

export const BulkDecommissionInput = z
  .object({ ...bulkTarget, reason: z.string().trim().max(1024).optional().describe("why (in each device's DecommissionRequested event)") })
  .strict()
  .refine(oneTarget, ONE_TARGET);
export const BulkResumeInput = z.object(bulkTarget).strict().refine(oneTarget, ONE_TARGET);
export const BulkLabelInput = z
  .object({
    ...bulkTarget,
    /** Labels to set on every device (added, or their value replaced). */
    add: LabelsSchema.default({}),
    /** Label keys to remove from every device. */
    remove: z.array(z.string().refine(isValidLabelKey, "invalid label key")).max(64).default([]),
  })
  .strict()
  .refine(oneTarget, ONE_TARGET)
  .refine((b) => Object.keys(b.add).length + b.remove.length > 0, { message: "nothing to do: give add or remove", path: ["add"] })
  .refine((b) => !b.remove.some((k) => k in b.add), { message: "a key cannot be both added and removed", path: ["remove"] });

export const DeviceNameInput = z.object({ name: z.string().min(1).max(63) });
/** Why the credential is revoked: required (it is the record of a security decision), shown with the device. */
export const DeviceRevokeInput = DeviceNameInput.extend({
  reason: z.string().trim().min(1, "reason: say why the credential is revoked").max(REVOKE_REASON_MAX, `reason: at most ${REVOKE_REASON_MAX} characters`),
});

/** An operator's edit: labels (replaced whole) and/or the alias (empty or null clears it); nothing else. */
export const DeviceUpdateInput = z
  .strictObject({ name: DeviceNameInput.shape.name, labels: LabelsSchema.optional(), alias: DeviceAliasInput.optional() })
  .refine((i) => i.labels !== undefined || i.alias !== undefined, "nothing to change: give labels, alias or both");

export const devicesRouter = router({
  list: viewerProcedure.input(DeviceListInput).query(({ ctx, input }) => {
    const { limit, cursor, sort, order, ...filter } = input;
    return listDevices(ctx.server, filter, { limit, cursor, sort, order });
  }),
  get: viewerProcedure.input(DeviceNameInput).query(({ ctx, input }) => getDevice(ctx.server, input.name)),
  counts: viewerProcedure.query(({ ctx }) => deviceCounts(ctx.server)),
  events: viewerProcedure
    .input(DeviceNameInput.extend({ limit: z.number().int().min(1).max(500).default(100) }))
    .query(({ ctx, input }) => listEvents(ctx.server, { kind: "Device", name: input.name, limit: input.limit })),
  decommission: operatorProcedure.input(DeviceNameInput).mutation(async ({ ctx, input }) => {
    await requestDecommission(ctx.server, input.name, ctx.actor);
    return getDevice(ctx.server, input.name);
  }),
  /** Issue 23: revoke its credential (a key or token thought stolen); already revoked: no change. */
  revoke: operatorProcedure.input(DeviceRevokeInput).mutation(async ({ ctx, input }) => {
    await revokeCredential(ctx.server, input.name, ctx.actor, input.reason);
    return getDevice(ctx.server, input.name);
  }),
  /** Replace the device's labels; fleet membership follows at once. */
  setLabels: operatorProcedure.input(DeviceNameInput.extend({ labels: LabelsSchema })).mutation(async ({ ctx, input }) => {
    await setDeviceLabels(ctx.server, input.name, input.labels, ctx.actor);
    return getDevice(ctx.server, input.name);
  }),
  /** Labels and alias in one edit (the console's Edit dialog, PATCH /devices/{name}). */
  update: operatorProcedure.input(DeviceUpdateInput).mutation(async ({ ctx, input }) => {
    await updateDevice(ctx.server, input.name, { labels: input.labels, alias: input.alias }, ctx.actor);
    return getDevice(ctx.server, input.name);
  }),
  resume: operatorProcedure.input(DeviceNameInput).mutation(async ({ ctx, input }) => {
    await resumeDevice(ctx.server, input.name, ctx.actor);
    return getDevice(ctx.server, input.name);
  }),
  /** Bulk (issue 10): each answers {matched, changed, skipped: [{reason, count, names}]}. */
  bulkDecommission: operatorProcedure
    .input(BulkDecommissionInput)
    .mutation(({ ctx, input }) => bulkDecommission(ctx.server, target(input), ctx.actor, input.reason || undefined)),
  bulkResume: operatorProcedure.input(BulkResumeInput).mutation(({ ctx, input }) => bulkResume(ctx.server, target(input), ctx.actor)),
  bulkLabel: operatorProcedure
    .input(BulkLabelInput)
    .mutation(({ ctx, input }) => bulkLabel(ctx.server, target(input), { add: input.add, remove: input.remove }, ctx.actor)),
});
