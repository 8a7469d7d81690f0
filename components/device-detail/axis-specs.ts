import { deviceStatusMachines } from "@/lib/device-status";
import type { StateMachine } from "@/lib/state-machine";
import { specFromMachine } from "../state-diagram/from-machine";
import type { DiagramSpec } from "../state-diagram/types";

export type AxisKey = keyof typeof deviceStatusMachines;

/** The order each table is laid out in so that none of its lines cross (diagram-specs.test.ts). */
const ORDERS: Partial<Record<AxisKey, number>> = { summary: 14, updateState: 1, applicationSummary: 7 };

/** lib/device-status's tables, the ones the server derives with, as the device page draws them. */
export const deviceAxisSpecs = Object.fromEntries(
  Object.entries(deviceStatusMachines).map(([key, machine]) => [key, { ...specFromMachine(machine as StateMachine<string>), order: ORDERS[key as AxisKey] ?? 0 }]),
) as Record<AxisKey, DiagramSpec>;
