/**
 * What an agent's action report means (AGENT_PROTOCOL.md "Action reports", seed 004
 * "Conflicting actions"), as a pure decision over the stored row. The stores (Prisma, or the
 * SQLite fast path) only carry it out.
 */
import { canMove, FINAL_ACTION_STATES, type ActionState } from "../../lib/action-status";
import type { ActionReport } from "../../lib/protocol";
import { conflict, forbidden, notFound } from "../errors";
import type { NewEvent } from "../events/events";

export const MAX_OUTPUT = 64 * 1024;

/** Keeps the head and the tail of long output. */
export function truncateOutput(text: string | undefined): string | undefined {
  if (text === undefined || text.length <= MAX_OUTPUT) return text;
  const half = MAX_OUTPUT / 2;
  return `${text.slice(0, half)}\n…[truncated ${text.length - MAX_OUTPUT} characters]…\n${text.slice(-half)}`;
}

export interface StoredAction {
  id: string;
  deviceId: string;
  kind: string;
  state: string;
}

export type ReportDecision =
  | { kind: "noop" }
  | { kind: "create"; data: { id: string; deviceId: string; kind: string; args: string; origin: "agent"; state: ActionState; output?: string | undefined; error?: string | undefined }; event: NewEvent }
  | { kind: "overwrite"; set: { kind: string; args: string; origin: "agent"; state: ActionState; output?: string | undefined; error?: string | undefined }; event: NewEvent }
  | { kind: "move"; from: ActionState; set: { state: ActionState; output?: string | undefined; error?: string | undefined; started: boolean; finished: boolean }; event: NewEvent };

export function decideReport(row: StoredAction | null, id: string, device: { id: string; name: string }, report: ActionReport): ReportDecision {
  const actor = `device:${device.name}`;
  const output = truncateOutput(report.output);
  if (!row) {
    if (!report.kind) throw notFound(`action "${id}" (send kind and args to record an action the agent created)`);
    return {
      kind: "create",
      data: { id, deviceId: device.id, kind: report.kind, args: JSON.stringify(report.args ?? {}), origin: "agent", state: report.state, output, error: report.error },
      event: { objectKind: "Action", objectName: id, type: "ActionRecorded", reason: report.state, message: `created by the agent on ${device.name}: ${report.kind}`, actor },
    };
  }
  if (row.deviceId !== device.id) throw forbidden(`action "${id}" belongs to another device`);
  if (report.kind !== undefined && report.kind !== row.kind) {
    // Seed 004: when agent and server hold different actions under one id, the agent wins.
    return {
      kind: "overwrite",
      set: { kind: report.kind, args: JSON.stringify(report.args ?? {}), origin: "agent", state: report.state, output, error: report.error },
      event: {
        objectKind: "Action",
        objectName: id,
        type: "ActionOverwritten",
        reason: report.state,
        message: `the agent holds ${report.kind} under this id (server had ${row.kind} ${row.state}): the agent's report wins`,
        actor,
      },
    };
  }
  const from = row.state as ActionState;
  if (from === report.state) return { kind: "noop" };
  if (!canMove(from, report.state, "agent")) {
    throw conflict(`action "${id}" is ${from}; an agent cannot move it to ${report.state}`);
  }
  return {
    kind: "move",
    from,
    set: {
      state: report.state,
      output,
      error: report.error,
      started: report.state === "RUNNING",
      finished: (FINAL_ACTION_STATES as readonly string[]).includes(report.state),
    },
    event: { objectKind: "Action", objectName: id, type: "ActionStateChanged", reason: report.state, message: `${from} → ${report.state}${report.error ? `: ${report.error}` : ""}`, actor },
  };
}

