import { z } from "zod";
import { router, viewerProcedure, operatorProcedure } from "../trpc/init";
import { stateNames } from "../../lib/state-machine";
import { applicationSummaryMachine, lifecycleMachine, summaryMachine, updatedMachine } from "../../lib/device-status";
import { deviceCounts, getDevice, listDevices } from "./queries";
import { requestDecommission, resumeDevice } from "./lifecycle";
import { listEvents } from "../events/events";
import { LabelsSchema } from "../../lib/protocol";
import { setDeviceLabels } from "./labels";

const oneOrMany = <T extends z.ZodType>(item: T) =>
  z.preprocess((v) => (typeof v === "string" ? v.split(",").filter(Boolean) : v), z.array(item)).optional();

const enumOf = (names: string[]) => z.enum(names as [string, ...string[]]);

export const DeviceListInput = z.object({
  labelSelector: z.string().max(1024).optional(),
  summary: oneOrMany(enumOf(stateNames(summaryMachine))),
  updated: oneOrMany(enumOf(stateNames(updatedMachine))),
  applicationSummary: oneOrMany(enumOf(stateNames(applicationSummaryMachine))),
  lifecycle: oneOrMany(enumOf(stateNames(lifecycleMachine))),
  /** Members of this fleet. */
  fleet: z.string().max(63).optional(),
  search: z.string().max(63).optional(),
  limit: z.coerce.number().int().min(1).max(500).default(50),
  cursor: z.string().optional(),
});

export const DeviceNameInput = z.object({ name: z.string().min(1).max(63) });

export const devicesRouter = router({
  list: viewerProcedure.input(DeviceListInput).query(({ ctx, input }) => {
    const { limit, cursor, ...filter } = input;
    return listDevices(ctx.server, filter, { limit, cursor });
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
  /** Replace the device's labels; fleet membership follows at once. */
  setLabels: operatorProcedure.input(DeviceNameInput.extend({ labels: LabelsSchema })).mutation(async ({ ctx, input }) => {
    await setDeviceLabels(ctx.server, input.name, input.labels, ctx.actor);
    return getDevice(ctx.server, input.name);
  }),
  resume: operatorProcedure.input(DeviceNameInput).mutation(async ({ ctx, input }) => {
    await resumeDevice(ctx.server, input.name, ctx.actor);
    return getDevice(ctx.server, input.name);
  }),
});
