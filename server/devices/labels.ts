/**
 * An operator replaces a device's labels, or sets its alias (issue 10: a display name). Labels
 * decide fleet membership, so the device joins, leaves or changes fleet in the same
 * transaction (server/fleets/membership.ts): at once, not at the next sweep. Both in one edit
 * are one transaction: either both change or neither.
 */
import type { Labels } from "../../lib/label-selector";
import type { ServerContext } from "../context";
import { notFound } from "../errors";
import { afterCommit, finishEffects, newEffects } from "../fleets/render";
import { reconcileMembership } from "../fleets/membership";
import { refreshFleetStatus } from "../fleets/controller";
import { lockRows, locks, transaction } from "../lib/transactions";

const show = (labels: Labels) => {
  const entries = Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : 1));
  return entries.length ? entries.map(([k, v]) => `${k}=${v}`).join(",") : "(none)";
};

export async function setDeviceLabels(ctx: ServerContext, name: string, labels: Labels, actor: string): Promise<void> {
  await updateDevice(ctx, name, { labels }, actor);
}

/** What an operator may edit on a device: labels (replaced whole) and alias (null clears it). */
export interface DevicePatch {
  labels?: Labels | undefined;
  alias?: string | null | undefined;
}

const quoted = (alias: string | null) => (alias === null ? "(none)" : JSON.stringify(alias));

export async function updateDevice(ctx: ServerContext, name: string, patch: DevicePatch, actor: string): Promise<void> {
  const now = ctx.now();
  const { rows, effects } = await transaction(
    ctx.db,
    async (tx) => {
      const effects = newEffects(ctx.statusSettings);
      // The device's row, locked first: two changes of its labels never interleave.
      await lockRows(tx, "Device", [name], "name");
      const device = await tx.device.findUnique({ where: { name }, select: { id: true, alias: true, labels: { select: { key: true, value: true } } } });
      if (!device) throw notFound(`device "${name}"`);
      if (patch.alias !== undefined && patch.alias !== device.alias) {
        await tx.device.update({ where: { id: device.id }, data: { alias: patch.alias } });
        effects.events.push({ objectKind: "Device", objectName: name, type: "AliasChanged", reason: "Updated", message: `${quoted(device.alias)} → ${quoted(patch.alias)}`, actor });
      }
      const labels = patch.labels;
      const before = Object.fromEntries(device.labels.map((l) => [l.key, l.value])) as Labels;
      if (labels !== undefined && show(before) !== show(labels)) {
        await tx.deviceLabel.deleteMany({ where: { deviceId: device.id } });
        await tx.deviceLabel.createMany({ data: Object.entries(labels).map(([key, value]) => ({ deviceId: device.id, key, value })) });
        effects.events.push({ objectKind: "Device", objectName: name, type: "LabelsChanged", reason: "Updated", message: `${show(before)} → ${show(labels)}`, actor });
        await reconcileMembership(tx, { deviceIds: [device.id] }, now, actor, effects);
      }
      if (effects.events.length === 0) return { rows: [], effects };
      return { rows: await finishEffects(tx, effects, now, actor), effects };
    },
    // Its fleet is settled against the fleets' selectors (server/fleets/membership.ts).
    { sharedLocks: [locks.fleetSelectors] },
  );
  afterCommit(ctx, effects, rows);
  await refreshFleetStatus(ctx, [...effects.fleets]);
}
