/**
 * Concurrency policies (seed 004 "actions concurrency and scheduling policies"): at most
 * `max` devices matching a selector run actions at once (e.g. one controller at a time).
 * A device counts as busy while it has an action NEW, RUNNING, or offered and unconfirmed.
 * Selectors see the device's labels plus `drover/role`.
 */
import { matchesSelector } from "../../lib/label-selector";
import type { ServerContext } from "../context";
import { topics } from "../bus";

export const ROLE_LABEL = "drover/role";

function labelsOf(d: { role: string; labels: { key: string; value: string }[] }): Record<string, string> {
  return { ...Object.fromEntries(d.labels.map((l) => [l.key, l.value])), [ROLE_LABEL]: d.role };
}

type Policy = ServerContext["env"]["DROVER_ACTION_CONCURRENCY"][number];

/** The policies that cover this device (none when there are none, or it is gone). */
async function policiesOf(ctx: ServerContext, deviceId: string): Promise<Policy[]> {
  const policies = ctx.env.DROVER_ACTION_CONCURRENCY;
  if (policies.length === 0) return [];
  const device = await ctx.db.device.findUnique({ where: { id: deviceId }, select: { role: true, labels: { select: { key: true, value: true } } } });
  if (!device) return [];
  return policies.filter((p) => matchesSelector(p.requirements, labelsOf(device)));
}

/** The devices busy now (an action NEW, RUNNING, or offered and unconfirmed), but `except`: what the policies count. */
function busyDevices(ctx: ServerContext, except?: string) {
  return ctx.db.device.findMany({
    where: {
      ...(except ? { id: { not: except } } : {}),
      actions: { some: { OR: [{ state: { in: ["NEW", "RUNNING"] } }, { state: "PENDING_SCHEDULE", offeredAt: { not: null } }] } },
    },
    select: { id: true, name: true, role: true, labels: { select: { key: true, value: true } } },
  });
}

/** Whether every one of `mine` has a free slot, counting the other devices busy now. */
async function slotsFree(ctx: ServerContext, deviceId: string, mine: Policy[]): Promise<boolean> {
  const busy = await busyDevices(ctx, deviceId);
  return mine.every((p) => busy.filter((d) => matchesSelector(p.requirements, labelsOf(d))).length < p.max);
}

export interface FullPolicy {
  selector: string;
  max: number;
  /** The devices keeping it full, by name. */
  busy: string[];
}

/**
 * For each of these devices, the policies covering it that have no free slot for it now (the
 * check the offer makes, for many devices at once): why its actions wait. Empty without policies.
 */
export async function fullPoliciesOf(ctx: ServerContext, devices: { id: string; role: string; labels: { key: string; value: string }[] }[]): Promise<Map<string, FullPolicy[]>> {
  const out = new Map<string, FullPolicy[]>();
  const policies = ctx.env.DROVER_ACTION_CONCURRENCY;
  if (policies.length === 0 || devices.length === 0) return out;
  const busy = await busyDevices(ctx);
  for (const d of devices) {
    const full = policies
      .filter((p) => matchesSelector(p.requirements, labelsOf(d)))
      .map((p) => ({ p, holders: busy.filter((b) => b.id !== d.id && matchesSelector(p.requirements, labelsOf(b))) }))
      .filter(({ p, holders }) => holders.length >= p.max)
      .map(({ p, holders }) => ({ selector: p.text, max: p.max, busy: holders.map((h) => h.name) }));
    if (full.length) out.set(d.id, full);
  }
  return out;
}

/** One check-and-offer at a time per server, for devices under a policy. */
const offering = new WeakMap<ServerContext, Promise<unknown>>();

/**
 * Checks the policies and offers (`offer(allowed)` marks what it hands out as offered) as one
 * step: devices woken together by a freed slot would otherwise all see it free and all take
 * it. Devices no policy covers do not wait for each other.
 */
export async function offerWithinPolicies<T>(ctx: ServerContext, deviceId: string, offer: (allowed: boolean) => T): Promise<T> {
  const mine = await policiesOf(ctx, deviceId);
  if (mine.length === 0) return offer(true);
  const turn = (offering.get(ctx) ?? Promise.resolve()).then(async () => offer(await slotsFree(ctx, deviceId, mine)));
  offering.set(ctx, turn.catch(() => undefined));
  return turn;
}

/**
 * The reconcile step (seed 004: "retries are automatically performed at the next cluster
 * orchestration"): wake every device that has actions waiting to be offered, so a device
 * that came back Online or a policy slot that freed up gets its actions without a nudge.
 */
export async function wakeDevicesWithPendingActions(ctx: ServerContext): Promise<number> {
  const rows = await ctx.db.action.findMany({
    where: { state: "PENDING_SCHEDULE", offeredAt: null },
    select: { deviceId: true },
    distinct: ["deviceId"],
    take: 5000,
  });
  for (const r of rows) ctx.bus.publish(topics.device(r.deviceId), { at: Date.now() });
  return rows.length;
}
