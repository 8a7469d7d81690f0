/**
 * The agent's side of actions: its reports (`PUT /actions/{id}`) and its heartbeat queue
 * (LOST detection). Decisions are pure (report.ts); the agent store (devices/agent-store.ts,
 * SQLite or PostgreSQL) writes each in a group commit.
 */
import type { ActionReport } from "../../lib/protocol";
import { z } from "zod";
import type { ServerContext } from "../context";
import { invalid } from "../errors";
import { publishEvents, type EventRow } from "../events/events";
import { FINAL_ACTION_STATES } from "../../lib/action-status";
import type { AgentStore } from "../devices/agent-store";
import { wakeDevicesWithPendingActions } from "./scheduling";

/**
 * The bus topic of a running action's output (issue 10): `{output}` after each report that
 * replaced it. No event row: the action page subscribes while it shows a RUNNING action.
 */
export const actionOutputTopic = (id: string) => `action-output:${id}`;
export interface ActionOutputUpdate {
  output: string;
}

const FINAL = new Set<string>(FINAL_ACTION_STATES);

/** A report in flight alongside a heartbeat must not make its action look lost. */
export const LOST_GRACE_MS = 5_000;

function agentStore(ctx: ServerContext): AgentStore {
  return ctx.fast;
}

export async function reportAction(ctx: ServerContext, device: { id: string; name: string }, id: string, report: ActionReport) {
  if (!z.uuid().safeParse(id).success) throw invalid("id: an action id is a UUID");
  const store = agentStore(ctx);
  const { events, finished, refused, output, view } = await store.reportAction(device, id, report, ctx.now());
  publishEvents(ctx, events);
  if (output !== undefined) ctx.bus.publish<ActionOutputUpdate>(actionOutputTopic(id), { output });
  // A refused attempt on a server-created action: its event is committed, the agent gets 409.
  if (refused) throw refused;
  if (finished) ctx.metrics.actionsFinished.inc({ state: report.state });
  // A finished action may free a concurrency slot for another device.
  if (finished && ctx.env.DROVER_ACTION_CONCURRENCY.length > 0) await wakeDevicesWithPendingActions(ctx);
  return view;
}

export async function reconcileQueue(ctx: ServerContext, device: { id: string; name: string; holdsActions?: boolean }, queue: { id: string }[]): Promise<void> {
  // It held none when authenticated: an action that moved to NEW or RUNNING since is within the grace.
  if (device.holdsActions === false) return;
  const lost = await agentStore(ctx).markLost(device, new Set(queue.map((a) => a.id)), ctx.now(), LOST_GRACE_MS);
  publishEvents(ctx, lost);
  actionsEnded(ctx, lost);
}

/**
 * After the server itself ended actions (LOST from a heartbeat's queue; cancelled or LOST with
 * a revoked or leaving device, devices/lifecycle.ts), their events committed and published:
 * the LOST ones are counted, and the concurrency slots they held are free for other devices.
 */
export function actionsEnded(ctx: ServerContext, events: EventRow[]): void {
  const ended = events.filter((e) => e.objectKind === "Action" && e.type === "ActionStateChanged" && FINAL.has(e.reason));
  const lost = ended.filter((e) => e.reason === "LOST").length;
  if (lost > 0) ctx.metrics.actionsFinished.inc({ state: "LOST" }, lost);
  if (ended.length > 0 && ctx.env.DROVER_ACTION_CONCURRENCY.length > 0) {
    wakeDevicesWithPendingActions(ctx).catch((err: unknown) => ctx.log.error({ err }, "waking devices after actions ended failed"));
  }
}
