/**
 * What an agent's action report means (AGENT_PROTOCOL.md "Action reports", seed 004
 * "Conflicting actions"), as a pure decision over the stored row. The agent store
 * (devices/agent-store-sql.ts) only carries it out.
 */
import { isDeepStrictEqual } from "node:util";
import { ACTIVE_ACTION_STATES, canMove, FINAL_ACTION_STATES, type ActionState } from "../../lib/action-status";
import type { ActionReport } from "../../lib/protocol";
import { conflict, forbidden, notFound, type AppError } from "../errors";
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
  /** JSON object text, as stored. */
  args: string;
  origin: string;
  state: string;
  /** When it first went out in the device's long-poll (null: never offered). */
  offeredAt: string | null;
}

/** The reporting device, as it is inside the write (decommissioning read in the same transaction). */
export interface ReportingDevice {
  id: string;
  name: string;
  /** An operator asked to decommission it and its credential is not revoked yet. */
  decommissioning: boolean;
}

export type ReportDecision =
  | { kind: "noop" }
  | { kind: "create"; data: { id: string; deviceId: string; kind: string; args: string; origin: "agent"; state: ActionState; output?: string | undefined; error?: string | undefined }; event: NewEvent }
  | { kind: "overwrite"; set: { kind: string; args: string; origin: "agent"; state: ActionState; output?: string | undefined; error?: string | undefined }; event: NewEvent }
  /** A RUNNING report with output on a RUNNING action: the agent's output so far replaces the stored one. */
  | { kind: "output"; output: string }
  | { kind: "move"; from: ActionState; set: { state: ActionState; output?: string | undefined; error?: string | undefined; started: boolean; finished: boolean }; event: NewEvent }
  /** Refused, and the attempt is worth keeping: the store writes the event, then the caller gets `error`. */
  | { kind: "refuse"; error: AppError; event: NewEvent };

export const DECOMMISSIONING = "device is being decommissioned: it may only report on the actions it holds (NEW or RUNNING)";

/** Args in an event message: enough to recognise them, never the whole of a large object. */
function brief(args: Record<string, unknown>): string {
  const text = JSON.stringify(args);
  return text.length <= 200 ? text : `${text.slice(0, 200)}…`;
}

/**
 * What a report would change on an action the server created (origin user, plan, workflow,
 * rollout) that the agent may not change. Seed 004's "agent wins" is about what the agent
 * holds: it never reaches an action the agent was not offered, nor the kind, args or
 * approval record of one an operator created.
 */
function serverActionViolations(row: StoredAction, report: ActionReport): { reason: string; text: string }[] {
  const out: { reason: string; text: string }[] = [];
  if (report.kind !== undefined && report.kind !== row.kind) out.push({ reason: "KindChanged", text: `an agent cannot change its kind (${row.kind} → ${report.kind})` });
  if (report.args !== undefined && !isDeepStrictEqual(report.args, JSON.parse(row.args))) out.push({ reason: "ArgsChanged", text: `an agent cannot change its args (${brief(JSON.parse(row.args) as Record<string, unknown>)})` });
  if (row.offeredAt === null) out.push({ reason: "NotOffered", text: "it was never offered to this device" });
  return out;
}

export function decideReport(row: StoredAction | null, id: string, device: ReportingDevice, report: ActionReport): ReportDecision {
  const actor = `device:${device.name}`;
  const output = truncateOutput(report.output);
  if (!row) {
    if (!report.kind) throw notFound(`action "${id}" (send kind and args to record an action the agent created)`);
    if (device.decommissioning) throw forbidden(DECOMMISSIONING);
    return {
      kind: "create",
      data: { id, deviceId: device.id, kind: report.kind, args: JSON.stringify(report.args ?? {}), origin: "agent", state: report.state, output, error: report.error },
      event: { objectKind: "Action", objectName: id, type: "ActionRecorded", reason: report.state, message: `created by the agent on ${device.name}: ${report.kind}`, actor },
    };
  }
  if (row.deviceId !== device.id) throw forbidden(`action "${id}" belongs to another device`);
  if (row.origin === "agent") {
    if (report.kind !== undefined && report.kind !== row.kind) {
      // Seed 004: when agent and server hold different actions under one id, the agent wins.
      // Only for what the agent created itself: nobody else's record is replaced.
      if (device.decommissioning) throw forbidden(DECOMMISSIONING);
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
  } else {
    const violations = serverActionViolations(row, report);
    if (violations.length > 0) {
      const what = `${row.kind} ${row.state}, origin ${row.origin}`;
      const tried = `reported ${report.state}${report.kind !== undefined ? ` as ${report.kind}` : ""}${report.args !== undefined ? ` with args ${brief(report.args)}` : ""}`;
      const why = violations.map((v) => v.text).join("; ");
      return {
        kind: "refuse",
        error: conflict(`action "${id}" (${what}) was created on the server side: ${why}`),
        event: { objectKind: "Action", objectName: id, type: "ActionReportRefused", reason: violations[0]!.reason, message: `${tried} for ${what}: refused, ${why}`, actor },
      };
    }
  }
  const from = row.state as ActionState;
  if (from === report.state) {
    // Output streamed while it runs (issue 10): the whole output so far (the agent sends one
    // at a time), so a retry is harmless. An ended action never changes again.
    if (from === "RUNNING" && output !== undefined) return { kind: "output", output };
    return { kind: "noop" };
  }
  // While decommissioning the agent finishes or cancels what it holds and takes nothing new.
  if (device.decommissioning && !(ACTIVE_ACTION_STATES as readonly string[]).includes(from)) throw forbidden(DECOMMISSIONING);
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

