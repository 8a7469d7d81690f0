/**
 * Fleet membership (DESIGN.md §3, Flight Control's rules, research/engines.md C.3): a device
 * belongs to at most one fleet, the one whose selector matches its labels. When several
 * match, it stays where it is and carries the MultipleOwners condition naming all of them;
 * a device in none of them joins the oldest matching fleet (created first, then by name), so
 * the outcome never depends on the order changes arrive in. Only Enrolled devices not asked
 * to decommission are members.
 *
 * Membership is settled at once, in the transaction of the change that moves it: approval
 * (enrollment), a label change, a decommission request, a fleet's creation, selector change
 * or deletion. A device that joins gets its fleet's spec at once; one that leaves keeps the
 * spec it has (renderedVersion unchanged) and becomes unmanaged.
 */
import { matchesSelector, type Labels, type LabelSelector } from "../../lib/label-selector";
import { selectorRequirements, type LabelSelectorObject } from "../../lib/fleet-spec";
import type { Tx } from "../db";
import { dialectOfDb, executeRaw, labelsObject, queryRaw } from "../lib/dialect-sql";
import { inIds } from "./sql";
import { renderDevices, type Effects } from "./render";
import { joinVersions } from "../rollouts/controller";
import { lockInTx, locks } from "../lib/transactions";

export interface FleetForMembership {
  id: string;
  name: string;
  templateVersion: string;
  requirements: LabelSelector;
}

export interface MemberFacts {
  owner: string | null;
  /** Names of every matching fleet, when more than one matched (stored JSON array). */
  multipleOwners: string[] | null;
}

/**
 * The rule, pure: `matching` are the fleets whose selector matches the device, oldest first.
 * It stays in its fleet while that still matches; otherwise it joins the oldest match.
 */
export function decideMembership(currentOwner: string | null, matching: string[]): MemberFacts {
  const owner = currentOwner !== null && matching.includes(currentOwner) ? currentOwner : (matching[0] ?? null);
  return { owner, multipleOwners: matching.length > 1 ? matching : null };
}

export function multipleOwnersMessage(owner: string | null, fleets: string[]): string {
  return `labels match fleets ${fleets.join(", ")}; a device belongs to one fleet, so it stays in ${owner ?? "none"}`;
}

/** Every fleet with its parsed selector, oldest first (the tie-break for a device in none). */
export async function fleetsForMembership(tx: Tx): Promise<FleetForMembership[]> {
  const fleets = await tx.fleet.findMany({ select: { id: true, name: true, selector: true, templateVersion: true }, orderBy: [{ createdAt: "asc" }, { name: "asc" }] });
  return fleets.map((f) => ({ ...f, requirements: selectorRequirements(JSON.parse(f.selector) as LabelSelectorObject) }));
}

export type MembershipScope = { deviceIds: string[] } | { all: true };

interface DeviceRow {
  id: string;
  name: string;
  owner: string | null;
  multipleOwners: string | null;
  eligible: number | bigint | boolean;
  labels: string | null;
}

/**
 * Settles membership of the devices in `scope` (or of every device), inside the caller's
 * transaction: owners, MultipleOwners, joins rendered at their fleet's templateVersion.
 * Adds its events and touched devices to `effects`; the caller re-derives and commits.
 */
