/**
 * Why each unfinished action waits (issue 10), for a page of actions at once: the facts the
 * scheduler uses (the device's summary and lifecycle, the concurrency policies, what the agent
 * holds before it) gathered in three queries, then `explainWait` (lib/action-wait.ts) per row.
 * Computed when read, never stored: the reason changes with the device, not with the action.
 */
import type { ServerContext } from "../context";
import { inChunks } from "../lib/chunks";
import { explainWait, type ActionWait } from "../../lib/action-wait";
import { agentRefusal } from "../../lib/action-capability";
import type { ReportedStatus } from "../../lib/device-status";
import type { ActionState } from "../../lib/action-status";
import { fullPoliciesOf } from "./scheduling";
import { admits, DEFAULT_HEALTH_POLICY } from "../../lib/health-policy";

export interface WaitRow {
  id: string;
  deviceId: string;
  kind: string;
  /** JSON object; without it no refusal is computed. */
  args?: string;
  state: string;
  offeredAt: Date | null;
  cancelRequestedAt: Date | null;
  expiresAt: Date | null;
  /** lib/health-policy.ts; the default when not read. */
  healthPolicy?: string;
  createdAt: Date;
}

const WAITING = new Set(["PENDING_APPROVE", "PENDING_SCHEDULE", "NEW", "RUNNING"]);
/** Before the agent has it: what the console warns about when creating or approving. */
const NOT_YET_OFFERED = new Set(["PENDING_APPROVE", "PENDING_SCHEDULE"]);

export interface ActionNotes {
  waiting: ActionWait | null;
  /** Why the device's agent will refuse it (lib/action-capability.ts), while it has not got it yet. */
  refusal: string | null;
}

/** The agent's capabilities from its last report, when it sent them. */
export function capabilitiesIn(reported: string | null): ReportedStatus["capabilities"] | null {
  if (!reported) return null;
  return (JSON.parse(reported) as ReportedStatus).capabilities ?? null;
}

/** Why each of these actions waits (those that do). */
export async function waitsOf(ctx: ServerContext, rows: readonly WaitRow[]): Promise<Map<string, ActionWait>> {
  const notes = await actionNotes(ctx, rows);
  return new Map([...notes].flatMap(([id, n]) => (n.waiting ? [[id, n.waiting] as const] : [])));
}

/** Why each action waits, and why its device's agent will refuse it (those it applies to). */
export async function actionNotes(ctx: ServerContext, rows: readonly WaitRow[]): Promise<Map<string, ActionNotes>> {
  const out = new Map<string, ActionNotes>();
  const open = rows.filter((r) => WAITING.has(r.state) && (r.state !== "RUNNING" || r.cancelRequestedAt !== null));
  if (open.length === 0) return out;
  const deviceIds = [...new Set(open.map((r) => r.deviceId))];
  // Labels only when policies may need them, the last report only when a refusal is asked for.
  const withLabels = ctx.env.DROVER_ACTION_CONCURRENCY.length > 0;
  const withReport = open.some((r) => r.args !== undefined && NOT_YET_OFFERED.has(r.state) && !r.offeredAt);
  const devices = new Map(
    (
      await inChunks(deviceIds, (chunk) =>
        ctx.db.device.findMany({
          where: { id: { in: chunk } },
          select: {
            id: true,
            name: true,
            summary: true,
            lifecycle: true,
            decommissionRequestedAt: true,
            role: true,
            reported: withReport,
            labels: withLabels ? { select: { key: true, value: true } } : false,
          },
        }),
      )
    ).map((d) => [d.id, { ...d, labels: d.labels ?? [], capabilities: withReport ? capabilitiesIn(d.reported ?? null) : null }]),
  );
  // What each agent holds, oldest first: a NEW action waits for the one the agent runs before it.
  const holdingIds = [...new Set(open.filter((r) => r.state === "NEW").map((r) => r.deviceId))];
  const held = await inChunks(holdingIds, (chunk) =>
    ctx.db.action.findMany({
      where: { deviceId: { in: chunk }, state: { in: ["NEW", "RUNNING"] } },
      select: { id: true, deviceId: true, kind: true, state: true, createdAt: true },
      orderBy: [{ createdAt: "asc" }, { id: "asc" }],
    }),
  );
  // Sets and per-device lists, not scans per row: a request's progress reads thousands at once.
  // The devices with an action not yet offered that its health policy lets them take.
  const schedulableIds = new Set(
    open.filter((r) => r.state === "PENDING_SCHEDULE" && !r.offeredAt && admits(r.healthPolicy ?? DEFAULT_HEALTH_POLICY, devices.get(r.deviceId)?.summary ?? "")).map((r) => r.deviceId),
  );
  const schedulable = [...devices.values()].filter((d) => schedulableIds.has(d.id));
  const full = await fullPoliciesOf(ctx, schedulable);
  const heldBy = new Map<string, typeof held>();
  for (const h of held) (heldBy.get(h.deviceId) ?? heldBy.set(h.deviceId, []).get(h.deviceId)!).push(h);
  for (const r of open) {
    const d = devices.get(r.deviceId);
    if (!d) continue;
    const before = (heldBy.get(r.deviceId) ?? []).filter((h) => h.id !== r.id && h.createdAt <= r.createdAt);
    const earlier = before.find((h) => h.state === "RUNNING") ?? before[0] ?? null;
    const wait = explainWait({
      state: r.state as ActionState,
      kind: r.kind,
      offeredAt: r.offeredAt,
      cancelRequested: r.cancelRequestedAt !== null,
      expiresAt: r.expiresAt,
      healthPolicy: r.healthPolicy ?? DEFAULT_HEALTH_POLICY,
      device: { name: d.name, summary: d.summary, lifecycle: d.lifecycle, decommissionRequested: d.decommissionRequestedAt !== null },
      earlier: earlier ? { id: earlier.id, kind: earlier.kind, state: earlier.state as ActionState } : null,
      fullPolicies: full.get(d.id) ?? [],
    });
    const refusal = r.args !== undefined && NOT_YET_OFFERED.has(r.state) && !r.offeredAt ? agentRefusal(d.capabilities, r.kind, JSON.parse(r.args) as Record<string, unknown>) : null;
    if (wait || refusal) out.set(r.id, { waiting: wait, refusal });
  }
  return out;
}
