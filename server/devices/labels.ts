/**
 * An operator replaces a device's labels. Labels decide fleet membership, so the device joins,
 * leaves or changes fleet in the same transaction (server/fleets/membership.ts): at once, not
 * at the next sweep.
 */
import type { Labels } from "../../lib/label-selector";
import type { ServerContext } from "../context";
import { notFound } from "../errors";
import { afterCommit, finishEffects, newEffects } from "../fleets/render";
import { reconcileMembership } from "../fleets/membership";
import { refreshFleetStatus } from "../fleets/controller";

const show = (labels: Labels) => {
  const entries = Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : 1));
  return entries.length ? entries.map(([k, v]) => `${k}=${v}`).join(",") : "(none)";
};

export async function setDeviceLabels(ctx: ServerContext, name: string, labels: Labels, actor: string): Promise<void> {
  const now = ctx.now();
  const effects = newEffects();
  const rows = await ctx.db.$transaction(async (tx) => {
    const device = await tx.device.findUnique({ where: { name }, select: { id: true, labels: { select: { key: true, value: true } } } });
    if (!device) throw notFound(`device "${name}"`);
    const before = Object.fromEntries(device.labels.map((l) => [l.key, l.value])) as Labels;
    if (show(before) === show(labels)) return [];
    await tx.deviceLabel.deleteMany({ where: { deviceId: device.id } });
    await tx.deviceLabel.createMany({ data: Object.entries(labels).map(([key, value]) => ({ deviceId: device.id, key, value })) });
    effects.events.push({ objectKind: "Device", objectName: name, type: "LabelsChanged", reason: "Updated", message: `${show(before)} → ${show(labels)}`, actor });
    await reconcileMembership(tx, { deviceIds: [device.id] }, now, actor, effects);
    return finishEffects(tx, ctx, effects, now, actor);
  });
  afterCommit(ctx, effects, rows);
  await refreshFleetStatus(ctx, [...effects.fleets]);
}
