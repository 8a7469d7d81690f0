import { actionMachine } from "@/lib/action-status";
import { specFromMachine } from "../state-diagram/from-machine";
import type { DiagramSpec } from "../state-diagram/types";

/** lib/action-status's table, the one the engine enforces, as the action page draws it. */
export const actionDiagramSpec: DiagramSpec = { ...specFromMachine(actionMachine), order: 198 };