export async function reconcileMembership(tx: Tx, scope: MembershipScope, now: Date, actor: string, effects: Effects): Promise<void> {
  const fleets = await fleetsForMembership(tx);
  const where =
    "deviceIds" in scope
      ? `d."id" ${inIds(tx)}`
      : `(d."lifecycle" = 'Enrolled' AND d."decommissionRequestedAt" IS NULL) OR d."owner" IS NOT NULL OR d."multipleOwners" IS NOT NULL`;
  if ("deviceIds" in scope && scope.deviceIds.length === 0) return;
  const devices = await queryRaw<DeviceRow[]>(
    tx,
    `SELECT d."id", d."name", d."owner", d."multipleOwners",
       (d."lifecycle" = 'Enrolled' AND d."decommissionRequestedAt" IS NULL) AS "eligible",
       ${labelsObject(dialectOfDb(tx), 'd."id"')} AS "labels"
     FROM "Device" d WHERE ${where}`,
    ...("deviceIds" in scope ? [JSON.stringify(scope.deviceIds)] : []),
  );

  const leaving: string[] = [];
  const left = new Set<string>();
  const joining = new Map<string, string[]>();
  const overlap = new Map<string, string[]>();
  for (const d of devices) {
    const eligible = d.eligible === true || Number(d.eligible) === 1;
    const labels = (d.labels ? JSON.parse(d.labels) : {}) as Labels;
    const matching = eligible ? fleets.filter((f) => matchesSelector(f.requirements, labels)).map((f) => f.name) : [];
    const next = decideMembership(d.owner, matching);
    if (next.owner !== d.owner) {
      if (d.owner !== null) {
        left.add(d.owner);
        effects.events.push({
          objectKind: "Device",
          objectName: d.name,
          type: "FleetLeft",
          reason: d.owner,
          message: eligible ? `labels no longer match fleet ${d.owner}; the device keeps its spec, unmanaged` : `left fleet ${d.owner}: the device is being decommissioned`,
          actor,
        });
        effects.fleets.add(d.owner);
      }
      if (next.owner === null) leaving.push(d.id);
      else {
        const list = joining.get(next.owner) ?? [];
        list.push(d.id);
        joining.set(next.owner, list);
        effects.events.push({ objectKind: "Device", objectName: d.name, type: "FleetJoined", reason: next.owner, message: `labels match fleet ${next.owner}`, actor });
        effects.fleets.add(next.owner);
      }
      effects.touched.add(d.id);
    }
    const before = d.multipleOwners;
    const after = next.multipleOwners ? JSON.stringify(next.multipleOwners) : null;
    if (before !== after) {
      const list = overlap.get(after ?? "") ?? [];
      list.push(d.id);
      overlap.set(after ?? "", list);
      effects.events.push({
        objectKind: "Device",
        objectName: d.name,
        type: "MultipleOwnersChanged",
        reason: next.multipleOwners ? "True" : "False",
        message: next.multipleOwners ? multipleOwnersMessage(next.owner, next.multipleOwners) : "labels match at most one fleet",
        actor,
      });
      for (const f of [...(next.multipleOwners ?? []), ...((before ? JSON.parse(before) : []) as string[])]) effects.fleets.add(f);
    }
  }

  // The fleets devices leave or join, locked: a template change or a rollout of one of them
  // runs before or after this transaction, never beside it (its versions are read again below).
  await lockInTx(tx, [...left, ...joining.keys()].map(locks.fleet));
  const at = now;
  if (leaving.length) {
    await executeRaw(tx, `UPDATE "Device" SET "owner" = NULL, "updatedAt" = ? WHERE "id" ${inIds(tx)}`, at, JSON.stringify(leaving));
  }
  for (const [value, ids] of overlap) {
    await executeRaw(tx, `UPDATE "Device" SET "multipleOwners" = ?, "updatedAt" = ? WHERE "id" ${inIds(tx)}`, value === "" ? null : value, at, JSON.stringify(ids));
  }
  if (joining.size === 0) return;
  const versions = new Map((await tx.fleet.findMany({ where: { name: { in: [...joining.keys()] } }, select: { name: true, templateVersion: true } })).map((f) => [f.name, f.templateVersion]));
  const duringRollout = await joinVersions(tx);
  for (const [fleetName, ids] of joining) {
    const read = fleets.find((f) => f.name === fleetName)!;
    const fleet = { ...read, templateVersion: versions.get(fleetName) ?? read.templateVersion };
    await executeRaw(tx, `UPDATE "Device" SET "owner" = ?, "updatedAt" = ? WHERE "id" ${inIds(tx)}`, fleetName, at, JSON.stringify(ids));
    // A device that joins gets its fleet's spec at once: the version members run now, or
    // while a rollout is open the one it replaces (the rollout gives it the new one in turn).
    await renderDevices(tx, fleet, duringRollout.get(fleet.id) ?? fleet.templateVersion, now, actor, effects, ids);
  }
}
